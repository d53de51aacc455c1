//! Drives bb's real catalogue (every data tool with writes allowed, and `show` with each of its kinds)
//! through a [`Server`] with several sessions, against arbitrary Bitbucket answers: statuses, bodies
//! from a dictionary of realistic shapes, arbitrary bytes, cut bodies, and failures. As quinn fuzzes
//! its real `Connection`, the input is a `Vec<Operation>` replayed against one server.
//!
//! Whatever happens, the server must not panic, and:
//! - every message it sends is one line of JSON;
//! - every tagged input is closed by exactly one `Done` (unless its session was closed while it
//!   waited: closing drops its calls unanswered), and nothing is sent for a tag after its `Done`;
//! - a request id is answered at most once.
#![no_main]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};

use arbitrary::Arbitrary;
use bb_core::{
    Catalogue, Exposed, ExposureOptions, FetchErrorKind, FetchOutcome, FetchResponse, Input, Output, Server,
    ServerConfig, SessionId, Ticket,
};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};

#[derive(Debug, Arbitrary)]
struct Run {
    /// Whether the clients declare the MCP Apps extension (so `show` draws, or says nothing was shown).
    ui: bool,
    ops: Vec<Operation>,
}

#[derive(Debug, Arbitrary)]
enum Operation {
    /// A new session, with the handshake done or not.
    Open { handshake: bool },
    /// One session goes away.
    Close { session: u8 },
    /// A tool call built from a few choices, so the fuzzer gets past the parser and the schemas.
    Call { session: u8, tool: u8, kind: u8, args: Vec<(u8, u8)> },
    /// A request of another method.
    Request { session: u8, method: u8, param: u8 },
    /// A request in the 2026-07-28 era: no handshake, `_meta` naming the revision and the client's
    /// capabilities (sometimes another revision, a broken `_meta` or none). `fresh` sends it on a
    /// session of its own, as the HTTP shell does; else on any session, initialized or not.
    Modern { session: u8, fresh: bool, method: u8, meta: u8, param: u8, call: CallChoice },
    /// Several calls in one batch.
    Batch { session: u8, calls: Vec<CallChoice> },
    /// Cancel a request sent earlier.
    Cancel { session: u8, which: u8 },
    /// Raw bytes as one message.
    Line { session: u8, bytes: Vec<u8> },
    /// A message too long for the shell.
    Oversized { session: u8 },
    /// Bitbucket answers an outstanding read; `decoded`: a diff's or a window's answer comes decoded by
    /// the shell as it read it ([`bb_core::decode`]), as bb's client hands it.
    Answer { which: u8, status: u8, body: Body, retry_after: Option<u8>, user: bool, decoded: bool },
    /// An outstanding read fails.
    Fail { which: u8, kind: u8, may_have_arrived: bool },
    /// A step of the CPU work a call asked for; `last` as when the shell's deadline has passed.
    Work { which: u8, last: bool },
    /// The shell's verdict on a large call's room in memory.
    Room { which: u8, granted: bool },
    /// The clock moves (or tries to move back).
    Clock(i32),
    /// A time the core asked for comes (a watched pull request's next read).
    Timer { which: u8 },
}

/// A call in a batch: tool, kind, (property, value) choices, as in [`Operation::Call`].
type CallChoice = (u8, u8, Vec<(u8, u8)>);

#[derive(Debug, Arbitrary)]
enum Body {
    /// A realistic body from the dictionary.
    Shape(u8),
    /// A realistic body cut after `at` bytes.
    Cut(u8, u16),
    /// Anything.
    Bytes(Vec<u8>),
    /// Nothing.
    Empty,
    /// A diff set of one file with this many thousand lines (up to 40,000), each `width` wide: past any
    /// view's share, so the share is cut while it is read.
    Huge { thousands: u8, width: u8 },
}

const STATUSES: &[u16] = &[200, 200, 200, 201, 204, 400, 401, 404, 409, 429, 500, 502, 503];
const KINDS: &[FetchErrorKind] = &[
    FetchErrorKind::NotConfigured,
    FetchErrorKind::Unreachable,
    FetchErrorKind::Tls,
    FetchErrorKind::Timeout,
    FetchErrorKind::BrokenResponse,
];
const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "logging/setLevel",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "resources/subscribe",
    "resources/unsubscribe",
    "x",
];

/// Methods a 2026-07-28 request names: the era's own, and some it does not have.
const MODERN_METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "tools/call",
    "tools/call",
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "ping",
    "logging/setLevel",
    "subscriptions/listen",
    "initialize",
    "x",
];

