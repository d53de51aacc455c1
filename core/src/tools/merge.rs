//! `merge_pull_request`: merges with Bitbucket's version check; vetoes come back in Bitbucket's words.
//! An unsafe write: exposed only with `--allow-writes` or when named in `--tools`.
//!
//! Requests: one POST `…/merge?version=N` `{version, message?, strategyId?}`, never retried; a stale version
//! answers with the current one, a veto with Bitbucket's reasons.
//!
//! It asks the person first (issue 51): it reads the pull request and the repository's merge strategy
//! ([`super::ask`]), refuses a pull request that is closed, a draft, or at another version than the model gave,
//! and asks "Merge #12 into main" naming the title, the branches, the version and the strategy. What the person
//! confirmed is pinned: the merge is sent at the version they saw, with that strategy, so a pull request that moved
//! meanwhile is Bitbucket's 409 and nothing merges.

use serde_json::{Map, Value, json};

use super::ask::{self, About};
use super::object;
use crate::args::{number, string};
use crate::bitbucket::model::PullRequest;
use crate::confirm::{Confirming, Question, quoted};
use crate::errors::{self, Subject, Write};
use crate::fetch::FetchOutcome;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::text::short_commit;
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};
use crate::writes;

/// `merge_pull_request`, for the catalogue: an unsafe write, exposed only when asked for.
pub const SPEC: ToolSpec = ToolSpec {
    name: "merge_pull_request",
    title: "Merge pull request",
    description: "Merge a pull request at the version you read; a veto comes back in Bitbucket's words.",
    input_schema: schema,
    access: Access::UnsafeWrite,
    asks: Asks::Always { untouched: "nothing was merged" },
    scope: Scoped::Repository,
    role: Role::Data(Toolset::PullRequests),
    annotations: Annotations::IRREVERSIBLE,
    start,
};

fn schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id(),
               "version": {"type": "integer", "minimum": 0, "description": "The version you read"},
               "message": {"type": "string", "description": "Merge commit message"}}),
        &["project", "repo", "pr_id", "version"],
    )
}

fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let (project, repo, id) = crate::args::pull_request(args);
    let (version, strategy) = match call.confirming {
        Confirming::Ask => return ask::about_pull_request(About::new(project, repo, id), args, true, question),
        Confirming::Confirmed(pin) => {
            (ask::pinned_version(pin).unwrap_or(0), pin.get("strategy").and_then(Value::as_str).map(str::to_owned))
        }
        Confirming::Off => (number(args, "version").unwrap_or(0), None),
    };
    let request =
        writes::pull_request::merge(&project, &repo, id, version, string(args, "message"), strategy.as_deref());
    Step::wait(Merge { project, repo, id }, vec![((), request)])
}

/// The question before a merge, or why nobody is asked.
fn question(about: &About, pr: &PullRequest, args: &Map<String, Value>) -> Result<Question, String> {
    ask::open(about, pr, "merges")?;
    if pr.draft == Some(true) {
        return Err(format!(
            "PR #{} in {}/{} is a draft, and Bitbucket merges no draft: mark it ready first (update_pull_request with draft false). Nobody was asked; nothing was merged.",
            about.id, about.project, about.repo
        ));
    }
    let seen = pr.version.unwrap_or(0);
    let given = number(args, "version").unwrap_or(0);
    if seen != given {
        return Err(format!(
            "PR #{} in {}/{} is at version {seen}, not {given}: it changed since you read it. Read it again with get_pull_request; nobody was asked and nothing was merged.",
            about.id, about.project, about.repo
        ));
    }
    let how = match &about.strategy {
        Some((name, _)) => format!("with the merge strategy {}", quoted(name, 60)),
        None => "with the repository's default merge strategy".to_owned(),
    };
    let mut pin = ask::pin(pr);
    if let Some((_, id)) = &about.strategy {
        pin["strategy"] = Value::from(id.as_str());
    }
    Ok(Question {
        message: format!("Merge {}, {how}. A merge cannot be undone.", about.named(pr)),
        confirm: format!("Merge #{} into {}", about.id, ask::to(pr)),
        pin,
    })
}

#[derive(Debug)]
struct Merge {
    project: String,
    repo: String,
    id: u64,
}

impl Plan for Merge {
    type Read = ();

    fn on(&mut self, _: (), outcome: FetchOutcome, _: &mut Fetches<'_, '_, ()>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        let write = Write {
            effect: "the pull request was merged",
            check: "read it with get_pull_request (state MERGED or not) before merging again",
        };
        Some(match errors::json::<PullRequest>(&outcome, about, Some(write)) {
            Ok(pr) => {
                let to = pr.to_ref.as_ref().map(|r| r.name().to_owned()).unwrap_or_else(|| "?".into());
                let state = pr.state.as_deref().unwrap_or("?");
                let head = pr.to_ref.as_ref().and_then(|r| r.latest_commit.as_deref());
                let mut text = format!(
                    "Merged PR #{} into {to} in {}/{}: state {state}, version {}",
                    self.id,
                    self.project,
                    self.repo,
                    pr.version.unwrap_or(0)
                );
                if head.is_some() {
                    text.push_str(&format!(", target at {}", short_commit(head)));
                }
                text.push('.');
                ToolResult::text(text)
            }
            Err(e) => ToolResult::error(e),
        })
    }
}
