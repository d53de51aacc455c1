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
pub mod threads;

use serde_json::{Map, Value, json};

use crate::plan::{Step, ToolResult};
use crate::tool::{Access, Annotations, Asks, Call, KindSpec, Pace, Role, Scoped, ToolSpec};

/// The key of the view data in a result's `_meta`.
pub const META_KEY: &str = crate::tool::VIEW_META_KEY;
/// The version of the view data (assets/VIEW_DATA.md).
pub const VIEW_DATA_VERSION: u64 = 1;
/// Every kind of `show`: its name, the data tool whose answer it shows (and whose arguments it
/// takes), what builds it, the page's script that draws it, what `show`'s description says it is, how its
/// arguments differ from its tool's, and what its refresh cadence follows. Adding a kind is one row here,
/// one file in this folder, one script in `assets/view/` and one test file; the catalogue, `show`'s
/// description and schema, the refresh's cadence, the page's kind registry and the view-data contract
/// (`assets/VIEW_DATA.md`) follow from this table, and `core/tests/kinds.rs` holds the page and the
/// contract to it.
pub const KINDS: &[KindSpec] = &[
    KindSpec {
        name: "pull_request",
        tool: "get_pull_request",
        start: card::start,
        page: "card.js",
        words: "its page",
        args: None,
        pace: Pace::PullRequest,
    },
    KindSpec {
        name: "pull_requests",
        tool: "list_pull_requests",
        start: list::start,
        page: "list.js",
        words: "a list",
        args: None,
        pace: Pace::List,
    },
    KindSpec {
        name: threads::KIND,
        tool: "list_pr_comments",
        start: threads::start,
        page: "threads.js",
        words: "its comments",
        args: Some(threads::args_schema),
        pace: Pace::Threads,
    },
    KindSpec {
        name: "diff",
        tool: "get_pull_request_diff",
        start: diff::start,
        page: "diff.js",
        words: DIFF_WORDS,
        args: None,
        pace: Pace::Diff,
    },
    // Two refs' diff: a kind of its own because its arguments are compare_refs' (see views::compare); the
    // page draws it with diff.js's module, which compare.js registers under this name.
    KindSpec {
        name: compare::KIND,
        tool: "compare_refs",
        start: compare::start,
        page: "compare.js",
        words: DIFF_WORDS,
        args: None,
        pace: Pace::Diff,
    },
    KindSpec {
        name: form::KIND,
        tool: "create_pull_request",
        start: form::start,
        page: "form.js",
        words: "your draft, which only the person submits: create a pull request asked for yourself; show the form only when they want a say first",
        args: Some(form::args_schema),
        pace: Pace::Still,
    },
    KindSpec {
        name: file::KIND,
        tool: "get_file",
        start: file::start,
        page: "file.js",
        words: "lines of a file at a ref",
        args: Some(file::extend_schema),
        pace: Pace::Still,
    },
];

/// What `show`'s description says of a pull request's diff and of two refs': they are named together.
const DIFF_WORDS: &str =
    "a pull request's or two refs' changes, only for what the person cannot open in their own editor";

/// `show`'s description: its kinds, each with its words, from [`KINDS`].
const SHOW_DESCRIPTION: &str = match std::str::from_utf8(&SHOW_DESCRIPTION_BYTES) {
    Ok(s) => s,
    Err(_) => "",
};
const SHOW_DESCRIPTION_BYTES: [u8; described(KINDS, &mut [])] = {
    let mut out = [0; described(KINDS, &mut [])];
    described(KINDS, &mut out);
    out
};

/// Writes `show`'s description of `kinds` into `out` (as much of it as fits) and returns its length: the
/// kinds in the table's order, those side by side with the same words named together ("diff or compare
/// (…)"), the last after "or".
const fn described(kinds: &[KindSpec], out: &mut [u8]) -> usize {
    let mut at = put(out, 0, "Show the person Bitbucket's own view: ");
    let mut groups = 0;
    let mut i = 0;
    while i < kinds.len() {
        if i == 0 || !same(kinds[i].words, kinds[i - 1].words) {
            groups += 1;
        }
        i += 1;
    }
    let (mut i, mut group) = (0, 0);
    while i < kinds.len() {
        let first = i == 0 || !same(kinds[i].words, kinds[i - 1].words);
        if first && group > 0 {
            at = put(out, at, if group + 1 == groups { " or " } else { ", " });
        } else if !first {
            at = put(out, at, " or ");
        }
        at = put(out, at, kinds[i].name);
        let last = i + 1 == kinds.len() || !same(kinds[i].words, kinds[i + 1].words);
        if last {
            at = put(out, at, " (");
            at = put(out, at, kinds[i].words);
            at = put(out, at, ")");
        }
        if first {
            group += 1;
        }
        i += 1;
    }
    put(
        out,
        at,
        ", with the arguments of the kind's tool. The other tools answer you; call show once your answer is ready, for a person who is there to see it, never while working on your own.",
    )
}

/// Writes `s` into `out` at `at` (what fits) and returns where it ends.
const fn put(out: &mut [u8], at: usize, s: &str) -> usize {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if at + i < out.len() {
            out[at + i] = bytes[i];
        }
        i += 1;
    }
    at + bytes.len()
}

/// Whether two texts are the same, at compile time.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// What the model is told when the client renders no views.
pub const NOT_SHOWN: &str = "Nothing was shown: this client does not display views. Answer the person in words.";
/// The sentence every shown view's text ends with.
pub const IF_UNSEEN: &str = "If the person sees no view, answer in words.";

/// The `show` tool.
pub const SHOW: ToolSpec = ToolSpec {
    name: "show",
    title: "Show to the person",
    description: SHOW_DESCRIPTION,
    input_schema: || json!({"type": "object"}),
    annotations: Annotations::READ,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::View,
    role: Role::Show,
    start,
};

fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    if !call.client.renders_views {
        return Step::Done(ToolResult::text(NOT_SHOWN));
    }
    refresh::finishing(show_kind(args, call), refresh::Asked::Show, call.now_ms, call.spread)
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
    if let Some(args) = kind.args {
        args(schema.to_mut());
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
        // The exposed tools that ask the person first (none when the admin turned asking off).
        let asks: Vec<&str> = call
            .exposed
            .tools()
            .iter()
            .filter(|t| call.asks && !matches!(t.asks, crate::tool::Asks::Never))
            .map(|t| t.name)
            .collect();
        Header {
            kind,
            read_at: call.now_ms,
            server: json!({"url": call.base_url, "kinds": kinds, "tools": tools, "asks": asks}),
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
            images: Vec::new(),
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

#[cfg(test)]
mod tests {
    use super::{KINDS, SHOW};

    #[test]
    fn show_s_description_names_the_kinds_of_the_table_in_its_order_with_their_words() {
        assert_eq!(
            SHOW.description,
            "Show the person Bitbucket's own view: pull_request (its page), pull_requests (a list), threads (its comments), diff or compare (a pull request's or two refs' changes, only for what the person cannot open in their own editor), pull_request_form (your draft, which only the person submits: create a pull request asked for yourself; show the form only when they want a say first) or file (lines of a file at a ref), with the arguments of the kind's tool. The other tools answer you; call show once your answer is ready, for a person who is there to see it, never while working on your own."
        );
        for k in KINDS {
            assert!(SHOW.description.contains(k.name) && SHOW.description.contains(k.words), "{}", k.name);
        }
    }
}