/// `_meta` for a 2026-07-28 request from the fuzzer's choice: mostly right (with or without the UI
/// extension, a log level and the client's name), sometimes a revision bb does not serve per
/// request, a broken `_meta`, or none.
fn modern_meta(pick: u8, ui: bool) -> Option<Value> {
    const MODERN: &str = "2026-07-28";
    let caps = if ui {
        json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
    } else {
        json!({})
    };
    let meta = |version: Value, caps: Option<Value>| {
        let mut m = Map::new();
        m.insert("io.modelcontextprotocol/protocolVersion".into(), version);
        if let Some(c) = caps {
            m.insert("io.modelcontextprotocol/clientCapabilities".into(), c);
        }
        m
    };
    let p = pick as usize;
    Some(Value::Object(match pick % 12 {
        0..=3 => meta(json!(MODERN), Some(caps)),
        4 => {
            let mut m = meta(json!(MODERN), Some(caps));
            m.insert("io.modelcontextprotocol/logLevel".into(), json!(["debug", "error", "nope"][p / 12 % 3]));
            m.insert("io.modelcontextprotocol/clientInfo".into(), json!({"name": "fuzz", "version": "2"}));
            m
        }
        5 => meta(json!(MODERN), None),
        6 => meta(json!(MODERN), Some(json!("not an object"))),
        7 => meta(json!(["2025-11-25", "2025-03-26", "2026-07-29", "", "1"][p / 12 % 5]), Some(caps)),
        8 => meta(json!(20_260_728), Some(caps)),
        9 => {
            let mut m = meta(Value::Null, Some(caps));
            m.remove("io.modelcontextprotocol/protocolVersion");
            m
        }
        10 => return Some(json!(MODERN)),
        _ => return None,
    }))
}

