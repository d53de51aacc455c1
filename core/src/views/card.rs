//! The pull request card (`show` kind `pull_request`): the pull request laid out as Bitbucket's
//! pull request page lays it out.
//!
//! Requests, in stages, each read sent as soon as what it needs is known (a view's time is its
//! dependency depth times Bitbucket's round trip):
//! 1. in parallel: the pull request, the pull request page's build listing, the activity, the
//!    required-build conditions with the branching model, the merge check (asked before the pull
//!    request says whether it is open, and the model before the conditions say whether one needs it:
//!    a request spent where it turns out unneeded, a round trip saved where it is), the person's drafts,
//!    and the Code Insights (reports and annotations) of the source commit a card, a diff view or a
//!    refresh of either last saw the pull request at ([`crate::commit_cache`]), if one did;
//! 2. when the pull request has come: the avatars of its author and reviewers not cached yet, and when
//!    the activity has come, of everyone it names; the Code Insights of the source commit it names,
//!    unless they went out in stage 1 (Code Insights are read per commit: no pull request path serves
//!    them, reference "Code Insights"); when the build listing is missing (404) or incomplete: the
//!    source commit's legacy listing and/or its build stats (reference "Builds"); once everything is
//!    read, the avatars of anyone else the card names.
//!
//! So a card shown again, or refreshed, of a pull request nobody pushed to since takes one round trip
//! (its avatars cached). The stage-1 Code Insights are a guess: drawn only when the pull request names
//! the same commit; when it names another (pushed to since), what they answer is not drawn, before or
//! after the named commit's go out ([`InsightsFor`]), and the card takes two.
//!
//! Counts are Bitbucket's own: comment and task counts from the pull request's properties, build
//! counts from the whole listing when it was read completely, else from the build stats.

use serde_json::{Map, Value, json};

use super::Header;
use crate::bitbucket::model::{Activity, Comment, CommitsChanged, MergeCheck, PullRequest, Ref};
use crate::bitbucket::{Page, RawPage};
use crate::errors::{self, BitbucketError, Subject};
use crate::fetch::FetchOutcome;
use crate::markdown;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::avatars::{Avatar, AvatarStage, People};
use crate::reads::builds::{BuildsRead, BuildsReader, Fallback, Source};
use crate::reads::conditions::{self, ConditionsRead, ConditionsReader};
use crate::reads::insights::{Filter, InsightsRead, InsightsReader};
use crate::reads::{pull_request, review};
use crate::text::short;
use crate::tool::Call;

/// The reads of a card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardRead {
    /// The pull request; its answer names whom bb acts as (`X-AUSERNAME`), and its source commit is the one
    /// whose builds are read.
    PullRequest,
    /// Its builds.
    Builds(BuildsRead),
    /// Its activity, newest first.
    Activity,
    /// The source commit's Code Insights: of the commit the pull request was last seen at, read with the
    /// pull request, or of the commit it names.
    Insights(InsightsFor, InsightsRead),
    /// Bitbucket's merge check, for an open pull request.
    MergeCheck,
    /// The person's pending review: their drafts (7.7+).
    Drafts,
    /// The required-build conditions.
    Conditions(ConditionsRead),
    /// An avatar of someone the card shows.
    Avatar(Avatar),
}

/// Which commit a card's Code Insights read was sent for: the answers of a guess the pull request
/// proved wrong are not drawn, even those that come after the right commit's reads went out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsightsFor {
    /// The commit a card or diff view last saw the pull request at, read beside the pull request.
    Remembered,
    /// The commit the pull request names, read once it has come.
    Named,
}

/// Activities read for the card: about one screen of them, and the card says when more exist.
pub const ACTIVITY_LIMIT: u64 = 50;
/// Builds read per page of a listing.
const BUILDS_LIMIT: u64 = 100;
/// Pages of the pull request's build listing read at most (500 builds); past them the card counts
/// from Bitbucket's stats and says nothing about requirements.
const MAX_BUILD_PAGES: usize = 5;
/// How deep reply threads are drawn; deeper replies are flattened into the deepest shown.
const MAX_REPLY_DEPTH: usize = 12;

