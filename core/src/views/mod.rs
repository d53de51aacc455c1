//! `show`: the one view tool. It puts what the model found in front of the person as a view drawn
//! by the page `ui://bb/view` (ADR-101), with everything the view draws in the result's
//! `_meta["bb/view"]` (the contract is `assets/VIEW_DATA.md`) beside a short text for the model.
//!
//! A client that did not declare the UI extension is told that nothing was shown, and nothing is
//! fetched for it. Each kind belongs to the data tool whose answer it shows and takes that tool's
//! arguments; the catalogue offers a kind only while its tool is exposed.

pub mod card;
pub mod compare;
pub mod diff;
pub mod download;
pub mod file;
pub mod form;
pub mod insights;
pub mod list;
pub mod refresh;
pub mod suggest;

use serde_json::{Map, Value, json};

use crate::plan::{Step, ToolResult};
use crate::tool::{Access, Annotations, Call, KindSpec, Role, ToolSpec};

/// The key of the view data in a result's `_meta`.
pub const META_KEY: &str = "bb/view";
/// The version of the view data (assets/VIEW_DATA.md).
pub const VIEW_DATA_VERSION: u64 = 1;
/// Every kind of `show`: its name, the data tool whose answer it shows (and whose arguments it
/// takes), what builds it, and the page's script that draws it. Adding a kind is one row here, one
/// file in this folder, one script in `assets/view/` and one test file; the catalogue, `show`'s schema,
/// the page's kind registry and the view-data contract (`assets/VIEW_DATA.md`) follow from this table,
/// and `core/tests/kinds.rs` holds the page and the contract to it.
pub const KINDS: &[KindSpec] = &[
    KindSpec { name: "pull_request", tool: "get_pull_request", start: card::start, page: "card.js" },
    KindSpec { name: "pull_requests", tool: "list_pull_requests", start: list::start, page: "list.js" },
    KindSpec { name: "diff", tool: "get_pull_request_diff", start: diff::start, page: "diff.js" },
    // Two refs' diff: a kind of its own because its arguments are compare_refs' (see views::compare); the
    // page draws it with diff.js's module, which compare.js registers under this name.
    KindSpec { name: compare::KIND, tool: "compare_refs", start: compare::start, page: "compare.js" },
    KindSpec { name: form::KIND, tool: "create_pull_request", start: form::start, page: "form.js" },
    KindSpec { name: file::KIND, tool: "get_file", start: file::start, page: "file.js" },
];

/// What the model is told when the client renders no views.
pub const NOT_SHOWN: &str = "Nothing was shown: this client does not display views. Answer the person in words.";
/// The sentence every shown view's text ends with.
pub const IF_UNSEEN: &str = "If the person sees no view, answer in words.";

/// The `show` tool.
pub const SHOW: ToolSpec = ToolSpec {
    name: "show",
    title: "Show to the person",
    description: "Show the person Bitbucket's own view: pull_request (its page), pull_requests (a list), diff or compare (a pull request's or two refs' changes, only for what the person cannot open in their own editor), file (lines of a file at a ref) or pull_request_form (your draft, which only the person submits: create a pull request asked for yourself; show the form only when they want a say first), with the arguments of the kind's tool. The other tools answer you; call show once your answer is ready, for a person who is there to see it, never while working on your own.",
    input_schema: || json!({"type": "object"}),
    annotations: Annotations::READ,
    access: Access::Read,
    role: Role::Show,
    start,
};

fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    if !call.client.renders_views {
        return Step::Done(ToolResult::text(NOT_SHOWN));
    }
    refresh::finishing(show_kind(args, call), refresh::Asked::Show, call.now_ms)
}

/// The view of the kind `args` name, with that kind's tool's arguments: what `show` and
/// `refresh_view` both read.
fn show_kind(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let name = args.get("kind").and_then(Value::as_str).unwrap_or_default();
    let Some(kind) = call.exposed.kind(name) else {
        return Step::Done(ToolResult::error(format!("This server does not offer a `{name}` view.")));
    };
    let Some(tool) = call.exposed.get(kind.tool) else {
        return Step::Done(ToolResult::error(format!("This server does not offer a `{name}` view.")));
    };
    // The kind's arguments are its data tool's: check them against that tool's schema.
    let mut rest = args.clone();
    rest.remove("kind");
    let mut schema = call.exposed.checked_schema(tool);
    if kind.name == form::KIND {
        // A draft: the model fills what it knows, the person the rest.
        schema.to_mut()["required"] = json!(form::REQUIRED);
    }
    if kind.name == file::KIND {
        file::extend_schema(schema.to_mut());
    }
    // The same checks as a call's own arguments get: `refresh_view` carries these nested.
    let checked =
        crate::args::validate(Some(&Value::Object(rest)), &schema).and_then(|()| crate::args::check_places(args));
    if let Err(why) = checked {
        return Step::Done(ToolResult::error(format!(
            "Invalid arguments for show {name} (those of {}): {why}",
            tool.name
        )));
    }
    (kind.start)(args, call)
}

