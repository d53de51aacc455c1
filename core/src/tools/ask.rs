//! How the tools that ask put their question ([`crate::confirm`]): most name a pull request, so they
//! read it first (its title, its branches, its version, whether it is open) and ask in Bitbucket's
//! words; the question's pin holds what the person saw. What the person confirms starts the tool
//! again ([`Confirming::Confirmed`]), and it writes as it always did, at the version pinned where it
//! writes at one.
//!
//! Requests: `GET …/pull-requests/{id}` (and, for a merge, `GET …/settings/pull-requests`, the
//! repository's merge strategy: docs/reference/bitbucket-dc.md "Merge strategies"). Only reads: the
//! session refuses a write before the person confirmed.

use serde_json::{Map, Value, json};

use crate::bitbucket::model::PullRequest;
use crate::confirm::{Question, quoted};
use crate::errors::{self, Subject};
use crate::fetch::{FetchOutcome, FetchRequest};
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::pull_request;

/// How long a quoted title may be in a question.
const TITLE_CHARS: usize = 120;

/// Makes the question from the pull request read, or refuses (before anyone is asked) with a sentence.
pub(crate) type Make = fn(&About, &PullRequest, &Map<String, Value>) -> Result<Question, String>;

/// The pull request a question is about, as the call named it.
#[derive(Debug, Clone)]
pub(crate) struct About {
    pub(crate) project: String,
    pub(crate) repo: String,
    pub(crate) id: u64,
    /// The repository's default merge strategy, its name and id, when it was asked for and Bitbucket said.
    pub(crate) strategy: Option<(String, String)>,
}

impl About {
    /// The pull request a call names, nothing read yet.
    pub(crate) fn new(project: String, repo: String, id: u64) -> About {
        About { project, repo, id, strategy: None }
    }
}

impl About {
    /// "pull request #12 “Add retry” in BB/api (“feature/retry” → main) at version 3": what the person
    /// is asked about, as they would find it in Bitbucket, and the version they are shown.
    pub(crate) fn named(&self, pr: &PullRequest) -> String {
        let title = pr.title.as_deref().map(|t| format!(" {}", quoted(t, TITLE_CHARS))).unwrap_or_default();
        format!(
            "pull request #{}{title} in {}/{} ({} → {}) at version {}",
            self.id,
            self.project,
            self.repo,
            from(pr),
            to(pr),
            pr.version.unwrap_or(0)
        )
    }
}

/// The source branch's name as Bitbucket shows it.
pub(crate) fn from(pr: &PullRequest) -> String {
    pr.from_ref.as_ref().map(|r| quoted(r.name(), 80)).unwrap_or_else(|| "its source".into())
}

/// The target branch's name as Bitbucket shows it.
pub(crate) fn to(pr: &PullRequest) -> String {
    pr.to_ref.as_ref().map(|r| visible_name(r.name())).unwrap_or_else(|| "its target".into())
}

fn visible_name(s: &str) -> String {
    let shown = crate::text::visible(s);
    shown.chars().take(80).collect()
}

/// Reads pull request `about` (and, when `strategy`, the repository's merge strategy), then asks
/// the question `make` makes of them.
pub(crate) fn about_pull_request(about: About, args: &Map<String, Value>, strategy: bool, make: Make) -> Step {
    let mut first = vec![(Read::PullRequest, pull_request::request(&about.project, &about.repo, about.id))];
    if strategy {
        first.push((Read::Strategy, settings_request(&about.project, &about.repo)));
    }
    Step::wait(Ask { about, args: args.clone(), make, pr: None }, first)
}

/// `GET …/settings/pull-requests`: the repository's pull request settings, its merge strategy among them.
fn settings_request(project: &str, repo: &str) -> FetchRequest {
    FetchRequest::get(format!("{}/settings/pull-requests", crate::bitbucket::repo_path(project, repo)), vec![])
}

#[derive(Debug, Clone, Copy)]
enum Read {
    PullRequest,
    Strategy,
}

#[derive(Debug)]
struct Ask {
    about: About,
    args: Map<String, Value>,
    make: Make,
    pr: Option<Result<PullRequest, String>>,
}

impl Plan for Ask {
    type Read = Read;

    fn on(&mut self, read: Read, outcome: FetchOutcome, f: &mut Fetches<'_, '_, Read>) -> Option<ToolResult> {
        let subject = Subject { project: &self.about.project, repo: &self.about.repo, pr: Some(self.about.id) };
        match read {
            Read::PullRequest => {
                self.pr = Some(errors::json::<PullRequest>(&outcome, subject, None).map_err(|e| e.to_string()))
            }
            // A strategy Bitbucket does not say (an older server, no permission) is named as the repository's.
            Read::Strategy => self.about.strategy = strategy_of(&outcome),
        }
        if f.waiting() > 0 {
            return None;
        }
        let pr = match self.pr.take()? {
            Ok(pr) => pr,
            Err(e) => return Some(ToolResult::error(format!("{e} Nobody was asked; nothing was changed."))),
        };
        match (self.make)(&self.about, &pr, &self.args) {
            Ok(question) => {
                f.ask(question);
                None
            }
            Err(refusal) => Some(ToolResult::error(refusal)),
        }
    }
}

/// The default merge strategy's name and id from `…/settings/pull-requests` (`mergeConfig.defaultStrategy`).
fn strategy_of(outcome: &FetchOutcome) -> Option<(String, String)> {
    let FetchOutcome::Response(r) = outcome else { return None };
    if r.status != 200 {
        return None;
    }
    let v: Value = serde_json::from_slice(&r.body).ok()?;
    let s = v.get("mergeConfig")?.get("defaultStrategy")?;
    let name = s.get("name").and_then(Value::as_str)?;
    let id = s.get("id").and_then(Value::as_str)?;
    Some((name.chars().take(60).collect(), id.chars().take(40).collect()))
}

/// The pin a question about a pull request holds: the version the person saw.
pub(crate) fn pin(pr: &PullRequest) -> Value {
    json!({"version": pr.version.unwrap_or(0)})
}

/// The version a confirmed call writes at: the one the person saw.
pub(crate) fn pinned_version(pin: &Value) -> Option<u64> {
    pin.get("version").and_then(Value::as_u64)
}

/// Refuses a pull request that is not open, before anyone is asked.
pub(crate) fn open(about: &About, pr: &PullRequest, what: &str) -> Result<(), String> {
    match pr.state.as_deref() {
        Some("OPEN") => Ok(()),
        other => Err(format!(
            "PR #{} in {}/{} is {}: only an open pull request {what}. Nobody was asked; nothing was changed.",
            about.id,
            about.project,
            about.repo,
            other.unwrap_or("not open").to_lowercase()
        )),
    }
}