/// Bitbucket's answers, in the shapes bb reads (reference/bitbucket-dc.md).
const SHAPES: &[&str] = &[
    // a pull request
    r#"{"id":1,"version":3,"title":"Add paging","description":"Adds *paging*.\n\n```rust\nfn main() {}\n```\n<script>x</script>[a](javascript:x)","state":"OPEN","open":true,"closed":false,"draft":false,"createdDate":1764600000000,"updatedDate":1764670000000,"fromRef":{"id":"refs/heads/feature/paging","displayId":"feature/paging","latestCommit":"0123456789abcdef0123456789abcdef01234567","repository":{"slug":"api","id":1,"project":{"key":"BB"}}},"toRef":{"id":"refs/heads/main","displayId":"main","latestCommit":"89abcdef0123456789abcdef0123456789abcdef","repository":{"slug":"api","id":1,"project":{"key":"BB"}}},"author":{"user":{"name":"alice","slug":"alice","displayName":"Alice Example","type":"NORMAL"},"role":"AUTHOR","status":"UNAPPROVED"},"reviewers":[{"user":{"name":"bob","slug":"bob","displayName":"Bob","type":"NORMAL"},"role":"REVIEWER","status":"APPROVED"},{"user":{"name":"ci","slug":"ci","displayName":"CI","type":"SERVICE"},"role":"REVIEWER","status":"NEEDS_WORK"}],"participants":[],"properties":{"mergeResult":{"outcome":"CONFLICTED"},"openTaskCount":1,"resolvedTaskCount":2,"commentCount":4},"links":{"self":[{"href":"https://git.example.com/projects/BB/repos/api/pull-requests/1"}]}}"#,
    // a merged pull request with odd fields
    r#"{"id":18446744073709551615,"version":-1,"title":"","state":"MERGED","draft":null,"closedDate":1764670000000,"fromRef":{"id":"refs/heads/x","repository":{"slug":"fork","project":{"key":"~ALICE"}}},"toRef":{"id":"refs/tags/v1"},"author":{"user":{}},"reviewers":[{}],"properties":{}}"#,
    // a page of pull requests
    r#"{"size":2,"limit":25,"start":0,"isLastPage":false,"nextPageStart":25,"values":[{"id":1,"title":"One","state":"OPEN","fromRef":{"id":"refs/heads/a","displayId":"a"},"toRef":{"id":"refs/heads/main","displayId":"main","repository":{"slug":"api","project":{"key":"BB"}}},"author":{"user":{"slug":"alice","displayName":"Alice"}},"updatedDate":1764670000000},{"id":2,"title":"Two","state":"DECLINED"}]}"#,
    // a page of activities
    r#"{"size":3,"limit":50,"start":0,"isLastPage":true,"values":[{"id":10,"createdDate":1764600000000,"user":{"slug":"bob","displayName":"Bob"},"action":"COMMENTED","commentAction":"ADDED","comment":{"id":5,"text":"Looks **good**","author":{"slug":"bob"},"createdDate":1764600000000,"severity":"BLOCKER","state":"OPEN","comments":[{"id":6,"text":"fixed","author":{"slug":"alice"},"comments":[{"id":7,"text":"deep"}]}]},"commentAnchor":{"path":"src/../../etc/passwd","line":3,"lineType":"ADDED","orphaned":true}},{"id":11,"action":"APPROVED","user":{"slug":"bob"}},{"id":12,"action":"RESCOPED"}]}"#,
    // a build listing with the pull request page's `page` wrapper
    r#"{"page":{"size":2,"limit":25,"start":0,"isLastPage":false,"nextPageStart":2,"values":[{"key":"CI-1","name":"Unit tests","state":"FAILED","url":"https://ci.example.com/1","description":"3 failed","duration":61000,"parent":"CI","testResults":{"successful":120,"failed":3,"skipped":1},"dateAdded":1764600000000},{"key":"lint","state":"INPROGRESS","url":"javascript:alert(1)"}]}}"#,
    // a commit's legacy build listing
    r#"{"size":1,"limit":25,"start":0,"isLastPage":true,"values":[{"key":"CI","name":"Build","state":"SUCCESSFUL","url":"https://ci.example.com/2","dateAdded":1764600000000}]}"#,
    // a commit's build totals
    r#"{"successful":2,"failed":1,"inProgress":0,"cancelled":0,"unknown":3}"#,
    // a page of required-builds conditions
    r#"{"size":3,"limit":100,"start":0,"isLastPage":true,"values":[{"id":1,"buildParentKeys":["CI","lint"],"refMatcher":{"id":"refs/heads/main","type":{"id":"BRANCH"}}},{"id":2,"buildParentKeys":["unit"],"refMatcher":{"id":"release/*","type":{"id":"PATTERN"}},"exemptRefMatcher":{"id":"FEATURE","type":{"id":"MODEL_CATEGORY"}}},{"id":3,"buildParentKeys":["x"],"refMatcher":{"id":"production","type":{"id":"MODEL_BRANCH"}}},{"id":4,"buildParentKeys":[],"refMatcher":{"id":"?","type":{"id":"NEW_KIND"}}}]}"#,
    // a branching model
    r#"{"development":{"id":"refs/heads/develop","displayId":"develop"},"production":{"id":"refs/heads/main"},"types":[{"id":"FEATURE","displayName":"Feature","prefix":"feature/","enabled":true},{"id":"BUGFIX","prefix":"bugfix/"},{"id":"HOTFIX"}]}"#,
    // a diff set
    r#"{"fromHash":"a","toHash":"b","contextLines":3,"truncated":false,"diffs":[{"source":{"toString":"src/lib.rs"},"destination":{"toString":"src/lib.rs"},"hunks":[{"context":"fn x()","sourceLine":1,"sourceSpan":3,"destinationLine":1,"destinationSpan":4,"segments":[{"type":"CONTEXT","lines":[{"source":1,"destination":1,"line":"use std;"}]},{"type":"REMOVED","lines":[{"source":2,"destination":2,"line":"old"}]},{"type":"ADDED","lines":[{"source":2,"destination":2,"line":"new\u0000\u202e"},{"source":3,"destination":3,"line":""}],"truncated":true}]}],"truncated":false},{"source":null,"destination":{"toString":"img.png"},"binary":true,"hunks":[]}]}"#,
    // a changes page
    r#"{"size":2,"limit":100,"start":0,"isLastPage":false,"nextPageStart":100,"values":[{"path":{"toString":"src/lib.rs"},"type":"MODIFY","properties":{"activeComments":2}},{"path":{"toString":"b/../../c.rs"},"srcPath":{"toString":"a.rs"},"type":"MOVE"}]}"#,
    // a comment created
    r#"{"id":42,"version":0,"text":"Done","author":{"slug":"me"},"createdDate":1764600000000,"state":"OPEN"}"#,
    // a participant after a review
    r#"{"user":{"slug":"me","name":"me"},"role":"REVIEWER","approved":true,"status":"APPROVED"}"#,
    // an error body
    r#"{"errors":[{"context":null,"message":"Pull request 1 does not exist in BB/api.","exceptionName":"com.atlassian.bitbucket.pull.NoSuchPullRequestException"}]}"#,
    // a merge veto
    r#"{"errors":[{"message":"The pull request has unresolved tasks.","exceptionName":"com.atlassian.bitbucket.pull.PullRequestMergeVetoedException","vetoes":[{"summaryMessage":"Tasks","detailedMessage":"1 open task"}]}]}"#,
    // an out of date version
    r#"{"errors":[{"message":"You are attempting to modify a pull request based on out-of-date information.","exceptionName":"com.atlassian.bitbucket.pull.PullRequestOutOfDateException","currentVersion":4}]}"#,
    // a page of Code Insights reports with ESC, bidi controls and numbers at the edges
    r#"{"size":1,"limit":100,"start":0,"isLastPage":true,"values":[{"key":"sec\u001b","title":"Scan\u001b[2J\u202egnp.exe","result":"FAIL","reporter":"x\u200f","details":"\u2066x\u2069\u200e\u061c\u0085","link":"https://ci.example.com/\u202e","data":[{"title":"When","type":"DATE","value":-1},{"title":"N","type":"NUMBER","value":1e308},{"title":"T\u0007","type":"TEXT","value":"\u001b]8;;x\u0007"}]}]}"#,
    // annotations with control characters
    r#"{"totalCount":1,"annotations":[{"reportKey":"sec","path":"src/\u202elib.rs","line":3,"message":"fix \u001b[31m\r\u0000","severity":"HIGH","type":"BUG"}]}"#,
    // an avatar (not JSON at all)
    "\u{89}PNG\r\n\u{1a}\n",
    "null",
    "[]",
    "{}",
];

