//! What the sessions of one server share while one of them runs, and what they say to the shell:
//! the configuration, the avatar cache, the tickets of the reads in flight, and the outputs. The
//! [`crate::Server`] owns it and lends it to the session it drives.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::avatar_cache::AvatarCache;
use crate::fetch::{FetchRequest, Ticket};
use crate::highlight_cache::HighlightCache;
use crate::jsonrpc::Id;
use crate::logging::Level;
use crate::plan::Desk;
use crate::protocol::VIEW_MIME_TYPE;
use crate::stateless;
use crate::tool::{Exposed, VIEW_URI};

/// The server's identity and exposure, fixed at start.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The tools this server exposes.
    pub exposed: Arc<Exposed>,
    /// bb's version, for `serverInfo`.
    pub version: &'static str,
    /// How many tools one `tools/list` page holds.
    pub tools_page_size: usize,
    /// Bitbucket's base URL (with its context path), for the links views build; `None` when unknown.
    pub base_url: Option<String>,
    /// The most bytes of avatars the server keeps (a shell that runs several servers splits the budget).
    pub avatar_cache_bytes: usize,
    /// Highlight with lexers that embed other languages and cannot be stopped midway (`--highlight-templates`).
    pub highlight_templates: bool,
    /// How long a call's CPU work (highlighting) may take before its answer goes out with what is done,
    /// in milliseconds (`--highlight-deadline`): the shell's clock decides it, so only the drive reads it.
    pub highlight_deadline_ms: u64,
    /// The answers made once, shared by every server made from this configuration or a clone of it
    /// (the HTTP shell runs eight): made by the first, reused by the rest while what they depend
    /// on (the exposure, the version, the page size) is the same.
    made: Arc<std::sync::OnceLock<Arc<MadeOnce>>>,
}

impl ServerConfig {
    /// The answers that never change for this configuration, made once across its clones.
    pub(crate) fn made_once(&self) -> Arc<MadeOnce> {
        let made = self.made.get_or_init(|| Arc::new(MadeOnce::new(self)));
        if made.made_for(self) { Arc::clone(made) } else { Arc::new(MadeOnce::new(self)) }
    }

    /// A configuration for `exposed` (its instructions are made from it when first asked for).
    pub fn new(exposed: Arc<Exposed>, version: &'static str) -> ServerConfig {
        ServerConfig {
            exposed,
            version,
            tools_page_size: 100,
            base_url: None,
            avatar_cache_bytes: crate::avatar_cache::MAX_CACHE_BYTES,
            highlight_templates: false,
            highlight_deadline_ms: 150,
            made: Arc::default(),
        }
    }
}

/// A session of a server; the shell keeps it to feed the session's messages and route its answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId(pub u64);

/// Something the shell must do.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Send one JSON-RPC message (a single line, no newline) to a session's client.
    Send {
        /// The session whose client gets it.
        session: SessionId,
        /// The tag of the input this answers, or `None` for a message tied to no input (a log notification).
        tag: Option<u64>,
        /// The serialized message.
        message: Vec<u8>,
    },
    /// The input tagged `tag` is complete: every message that answers it has been sent (possibly none:
    /// a notification, a cancelled call).
    Done {
        /// The session the input came on.
        session: SessionId,
        /// The input's tag.
        tag: u64,
    },
    /// Make a Bitbucket request for a session and hand its outcome back as [`Input::Fetched`].
    Fetch {
        /// The session whose call needs it (in per-person mode, whose credentials it carries).
        session: SessionId,
        /// Identifies the request.
        ticket: Ticket,
        /// What to ask Bitbucket; the shell adds the base URL, credentials and timeouts.
        request: FetchRequest,
    },
    /// A call has CPU work to do (highlighting): feed [`crate::Input::Work`] with this ticket, `last: false`,
    /// while the shell's deadline for the call has not passed, then once with `last: true`; the core asks
    /// again with another `Work` after each step that leaves more to do. Each step is bounded.
    Work {
        /// The session whose call it is.
        session: SessionId,
        /// Identifies the work, as a read's ticket does.
        ticket: Ticket,
    },
    /// A file to highlight, which the shell may run on a thread of its own (a lexer cannot be
    /// stopped inside a line, so the core never runs one where it would hold up an answer): feed
    /// its outcome back as [`crate::Input::Computed`] with this ticket, whenever it is done. A
    /// shell with no thread for it runs it at once. The call's deadline is its `Work` ticket's.
    Compute {
        /// The session whose call asked for it.
        session: SessionId,
        /// Identifies the job, as a read's ticket does.
        ticket: Ticket,
        /// What to run.
        job: Box<crate::highlight::HighlightJob>,
    },
    /// A request (or work) asked for earlier is no longer needed: do not send it if it has not gone
    /// yet, stop its retries, and drop its outcome.
    CancelFetch(Ticket),
    /// A line for the operator's log (stderr).
    Log {
        /// Its severity.
        level: Level,
        /// The text; never holds a secret.
        message: String,
    },
}

