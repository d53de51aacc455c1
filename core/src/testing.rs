//! A catalogue of test tools that exercises every exposure rule and every way a call can run
//! (at once, after one fetch, after two in parallel), for bb-core's tests, the shells' tests and
//! the fuzzer. Compiled only for tests and with the `testing` feature.
//!
//! Beside it, what tests, examples and benches check of the core's private modules, under the
//! modules' own names: `bb_core::testing::highlight::Language` is the crate's `highlight::Language`.
//! Nothing here is part of the contract the shells use.

/// The avatar cache: how long a failed avatar is remembered.
pub mod avatar_cache {
    pub use crate::avatar_cache::FAILURE_TTL_MS;
}

/// Highlighting, for its benches, its sweep and the grammar-loop tests.
pub mod highlight {
    pub use crate::highlight::{
        Class, ENGINE, Language, MAX_LINE_CHARS, Runs, SideHighlighter, encode, scope_operations,
    };
}

/// The instructions the model is told at initialize.
pub mod instructions {
    pub use crate::instructions::for_exposed;
}

/// How bb writes bytes as text.
pub mod encoding {
    pub use crate::encoding::base64_decode;
}

/// The glob matcher, and `list_files`'s path globs on it.
pub mod glob {
    pub use crate::glob::Glob;
    pub use crate::tools::files::glob_match;
}

/// Bitbucket's ref matchers.
pub mod requirements {
    pub use crate::requirements::pattern_matches;
}

/// The kinds of `show`, what a client without views is told, and the refresh cadence.
pub mod views {
    pub use crate::views::{KINDS, NOT_SHOWN};

    /// When a view asks again, and the fingerprint of what it draws.
    pub mod refresh {
        pub use crate::views::refresh::{
            ERROR_MS, Fingerprint, MOTION_MS, Motion, SETTLED_MS, interval_ms, on_grid, on_grid_at,
        };
    }
}

use serde_json::{Map, Value, json};

use crate::catalogue::Catalogue;
use crate::confirm::{Confirming, Question};
use crate::fetch::{FetchOutcome, FetchRequest};
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::tool::{Access, Annotations, Asks, Call, KindSpec, Role, Scoped, StartFn, ToolSpec, Toolset};

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

fn spec(name: &'static str, access: Access, role: Role, input_schema: fn() -> Value, start: StartFn) -> ToolSpec {
    let annotations = match access {
        Access::Read => READ,
        Access::Write => WRITE,
        Access::UnsafeWrite => UNSAFE,
    };
    // The unsafe write asks the person first, as bb's own merge does.
    let asks = match access {
        Access::UnsafeWrite => Asks::Always { untouched: "nothing was merged" },
        _ => Asks::Never,
    };
    // The test catalogue's tools touch no Bitbucket project: the scope's own tests run the standard catalogue.
    let scope = match role {
        Role::Show | Role::ViewCompanion { .. } => Scoped::View,
        Role::Session => Scoped::Session,
        Role::Data(_) => Scoped::Unscoped,
    };
    ToolSpec {
        name,
        title: name,
        description: "A test tool.",
        input_schema,
        annotations,
        access,
        asks,
        scope,
        role,
        start,
    }
}

/// The test catalogue, in `tools/list` order:
/// `echo`, `get_thing` (kind `thing`, one fetch), `list_things` (kind `things`), `add_note` (a write),
/// `merge_thing` (an unsafe write, kind `merge_form`), `fetch_twice` (two fetches in parallel),
/// `show`, `refresh_view`, `suggest_form_values`. Its tools are in the default groups (pull requests,
/// code, builds), so no session can turn a group on and none sees `enable_toolset`.
pub fn test_catalogue() -> Catalogue {
    let kind = |name, tool| KindSpec {
        name,
        tool,
        start: start_show,
        page: "test.js",
        words: "a test view",
        args: None,
        pace: crate::tool::Pace::Still,
    };
    Catalogue::new(
        vec![
            spec("echo", Access::Read, Role::Data(Toolset::PullRequests), text_schema, start_echo),
            spec("get_thing", Access::Read, Role::Data(Toolset::PullRequests), id_schema, start_get_thing),
            spec("list_things", Access::Read, Role::Data(Toolset::Code), no_args, start_list),
            spec("add_note", Access::Write, Role::Data(Toolset::PullRequests), text_schema, start_echo),
            spec("merge_thing", Access::UnsafeWrite, Role::Data(Toolset::PullRequests), id_schema, start_merge),
            spec("fetch_twice", Access::Read, Role::Data(Toolset::Builds), no_args, start_fetch_twice),
            spec("show", Access::Read, Role::Show, no_args, start_show),
            spec("refresh_view", Access::Read, Role::ViewCompanion { kind: None }, no_args, start_list),
            spec("suggest_form_values", Access::Read, Role::ViewCompanion { kind: None }, no_args, start_list),
        ],
        vec![kind("thing", "get_thing"), kind("things", "list_things"), kind("merge_form", "merge_thing")],
    )
}

