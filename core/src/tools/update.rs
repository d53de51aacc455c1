//! `update_pull_request`: title, description, reviewers (added and removed by name), target branch and draft,
//! with the version bb reads itself; reviewers not named stay.
//!
//! Requests: `GET …/pull-requests/{id}` (the version and what the pull request holds now), then
//! `PUT …/pull-requests/{id}` `{version, title, description, reviewers[{user{name}}], toRef?{id, repository}, draft?}`
//! [spec: 9.4 `update`]. Bitbucket's PUT replaces the reviewers with the list sent (an absent list removes them all:
//! the known failure of other servers) [issue b1ff/atlassian-dc-mcp#84], so bb always sends the whole merged list.
//! The PUT is never retried; a stale version (409) comes back with the pull request as it is now
//! [rec: sourcegraph/sourcegraph-public-snapshot BitbucketServerSource_UpdateChangeset_outdated.yaml], from which
//! the answer says what changed meanwhile (without it, bb reads the pull request once more).
//! 2 requests; 1 when nothing would change; 3 after a 409 without the pull request.

use serde_json::{Map, Value, json};

use super::ask::{self, About};
use super::object;
use super::versioned::{self, Written};
use crate::args::{flag, string};
use crate::bitbucket::model::{Participant, PullRequest};
use crate::confirm::{Confirming, Question};
use crate::errors::{self, Subject, Write};
use crate::fetch::{FetchOutcome, FetchRequest};
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::pull_request;
use crate::text::pull_request::{stale, what_changed};
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};
use crate::writes;

/// `update_pull_request`, for the catalogue. Destructive: a title or description replaced is gone, and a removed
/// reviewer's verdict goes with them. Idempotent: the same call again finds nothing to change and writes nothing.
/// A write a person can undo (edit again, add the reviewer back), so exposed without `--allow-writes`.
pub const SPEC: ToolSpec = ToolSpec {
    name: "update_pull_request",
    title: "Update pull request",
    description: "Edit title, description, target, draft or reviewers (others stay); bb reads the version.",
    input_schema: schema,
    access: Access::Write,
    asks: Asks::When {
        applies: |args| args.get("draft").is_some_and(Value::is_boolean),
        case: "when it changes the draft flag",
        untouched: "the pull request was not changed",
    },
    scope: Scoped::Repository,
    role: Role::Data(Toolset::PullRequests),
    annotations: Annotations { read_only: false, destructive: true, idempotent: true, open_world: true },
    start,
};

fn names() -> Value {
    json!({"type": "array", "items": {"type": "string"}, "maxItems": 50, "description": "Usernames"})
}

fn schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id(),
               "title": {"type": "string", "description": "New title"},
               "description": {"type": "string", "description": "New description (Markdown)"},
               "add_reviewers": names(), "remove_reviewers": names(),
               "to_ref": {"type": "string", "description": "New target branch"},
               "draft": {"type": "boolean", "description": "true: draft; false: ready (8.18+)"}}),
        &["project", "repo", "pr_id"],
    )
}

fn list(args: &Map<String, Value>, key: &str) -> Vec<String> {
    let items = args.get(key).and_then(Value::as_array).into_iter().flatten();
    items.filter_map(Value::as_str).map(str::to_owned).collect()
}

/// The question before the draft flag changes (a draft cannot be merged).
fn draft_question(about: &About, pr: &PullRequest, args: &Map<String, Value>) -> Result<Question, String> {
    ask::open(about, pr, "changes")?;
    let draft = args.get("draft").and_then(Value::as_bool).unwrap_or(false);
    let (message, confirm) = if draft {
        (
            format!("Mark {} as a draft: it cannot be merged until it is ready again.", about.named(pr)),
            format!("Mark #{} as draft", about.id),
        )
    } else {
        (
            format!("Mark {} as ready for review: once its merge checks pass it can be merged.", about.named(pr)),
            format!("Mark #{} ready for review", about.id),
        )
    };
    let other =
        ["title", "description", "add_reviewers", "remove_reviewers", "to_ref"].iter().any(|k| args.contains_key(*k));
    let message = if other { format!("{message} The other changes asked for are made with it.") } else { message };
    Ok(Question { message, confirm, pin: ask::pin(pr) })
}

fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    if call.confirming == Confirming::Ask {
        let (project, repo, id) = crate::args::pull_request(args);
        return ask::about_pull_request(About::new(project, repo, id), args, false, draft_question);
    }
    let (project, repo, id) = crate::args::pull_request(args);
    let u = Update {
        title: string(args, "title").map(str::to_owned),
        description: string(args, "description").map(str::to_owned),
        add: list(args, "add_reviewers"),
        remove: list(args, "remove_reviewers"),
        to: string(args, "to_ref").map(crate::reads::pull_requests::full_ref),
        draft: flag(args, "draft"),
        read: None,
        sent: Vec::new(),
        notes: Vec::new(),
        project,
        repo,
        id,
    };
    if u.title.is_none()
        && u.description.is_none()
        && u.add.is_empty()
        && u.remove.is_empty()
        && u.to.is_none()
        && u.draft.is_none()
    {
        return Step::Done(ToolResult::error("Nothing to update: give at least one of the fields to change."));
    }
    let first = pull_request::request(&u.project, &u.repo, id);
    Step::wait(u, vec![(UpdateRead::PullRequest, first)])
}

/// The reads and the write of `update_pull_request`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UpdateRead {
    /// The pull request, for its version and what it holds.
    PullRequest,
    /// The `PUT`, with the version read.
    Update,
    /// The pull request once more, after a 409 that did not carry it.
    Again,
}

#[derive(Debug)]
struct Update {
    project: String,
    repo: String,
    id: u64,
    title: Option<String>,
    description: Option<String>,
    add: Vec<String>,
    remove: Vec<String>,
    to: Option<String>,
    draft: Option<bool>,
    /// The pull request as bb read it before writing.
    read: Option<PullRequest>,
    /// The reviewers' names the `PUT` carried, to name any that Bitbucket's answer does not list.
    sent: Vec<String>,
    notes: Vec<String>,
}

/// The most characters of a reviewer's name the answer quotes back (a name is at most 256: `args::check_places`).
const NAME_ECHO: usize = 100;

/// The name Bitbucket's body takes for a participant (`user.name`), else the slug.
fn name_of(p: &Participant) -> &str {
    p.user.name.as_deref().or(p.user.slug.as_deref()).unwrap_or("?")
}

/// Whether `given` names this participant (user names are not case-sensitive in Bitbucket). [assumed]
fn names_participant(given: &str, p: &Participant) -> bool {
    [p.user.name.as_deref(), p.user.slug.as_deref()].into_iter().flatten().any(|n| n.eq_ignore_ascii_case(given))
}

impl Update {
    /// The update, or the answer when there is nothing to write.
    fn plan(&mut self, pr: &PullRequest) -> Result<FetchRequest, ToolResult> {
        let Some(version) = pr.version else {
            return Err(ToolResult::error(format!(
                "Bitbucket did not say PR #{}'s version, so bb cannot update it; nothing was changed.",
                self.id
            )));
        };
        let mut reviewers: Vec<String> = pr
            .reviewers
            .iter()
            .filter(|r| !self.remove.iter().any(|x| names_participant(x, r)))
            .map(|r| name_of(r).to_owned())
            .collect();
        for x in &self.remove {
            if !pr.reviewers.iter().any(|r| names_participant(x, r)) {
                self.notes.push(format!("{} was not a reviewer.", crate::text::short(x, NAME_ECHO)));
            }
        }
        for a in &self.add {
            if !reviewers.iter().any(|r| r.eq_ignore_ascii_case(a)) {
                reviewers.push(a.clone());
            }
        }
        let same_reviewers = reviewers.len() == pr.reviewers.len()
            && pr.reviewers.iter().all(|r| reviewers.iter().any(|n| names_participant(n, r)));
        let title = self.title.as_deref().filter(|t| Some(*t) != pr.title.as_deref());
        let description = self.description.as_deref().filter(|d| *d != pr.description.as_deref().unwrap_or(""));
        let to = self.to.as_deref().filter(|t| Some(*t) != pr.to_ref.as_ref().and_then(|r| r.id.as_deref()));
        let draft = self.draft.filter(|d| *d != pr.draft.unwrap_or(false));
        if same_reviewers && title.is_none() && description.is_none() && to.is_none() && draft.is_none() {
            let mut text =
                format!("PR #{} in {}/{} already is as asked: nothing to change.", self.id, self.project, self.repo);
            for n in &self.notes {
                text.push(' ');
                text.push_str(n);
            }
            return Err(ToolResult::text(text));
        }
        let update = writes::pull_request::Update {
            version,
            title: title.or(pr.title.as_deref()),
            description: description.or(pr.description.as_deref()),
            reviewers: &reviewers,
            to,
            draft,
        };
        let request = writes::pull_request::update(&self.project, &self.repo, self.id, &update);
        self.sent = reviewers;
        Ok(request)
    }

