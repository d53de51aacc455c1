//! bb's pull request data tools: what each asks of Bitbucket and how it answers the model.
//!
//! Every answer is compact lines, not JSON; every list says how many it shows and whether more exist
//! ("More … exist — start=N"); every cut is marked where it happens. Each failure is an `isError` result
//! with one sentence ([`crate::errors`]); a failed side request costs one line, not the answer.
//! Names and argument names follow the `bb` CLI's MCP server (`project`, `repo`, `pr_id`, `state`,
//! `limit`, `source_branch`, `target_branch`, `from_ref`, `to_ref`, `commit_id`).

mod ask;
pub mod auto_merge;
pub mod build_status;
pub mod builds;
pub mod comments;
pub mod commits;
pub mod create;
pub mod diff;
pub mod drafts;
pub mod files;
pub mod get;
pub mod history;
pub mod insights;
pub mod list;
pub mod merge;
pub mod refs;
pub mod repos;
pub mod required;
pub mod review;
pub mod search;
pub mod state;
pub mod tag;
pub mod update;
pub mod update_comment;
mod versioned;

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
        review::DISCARD_SPEC,
        drafts::DELETE_SPEC,
        drafts::APPLY_SPEC,
        create::SPEC,
        update::SPEC,
        state::DECLINE_SPEC,
        state::REOPEN_SPEC,
        merge::SPEC,
        auto_merge::ENABLE_SPEC,
        auto_merge::DISABLE_SPEC,
        builds::SPEC,
        build_status::SPEC,
        required::SPEC,
        insights::SPEC,
        refs::BRANCHES_SPEC,
        history::GET_SPEC,
        history::LIST_SPEC,
        history::COMPARE_SPEC,
        files::GET_SPEC,
        files::LIST_SPEC,
        files::BLAME_SPEC,
        search::SPEC,
        refs::RESOLVE_SPEC,
        repos::SPEC,
        repos::CLONE_SPEC,
        refs::TAGS_SPEC,
        tag::SPEC,
    ]
}

/// An object schema with these properties, these required (the list left out when empty), and nothing else.
fn object(properties: Value, required: &[&str]) -> Value {
    let mut schema = json!({"type": "object", "properties": properties, "additionalProperties": false});
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

fn project() -> Value {
    // Not empty: `crate::args::check_places` says so, at no cost in every tool definition.
    json!({"type": "string", "description": "Project key"})
}

fn repo() -> Value {
    json!({"type": "string", "description": "Repo slug"})
}

fn pr_id() -> Value {
    json!({"type": "integer", "minimum": 1, "description": "PR id"})
}

fn start() -> Value {
    json!({"type": "integer", "minimum": 0, "description": "From a start=N line"})
}

fn limit(default: u64, max: u64) -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": max, "default": default, "description": "Most results"})
}

fn git_ref() -> Value {
    json!({"type": "string", "description": "Branch, tag or commit id"})
}
