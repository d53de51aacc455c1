//! `enable_auto_merge` and `disable_auto_merge` (Bitbucket 8.15+): a pull request merged by Bitbucket once every
//! merge check passes, or no longer.
//!
//! Sources (Atlassian's 9.4 OpenAPI, `…/pull-requests/{pullRequestId}/merge` and `…/auto-merge`):
//! - requesting it is a merge with `autoMerge: true`: `POST …/pull-requests/{id}/merge?version=N`
//!   `{version, autoMerge: true}` → 200 with the pull request; 403 "The auto-merge setting is not enabled for the
//!   repository that this pull request targets"; 409 for conflicts, a stale version or a pull request not open.
//!   (`POST …/auto-merge` only asks Bitbucket to try a merge already requested: 400 when none was.)
//! - `DELETE …/pull-requests/{id}/auto-merge` → 204 "The auto-merge request was cancelled"; 409 when not open.
//! - `GET …/auto-merge` answers the request (`{createdDate, fromHash, toRefId, strategyId?, message?}`); bb does
//!   not need it.
//!
//! A server older than 8.15 has no `…/auto-merge` path (404) and does not know `autoMerge`: it would merge at
//! once. So `enable_auto_merge` reads the server's version (and the pull request's, which the merge needs) first
//! and writes nothing to an older server. [assumed: that an older server ignores the field rather than refusing
//! it; the version (8.15) is the issue's] When checks already pass, Bitbucket merges right away [assumed], so
//! enabling is an unsafe write, exposed as `merge_pull_request` is. Requests: enable 2 reads and 1 write;
//! disable 1 write, and the version read only after a 404 that names no missing pull request or repository.

use serde_json::{Map, Value, json};

use super::ask::{self, About};
use super::object;
use crate::bitbucket::model::PullRequest;
use crate::confirm::{Confirming, Question};
use crate::errors::{self, BitbucketError, Subject, Write};
use crate::fetch::{FetchOutcome, FetchRequest};
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::{pull_request, server};
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};
use crate::writes;

/// The release that brought auto-merge.
const SINCE: (u32, u32) = (8, 15);

/// `enable_auto_merge`: may merge at once, which cannot be undone.
pub const ENABLE_SPEC: ToolSpec = ToolSpec {
    name: "enable_auto_merge",
    title: "Enable auto-merge",
    description: "Have Bitbucket (8.15+) merge a pull request once its checks pass; at once if they do.",
    input_schema: schema,
    access: Access::UnsafeWrite,
    asks: Asks::Always { untouched: "auto-merge was not turned on" },
    scope: Scoped::Repository,
    role: Role::Data(Toolset::PullRequests),
    annotations: Annotations::IRREVERSIBLE,
    start: start_enable,
};

/// `disable_auto_merge`: enable_auto_merge undoes it; the same call again changes nothing more.
pub const DISABLE_SPEC: ToolSpec = ToolSpec {
    name: "disable_auto_merge",
    title: "Disable auto-merge",
    description: "Cancel a pull request's auto-merge; it stays open.",
    input_schema: schema,
    access: Access::Write,
    asks: Asks::Always { untouched: "auto-merge stays on" },
    scope: Scoped::Repository,
    role: Role::Data(Toolset::PullRequests),
    annotations: Annotations { read_only: false, destructive: false, idempotent: true, open_world: true },
    start: start_disable,
};

fn schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id()}),
        &["project", "repo", "pr_id"],
    )
}

/// The reads and the write of either tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    Version,
    PullRequest,
    Write,
}

#[derive(Debug)]
struct AutoMerge {
    project: String,
    repo: String,
    id: u64,
    enable: bool,
    version: Option<Result<server::Version, BitbucketError>>,
    pr: Option<Result<PullRequest, BitbucketError>>,
    /// The 404 of a cancel, while the version says why.
    not_found: Option<BitbucketError>,
    /// The version the person saw when they confirmed: auto-merge is requested at it, so a pull request
    /// that moved meanwhile is Bitbucket's 409.
    pinned: Option<u64>,
}

