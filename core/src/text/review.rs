//! A reviewer's state in Bitbucket's words, the one place every tool's and every view's text for the model
//! takes it from, so that what the model writes back matches the page the person sees.
//!
//! Bitbucket's page shows a verdict as the avatar's badge ("Approved", "Needs work") and a reviewer who finished a
//! review of the head without a verdict as having reviewed [reference bitbucket-ui.md "Reviewers": code B-ui,
//! B-ral]. The verdict is the participant's `status` (`APPROVED`, `NEEDS_WORK`, `UNAPPROVED`; a Stash-era
//! `approved: true` reads as `APPROVED`, see [`Participant`]); whether they reviewed is `lastReviewedCommit`
//! against the pull request's source head, which servers before 8.9.18 / 8.19.7 / 9.0.1 / 9.1 may not send
//! [reference bitbucket-dc.md "Reviews, drafts": Atlassian javadoc `PullRequestParticipantStatusRequest`]: without
//! it a reviewer with no verdict reads as not reviewed.
//!
//! NEEDS_WORK is "needs work": Bitbucket's button, badge and merge check ("No 'needs work' status") say so through
//! 8.8 [reference bitbucket-ui.md: code B-ui; doc D2 8.8]; later releases' "Request changes" label is unconfirmed
//! [reference bitbucket-ui.md "Reviewer states": UNCONFIRMED], and "Needs work" is what the API and its users say.

use crate::bitbucket::model::{Participant, PullRequest};

/// Where a reviewer stands on a pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewerState {
    /// `APPROVED`.
    Approved,
    /// `NEEDS_WORK`.
    NeedsWork,
    /// No verdict, and they reviewed up to the source's head.
    Reviewed,
    /// No verdict, and they reviewed a commit that is no longer the head.
    ReviewedOlder,
    /// No verdict and no review Bitbucket knows of.
    NotReviewed,
}

impl ReviewerState {
    /// `p`'s state on a pull request whose source head is `head`.
    pub fn of(p: &Participant, head: Option<&str>) -> ReviewerState {
        match p.status.as_deref() {
            Some("APPROVED") => ReviewerState::Approved,
            Some("NEEDS_WORK") => ReviewerState::NeedsWork,
            _ => match (p.last_reviewed_commit.as_deref().filter(|c| !c.is_empty()), head) {
                (Some(seen), Some(head)) if seen == head => ReviewerState::Reviewed,
                (Some(_), _) => ReviewerState::ReviewedOlder,
                (None, _) => ReviewerState::NotReviewed,
            },
        }
    }

    /// The state in words, after the person's name: "Bob approved", "Carol needs work".
    pub fn words(self) -> &'static str {
        match self {
            ReviewerState::Approved => "approved",
            ReviewerState::NeedsWork => "needs work",
            ReviewerState::Reviewed => "reviewed, no verdict",
            ReviewerState::ReviewedOlder => "reviewed an older commit",
            ReviewerState::NotReviewed => "not reviewed",
        }
    }
}

/// Each reviewer of `pr` with their state, in Bitbucket's order.
pub fn reviewer_states(pr: &PullRequest) -> impl Iterator<Item = (&Participant, ReviewerState)> {
    let head = pr.from_ref.as_ref().and_then(|r| r.latest_commit.as_deref());
    pr.reviewers.iter().map(move |r| (r, ReviewerState::of(r, head)))
}

