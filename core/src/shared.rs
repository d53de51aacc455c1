//! What the sessions of one server share while one of them runs, and what they say to the shell:
//! the configuration, the avatar cache, the tickets of the reads in flight, and the outputs. The
//! [`crate::Server`] owns it and lends it to the session it drives.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use crate::avatar_cache::AvatarCache;
use crate::fetch::{FetchRequest, Ticket};
use crate::logging::Level;
use crate::plan::Desk;
use crate::tool::Exposed;

/// The server's identity and exposure, fixed at start.
#[derive(Debug)]
pub struct ServerConfig {
    /// The tools this server exposes.
    pub exposed: Arc<Exposed>,
    /// bb's version, for `serverInfo`.
    pub version: &'static str,
    /// How many tools one `tools/list` page holds.
    pub tools_page_size: usize,
    /// The instructions given at initialize, made once from the exposure.
    pub instructions: String,
    /// Bitbucket's base URL (with its context path), for the links views build; `None` when unknown.
    pub base_url: Option<String>,
}

impl ServerConfig {
    /// A configuration for `exposed`, with instructions that match it.
    pub fn new(exposed: Arc<Exposed>, version: &'static str) -> ServerConfig {
        let instructions = crate::instructions::for_exposed(&exposed);
        ServerConfig { exposed, version, tools_page_size: 100, instructions, base_url: None }
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
    /// A request asked for earlier is no longer needed: do not send it if it has not gone yet,
    /// stop its retries, and drop its outcome.
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
    /// Which session each read in flight belongs to.
    pub(crate) tickets: BTreeMap<Ticket, SessionId>,
    pub(crate) next_ticket: u64,
    /// The latest wall-clock time seen, epoch milliseconds.
    pub(crate) now_ms: u64,
    pub(crate) out: VecDeque<Output>,
}

impl Shared {
    /// Where a plan files its reads, with the avatar cache.
    pub(crate) fn desk(&mut self) -> Desk<'_> {
        Desk { issued: Vec::new(), next_ticket: &mut self.next_ticket, avatars: &mut self.avatars }
    }
}