/// Argument values offered for each property, by type; enums offer their own values.
fn choose_value(schema: &Value, pick: u8) -> Value {
    if let Some(values) = schema.get("enum").and_then(Value::as_array)
        && pick % 4 != 3
    {
        return values[pick as usize % values.len().max(1)].clone();
    }
    let huge = || "x".repeat(70_000);
    match schema.get("type").and_then(Value::as_str) {
        Some("integer") => [
            json!(1),
            json!(2),
            json!(0),
            json!(-1),
            json!(7),
            json!(100),
            json!(100_001),
            json!(u64::MAX),
            json!(1.5),
            json!("1"),
        ][pick as usize % 10]
            .clone(),
        Some("boolean") => [json!(true), json!(false), json!(null), json!("true")][pick as usize % 4].clone(),
        Some("array") => [
            json!(["src/lib.rs"]),
            json!(["../../etc/passwd", "a/../b", "/abs"]),
            json!([]),
            json!([huge()]),
            json!([1, 2]),
            json!("src/lib.rs"),
        ][pick as usize % 6]
            .clone(),
        _ => [
            json!("BB"),
            json!("api"),
            json!("~ALICE"),
            json!("feature/paging"),
            json!("refs/heads/main"),
            json!("0123456789abcdef0123456789abcdef01234567"),
            json!("../../admin"),
            json!("a/../../b?x=1&y=2#z"),
            json!("%2e%2e%2f"),
            json!(""),
            json!("Ünïcödé ✓ \u{202e}"),
            json!("Some *Markdown*\n\n<script>alert(1)</script>"),
            json!(huge()),
            json!(5),
        ][pick as usize % 14]
            .clone(),
    }
}

/// Arguments for `tool` from the fuzzer's choices: each (property, value) pair sets one of its
/// schema's properties (or an unknown one); when `complete`, the required ones are filled first.
fn arguments(exposed: &Exposed, tool: &str, choices: &[(u8, u8)], complete: bool) -> Map<String, Value> {
    let mut args = Map::new();
    let Some(spec) = exposed.get(tool) else { return args };
    let schema = (spec.input_schema)();
    let props: Vec<(&String, &Value)> =
        schema.get("properties").and_then(Value::as_object).map(|p| p.iter().collect()).unwrap_or_default();
    if complete {
        for name in schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
            if let Some(p) = props.iter().find(|(n, _)| n.as_str() == name) {
                args.insert(name.to_owned(), choose_value(p.1, 0));
            }
        }
    }
    for &(prop, pick) in choices.iter().take(8) {
        if props.is_empty() || prop as usize % (props.len() + 1) == props.len() {
            args.insert("unknown".into(), json!(pick));
        } else {
            let (name, p) = props[prop as usize % props.len()];
            args.insert(name.clone(), choose_value(p, pick));
        }
    }
    args
}

fn exposed() -> &'static Arc<Exposed> {
    static EXPOSED: OnceLock<Arc<Exposed>> = OnceLock::new();
    EXPOSED.get_or_init(|| {
        // The default groups and writes: the repositories' tools come only through enable_toolset, so
        // a session that turns groups on is fuzzed too.
        Catalogue::standard()
            .expose(&ExposureOptions { allow_writes: true, ..ExposureOptions::default() })
            .expect("the standard catalogue exposes")
    })
}

/// Every tool a session can come to see: the default groups' and, through enable_toolset, the rest.
fn widest() -> &'static Exposed {
    static WIDEST: OnceLock<Exposed> = OnceLock::new();
    WIDEST.get_or_init(|| {
        let mut all = exposed().session_sees(bb_core::Toolsets::ALL).expect("sessions may turn groups on");
        if all.get("enable_toolset").is_none() {
            // Everything turned on leaves nothing to offer; the tool is still picked, and its arguments.
            let first = exposed().session_sees(bb_core::Toolsets::NONE).expect("sessions may turn groups on");
            let mut tools = all.tools().to_vec();
            tools.extend(first.tools().iter().filter(|t| t.name == "enable_toolset").copied());
            all = Exposed::new(tools, all.kinds().to_vec());
        }
        all
    })
}

