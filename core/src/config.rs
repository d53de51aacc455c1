//! What a server is made with, fixed at start: the exposed tools, bb's version, Bitbucket's base URL,
//! the caches' sizes and the highlighting options the operator chose. Plain data: a clone is a copy of
//! the settings and shares nothing (what servers share is [`crate::Caches`], given beside it).

use std::sync::Arc;

use crate::tool::Exposed;

/// The server's identity and exposure, fixed at start.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The tools this server exposes and the kinds `show` offers: `tools/list` lists them, and a call to any
    /// other tool is refused.
    pub exposed: Arc<Exposed>,
    /// bb's version, for `serverInfo`.
    pub version: &'static str,
    /// How many tools one `tools/list` page holds.
    pub tools_page_size: usize,
    /// Bitbucket's base URL (with its context path), for the links views build; `None` when unknown.
    pub base_url: Option<String>,
    /// The most bytes of avatars kept, by every server given the same [`crate::Caches`] together (the
    /// first server's figure: the HTTP shell's shards share one cache and fetch a person's avatar once,
    /// not once each).
    pub avatar_cache_bytes: usize,
    /// Highlight with lexers that embed other languages and cannot be stopped midway (`--highlight-templates`).
    pub highlight_templates: bool,
    /// How long a call's CPU work (highlighting) may take before its answer goes out with what is done,
    /// in milliseconds (`--highlight-deadline`): the core fixes a call's deadline from it and the time of
    /// the input that first asks for steps, and says it in [`crate::Output::Work`]; the shell's timer
    /// only feeds the step due then.
    pub highlight_deadline_ms: u64,
    /// Whether tools that ask ([`crate::ToolSpec::asks`]) ask the person before they write: on unless
    /// the admin turned it off (`--confirm off`, for an agent that runs with no person present).
    pub confirm: bool,
    /// Seals the state a 2026-07-28 confirmation's retry brings back (the application's key); without
    /// one, such a call is answered that bb cannot ask.
    pub seal: Option<Arc<dyn crate::confirm::Seal>>,
    /// How long the person has to answer a question, and a 2026-07-28 state stays good, in milliseconds:
    /// [`crate::ANSWER_WITHIN_MS`] (10 minutes), shorter only in tests and the fault matrix.
    pub answer_within_ms: u64,
    /// The projects and repositories this server may touch (`--project`, `--repo`, `BB_SCOPE`); `None`:
    /// every one the credentials reach.
    pub scope: Option<Arc<crate::scope::Scope>>,
    /// Whether tool calls emit records of the audit trail ([`crate::Output::Audit`]).
    pub audit: bool,
}

impl ServerConfig {
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
            confirm: true,
            seal: None,
            answer_within_ms: crate::confirm::ANSWER_WITHIN_MS,
            scope: None,
            audit: false,
        }
    }
}
