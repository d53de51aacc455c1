//! A catalogue of test tools that exercises every exposure rule and every way a call can run
//! (at once, after one fetch, after two in parallel), for bb-core's tests, the shells' tests and
//! the fuzzer. Compiled only for tests and with the `testing` feature.

use serde_json::{Map, Value, json};

use crate::catalogue::{Access, Annotations, CallContext, Catalogue, Role, ToolSpec};
use crate::plan::{FetchOutcome, FetchRequest, Plan, PlanContext, Step, Ticket, ToolResult};

const READ: Annotations = Annotations { read_only: true, destructive: false, idempotent: true, open_world: true };
const WRITE: Annotations = Annotations { read_only: false, destructive: false, idempotent: false, open_world: true };
const UNSAFE: Annotations = Annotations { read_only: false, destructive: true, idempotent: false, open_world: true };

fn id_schema() -> Value {
    json!({"type": "object", "properties": {"id": {"type": "integer", "minimum": 1, "description": "The thing's id."}},
           "required": ["id"], "additionalProperties": false})
}

fn no_args() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

fn text_schema() -> Value {
    json!({"type": "object", "properties": {"text": {"type": "string", "description": "Text to echo."}},
           "required": ["text"], "additionalProperties": false})
}

fn spec(
    name: &'static str,
    access: Access,
    role: Role,
    input_schema: fn() -> Value,
    start: crate::catalogue::StartFn,
) -> ToolSpec {
    let annotations = match access {
        Access::Read => READ,
        Access::Write => WRITE,
        Access::UnsafeWrite => UNSAFE,
    };
    ToolSpec { name, title: name, description: "A test tool.", input_schema, annotations, access, role, start }
}

/// The test catalogue, in `tools/list` order:
/// `echo`, `get_thing` (kind `thing`, one fetch), `list_things` (kind `things`), `add_note` (a write),
/// `merge_thing` (an unsafe write, kind `merge_form`), `fetch_twice` (two fetches in parallel),
/// `show`, `refresh_view`, `suggest_form_values`.
pub fn test_catalogue() -> Catalogue {
    Catalogue::new(vec![
        spec("echo", Access::Read, Role::Data { view_kind: None }, text_schema, start_echo),
        spec("get_thing", Access::Read, Role::Data { view_kind: Some("thing") }, id_schema, start_get_thing),
        spec("list_things", Access::Read, Role::Data { view_kind: Some("things") }, no_args, start_list),
        spec("add_note", Access::Write, Role::Data { view_kind: None }, text_schema, start_echo),
        spec("merge_thing", Access::UnsafeWrite, Role::Data { view_kind: Some("merge_form") }, id_schema, start_list),
        spec("fetch_twice", Access::Read, Role::Data { view_kind: None }, no_args, start_fetch_twice),
        spec("show", Access::Read, Role::Show { kinds: &["thing", "things", "merge_form"] }, no_args, start_show),
        spec("refresh_view", Access::Read, Role::ViewCompanion, no_args, start_list),
        spec("suggest_form_values", Access::Read, Role::ViewCompanion, no_args, start_list),
    ])
}

fn start_echo(args: &Map<String, Value>, _: &mut PlanContext, _: &CallContext<'_>) -> Step {
    Step::Done(ToolResult::text(args.get("text").and_then(Value::as_str).unwrap_or_default()))
}

fn start_list(_: &Map<String, Value>, _: &mut PlanContext, _: &CallContext<'_>) -> Step {
    Step::Done(ToolResult::text("0 things shown."))
}

fn start_show(args: &Map<String, Value>, _: &mut PlanContext, cx: &CallContext<'_>) -> Step {
    let kind = args.get("kind").and_then(Value::as_str).unwrap_or_default();
    if cx.client.renders_views {
        Step::Done(ToolResult::text(format!("Showing {kind}.")))
    } else {
        Step::Done(ToolResult::text("Nothing was shown: this client renders no views. Answer in words."))
    }
}

fn start_get_thing(args: &Map<String, Value>, cx: &mut PlanContext, _: &CallContext<'_>) -> Step {
    let id = args.get("id").and_then(Value::as_u64).unwrap_or_default();
    cx.fetch(FetchRequest::get(format!("/rest/api/latest/things/{id}"), vec![]));
    Step::Wait(Box::new(OneFetch))
}

#[derive(Debug)]
struct OneFetch;

impl Plan for OneFetch {
    fn resume(&mut self, _: Ticket, outcome: FetchOutcome, _: &mut PlanContext) -> Option<ToolResult> {
        Some(describe(&outcome))
    }
}

fn describe(outcome: &FetchOutcome) -> ToolResult {
    match outcome {
        FetchOutcome::Response(r) if r.status == 200 => ToolResult::text(String::from_utf8_lossy(&r.body).into_owned()),
        FetchOutcome::Response(r) => ToolResult::error(format!("Bitbucket answered {}.", r.status)),
        FetchOutcome::Failed(e) => ToolResult::error(format!("Bitbucket could not be reached: {}", e.detail)),
    }
}

fn start_fetch_twice(_: &Map<String, Value>, cx: &mut PlanContext, _: &CallContext<'_>) -> Step {
    let a = cx.fetch(FetchRequest::get("/rest/api/latest/a", vec![]));
    let b = cx.fetch(FetchRequest::get("/rest/api/latest/b", vec![]));
    Step::Wait(Box::new(TwoFetches { a, b, got: Vec::new() }))
}

#[derive(Debug)]
struct TwoFetches {
    a: Ticket,
    b: Ticket,
    got: Vec<(Ticket, String)>,
}

impl Plan for TwoFetches {
    fn resume(&mut self, ticket: Ticket, outcome: FetchOutcome, _: &mut PlanContext) -> Option<ToolResult> {
        self.got.push((ticket, describe(&outcome).text.concat()));
        if self.got.len() < 2 {
            return None;
        }
        self.got.sort();
        let text = self.got.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(" | ");
        debug_assert!(self.got[0].0 == self.a && self.got[1].0 == self.b);
        Some(ToolResult::text(text))
    }
}