/// What the driver has seen, checked as it goes.
#[derive(Default)]
struct Ledger {
    /// Open sessions, in the order opened.
    open: Vec<SessionId>,
    /// Tagged inputs not yet done, with their session.
    waiting: BTreeMap<u64, SessionId>,
    /// Tags closed by `Done`.
    done: BTreeSet<u64>,
    /// Outstanding reads.
    outstanding: Vec<Ticket>,
    /// What each outstanding diff or window read keeps.
    keeps: BTreeMap<Ticket, bb_core::Keep>,
    /// Work the server asked for and has not been given a step of yet, each with the deadline the core gave it.
    work: Vec<(Ticket, u64)>,
    /// The work ticket of the step just fed at or past its deadline: the core must say so
    /// (`Output::PastDeadline`) for it and for no other.
    past: Option<Ticket>,
    /// Large calls' rooms asked for and not yet granted or refused.
    rooms: Vec<Ticket>,
    /// Times the core asked for (`Output::Timer`) and not yet fed or cancelled.
    timers: Vec<(Ticket, u64)>,
    /// Tags of `subscriptions/listen` requests: a stream stays open until cancelled or its session closes.
    listens: BTreeSet<u64>,
    /// Highlighting jobs handed out and not yet run.
    jobs: Vec<(Ticket, bb_core::HighlightJob)>,
    /// Request ids the driver made (each used once), and whether each was answered.
    answered: BTreeMap<String, bool>,
    /// Ids sent per session, for cancellation.
    sent: BTreeMap<SessionId, Vec<String>>,
    /// 2026-07-28 requests sent as a fresh session's first message: whether `_meta` named the
    /// revision (a result is then complete and names bb) or another one (an UnsupportedProtocolVersion error).
    modern: BTreeMap<String, bool>,
    next_tag: u64,
    next_id: u64,
}

impl Ledger {
    fn session(&self, pick: u8) -> SessionId {
        // Now and then, a session that is gone (or never was).
        if self.open.is_empty() || pick == u8::MAX {
            return SessionId(9_999);
        }
        self.open[pick as usize % self.open.len()]
    }

    fn id(&mut self, session: SessionId, numeric: bool) -> Value {
        self.next_id += 1;
        let id = if numeric { json!(1_000_000 + self.next_id) } else { json!(format!("r{}", self.next_id)) };
        self.answered.insert(id.to_string(), false);
        self.sent.entry(session).or_default().push(id.to_string());
        id
    }

    fn input(&mut self, server: &mut Server, session: SessionId, bytes: &[u8], now: u64) {
        let tag = self.next_tag;
        if bytes.windows(20).any(|w| w == b"subscriptions/listen") {
            self.listens.insert(tag);
        }
        self.next_tag += 1;
        self.waiting.insert(tag, session);
        server.handle(Input::Message { session, bytes, tag }, now);
        self.drain(server);
    }

    /// Feeds a step of `ticket`'s work at `now`; a step at or past its deadline is its last, and the
    /// core says so.
    fn step(&mut self, server: &mut Server, ticket: Ticket, deadline_ms: u64, now: u64) {
        self.past = (now >= deadline_ms).then_some(ticket);
        server.handle(Input::Work { ticket }, now);
        self.drain(server);
        assert!(self.past.is_none(), "a step fed past its deadline was not said to be the last");
    }

    fn drain(&mut self, server: &mut Server) {
        while let Some(out) = server.poll_output() {
            match out {
                Output::Fetch { ticket, request, .. } => {
                    self.outstanding.push(ticket);
                    if let Some(share) = request.keep {
                        self.keeps.insert(ticket, share);
                    }
                }
                Output::Work { ticket, deadline_ms, .. } => self.work.push((ticket, deadline_ms)),
                Output::Compute { ticket, job, .. } => self.jobs.push((ticket, *job)),
                Output::Admit { ticket, .. } => self.rooms.push(ticket),
                Output::Timer { ticket, at_ms, .. } => self.timers.push((ticket, at_ms)),
                Output::PastDeadline { ticket, .. } => {
                    assert_eq!(self.past.take(), Some(ticket), "a stop at the deadline for a step not fed past it");
                }
                Output::Cancel(t) => {
                    self.outstanding.retain(|o| *o != t);
                    self.work.retain(|(o, _)| *o != t);
                    self.rooms.retain(|o| *o != t);
                    self.timers.retain(|(o, _)| *o != t);
                }
                Output::Send { tag, message, .. } => {
                    let value: Value = serde_json::from_slice(&message).expect("bb sends JSON");
                    assert!(!message.contains(&b'\n'), "one message is one line");
                    if let Some(tag) = tag {
                        assert!(!self.done.contains(&tag), "a message for tag {tag} after its Done");
                    }
                    let answers: Vec<&Value> = match &value {
                        Value::Array(items) => items.iter().collect(),
                        one => vec![one],
                    };
                    for a in answers {
                        // What the model reads of a tool's answer holds no raw control or bidi character.
                        let content = a.get("result").and_then(|r| r.get("content")).and_then(Value::as_array);
                        for text in content.into_iter().flatten().filter_map(|c| c.get("text").and_then(Value::as_str)) {
                            assert!(!text.chars().any(hides), "a raw control or bidi character reaches the model: {text:?}");
                        }
                        if a.get("result").is_some() || a.get("error").is_some() {
                            let id = a.get("id").map(Value::to_string).unwrap_or_default();
                            if let Some(seen) = self.answered.get_mut(&id) {
                                assert!(!*seen, "request {id} answered twice");
                                *seen = true;
                            }
                            match (self.modern.get(&id), a.get("result")) {
                                (Some(true), Some(result)) => {
                                    assert!(
                                        matches!(result["resultType"].as_str(), Some("complete" | "input_required")),
                                        "a 2026-07-28 result: {a}"
                                    );
                                    let server = &result["_meta"]["io.modelcontextprotocol/serverInfo"];
                                    assert_eq!((&server["name"], &server["version"]), (&json!("bb"), &json!("fuzz")));
                                }
                                (Some(false), _) => {
                                    assert_eq!(
                                        a["error"]["code"], -32022,
                                        "a revision bb does not serve per request: {a}"
                                    );
                                }
                                _ => {}
                            }
                        }
                    }
                }
                Output::Done { tag, .. } => {
                    assert!(self.done.insert(tag), "tag {tag} done twice");
                    assert!(self.waiting.remove(&tag).is_some(), "Done for tag {tag}, which is not waiting");
                }
                // No 2026-07-28 acceptance is spent here: the fuzzer's server has no seal to make a state.
                Output::Spend { .. } | Output::Audit { .. } | Output::Log { .. } => {}
            }
        }
    }
}

