//! A pull request's changes written for the model: what differs between two reads of it, and the answer to a
//! write Bitbucket refused for a stale version. For `update_pull_request`, `decline_pull_request` and
//! `reopen_pull_request`.

use super::{short, short_commit};
use crate::bitbucket::model::PullRequest;

/// What differs between two reads of a pull request, each as a short clause: what the model would want to
/// know before writing again.
pub fn what_changed(before: &PullRequest, after: &PullRequest) -> Vec<String> {
    let mut out = Vec::new();
    if before.state != after.state {
        out.push(format!(
            "state {} → {}",
            before.state.as_deref().unwrap_or("?"),
            after.state.as_deref().unwrap_or("?")
        ));
    }
    if before.title != after.title {
        out.push(format!("title now \"{}\"", short(after.title.as_deref().unwrap_or(""), 80)));
    }
    if before.description.as_deref().unwrap_or("") != after.description.as_deref().unwrap_or("") {
        out.push("description edited".into());
    }
    let handles = |pr: &PullRequest| pr.reviewers.iter().map(|r| r.user.handle().to_owned()).collect::<Vec<_>>();
    let (was, now) = (handles(before), handles(after));
    let added: Vec<&str> = now.iter().filter(|n| !was.contains(n)).map(String::as_str).collect();
    let removed: Vec<&str> = was.iter().filter(|n| !now.contains(n)).map(String::as_str).collect();
    if !added.is_empty() {
        out.push(format!("reviewers added: {}", added.join(", ")));
    }
    if !removed.is_empty() {
        out.push(format!("reviewers removed: {}", removed.join(", ")));
    }
    let target = |pr: &PullRequest| pr.to_ref.as_ref().map(|r| r.name().to_owned());
    if target(before) != target(after) {
        out.push(format!("target {} → {}", target(before).unwrap_or_default(), target(after).unwrap_or_default()));
    }
    if before.draft.unwrap_or(false) != after.draft.unwrap_or(false) {
        out.push(if after.draft == Some(true) { "now a draft" } else { "ready for review (no longer a draft)" }.into());
    }
    let head = |pr: &PullRequest| pr.from_ref.as_ref().and_then(|r| r.latest_commit.clone());
    if head(before) != head(after) {
        out.push(format!(
            "source moved {} → {}",
            short_commit(head(before).as_deref()),
            short_commit(head(after).as_deref())
        ));
    }
    out
}

/// The answer to a write refused for a stale version, from the pull request bb read and the one Bitbucket has now.
pub fn stale(id: u64, before: Option<&PullRequest>, now: &PullRequest, what: &str) -> String {
    let was = before.and_then(|b| b.version).map(|v| v.to_string()).unwrap_or_else(|| "?".into());
    let changes = before.map(|b| what_changed(b, now)).unwrap_or_default();
    let changes = if changes.is_empty() { "nothing bb shows differs".to_owned() } else { changes.join("; ") };
    format!(
        "PR #{id} changed after bb read it (version {was}, now {}) and was not {what}: {changes}. Read it again (get_pull_request) and call again if it still makes sense.",
        now.version.map(|v| v.to_string()).unwrap_or_else(|| "?".into())
    )
}
