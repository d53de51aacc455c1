//! `set_build_status`: posts a build result on a commit, as a CI server does. A write that cannot be
//! undone (Bitbucket keeps a build under its key until another result replaces it, and nothing deletes
//! it through this API): exposed only with `--allow-writes` or when named in `--tools`.
//!
//! Request: one POST `/rest/api/latest/projects/{key}/repos/{slug}/commits/{commit}/builds` with
//! `{key, state, url, name?, description?, ref?}` → 204, never retried [reference "Builds":
//! repository-scoped, 7.4+; spec]. The same key on the same commit replaces the earlier result.

use serde_json::{Map, Value, json};

use super::object;
use crate::args::string;
use crate::confirm::{Confirming, Question, quoted};
use crate::errors::{self, Subject, Write};
use crate::fetch::FetchOutcome;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::text::short_commit;
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};
use crate::writes;
use crate::writes::repository::BuildResult;

/// `set_build_status`, for the catalogue: an unsafe write, exposed only when asked for.
pub const SPEC: ToolSpec = ToolSpec {
    name: "set_build_status",
    title: "Set build status",
    description: "Post a build result on a commit, as a CI server does; the same key replaces it.",
    input_schema: schema,
    access: Access::UnsafeWrite,
    asks: Asks::Always { untouched: "no build status was set" },
    scope: Scoped::Commit,
    role: Role::Data(Toolset::Builds),
    // The same call again leaves the same result: idempotent. Not destructive in MCP's sense beyond
    // replacing the earlier result of the same key, which is what it is for.
    annotations: Annotations { read_only: false, destructive: true, idempotent: true, open_world: true },
    start,
};

/// Bitbucket's build states.
const STATES: [&str; 5] = ["SUCCESSFUL", "FAILED", "INPROGRESS", "CANCELLED", "UNKNOWN"];

fn schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(),
               "commit": {"type": "string", "minLength": 7, "maxLength": 40, "description": "Commit hash"},
               "key": {"type": "string", "maxLength": 255, "description": "Build key"},
               "state": {"type": "string", "enum": STATES, "description": "The result"},
               "url": {"type": "string", "minLength": 8, "description": "The build's page, http(s)"},
               "name": {"type": "string", "description": "Build name"}}),
        &["project", "repo", "commit", "key", "state", "url"],
    )
}

fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let (project, repo) = crate::args::repository(args);
    let commit = string(args, "commit").unwrap_or("").to_ascii_lowercase();
    if call.confirming == Confirming::Ask {
        let state = string(args, "state").unwrap_or("");
        let key = quoted(string(args, "key").unwrap_or(""), 80);
        let name = string(args, "name").map(|n| format!(" ({})", quoted(n, 80))).unwrap_or_default();
        let short: String = commit.chars().take(11).collect();
        return Step::Ask(Question {
            message: format!(
                "Set the build {key}{name} of commit {short} in {project}/{repo} to {state}. Builds decide whether pull requests with this commit may merge."
            ),
            confirm: format!("Set {state} on {short}"),
            pin: Value::Object(Map::new()),
        });
    }
    let key = string(args, "key").unwrap_or("").to_owned();
    let state = string(args, "state").unwrap_or("").to_owned();
    // Hexadecimal and http(s): what the schema's lengths cannot say.
    if !(7..=40).contains(&commit.len()) || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Step::Done(ToolResult::error("`commit` must be a commit hash: 7 to 40 hexadecimal characters."));
    }
    let url = string(args, "url").unwrap_or("");
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return Step::Done(ToolResult::error("`url` must be an http(s) address: the build's page."));
    }
    let build = BuildResult { key: &key, state: &state, url, name: string(args, "name") };
    let request = writes::repository::build_status(&project, &repo, &commit, &build);
    Step::wait(SetBuild { project, repo, commit, key, state }, vec![((), request)])
}

#[derive(Debug)]
struct SetBuild {
    project: String,
    repo: String,
    commit: String,
    key: String,
    state: String,
}

impl Plan for SetBuild {
    type Read = ();

    fn on(&mut self, _: (), outcome: FetchOutcome, _: &mut Fetches<'_, '_, ()>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: None };
        let write = Write {
            effect: "the build result was recorded",
            check: "read it with get_build_status before posting it again",
        };
        Some(match errors::body(&outcome, about, Some(write)) {
            Ok(_) => ToolResult::text(format!(
                "Build {} on {} in {}/{} is now {}.",
                self.key,
                short_commit(Some(&self.commit)),
                self.project,
                self.repo,
                self.state
            )),
            Err(e) => ToolResult::error(e),
        })
    }
}