fn start_echo(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    Step::Done(ToolResult::text(args.get("text").and_then(Value::as_str).unwrap_or_default()))
}

fn start_list(_: &Map<String, Value>, _: &Call<'_>) -> Step {
    Step::Done(ToolResult::text("0 things shown."))
}

fn start_show(args: &Map<String, Value>, cx: &Call<'_>) -> Step {
    let kind = args.get("kind").and_then(Value::as_str).unwrap_or_default();
    if cx.client.renders_views {
        Step::Done(ToolResult::text(format!("Showing {kind}.")))
    } else {
        Step::Done(ToolResult::text("Nothing was shown: this client renders no views. Answer in words."))
    }
}

fn start_get_thing(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let id = args.get("id").and_then(Value::as_u64).unwrap_or_default();
    Step::wait(OneFetch, vec![((), FetchRequest::get(format!("/rest/api/latest/things/{id}"), vec![]))])
}

#[derive(Debug)]
struct OneFetch;

impl Plan for OneFetch {
    type Read = ();

    fn on(&mut self, _: (), outcome: FetchOutcome, _: &mut Fetches<'_, '_, ()>) -> Option<ToolResult> {
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

/// `merge_thing`: asks first (reading the thing's version, its pin), then POSTs the merge at that
/// version; with asking off it merges at once at version 0.
fn start_merge(args: &Map<String, Value>, cx: &Call<'_>) -> Step {
    let id = args.get("id").and_then(Value::as_u64).unwrap_or_default();
    let merge = |version: u64| FetchRequest {
        method: crate::fetch::Method::Post,
        path: format!("/rest/api/latest/things/{id}/merge"),
        query: vec![("version".into(), version.to_string())],
        body: Some(json!({"version": version})),
        keep: None,
        refresh: None,
    };
    match cx.confirming {
        Confirming::Off => Step::wait(OneFetch, vec![((), merge(0))]),
        Confirming::Confirmed(pin) => {
            Step::wait(OneFetch, vec![((), merge(pin.get("version").and_then(Value::as_u64).unwrap_or_default()))])
        }
        Confirming::Ask => {
            Step::wait(MergeAsk { id }, vec![((), FetchRequest::get(format!("/rest/api/latest/things/{id}"), vec![]))])
        }
    }
}

/// Reads the thing, then asks to merge it at the version read.
#[derive(Debug)]
struct MergeAsk {
    id: u64,
}

impl Plan for MergeAsk {
    type Read = ();

    fn on(&mut self, _: (), outcome: FetchOutcome, f: &mut Fetches<'_, '_, ()>) -> Option<ToolResult> {
        let FetchOutcome::Response(r) = &outcome else { return Some(describe(&outcome)) };
        if r.status != 200 {
            return Some(describe(&outcome));
        }
        let version = serde_json::from_slice::<Value>(&r.body)
            .ok()
            .and_then(|v| v.get("version").and_then(Value::as_u64))
            .unwrap_or_default();
        f.ask(Question {
            message: format!("Merge thing {} at version {version}. This cannot be undone.", self.id),
            confirm: format!("Merge thing {}", self.id),
            pin: json!({"version": version}),
        });
        None
    }
}

fn start_fetch_twice(_: &Map<String, Value>, _: &Call<'_>) -> Step {
    let first = vec![
        ('a', FetchRequest::get("/rest/api/latest/a", vec![])),
        ('b', FetchRequest::get("/rest/api/latest/b", vec![])),
    ];
    Step::wait(TwoFetches { got: Vec::new() }, first)
}

#[derive(Debug)]
struct TwoFetches {
    got: Vec<(char, String)>,
}

impl Plan for TwoFetches {
    type Read = char;

    fn on(&mut self, read: char, outcome: FetchOutcome, _: &mut Fetches<'_, '_, char>) -> Option<ToolResult> {
        self.got.push((read, describe(&outcome).text.concat()));
        if self.got.len() < 2 {
            return None;
        }
        // Answers in the order the reads were asked for, whatever order they came back in.
        self.got.sort();
        let text = self.got.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(" | ");
        Some(ToolResult::text(text))
    }
}