/// Starts a card for `project`/`repo`/`pr_id`.
pub fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let project = args.get("project").and_then(Value::as_str).unwrap_or("").to_owned();
    let repo = args.get("repo").and_then(Value::as_str).unwrap_or("").to_owned();
    let Some(id) = args.get("pr_id").and_then(Value::as_u64) else {
        return Step::Done(ToolResult::error("show pull_request needs project, repo and pr_id."));
    };
    if project.is_empty() || repo.is_empty() {
        return Step::Done(ToolResult::error("show pull_request needs project, repo and pr_id."));
    }
    let activity = pull_request::activity_request(&project, &repo, id, 0, ACTIVITY_LIMIT);
    let (required, conditions) = ConditionsReader::eager(&project, &repo);
    // Every page of the listing, up to a cap: requirements are decided only on the whole listing.
    // Without the listing, the commit's (and nothing about requirements); past the cap, the commit's totals.
    let (builds, listing) =
        BuildsReader::new((&project, &repo, id), 0, BUILDS_LIMIT, MAX_BUILD_PAGES, Fallback::CommitListing, true);
    let mut first = vec![
        (CardRead::PullRequest, pull_request::request(&project, &repo, id)),
        (CardRead::Builds(BuildsRead::Listing), listing),
        (CardRead::Activity, activity),
        (CardRead::MergeCheck, pull_request::merge_check_request(&project, &repo, id)),
        (CardRead::Drafts, review::request(&project, &repo, id)),
    ];
    first.extend(conditions.into_iter().map(|(read, request)| (CardRead::Conditions(read), request)));
    let card = Card {
        header: Header::new("pull_request", args, call),
        base_url: call.base_url.map(str::to_owned),
        avatars: AvatarStage::default(),
        project,
        repo,
        id,
        pr: None,
        you: call.bitbucket_user.map(str::to_owned),
        builds,
        required,
        insights: None,
        activity: None,
        merge_check: None,
        drafts: Value::Null,
        built: None,
        missing: Vec::new(),
        people: People::default(),
    };
    Step::wait(card, first)
}

#[derive(Debug)]
struct Card {
    header: Header,
    base_url: Option<String>,
    avatars: AvatarStage,
    project: String,
    repo: String,
    id: u64,
    pr: Option<PullRequest>,
    /// Whom bb acts as: Bitbucket names them in `X-AUSERNAME` on an authenticated answer
    /// (reference/bitbucket-dc.md "Authentication"; [assumed] for 9.x). The page offers no review to
    /// the author, as Bitbucket's own page does not, and Unapprove to someone who approved.
    you: Option<String>,
    builds: BuildsReader,
    required: ConditionsReader,
    /// The source commit's Code Insights, and which commit they were asked for: the one remembered,
    /// asked for at once, kept when the pull request names it too; else the one it names.
    insights: Option<(InsightsFor, InsightsReader)>,
    /// The activity as the card draws it, drawn when it came.
    activity: Option<Value>,
    /// Asked with the pull request: used (and its failure said) only when the pull request is open.
    merge_check: Option<Result<MergeCheck, BitbucketError>>,
    /// The person's drafts (`drafts` in VIEW_DATA.md), null when not read or the server keeps none.
    drafts: Value,
    /// The view's data, built once everything but the avatars has been read.
    built: Option<Value>,
    missing: Vec<String>,
    people: People,
}

impl Plan for Card {
    type Read = CardRead;

    fn begin(&mut self, f: &mut Fetches<'_, '_, CardRead>) {
        // The commit the pull request was last seen at: its insights go out now, a guess the pull request
        // settles when it comes.
        let remembered = f.commits().get(&self.project, &self.repo, self.id).map(str::to_owned);
        if let Some(commit) = remembered {
            self.read_insights(InsightsFor::Remembered, &commit, f);
        }
    }