fn start_enable(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let (project, repo, id) = crate::args::pull_request(args);
    if call.confirming == Confirming::Ask {
        return ask::about_pull_request(About::new(project, repo, id), args, false, enable_question);
    }
    let first =
        vec![(Read::Version, server::request()), (Read::PullRequest, pull_request::request(&project, &repo, id))];
    let pinned = match call.confirming {
        Confirming::Confirmed(pin) => ask::pinned_version(pin),
        _ => None,
    };
    Step::wait(AutoMerge { project, repo, id, enable: true, version: None, pr: None, not_found: None, pinned }, first)
}

fn start_disable(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let (project, repo, id) = crate::args::pull_request(args);
    if call.confirming == Confirming::Ask {
        return ask::about_pull_request(About::new(project, repo, id), args, false, disable_question);
    }
    let request = writes::pull_request::cancel_auto_merge(&project, &repo, id);
    Step::wait(
        AutoMerge { project, repo, id, enable: false, version: None, pr: None, not_found: None, pinned: None },
        vec![(Read::Write, request)],
    )
}

/// The question before auto-merge is turned on, or why nobody is asked.
fn enable_question(about: &About, pr: &PullRequest, _: &Map<String, Value>) -> Result<Question, String> {
    ask::open(about, pr, "merges")?;
    if pr.draft == Some(true) {
        return Err(format!(
            "PR #{} in {}/{} is a draft, and Bitbucket merges no draft: mark it ready first. Nobody was asked; auto-merge was not turned on.",
            about.id, about.project, about.repo
        ));
    }
    Ok(Question {
        message: format!(
            "Turn on auto-merge for {}: Bitbucket merges it by itself once every merge check passes, at once if they already do. A merge cannot be undone.",
            about.named(pr)
        ),
        confirm: format!("Auto-merge #{} into {}", about.id, ask::to(pr)),
        pin: ask::pin(pr),
    })
}

/// The question before auto-merge is turned off.
fn disable_question(about: &About, pr: &PullRequest, _: &Map<String, Value>) -> Result<Question, String> {
    Ok(Question {
        message: format!("Turn off auto-merge for {}: it stays open until someone merges it.", about.named(pr)),
        confirm: format!("Turn off auto-merge for #{}", about.id),
        pin: ask::pin(pr),
    })
}

impl AutoMerge {
    fn name(&self) -> String {
        format!("PR #{} in {}/{}", self.id, self.project, self.repo)
    }

    /// The sentence for a server older than 8.15, or `None` when it is not (or its version is unknown).
    fn too_old(&self, v: &server::Version) -> Option<String> {
        (v.at_least(SINCE.0, SINCE.1) == Some(false)).then(|| {
            format!(
                "This Bitbucket is {}, and auto-merge came in {}.{}: nothing was changed{}.",
                v.text,
                SINCE.0,
                SINCE.1,
                if self.enable { " (merge_pull_request merges now)" } else { "" }
            )
        })
    }

    /// The merge request with `autoMerge`, once the version and the pull request are read; or the answer.
    fn enable_request(
        &self,
        v: &Result<server::Version, BitbucketError>,
        pr: &Result<PullRequest, BitbucketError>,
    ) -> Result<FetchRequest, ToolResult> {
        let pr = pr.as_ref().map_err(|e| ToolResult::error(e.clone()))?;
        match v {
            Ok(v) => {
                if let Some(old) = self.too_old(v) {
                    return Err(ToolResult::error(old));
                }
            }
            Err(e) => {
                return Err(ToolResult::error(format!(
                    "bb could not read Bitbucket's version, which auto-merge needs (8.15+): {e} Nothing was changed."
                )));
            }
        }
        match pr.state.as_deref() {
            Some("OPEN") => {}
            other => {
                let state = other.unwrap_or("not open").to_lowercase();
                return Err(ToolResult::error(format!(
                    "{} is {state}: only an open pull request merges.",
                    self.name()
                )));
            }
        }
        let Some(version) = self.pinned.or(pr.version) else {
            return Err(ToolResult::error(format!(
                "Bitbucket gave no version for {}: nothing was changed.",
                self.name()
            )));
        };
        Ok(writes::pull_request::auto_merge(&self.project, &self.repo, self.id, version))
    }