    fn done(&self, after: &PullRequest) -> String {
        let mut what = self.read.as_ref().map(|before| what_changed(before, after)).unwrap_or_default();
        if what.is_empty() {
            what.push("Bitbucket's answer shows no difference".into());
        }
        let mut out = format!(
            "Updated PR #{} in {}/{}, now version {}: {}.",
            self.id,
            self.project,
            self.repo,
            after.version.map(|v| v.to_string()).unwrap_or_else(|| "?".into()),
            what.join("; ")
        );
        let now: Vec<&str> = after.reviewers.iter().map(|r| r.user.handle()).collect();
        out.push_str(&format!(" Reviewers: {}.", if now.is_empty() { "none".into() } else { now.join(", ") }));
        let lost: Vec<String> = self
            .sent
            .iter()
            .filter(|n| !after.reviewers.iter().any(|r| names_participant(n, r)))
            .map(|n| crate::text::short(n, NAME_ECHO))
            .collect();
        if !lost.is_empty() {
            out.push_str(&format!(" Bitbucket's answer does not list {} as reviewer(s).", lost.join(", ")));
        }
        for n in &self.notes {
            out.push(' ');
            out.push_str(n);
        }
        out
    }
}

impl Plan for Update {
    type Read = UpdateRead;

    fn on(
        &mut self,
        read: UpdateRead,
        outcome: FetchOutcome,
        f: &mut Fetches<'_, '_, UpdateRead>,
    ) -> Option<ToolResult> {
        let (project, repo) = (self.project.clone(), self.repo.clone());
        let about = Subject { project: &project, repo: &repo, pr: Some(self.id) };
        match read {
            UpdateRead::PullRequest => {
                let read = versioned::read(&outcome, about, |pr| self.plan(pr), f, UpdateRead::Update);
                read.map(|pr| self.read = Some(pr)).err()
            }
            UpdateRead::Update => {
                let write = Write {
                    effect: "the pull request was updated",
                    check: "read it with get_pull_request before trying again",
                };
                match versioned::written(&outcome, about, write, errors::json::<PullRequest>) {
                    Written::Done(after) => Some(ToolResult::text(self.done(&after))),
                    Written::Stale { now: Some(now), .. } => {
                        Some(ToolResult::error(stale(self.id, self.read.as_ref(), &now, "updated")))
                    }
                    Written::Stale { now: None, .. } => {
                        f.fetch(UpdateRead::Again, pull_request::request(&self.project, &self.repo, self.id));
                        None
                    }
                    Written::Failed(e) => Some(ToolResult::error(e)),
                }
            }
            UpdateRead::Again => Some(ToolResult::error(match errors::json::<PullRequest>(&outcome, about, None) {
                Ok(now) => stale(self.id, self.read.as_ref(), &now, "updated"),
                Err(e) => versioned::again_failed(&format!("PR #{}", self.id), "updated", &e),
            })),
        }
    }
}