    fn on(&mut self, read: CardRead, outcome: FetchOutcome, f: &mut Fetches<'_, '_, CardRead>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        match read {
            CardRead::PullRequest => match errors::json::<PullRequest>(&outcome, about, None) {
                Ok(pr) => {
                    if let FetchOutcome::Response(r) = &outcome
                        && let Some(user) = &r.user
                    {
                        self.you = Some(user.clone());
                    }
                    let commit = pr.from_ref.as_ref().and_then(|r| r.latest_commit.as_deref());
                    self.builds.source_commit(commit, &mut |r, q| f.fetch(CardRead::Builds(r), q));
                    self.note_builds_failure(None);
                    if let Some(c) = commit {
                        f.commits().remember(&self.project, &self.repo, self.id, c);
                    }
                    match (commit, &self.insights) {
                        // The commit remembered is the one: its reads, out since the start, stand.
                        (Some(c), Some((_, reader))) if reader.commit() == c => {}
                        // Moved (or never seen): the named commit's, in place of the guess, whose answers are
                        // then not drawn.
                        (Some(c), _) => self.read_insights(InsightsFor::Named, c, f),
                        (None, _) => self.insights = None,
                    }
                    // The people the card certainly draws: their avatars go now, beside the reads under way.
                    if let Some(a) = &pr.author {
                        self.people.note(&a.user);
                    }
                    for r in &pr.reviewers {
                        self.people.note(&r.user);
                    }
                    self.avatars.early(&self.people, f, CardRead::Avatar);
                    self.pr = Some(pr);
                }
                Err(e) => {
                    let url =
                        self.base_url.as_deref().map(|b| pull_request::page_url(b, &self.project, &self.repo, self.id));
                    return Some(self.header.error(e, url));
                }
            },
            CardRead::Builds(r) => {
                self.builds.on(r, &outcome, &mut |r, q| f.fetch(CardRead::Builds(r), q));
                self.note_builds_failure(Some(r));
            }
            // Drawn only from the reader of the commit it was asked for; a dropped guess's answers are not.
            CardRead::Insights(of, r) => {
                if let Some((current, reader)) = self.insights.as_mut().filter(|(current, _)| *current == of) {
                    let current = *current;
                    reader.on(r, &outcome, &mut |r, q| f.fetch(CardRead::Insights(current, r), q));
                }
            }
            CardRead::MergeCheck => self.merge_check = Some(errors::json::<MergeCheck>(&outcome, about, None)),
            // A server before 7.7 has no `…/review` (404): no drafts, nothing to say.
            CardRead::Drafts => self.drafts = super::drafts(&outcome, about),
            CardRead::Activity => match errors::json::<RawPage>(&outcome, about, None) {
                Ok(p) => {
                    // Drawn as it comes, which notes everyone it names: their avatars go now.
                    self.activity = Some(self.draw_activity(&p.decode()));
                    self.avatars.early(&self.people, f, CardRead::Avatar);
                }
                Err(e) => self.missing.push(format!("Activity: not read — {e}")),
            },
            CardRead::Conditions(r) => self.required.on(r, &outcome, &mut |r, q| f.fetch(CardRead::Conditions(r), q)),
            CardRead::Avatar(a) => self.avatars.on(a, &outcome, f),
        }
        if f.waiting() > 0 {
            return None;
        }
        let pr = self.pr.clone()?;
        // Building the view (once) notes everyone it mentions; their avatars come last.
        if self.built.is_none() {
            if pr.state.as_deref() != Some("OPEN") {
                self.merge_check = None;
            } else if let Some(Err(e)) = &self.merge_check {
                self.missing.push(format!("Merge check: not read — {e}"));
            }
            if let Some((_, reader)) = &self.insights {
                if let Some(e) = &reader.error {
                    self.missing.push(format!("Code Insights: not read — {e}"));
                } else if let Some(e) = reader.annotations_error.as_ref().filter(|_| !reader.absent) {
                    self.missing.push(format!("Code Insights annotations: not read — {e}"));
                }
                if reader.unreadable > 0 && !reader.absent {
                    self.missing.push(super::insights::unreadable_line(reader.unreadable));
                }
            }
            self.built = Some(self.view(&pr));
        }
        if self.avatars.ask(&self.people, f, CardRead::Avatar) {
            return None;
        }
        let view = self.built.take()?;
        Some(self.finish(&pr, view, f))
    }
}