/// The reviewers counted by state, as a list line and the card's text say it: "1 of 3 approved, 1 needs work,
/// 1 reviewed (no verdict)"; states nobody is in are left out, approvals always said.
pub fn tally(pr: &PullRequest) -> String {
    let states: Vec<ReviewerState> = reviewer_states(pr).map(|(_, s)| s).collect();
    let count = |s: ReviewerState| states.iter().filter(|&&x| x == s).count();
    let mut out = format!("{} of {} approved", count(ReviewerState::Approved), states.len());
    for (s, words) in [
        (ReviewerState::NeedsWork, "needs work"),
        (ReviewerState::Reviewed, "reviewed (no verdict)"),
        (ReviewerState::ReviewedOlder, "reviewed an older commit"),
    ] {
        let n = count(s);
        if n > 0 {
            out.push_str(&format!(", {n} {words}"));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn participant(v: serde_json::Value) -> Participant {
        serde_json::from_value(v).unwrap()
    }

    const HEAD: &str = "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d";

    /// The participant shapes Bitbucket has sent, 5.x to 9.x: `approved` alone (Stash-era recordings), `status`
    /// from 4.2 on, `lastReviewedCommit` on later servers; each read the same way.
    #[test]
    fn every_servers_participant_reads_as_bitbucket_shows_it() {
        let user = json!({"name": "carol", "displayName": "Carol Chen", "slug": "carol"});
        let cases = [
            (json!({"user": user, "role": "REVIEWER", "approved": true}), ReviewerState::Approved),
            (json!({"user": user, "role": "REVIEWER", "approved": false}), ReviewerState::NotReviewed),
            (
                json!({"user": user, "role": "REVIEWER", "approved": false, "status": "NEEDS_WORK"}),
                ReviewerState::NeedsWork,
            ),
            (
                json!({"user": user, "role": "REVIEWER", "approved": true, "status": "APPROVED"}),
                ReviewerState::Approved,
            ),
            (
                json!({"user": user, "role": "REVIEWER", "approved": false, "status": "UNAPPROVED"}),
                ReviewerState::NotReviewed,
            ),
            (
                json!({"user": user, "role": "REVIEWER", "approved": false, "status": "UNAPPROVED", "lastReviewedCommit": HEAD}),
                ReviewerState::Reviewed,
            ),
            (
                json!({"user": user, "role": "REVIEWER", "approved": false, "status": "UNAPPROVED",
                       "lastReviewedCommit": "0000000000000000000000000000000000000abc"}),
                ReviewerState::ReviewedOlder,
            ),
            (
                json!({"user": user, "role": "REVIEWER", "approved": false, "status": "NEEDS_WORK", "lastReviewedCommit": HEAD}),
                ReviewerState::NeedsWork,
            ),
            (
                json!({"user": user, "role": "REVIEWER", "approved": true, "status": "APPROVED",
                       "lastReviewedCommit": "0000000000000000000000000000000000000abc"}),
                ReviewerState::Approved,
            ),
            (json!({"user": user, "status": "UNAPPROVED", "lastReviewedCommit": ""}), ReviewerState::NotReviewed),
            (json!({"user": user, "status": "SOMETHING_NEW"}), ReviewerState::NotReviewed),
        ];
        for (shape, want) in cases {
            assert_eq!(ReviewerState::of(&participant(shape.clone()), Some(HEAD)), want, "{shape}");
        }
        // A pull request read without its head: a review is of some commit, not known to be the head.
        let reviewed = participant(json!({"user": user, "status": "UNAPPROVED", "lastReviewedCommit": HEAD}));
        assert_eq!(ReviewerState::of(&reviewed, None), ReviewerState::ReviewedOlder);
    }

    #[test]
    fn the_tally_says_each_state_someone_is_in() {
        let pr: PullRequest = serde_json::from_value(json!({
            "fromRef": {"id": "refs/heads/f", "latestCommit": HEAD},
            "reviewers": [
                {"user": {"name": "a"}, "status": "APPROVED"},
                {"user": {"name": "b"}, "status": "NEEDS_WORK"},
                {"user": {"name": "c"}, "status": "UNAPPROVED", "lastReviewedCommit": HEAD},
                {"user": {"name": "d"}, "status": "UNAPPROVED", "lastReviewedCommit": "beef"},
                {"user": {"name": "e"}, "status": "UNAPPROVED"},
            ]
        }))
        .unwrap();
        assert_eq!(tally(&pr), "1 of 5 approved, 1 needs work, 1 reviewed (no verdict), 1 reviewed an older commit");
        let none: PullRequest = serde_json::from_value(json!({"reviewers": []})).unwrap();
        assert_eq!(tally(&none), "0 of 0 approved");
    }
}