/// A control character but a line break and a tab, or a bidirectional control: what no text the model
/// reads may hold raw (bb writes them as `⟨U+202E⟩`).
fn hides(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

fn call_message(ledger: &mut Ledger, session: SessionId, tool: u8, kind: u8, choices: &[(u8, u8)]) -> Value {
    let exposed = widest();
    let tools = exposed.tools();
    // One pick in sixteen names a tool bb does not have; a tool of a group the session has not turned on
    // is refused until enable_toolset turns it on.
    let name = if tool % 16 == 15 { "no_such_tool" } else { tools[tool as usize % tools.len()].name };
    let mut args;
    if name == "show" {
        let kinds = exposed.kinds();
        let kind_name = if kind as usize % (kinds.len() + 1) == kinds.len() {
            "nope"
        } else {
            kinds[kind as usize % kinds.len()].name
        };
        let data_tool = exposed.kind(kind_name).map(|k| k.tool).unwrap_or("get_pull_request");
        args = arguments(exposed, data_tool, choices, kind.is_multiple_of(2));
        args.insert("kind".into(), json!(kind_name));
    } else if name == "enable_toolset" {
        let toolsets = ["code", "builds", "repositories", "pull_requests", "writes", "nope"];
        args = Map::new();
        args.insert("toolset".into(), json!(toolsets[kind as usize % toolsets.len()]));
    } else {
        args = arguments(exposed, name, choices, kind.is_multiple_of(2));
    }
    let id = ledger.id(session, !kind.is_multiple_of(3));
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}})
}