impl Card {
    /// The activity as the card draws it; drawing it notes everyone it names.
    fn draw_activity(&mut self, page: &Page<Activity>) -> Value {
        // A reply whose thread is on this page is drawn inside it, once, not as an item of its own.
        let mut seen = replies_on(&page.values);
        let items: Vec<Value> = page
            .values
            .iter()
            .filter_map(|a| activity_item(a, &mut seen, &mut self.people, self.base_url.as_deref()))
            .collect();
        json!({"items": items, "more": page.next.is_some()})
    }

    /// Reads `commit`'s Code Insights, for `of`: in place of any reader before, whose answers are then
    /// not drawn.
    fn read_insights(&mut self, of: InsightsFor, commit: &str, f: &mut Fetches<'_, '_, CardRead>) {
        let (reader, first) = InsightsReader::new((&self.project, &self.repo, commit), Some(&Filter::default()));
        for (r, q) in first {
            f.fetch(CardRead::Insights(of, r), q);
        }
        self.insights = Some((of, reader));
    }

    /// Notes a builds read that failed as one line of what the card could not read.
    fn note_builds_failure(&mut self, read: Option<BuildsRead>) {
        if read == Some(BuildsRead::Stats) {
            if let Some(Err(e)) = &self.builds.stats {
                self.missing.push(format!("Build totals: not read — {e}"));
            }
        } else if let Some(e) = self.builds.error.take() {
            self.missing.push(format!("Builds: not read — {e}"));
        }
    }

    fn finish<R>(&self, pr: &PullRequest, view: Value, f: &mut Fetches<'_, '_, R>) -> ToolResult {
        let now = f.now_ms();
        let users = self.people.to_value(&f.avatars(), now, self.base_url.as_deref());
        self.header.result(self.summary(pr), users, self.missing.clone(), ("pullRequest", view))
    }

    /// The short text for the model.
    fn summary(&self, pr: &PullRequest) -> String {
        let state = match (pr.state.as_deref(), pr.draft) {
            (Some("OPEN"), Some(true)) => "draft".to_owned(),
            (Some(s), _) => s.to_lowercase(),
            _ => "?".into(),
        };
        let state = match pr.merge_commit() {
            Some(c) => format!("{state}, merge commit {}", c.short()),
            None => state,
        };
        format!(
            "Showing PR #{} \"{}\" in {}/{} to the person ({state}; reviewers: {}).",
            self.id,
            short(pr.title.as_deref().unwrap_or(""), 80),
            self.project,
            self.repo,
            crate::text::review::tally(pr)
        )
    }

