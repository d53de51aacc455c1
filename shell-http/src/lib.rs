//! bb-http: the Streamable HTTP transport behind `bb ai mcp serve --http ADDR` (MCP 2025-03-26 to
//! 2025-11-25 with sessions, `reference/mcp.md` §2; 2026-07-28 without), safe to expose by default.
//!
//! It drives one [`bb_core::Server`] through the same [`bb_drive::Driver`] as the stdio
//! transport, with one core session per `Mcp-Session-Id` (or per 2026-07-28 request, which needs
//! none, so N processes can answer behind any load balancer), and routes each answer to the POST
//! that carried its request by the input tag the core echoes (see [`bb_core::Output::Send`] and
//! [`bb_core::Output::Done`]).
//!
//! ```text
//!   server (sockets, threads) ──▶ exchange (POST / DELETE / GET / OPTIONS)
//!     └─▶ connections (waiting,      ├─▶ gate (Host, Origin, bearer, CORS)
//!         admitted, per peer)        ├─▶ reply (JSON, SSE, refusals)
//!                                    ├─▶ persons (does Bitbucket accept this person's token?)
//!                                    ├─▶ oauth (log in with Bitbucket: metadata, authorize, token, who a token is)
//!                                    └─▶ sessions: 8 × Mutex<Driver> ─▶ parts of answers to the waiting POSTs
//!                                          ├─▶ census (seats per peer and person; the caps)
//!                                          └─▶ registry (ids, owners, last use, expiry, idle longest)
//! ```
//!
//! The repository's map is `docs/ARCHITECTURE.md`; hyper runs on smol through `bb-hyper-smol`.
//!
//! Module by what it decides: [`options`] (limits and who may call), `gate` (whether a request
//! is admitted), `exchange` (what each method and header combination answers), `request` (what a
//! request says: Accept, media type, initialize, progress, its body), `persons` (whether Bitbucket
//! accepts a person's token, per-person mode), `oauth` (logging in with Bitbucket: bb as the
//! resource server and an authorization server facade, `--oauth`), `sessions` (which waiting POST each message goes to,
//! the drivers, which idle session makes room), `census` (how many sessions each peer and person
//! holds), `registry` (which ids live), `sessionless` (2026-07-28: which POSTs need no session, their
//! headers against their bodies, their statuses), `reply` (JSON, SSE and error bodies), `unsent` (what an
//! answer holds of the memory budget until written), `server` (sockets,
//! threads), `connections` (which connections are held: waiting, admitted, per peer, and the share of
//! anonymous login requests), `peer` (who
//! a client is, for fairness), `proxies` (which proxies bb believes, `--trusted-proxy`, and whom a
//! request through one is from: `X-Forwarded-For`), `proxy_header` (a trusted proxy's PROXY
//! protocol v2 header, naming a connection's source), `throttle` (how often a repeated warning is logged), `drain` (a
//! graceful stop: what is refused, what finishes, what is cut, which Bitbucket writes are held),
//! `health` (`/healthz`, `/readyz` and the probe behind it), `observe` (what each request adds to
//! the metrics), `scrape` (the `--metrics` listener). Imports point
//! down that picture only.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod census;
mod connections;
mod drain;
mod exchange;
mod gate;
mod health;
mod oauth;
mod observe;
pub mod options;
mod peer;
mod persons;
mod proxies;
mod proxy_header;
mod registry;
mod reply;
mod request;
mod scrape;
mod secret;
mod server;
mod sessionless;
mod sessions;
mod throttle;
mod unsent;

pub use bb_drive::{Grant, PersonalToken};
pub use drain::Stopped;
pub use oauth::store::{Kind, MemoryStore, Store, StoreError};
pub use oauth::{ACCESS_TTL_MS, LOG_IN_AGAIN, OAuthOptions, Provider, ProviderError, Tokens};
pub use options::{BearerToken, HttpOptions, Limits};
pub use proxies::{Cidr, TrustedProxies};
pub use scrape::MetricsServer;
pub use server::{FLUSH, HttpServer, Running};

/// The proptest configuration the unit properties run with: a pinned seed (`BB_PROPTEST_SEED`,
/// default 0xbb), `BB_PROPTEST_CASES` cases (default 256), and no failure files: a counterexample
/// becomes a named test instead (as core's `tests/common`).
#[cfg(test)]
pub(crate) fn proptest_config() -> proptest::test_runner::Config {
    let seed = std::env::var("BB_PROPTEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0xbb);
    let cases = std::env::var("BB_PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256);
    proptest::test_runner::Config {
        cases,
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed),
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}