fn body(b: &Body) -> Vec<u8> {
    match b {
        Body::Shape(i) => SHAPES[*i as usize % SHAPES.len()].as_bytes().to_vec(),
        Body::Cut(i, at) => {
            let whole = SHAPES[*i as usize % SHAPES.len()].as_bytes();
            whole[..(*at as usize % whole.len().max(1))].to_vec()
        }
        Body::Bytes(bytes) => bytes.clone(),
        Body::Empty => Vec::new(),
        Body::Huge { thousands, width } => {
            let lines = (usize::from(*thousands) % 41) * 1000;
            let text = "x".repeat(usize::from(*width));
            let line = format!(r#"{{"source":1,"destination":1,"line":"{text}"}}"#);
            let all = vec![line.as_str(); lines].join(",");
            format!(r#"{{"diffs":[{{"source":{{"toString":"a.rs"}},"destination":{{"toString":"a.rs"}},"hunks":[{{"sourceLine":1,"sourceSpan":{lines},"destinationLine":1,"destinationSpan":{lines},"segments":[{{"type":"ADDED","lines":[{all}]}}]}}]}}],"truncated":true}}"#)
                .into_bytes()
        }
    }
}

fn handshake(ledger: &mut Ledger, server: &mut Server, session: SessionId, ui: bool, now: u64) {
    let caps = if ui {
        json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
    } else {
        json!({})
    };
    let id = ledger.id(session, true);
    let init = json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": caps, "clientInfo": {"name": "fuzz", "version": "1"}}});
    ledger.input(server, session, init.to_string().as_bytes(), now);
    ledger.input(server, session, br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, now);
}

fuzz_target!(|run: Run| {
    let mut server = Server::new(ServerConfig::new(Arc::clone(exposed()), "fuzz"), bb_core::Caches::new());
    let mut ledger = Ledger::default();
    let mut now: u64 = 1_764_672_000_000;
    let first = server.open();
    ledger.open.push(first);
    handshake(&mut ledger, &mut server, first, run.ui, now);

    for op in run.ops.into_iter().take(256) {
        match op {
            Operation::Open { handshake: h } => {
                if ledger.open.len() < 8 {
                    let s = server.open();
                    ledger.open.push(s);
                    ledger.drain(&mut server);
                    if h {
                        handshake(&mut ledger, &mut server, s, run.ui, now);
                    }
                }
            }
            Operation::Close { session } => {
                let s = ledger.session(session);
                server.close(s);
                ledger.open.retain(|o| *o != s);
                // Closing a session completes every input it still owed (a Done with no answer).
                ledger.drain(&mut server);
                assert!(!ledger.waiting.values().any(|o| *o == s), "a closed session left inputs without their Done");
            }
            Operation::Call { session, tool, kind, args } => {
                let s = ledger.session(session);
                let message = call_message(&mut ledger, s, tool, kind, &args);
                ledger.input(&mut server, s, message.to_string().as_bytes(), now);
            }
            Operation::Request { session, method, param } => {
                let s = ledger.session(session);
                let method = METHODS[method as usize % METHODS.len()];
                let id = ledger.id(s, param.is_multiple_of(2));
                let p = param as usize;
                let version = ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28", "1"][p % 5];
                let uri = ["ui://bb/view", "ui://bb/other", "file:///etc/passwd", PR_URI][p % 4];
                let level = ["debug", "info", "error", "nope"][p % 4];
                let cursor = ["", "100", "x", "1", "bb1:25:-"][p % 5];
                let params = json!({"protocolVersion": version, "uri": uri, "level": level, "cursor": cursor,
                    "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}});
                let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
                ledger.input(&mut server, s, message.to_string().as_bytes(), now);
            }
            Operation::Modern { session, fresh, method, meta, param, call: (tool, kind, args) } => {
                let fresh = fresh && ledger.open.len() < 8;
                let s = if fresh {
                    let s = server.open();
                    ledger.open.push(s);
                    ledger.drain(&mut server);
                    s
                } else {
                    ledger.session(session)
                };
                let method = MODERN_METHODS[method as usize % MODERN_METHODS.len()];
                let mut message = if method == "tools/call" {
                    call_message(&mut ledger, s, tool, kind, &args)
                } else {
                    let id = ledger.id(s, param.is_multiple_of(2));
                    let p = param as usize;
                    let uri = ["ui://bb/view", "ui://bb/other", "file:///etc/passwd", PR_URI][p % 4];
                    let level = ["debug", "info", "error", "nope"][p % 4];
                    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"uri": uri, "level": level,
                        "notifications": {"toolsListChanged": true, "resourceSubscriptions": [uri, PR_URI]}}})
                };
                if let Some(m) = modern_meta(meta, run.ui != param.is_multiple_of(3)) {
                    message["params"]["_meta"] = m;
                }
                // On a fresh session the request's own `_meta` decides its era (`initialize` starts a session).
                if fresh && method != "initialize" {
                    match meta % 12 {
                        0..=6 => ledger.modern.insert(message["id"].to_string(), true),
                        7 | 8 => ledger.modern.insert(message["id"].to_string(), false),
                        _ => None,
                    };
                }
                ledger.input(&mut server, s, message.to_string().as_bytes(), now);
            }
            Operation::Batch { session, calls } => {
                let s = ledger.session(session);
                let items: Vec<Value> = calls
                    .iter()
                    .take(8)
                    .map(|(tool, kind, args)| call_message(&mut ledger, s, *tool, *kind, args))
                    .collect();
                ledger.input(&mut server, s, Value::Array(items).to_string().as_bytes(), now);
            }
            Operation::Cancel { session, which } => {
                let s = ledger.session(session);
                let ids = ledger.sent.get(&s).cloned().unwrap_or_default();
                let id = if ids.is_empty() { "0".to_owned() } else { ids[which as usize % ids.len()].clone() };
                let line = format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id},"reason":"fuzz"}}}}"#
                );
                ledger.input(&mut server, s, line.as_bytes(), now);
            }
            Operation::Line { session, bytes } => {
                let s = ledger.session(session);
                ledger.input(&mut server, s, &bytes, now);
            }
            Operation::Oversized { session } => {
                let s = ledger.session(session);
                let tag = ledger.next_tag;
                ledger.next_tag += 1;
                ledger.waiting.insert(tag, s);
                server.handle(Input::Oversized { session: s, limit: 16 << 20, tag }, now);
                ledger.drain(&mut server);
            }
            Operation::Answer { which, status, body: b, retry_after, user, decoded } => {
                if !ledger.outstanding.is_empty() {
                    let ticket = ledger.outstanding.remove(which as usize % ledger.outstanding.len());
                    let status = STATUSES[status as usize % STATUSES.len()];
                    let mut bytes = body(&b);
                    let keep = ledger.keeps.remove(&ticket).filter(|_| decoded && (200..300).contains(&status));
                    let decoded = keep.and_then(|keep| bb_core::decode(keep, &mut bytes.as_slice()).ok());
                    if decoded.is_some() {
                        bytes.clear();
                    }
                    let outcome = FetchOutcome::Response(FetchResponse {
                        status,
                        body: bytes,
                        retry_after_s: retry_after.map(u64::from),
                        user: user.then(|| "me".to_owned()),
                        decoded,
                        credential: Default::default(),
                    });
                    server.handle(Input::Fetched { ticket, outcome }, now);
                    ledger.drain(&mut server);
                }
            }
            Operation::Fail { which, kind, may_have_arrived } => {
                if !ledger.outstanding.is_empty() {
                    let ticket = ledger.outstanding.remove(which as usize % ledger.outstanding.len());
                    let mut outcome = FetchOutcome::failed(KINDS[kind as usize % KINDS.len()], "fuzz");
                    if let FetchOutcome::Failed(e) = &mut outcome {
                        e.may_have_arrived = may_have_arrived;
                    }
                    server.handle(Input::Fetched { ticket, outcome }, now);
                    ledger.drain(&mut server);
                }
            }
            Operation::Work { which, last } => {
                // A job comes back (in any order), or the call's work gets a step.
                if !last && !ledger.jobs.is_empty() {
                    let (ticket, job) = ledger.jobs.remove(which as usize % ledger.jobs.len());
                    server.handle(Input::Computed { ticket, done: job.run() }, now);
                    ledger.drain(&mut server);
                } else if !ledger.work.is_empty() {
                    // The last step is the one fed at the deadline the core gave.
                    let (ticket, deadline_ms) = ledger.work.remove(which as usize % ledger.work.len());
                    let at = if last { now.max(deadline_ms) } else { now };
                    ledger.step(&mut server, ticket, deadline_ms, at);
                }
            }
            Operation::Room { which, granted } => {
                if !ledger.rooms.is_empty() {
                    let ticket = ledger.rooms.remove(which as usize % ledger.rooms.len());
                    server.handle(Input::Admitted { ticket, granted }, now);
                    ledger.drain(&mut server);
                }
            }
            Operation::Clock(step) => now = now.saturating_add_signed(i64::from(step)),
            Operation::Timer { which } => {
                if !ledger.timers.is_empty() {
                    let (ticket, at_ms) = ledger.timers.remove(which as usize % ledger.timers.len());
                    now = now.max(at_ms);
                    server.handle(Input::Timer { ticket }, now);
                    ledger.drain(&mut server);
                }
            }
        }
    }

    // Bitbucket answers everything still outstanding (with an error, so no plan reads on for ever);
    // then every input of a session still open must be done.
    // Work still asked for gets its last step, as at the shell's deadline.
    for _ in 0..10_000 {
        if let Some(ticket) = ledger.rooms.pop() {
            server.handle(Input::Admitted { ticket, granted: true }, now);
            ledger.drain(&mut server);
            continue;
        }
        if let Some((ticket, job)) = ledger.jobs.pop() {
            server.handle(Input::Computed { ticket, done: job.run() }, now);
            ledger.drain(&mut server);
            continue;
        }
        if let Some((ticket, deadline_ms)) = ledger.work.pop() {
            now = now.max(deadline_ms);
            ledger.step(&mut server, ticket, deadline_ms, now);
            continue;
        }
        let Some(ticket) = ledger.outstanding.pop() else { break };
        server.handle(Input::Fetched { ticket, outcome: FetchOutcome::response(500, b"{}".to_vec()) }, now);
        ledger.drain(&mut server);
    }
    assert!(ledger.work.is_empty(), "work asked for after its last step");
    assert!(ledger.rooms.is_empty(), "a room asked for after every other was granted");
    assert!(ledger.outstanding.is_empty(), "plans keep reading after every read failed");
    // A listen's stream stays open until it is cancelled or its session closes (below).
    let listens = std::mem::take(&mut ledger.listens);
    let never: Vec<_> = ledger.waiting.keys().filter(|t| !listens.contains(t)).collect();
    assert!(never.is_empty(), "inputs never done: {never:?}");
    for s in ledger.open.clone() {
        server.close(s);
        ledger.drain(&mut server);
    }
    assert!(ledger.waiting.is_empty(), "a closed session left inputs without their Done: {:?}", ledger.waiting);
    assert!(ledger.timers.is_empty(), "a closed session's timers were not withdrawn: {:?}", ledger.timers);
});

/// A pull request resource the stand-in's seed has, to subscribe to.
const PR_URI: &str = "bitbucket://projects/BB/repos/api/pull-requests/1";