/// What the sessions of a server share while one of them runs.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: ServerConfig,
    pub(crate) avatars: AvatarCache,
    /// Files highlighted whole, for the next read of the same lines.
    pub(crate) highlights: HighlightCache,
    /// Which session each read in flight belongs to.
    pub(crate) tickets: BTreeMap<Ticket, SessionId>,
    pub(crate) next_ticket: u64,
    /// The latest wall-clock time seen, epoch milliseconds.
    pub(crate) now_ms: u64,
    pub(crate) out: VecDeque<Output>,
    /// The answers that never change, made once.
    pub(crate) made: Arc<MadeOnce>,
}

/// An answer made once when the server starts.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Made {
    /// The first page of `tools/list` (exposure is fixed at start).
    ToolsList,
    /// `resources/read` of the view page (static, the same for everyone).
    View,
    /// [`Made::ToolsList`] as 2026-07-28 answers it: complete, with serverInfo and cache hints.
    StatelessToolsList,
    /// [`Made::View`] as 2026-07-28 answers it.
    StatelessView,
}

/// The results that never change, serialized, so a request for them costs a copy rather than building
/// and serializing 20 KB (the tool list) or 170 KB (the page) again. Only the bytes are kept (a batch,
/// which needs a value, parses them); each is made when first asked for, so an idle server holds none
/// and has run none of the code that makes them.
#[derive(Debug)]
pub(crate) struct MadeOnce {
    // What the answers are made from: the exposure (by identity; held, so its address is never
    // another's), the version, the page size.
    made_from: (Arc<Exposed>, &'static str, usize),
    instructions: std::sync::OnceLock<String>,
    tools_list: std::sync::OnceLock<Vec<u8>>,
    stateless_tools_list: std::sync::OnceLock<Vec<u8>>,
    stateless_view: std::sync::OnceLock<Vec<u8>>,
}

/// The page is the same for every server in the process, so it is made once per process, not per
/// server (a test or fuzz run that makes thousands of servers serializes its 160 KB once).
static VIEW: std::sync::LazyLock<Vec<u8>> =
    std::sync::LazyLock::new(|| serde_json::to_vec(&view_resource()).unwrap_or_default());

impl MadeOnce {
    pub(crate) fn new(config: &ServerConfig) -> MadeOnce {
        MadeOnce {
            made_from: MadeOnce::key(config),
            instructions: std::sync::OnceLock::new(),
            tools_list: std::sync::OnceLock::new(),
            stateless_tools_list: std::sync::OnceLock::new(),
            stateless_view: std::sync::OnceLock::new(),
        }
    }

    fn key(config: &ServerConfig) -> (Arc<Exposed>, &'static str, usize) {
        (Arc::clone(&config.exposed), config.version, config.tools_page_size)
    }

    /// Whether these answers are the ones `config` would make.
    fn made_for(&self, config: &ServerConfig) -> bool {
        let (exposed, version, page) = &self.made_from;
        Arc::ptr_eq(exposed, &config.exposed) && *version == config.version && *page == config.tools_page_size
    }

    /// The instructions given at initialize and by `server/discover`, from the exposure.
    pub(crate) fn instructions(&self) -> &str {
        self.instructions.get_or_init(|| crate::instructions::for_exposed(&self.made_from.0))
    }

    fn made(&self, which: Made) -> &[u8] {
        let (exposed, version, page_size) = &self.made_from;
        let first_page = || tools_page(exposed, *page_size, 0);
        match which {
            Made::ToolsList => self.tools_list.get_or_init(|| serde_json::to_vec(&first_page()).unwrap_or_default()),
            Made::View => &VIEW,
            Made::StatelessToolsList => self.stateless_tools_list.get_or_init(|| {
                let v = stateless::cacheable(stateless::complete(first_page(), version), stateless::LIST_TTL_MS);
                serde_json::to_vec(&v).unwrap_or_default()
            }),
            Made::StatelessView => self.stateless_view.get_or_init(|| {
                let v = stateless::cacheable(stateless::complete(view_resource(), version), stateless::VIEW_TTL_MS);
                serde_json::to_vec(&v).unwrap_or_default()
            }),
        }
    }

