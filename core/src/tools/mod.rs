//! bb's pull request data tools: what each asks of Bitbucket and how it answers the model.
//!
//! Every answer is compact lines, not JSON; every list says how many it shows and whether more exist
//! ("More … exist — start=N"); every cut is marked where it happens. Each failure is an `isError` result
//! with one sentence ([`crate::bitbucket::errors`]); a failed side request costs one line, not the answer.
//! Names and argument names follow the `bb` CLI's MCP server (`project`, `repo`, `pr_id`, `state`,
//! `limit`, `source_branch`, `target_branch`, `from_ref`, `to_ref`, `commit_id`).

pub mod build_status;
pub mod builds;
pub mod comments;
pub mod commits;
pub mod create;
pub mod diff;
pub mod get;
pub mod history;
pub mod list;
pub mod merge;
pub mod refs;
pub mod repos;
pub mod required;
pub mod review;
pub mod state;
pub mod update;
pub mod update_comment;

use serde_json::{Value, json};

use crate::tool::ToolSpec;

/// Every data tool, in `tools/list` order.
pub fn all() -> Vec<ToolSpec> {
    vec![
        get::SPEC,
        list::SPEC,
        diff::SPEC,
        commits::SPEC,
        comments::LIST_SPEC,
        comments::TASKS_SPEC,
        comments::ADD_SPEC,
        update_comment::SPEC,
        review::SPEC,
        create::SPEC,
        update::SPEC,
        state::DECLINE_SPEC,
        state::REOPEN_SPEC,
        merge::SPEC,
        builds::SPEC,
        build_status::SPEC,
        required::SPEC,
        refs::BRANCHES_SPEC,
        history::GET_SPEC,
        history::LIST_SPEC,
        history::COMPARE_SPEC,
        refs::RESOLVE_SPEC,
        repos::SPEC,
        repos::CLONE_SPEC,
        refs::TAGS_SPEC,
    ]
}

/// An object schema with these properties, these required, and nothing else.
fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

fn project() -> Value {
    json!({"type": "string", "minLength": 1, "description": "Project key"})
}

fn repo() -> Value {
    json!({"type": "string", "minLength": 1, "description": "Repository slug"})
}

fn pr_id() -> Value {
    json!({"type": "integer", "minimum": 1, "description": "Pull request id"})
}

fn start() -> Value {
    json!({"type": "integer", "minimum": 0, "description": "From a 'start=N' line"})
}

fn limit(default: u64, max: u64) -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": max, "default": default, "description": "Most results"})
}

fn git_ref() -> Value {
    json!({"type": "string", "minLength": 1, "description": "Branch, tag or commit id"})
}