    /// The card's data (`pullRequest` in VIEW_DATA.md), noting everyone it mentions.
    fn view(&mut self, pr: &PullRequest) -> Value {
        let people = &mut self.people;
        let author = pr.author.as_ref().map(|a| people.note(&a.user));
        let mut reviewers: Vec<Value> = Vec::new();
        let head = pr.from_ref.as_ref().and_then(|r| r.latest_commit.as_deref());
        for r in &pr.reviewers {
            let user = people.note(&r.user);
            // Reviewed up to the source's head (a finished review sets it), whatever the verdict: Bitbucket knows
            // the reviewer has seen every change, and the card says so rather than "not reviewed yet".
            let reviewed = head.is_some() && r.last_reviewed_commit.as_deref() == head;
            reviewers.push(
                json!({"user": user, "status": r.status.as_deref().unwrap_or("UNAPPROVED"), "reviewed": reviewed}),
            );
        }
        let props = pr.properties.clone().unwrap_or_default();
        let description = pr
            .description
            .as_deref()
            .filter(|d| !d.trim().is_empty())
            .map(|d| markdown::to_tree(d, self.base_url.as_deref()));
        let activity = self.activity.clone();
        let base = self.base_url.as_deref();
        let merge_check = self.merge_check.as_ref().and_then(|m| m.as_ref().ok()).map(|m| {
            let vetoes: Vec<Value> =
                m.vetoes.iter().map(|v| json!({"summary": v.summary_message, "detail": v.detailed_message})).collect();
            json!({"canMerge": m.can_merge.unwrap_or(vetoes.is_empty()), "conflicted": m.conflicted.unwrap_or(false),
                   "outcome": m.outcome, "vetoes": vetoes})
        });
        let mut view = json!({
            "id": pr.id.unwrap_or(self.id),
            "title": pr.title.as_deref().unwrap_or(""),
            "url": pr.links.as_ref().and_then(|l| l.href()),
            "project": self.project,
            "repo": self.repo,
            "version": pr.version,
            "you": self.you.as_deref().map(|name| {
                // X-AUSERNAME is a user name; the view names people by slug.
                let people = pr.author.iter().chain(&pr.reviewers).chain(&pr.participants);
                people.map(|p| &p.user).find(|u| u.name.as_deref() == Some(name)).and_then(|u| u.slug.clone())
                    .unwrap_or_else(|| name.to_owned())
            }),
            "state": pr.state.as_deref().unwrap_or("OPEN"),
            "draft": pr.draft == Some(true),
            "author": author,
            "source": branch(pr.from_ref.as_ref(), base),
            "target": branch(pr.to_ref.as_ref(), base),
            "reviewers": reviewers,
            "mergeOutcome": props.merge_result.and_then(|m| m.outcome),
            "mergeCheck": merge_check,
            "counts": super::counts(pr),
            "drafts": if pr.state.as_deref() == Some("OPEN") { self.drafts.clone() } else { Value::Null },
            "created": pr.created_date,
            "updated": pr.updated_date,
            "closed": pr.closed_date,
            "description": description,
            "builds": self.builds_view(pr),
            "insights": self.insights.as_ref().map_or(Value::Null, |(_, reader)| super::insights::card(reader)),
            "activity": activity,
        });
        // Only a merged pull request's, so an open one's data stays as it was.
        if let Some(c) = pr.merge_commit() {
            let url =
                base.zip(c.id.as_deref()).map(|(b, id)| pull_request::commit_url(b, &self.project, &self.repo, id));
            view["mergeCommit"] = json!({"id": c.id, "short": c.short(), "url": url});
        }
        view
    }

    fn builds_view(&self, pr: &PullRequest) -> Value {
        let b = &self.builds;
        let stats = b.stats.as_ref().and_then(|s| s.as_ref().ok());
        if b.source.is_none() && stats.is_none() {
            return Value::Null;
        }
        let items = b.page.as_ref().map_or(&[][..], |p| &p.values[..]);
        let more = b.page.as_ref().is_some_and(|p| p.next.is_some());
        // Requirements only from the pull request page's own listing, where each build names the
        // key it reports under; the legacy listing does not, so then nothing is said.
        let requirements = match (
            b.source,
            pr.to_ref.as_ref().and_then(|r| r.id.as_deref()),
            pr.from_ref.as_ref().and_then(|r| r.id.as_deref()),
        ) {
            // Decided only on the whole listing: a build past the page read could satisfy a key.
            (Some(Source::PullRequestPage), Some(target), Some(source)) if !more => {
                let facts: Vec<_> = items.iter().map(|x| x.facts()).collect();
                conditions::evaluate(&self.required, target, source, &facts).ok()
            }
            _ => None,
        };
        let listed: Vec<Value> = items
            .iter()
            .map(|x| {
                let required = requirements.as_ref().map(|(keys, _)| keys.contains(x.facts().reports_under()));
                json!({"key": x.key, "name": x.name, "state": x.state.as_deref().unwrap_or("UNKNOWN"), "url": x.url,
                       "description": x.description, "duration": x.duration, "testResults": x.test_results,
                       "reportsUnder": x.facts().reports_under(), "required": required})
            })
            .collect();
        let requirements = requirements.map(|(_, statuses)| {
            let keys: Vec<Value> = statuses.iter().map(|s| json!({"key": s.key, "state": s.state})).collect();
            json!({"summary": crate::requirements::summary(&statuses), "keys": keys,
                   "blocking": statuses.iter().any(|s| s.blocks())})
        });
        // Counts: from the whole listing when it was read completely, else Bitbucket's stats.
        let counts = match (stats, more) {
            (Some(s), _) => Some(json!({"successful": s.successful.unwrap_or(0), "failed": s.failed.unwrap_or(0),
                "inProgress": s.in_progress.unwrap_or(0), "cancelled": s.cancelled.unwrap_or(0), "unknown": s.unknown.unwrap_or(0)})),
            (None, false) => {
                let count = |state: &str| items.iter().filter(|x| x.state.as_deref() == Some(state)).count();
                Some(
                    json!({"successful": count("SUCCESSFUL"), "failed": count("FAILED"), "inProgress": count("INPROGRESS"),
                            "cancelled": count("CANCELLED"), "unknown": items.len() - count("SUCCESSFUL") - count("FAILED") - count("INPROGRESS") - count("CANCELLED")}),
                )
            }
            (None, true) => None,
        };
        let total =
            counts.as_ref().map(|c| c.as_object().map_or(0, |o| o.values().filter_map(Value::as_u64).sum::<u64>()));
        let source = b.source.map(|s| match s {
            Source::PullRequestPage => "ui",
            Source::Commit => "legacy",
        });
        json!({"counts": counts, "items": listed, "shown": items.len(), "total": total,
               "source": source, "requirements": requirements})
    }
}

