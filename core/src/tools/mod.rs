//! bb's pull request data tools: what each asks of Bitbucket and how it answers the model.
//!
//! Every answer is compact lines, not JSON; every list says how many it shows and whether more exist
//! ("More … exist — start=N"); every cut is marked where it happens. Each failure is an `isError` result
//! with one sentence ([`crate::bitbucket::errors`]); a failed side request costs one line, not the answer.
//! Names and argument names follow the `bb` CLI's MCP server (`project`, `repo`, `pr_id`, `state`,
//! `limit`, `source_branch`, `target_branch`, `from_ref`, `to_ref`, `commit_id`).

pub mod builds;
pub mod comments;
pub mod create;
pub mod diff;
pub mod flow;
pub mod get;
pub mod list;
pub mod merge;
pub mod required_builds;
pub mod review;
pub mod text;

use serde_json::{Map, Value, json};

use crate::catalogue::{Access, Annotations, Role, StartFn, ToolSpec};

/// Reads Bitbucket; calling again changes nothing.
const READ: Annotations = Annotations { read_only: true, destructive: false, idempotent: true, open_world: true };
/// Adds something (a comment, a pull request): not idempotent, not destructive.
const ADD: Annotations = Annotations { read_only: false, destructive: false, idempotent: false, open_world: true };
/// Merges: cannot be taken back.
const MERGE: Annotations = Annotations { read_only: false, destructive: true, idempotent: false, open_world: true };

/// Every data tool, in `tools/list` order.
pub fn all() -> Vec<ToolSpec> {
    vec![
        tool(get::SPEC, Some("pull_request")),
        tool(list::SPEC, Some("pull_requests")),
        tool(diff::SPEC, Some("diff")),
        tool(comments::LIST_SPEC, None),
        tool(comments::TASKS_SPEC, None),
        tool(comments::ADD_SPEC, None),
        tool(review::SPEC, None),
        tool(create::SPEC, Some("pull_request_form")),
        tool(merge::SPEC, None),
        tool(builds::STATUS_SPEC, None),
        tool(builds::REQUIRED_SPEC, None),
    ]
}

/// What a tool module declares; [`all`] turns it into a [`ToolSpec`].
#[derive(Debug, Clone, Copy)]
pub struct Decl {
    /// The name.
    pub name: &'static str,
    /// The human title.
    pub title: &'static str,
    /// What the model reads.
    pub description: &'static str,
    /// The input schema.
    pub schema: fn() -> Value,
    /// Whether it writes.
    pub access: Access,
    /// Annotations.
    pub annotations: Annotations,
    /// The start.
    pub start: StartFn,
}

fn tool(d: Decl, view_kind: Option<&'static str>) -> ToolSpec {
    ToolSpec {
        name: d.name,
        title: d.title,
        description: d.description,
        input_schema: d.schema,
        annotations: d.annotations,
        access: d.access,
        role: Role::Data { view_kind },
        start: d.start,
    }
}

/// An object schema with these properties, these required, and nothing else.
fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

fn project() -> Value {
    json!({"type": "string", "minLength": 1, "description": "Project key, e.g. PROJ"})
}

fn repo() -> Value {
    json!({"type": "string", "minLength": 1, "description": "Repository slug"})
}

fn pr_id() -> Value {
    json!({"type": "integer", "minimum": 1, "description": "Pull request id"})
}

fn start() -> Value {
    json!({"type": "integer", "minimum": 0, "description": "Index to start at (from a 'start=N' line)"})
}

fn limit(default: u64, max: u64) -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": max, "default": default, "description": "Most results"})
}

/// A string argument.
fn s<'a>(args: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// A non-negative integer argument.
fn n(args: &Map<String, Value>, key: &str) -> Option<u64> {
    args.get(key).and_then(Value::as_u64)
}

/// A boolean argument.
fn b(args: &Map<String, Value>, key: &str) -> Option<bool> {
    args.get(key).and_then(Value::as_bool)
}

/// `project`, `repo` and `pr_id`, which the schema requires.
fn pr_args(args: &Map<String, Value>) -> (String, String, u64) {
    (
        s(args, "project").unwrap_or("").to_owned(),
        s(args, "repo").unwrap_or("").to_owned(),
        n(args, "pr_id").unwrap_or(0),
    )
}

/// Adds `start` and `limit` to a query.
fn paging(query: &mut Vec<(String, String)>, start: u64, limit: u64) {
    query.push(("start".into(), start.to_string()));
    query.push(("limit".into(), limit.to_string()));
}