    fn enabled(&self, outcome: &FetchOutcome) -> ToolResult {
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        let write = Write {
            effect: "auto-merge was set (or the pull request merged)",
            check: "read it with get_pull_request before asking again",
        };
        match errors::json::<PullRequest>(outcome, about, Some(write)) {
            Ok(pr) if pr.state.as_deref() == Some("MERGED") => {
                ToolResult::text(format!("{} merged now: its merge checks already passed.", self.name()))
            }
            Ok(pr) => {
                let to = pr.to_ref.as_ref().map(|r| r.name().to_owned()).unwrap_or_else(|| "its target".into());
                ToolResult::text(format!(
                    "Auto-merge is on for {}: Bitbucket merges it into {to} once every merge check passes (disable_auto_merge cancels it).",
                    self.name()
                ))
            }
            // Auto-merge turned off for the repository (403), in Bitbucket's words.
            Err(e) => match e.refusal().filter(|r| r.status == 403) {
                Some(r) => ToolResult::error(format!(
                    "Auto-merge is turned off for {}/{} (Bitbucket: \"{}\"): nothing was changed; a repository admin turns it on in the repository's pull request settings.",
                    self.project, self.repo, r.message
                )),
                None => ToolResult::error(e),
            },
        }
    }
}

impl Plan for AutoMerge {
    type Read = Read;

    fn on(&mut self, read: Read, outcome: FetchOutcome, f: &mut Fetches<'_, '_, Read>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        match read {
            Read::Version => self.version = Some(server::version(&outcome, about)),
            Read::PullRequest => self.pr = Some(errors::json::<PullRequest>(&outcome, about, None)),
            Read::Write if self.enable => return Some(self.enabled(&outcome)),
            Read::Write => {
                let write = Write {
                    effect: "auto-merge was cancelled",
                    check: "read the pull request with get_pull_request before cancelling again",
                };
                return match errors::body(&outcome, about, Some(write)) {
                    Ok(_) => Some(ToolResult::text(format!(
                        "Auto-merge is off for {}: it stays open until merged.",
                        self.name()
                    ))),
                    Err(e) if is_bare_404(&outcome) => {
                        // No pull request or repository is missing: the path may be what is (a server before 8.15).
                        self.not_found = Some(e);
                        f.fetch(Read::Version, server::request());
                        None
                    }
                    Err(e) => Some(ToolResult::error(e)),
                };
            }
        }
        if f.waiting() > 0 {
            return None;
        }
        if !self.enable {
            let e = self.not_found.take().map(String::from).unwrap_or_default();
            return Some(ToolResult::error(match self.version.as_ref().map(|v| v.as_ref().map(|v| self.too_old(v))) {
                Some(Ok(Some(old))) => old,
                _ => format!("Bitbucket found no auto-merge to cancel on {}: {e}", self.name()),
            }));
        }
        let (Some(v), Some(pr)) = (&self.version, &self.pr) else {
            return Some(ToolResult::error("bb lost a read of this call: nothing was changed."));
        };
        match self.enable_request(v, pr) {
            Ok(request) => {
                f.fetch(Read::Write, request);
                None
            }
            Err(answer) => Some(answer),
        }
    }
}

/// A 404 from Bitbucket that names no missing project, repository or pull request.
fn is_bare_404(outcome: &FetchOutcome) -> bool {
    match outcome {
        FetchOutcome::Response(r) if r.status == 404 => {
            let body = String::from_utf8_lossy(&r.body);
            !["NoSuchProjectException", "NoSuchRepositoryException", "NoSuchPullRequestException"]
                .iter()
                .any(|e| body.contains(e))
        }
        _ => false,
    }
}