/// A branch as the card draws it, with its address in Bitbucket (in its own repository: a fork's differs).
pub fn branch(r: Option<&Ref>, base: Option<&str>) -> Value {
    let Some(r) = r else { return Value::Null };
    let repo = r.repository.as_ref();
    let at = repo.and_then(|x| Some((x.project.as_ref()?.key.as_deref()?, x.slug.as_deref()?)));
    let url = match (base, at, r.id.as_deref()) {
        (Some(base), Some((project, slug)), Some(id)) => Some(pull_request::branch_url(base, project, slug, id)),
        _ => None,
    };
    json!({"branch": r.name(), "repo": repo.map(|x| x.full_name()), "url": url})
}

/// The ids of the replies inside the threads that COMMENTED activities on this page carry.
fn replies_on(activities: &[Activity]) -> std::collections::BTreeSet<u64> {
    fn walk(c: &Comment, ids: &mut std::collections::BTreeSet<u64>) {
        for r in &c.comments {
            ids.extend(r.id);
            walk(r, ids);
        }
    }
    let mut ids = std::collections::BTreeSet::new();
    for c in
        activities.iter().filter(|a| a.comment_action.as_deref() != Some("REPLIED")).filter_map(|a| a.comment.as_ref())
    {
        walk(c, &mut ids);
    }
    ids
}

/// One activity as the card draws it; `None` for a comment thread already shown (a thread surfaces in
/// several activities: de-duplicate by comment id [reference "Activity": rec]) or a deleted comment.
fn activity_item(
    a: &Activity,
    seen: &mut std::collections::BTreeSet<u64>,
    people: &mut People,
    base_url: Option<&str>,
) -> Option<Value> {
    let user = a.user.as_ref().map(|u| people.note(u));
    let action = a.action.as_deref().unwrap_or("UNKNOWN");
    let mut item = json!({"id": a.id, "action": action, "user": user, "at": a.created_date});
    match action {
        "RESCOPED" => {
            let count =
                |c: &Option<CommitsChanged>| c.as_ref().map_or(0, |c| c.total.unwrap_or(c.commits.len() as u64));
            item["commits"] = json!({"added": count(&a.added), "removed": count(&a.removed)});
        }
        "UPDATED" if !a.added_reviewers.is_empty() || !a.removed_reviewers.is_empty() => {
            let added: Vec<String> = a.added_reviewers.iter().map(|u| people.note(u)).collect();
            let removed: Vec<String> = a.removed_reviewers.iter().map(|u| people.note(u)).collect();
            item["reviewers"] = json!({"added": added, "removed": removed});
        }
        "MERGED" => {
            item["commit"] = json!(a.commit.as_ref().and_then(|c| c.display_id.clone().or_else(|| c.id.clone())));
        }
        _ => {}
    }
    if action == "COMMENTED" {
        item["commentAction"] = json!(a.comment_action);
        if a.comment_action.as_deref() == Some("DELETED") {
            return None;
        }
        let c = a.comment.as_ref()?;
        if let Some(id) = c.id
            && !seen.insert(id)
        {
            return None;
        }
        let orphaned = a.comment_anchor.as_ref().and_then(|x| x.orphaned).unwrap_or(false);
        item["comment"] = comment(c, orphaned, people, base_url, 0);
    }
    Some(item)
}