/// What every view carries besides its own part: version, kind, when it was read, what the server
/// offers, the call it answers.
#[derive(Debug, Clone)]
pub struct Header {
    kind: &'static str,
    read_at: u64,
    server: Value,
    call: Map<String, Value>,
}

impl Header {
    /// The header of a view of `kind` for this call.
    pub fn new(kind: &'static str, args: &Map<String, Value>, call: &Call<'_>) -> Header {
        let kinds: Vec<&str> = call.exposed.kinds().iter().map(|k| k.name).collect();
        let tools: Vec<&str> = call.exposed.tools().iter().map(|t| t.name).collect();
        Header {
            kind,
            read_at: call.now_ms,
            server: json!({"url": call.base_url, "kinds": kinds, "tools": tools}),
            call: args.clone(),
        }
    }

    /// The answer when the view could not be built: `message` for the model (an error it can act on),
    /// and for the person the same words with the address to open in Bitbucket, when bb knows it.
    pub fn error(&self, message: impl Into<String>, url: Option<String>) -> ToolResult {
        self.error_said(message.into(), url, None)
    }

    /// As [`Header::error`], and `said`: what the person reads instead of the model's sentence, in Bitbucket's
    /// own words (its error message) when bb has them.
    pub fn error_said(&self, message: String, url: Option<String>, said: Option<String>) -> ToolResult {
        let mut data = self.data();
        let mut error = json!({"message": message, "url": url});
        if let Some(said) = said {
            error["said"] = json!(said);
        }
        data.insert("error".into(), error);
        ToolResult { meta: Some(Header::meta(data)), ..ToolResult::error(message) }
    }

    /// What every view's data starts with: version, kind, when it was read, the server, the call.
    fn data(&self) -> Map<String, Value> {
        let mut data = Map::new();
        data.insert("v".into(), json!(VIEW_DATA_VERSION));
        data.insert("kind".into(), json!(self.kind));
        data.insert("readAt".into(), json!(self.read_at));
        data.insert("server".into(), self.server.clone());
        data.insert("call".into(), Value::Object(self.call.clone()));
        data
    }

    /// `_meta` holding the view data under [`META_KEY`].
    fn meta(data: Map<String, Value>) -> Map<String, Value> {
        let mut meta = Map::new();
        meta.insert(META_KEY.into(), Value::Object(data));
        meta
    }

    /// The result: `text` for the model, the view data in `_meta`.
    pub fn result(&self, text: String, users: Value, missing: Vec<String>, part: (&str, Value)) -> ToolResult {
        let mut data = self.data();
        data.insert("users".into(), users);
        data.insert("missing".into(), json!(missing));
        data.insert(part.0.into(), part.1);
        ToolResult {
            text: vec![format!("{text} {IF_UNSEEN}")],
            structured: None,
            is_error: false,
            meta: Some(Header::meta(data)),
        }
    }
}

/// The person's drafts as the card and the diff view carry them (`drafts` in VIEW_DATA.md): their count and the
/// first one's place, from `GET …/review`; null when it could not be read or the server keeps no drafts (before
/// 7.7 it has no `…/review`: a 404, not worth a sentence in `missing`).
pub(crate) fn drafts(outcome: &crate::fetch::FetchOutcome, about: crate::errors::Subject<'_>) -> Value {
    match crate::errors::json::<crate::bitbucket::RawPage>(outcome, about, None) {
        Ok(page) => {
            let drafts = crate::reads::review::drafts(&page);
            json!({"count": crate::reads::review::count(&drafts), "first": crate::reads::review::first_place(&drafts)})
        }
        Err(_) => Value::Null,
    }
}

/// A pull request's comment and task counts as the card and the list draw them: `null` each when Bitbucket sent
/// no `properties` at all (it said nothing), a count left out of `properties` that are there as 0 (Bitbucket
/// leaves out `commentCount` when there are none) — as get_pull_request and list_pr_tasks say them.
pub(crate) fn counts(pr: &crate::bitbucket::model::PullRequest) -> Value {
    match pr.counts() {
        Some(c) => json!({"comments": c.comments, "openTasks": c.open_tasks, "resolvedTasks": c.resolved_tasks}),
        None => json!({"comments": null, "openTasks": null, "resolvedTasks": null}),
    }
}