    /// The result as a value, for a batch (2025-03-26), which answers with values.
    pub(crate) fn value(&self, which: Made) -> Value {
        serde_json::from_slice(self.made(which)).unwrap_or(Value::Null)
    }

    /// The whole JSON-RPC answer to request `id`: `{"id":…,"jsonrpc":"2.0","result":…}`, its keys in
    /// the order serde_json's sorted maps write every other answer.
    pub(crate) fn message(&self, id: &Id, which: Made) -> Vec<u8> {
        let result = self.made(which);
        let id = serde_json::to_vec(&id.to_value()).unwrap_or_default();
        let mut out = Vec::with_capacity(result.len() + id.len() + 40);
        out.extend_from_slice(b"{\"id\":");
        out.extend_from_slice(&id);
        out.extend_from_slice(b",\"jsonrpc\":\"2.0\",\"result\":");
        out.extend_from_slice(result);
        out.push(b'}');
        out
    }
}

impl Shared {
    /// A ticket no read or work of this server has had.
    pub(crate) fn new_ticket(&mut self) -> Ticket {
        let t = Ticket(self.next_ticket);
        self.next_ticket += 1;
        t
    }

    /// Where a plan files its reads, with the avatar and highlight caches.
    pub(crate) fn desk(&mut self) -> Desk<'_> {
        Desk {
            issued: Vec::new(),
            next_ticket: &mut self.next_ticket,
            avatars: &mut self.avatars,
            highlights: &mut self.highlights,
            computes: Vec::new(),
            now_ms: self.now_ms,
        }
    }
}

/// The page of `tools/list` that starts at `start`.
pub(crate) fn tools_page(exposed: &Exposed, page_size: usize, start: usize) -> Value {
    let listed = exposed.listed();
    let end = (start + page_size.max(1)).min(listed.len());
    let mut result = Map::new();
    result.insert("tools".into(), Value::Array(listed[start.min(end)..end].to_vec()));
    if end < listed.len() {
        result.insert("nextCursor".into(), Value::String(format!("{CURSOR}{end}")));
    }
    Value::Object(result)
}

/// The result of `resources/read` for the view page. No `csp` key: the page fetches nothing and
/// declares no domains (ADR-101).
pub(crate) fn view_resource() -> Value {
    json!({"contents": [{
        "uri": VIEW_URI,
        "mimeType": VIEW_MIME_TYPE,
        "text": bb_assets::VIEW_HTML,
        "_meta": {"ui": {"prefersBorder": true}},
    }]})
}

/// What a `tools/list` cursor starts with; the rest is the offset of the page's first tool.
const CURSOR: &str = "tools:";

/// The offset a cursor bb gave out names.
pub(crate) fn decode_cursor(cursor: &str) -> Option<usize> {
    cursor.strip_prefix(CURSOR)?.parse().ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::{Catalogue, ExposureOptions};

    #[test]
    fn servers_of_one_configuration_share_the_answers_made_once_unless_what_they_depend_on_differs() {
        let exposed = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
        let config = ServerConfig::new(exposed, "0.0.0-test");
        let first = config.made_once();
        let mut clone = config.clone();
        clone.avatar_cache_bytes /= 8;
        assert!(Arc::ptr_eq(&first, &clone.made_once()), "a clone (the HTTP shell's shards) shares them");
        clone.tools_page_size = 3;
        let paged = clone.made_once();
        assert!(!Arc::ptr_eq(&first, &paged));
        assert_eq!(paged.value(Made::ToolsList)["tools"].as_array().map(Vec::len), Some(3));
        let other = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
        let mut another = config.clone();
        another.exposed = other;
        assert!(!Arc::ptr_eq(&first, &another.made_once()), "another exposure makes its own");
    }

    #[test]
    fn the_answers_made_once_are_made_when_first_asked_for_and_then_kept() {
        let exposed = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
        let made = ServerConfig::new(exposed, "0.0.0-test").made_once();
        // An idle server holds none of them (bench/compare's idle RSS counts on it).
        assert!(made.tools_list.get().is_none() && made.stateless_tools_list.get().is_none());
        assert!(made.instructions.get().is_none() && made.stateless_view.get().is_none());
        let first = made.made(Made::ToolsList).as_ptr();
        assert!(made.tools_list.get().is_some() && made.stateless_tools_list.get().is_none(), "only what was asked");
        assert_eq!(made.made(Made::ToolsList).as_ptr(), first, "made once, then the same bytes");
        assert!(made.instructions().starts_with("bb reads and acts on Bitbucket"));
        assert!(made.instructions.get().is_some());
    }
}