/// A comment thread as the views draw it: the comment, its replies (newest last, as Bitbucket draws
/// them), task state and anchor.
pub fn comment(c: &Comment, orphaned: bool, people: &mut People, base_url: Option<&str>, depth: usize) -> Value {
    let author = c.author.as_ref().map(|u| people.note(u));
    let anchor = c.anchor.as_ref().map(|x| {
        let mut a = json!({"path": x.path, "line": x.line, "lineType": x.line_type,
                           "orphaned": orphaned || x.orphaned == Some(true)});
        if x.file_type.as_deref() == Some("FROM") {
            // On the old file's side (the left of a side-by-side diff): its line is the old file's number.
            a["fileType"] = json!("FROM");
        }
        if let Some((from, last)) = x.lines().filter(|(f, l)| f < l) {
            a["from"] = json!(from);
            a["fromType"] = json!(
                x.multiline_marker.as_ref().and_then(|m| m.start_line_type.as_deref()).or(x.line_type.as_deref())
            );
            a["line"] = json!(last);
        }
        a
    });
    // Each ```suggestion block, as the lines it proposes for the anchor's lines; the lines it replaces are added
    // by a view that has them (the diff's), else null.
    let suggestions: Vec<Value> = markdown::suggestions(c.text.as_deref().unwrap_or(""))
        .into_iter()
        .enumerate()
        .map(|(i, new)| {
            let (from, to) =
                c.anchor.as_ref().and_then(|a| a.lines()).map_or((None, None), |(f, t)| (Some(f), Some(t)));
            let applied = u64::try_from(i).is_ok_and(|i| c.applied(i));
            json!({"index": i, "from": from, "to": to, "old": null, "new": new, "applied": applied})
        })
        .collect();
    let mut replies = Vec::new();
    for r in &c.comments {
        if depth + 1 < MAX_REPLY_DEPTH {
            replies.push(comment(r, false, people, base_url, depth + 1));
        } else {
            // Too deep to nest: flatten this reply and everything under it at this level.
            let mut stack = vec![r];
            while let Some(x) = stack.pop() {
                let mut flat = comment(&Comment { comments: vec![], ..x.clone() }, false, people, base_url, depth + 1);
                flat["replies"] = json!([]);
                replies.push(flat);
                stack.extend(x.comments.iter().rev());
            }
        }
    }
    // A task of the old kind (before 7.0) is drawn inside its thread, first among the replies, as a task: with no
    // comment id, so the page offers it no Reply and no Resolve (its id is a task's, which update_pr_comment does
    // not take), and `oldKind` says which it is. [reference "Older servers": rec]
    let old: Vec<Value> = c
        .tasks
        .iter()
        .map(|t| {
            json!({"id": null, "taskId": t.id, "oldKind": true,
                   "author": t.author.as_ref().map(|u| people.note(u)), "at": t.created_date, "edited": false,
                   "text": markdown::to_tree(t.text.as_deref().unwrap_or(""), base_url), "task": true,
                   "state": if t.resolved() { "RESOLVED" } else { "OPEN" }, "anchor": null, "replies": []})
        })
        .collect();
    replies.splice(0..0, old);
    json!({
        "id": c.id,
        "author": author,
        "at": c.created_date,
        "edited": matches!((c.created_date, c.updated_date), (Some(a), Some(b)) if b > a),
        "text": markdown::to_tree(c.text.as_deref().unwrap_or(""), base_url),
        "task": c.is_task(),
        "state": c.state.as_deref().unwrap_or("OPEN"),
        "anchor": anchor,
        "replies": replies,
        "suggestions": if suggestions.is_empty() { Value::Null } else { Value::Array(suggestions) },
        // A draft's own Markdown, so Edit starts from what its author wrote (a tree loses escapes and raw HTML).
        "markdown": if c.is_pending() { Value::from(c.text.as_deref().unwrap_or("")) } else { Value::Null },
    })
}
