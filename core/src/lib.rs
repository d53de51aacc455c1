//! bb-core: everything bb decides, with no IO.
//!
//! The core never touches a socket, a file, the environment, a clock or a random source. A shell
//! (stdio or HTTP) owns those and drives a [`Server`]: it feeds [`Input`]s with the current time
//! and drains [`Server::poll_output`] after every call, carrying out each [`Output`]:
//!
//! ```
//! use bb_core::{Caches, Catalogue, ExposureOptions, Input, Output, Said, Server, ServerConfig};
//!
//! let exposed = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
//! let mut server = Server::new(ServerConfig::new(exposed, "0.0.0"), Caches::new());
//! let session = server.open();
//! let line = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
//! server.handle(Input::Message { session, bytes: line, tag: 7 }, 0);
//! let mut outputs = Vec::new();
//! while let Some(out) = server.poll_output() {
//!     outputs.push(out);
//! }
//! assert_eq!(outputs, [
//!     Output::Send { session, tag: Some(7), message: br#"{"id":1,"jsonrpc":"2.0","result":{}}"#.to_vec(), said: Said::Result },
//!     Output::Done { session, tag: 7 },
//! ]);
//! ```
//!
//! The map of the whole repository is `docs/ARCHITECTURE.md`; this crate's part of it follows.
//!
//! # The public face
//!
//! What the shells use, and nothing else: the drive contract ([`Input`], [`Output`], [`Server`],
//! [`Session`], [`ServerConfig`], what servers share when given the same [`Caches`], the fetch types, the highlighting job a shell runs), the catalogue
//! and its exposure ([`Catalogue`], [`Exposed`], [`ToolSpec`]), the table that shares identical reads
//! between drivers ([`Coalesce`]), the retry policy a Bitbucket client applies ([`retry`]), base64 for
//! the shells' avatars and secrets, and the bounds on work in flight ([`limits`]). Every module is
//! private; tests and examples reach what they check through `testing` (the `testing` feature), and
//! fuzz targets through `fuzzing` (built with `--cfg fuzzing`, as `cargo fuzz` does).
//!
//! # Modules, each importing only those below it
//!
//! ```text
//!   server        what sessions share; owns the sessions, routes outcomes     (quinn: Endpoint)
//!   session/      one client's conversation: the method table for both eras, tool calls, batches
//!                 (quinn: Connection; a 2026-07-28 request is answered from itself alone)
//!   shared        what the sessions share while one runs: configuration, caches, the work table, outputs
//!   work          the table of calls' work: every ticket (read, job, steps, room), its owner, its state
//!   catalogue     the registry: imports the tools and the kinds, never imported by them
//!   tools/        one file per data tool: arguments → reads and writes → text for the model
//!   views/        one file per show kind, listed in views::KINDS; refresh (cadence), suggest (the form)
//!   reads/        each Bitbucket read written once, typed; tools and views render the same reads
//!   writes/       each Bitbucket write written once: the request a write tool sends
//!   text/         how Bitbucket's data is written for the model, where several tools write it alike
//!   tool          what every tool and kind is made of, and what a call sees
//!   plan          how a call waits: the Plan a tool writes, the Desk its reads are filed on
//!   caches        what servers given the same Caches share (avatars, commits seen, answers made once)
//!   made listing config contract limits                   answers made once, tools/list pages, the
//!                                                         configuration, the drive contract, the bounds
//!   errors        how a Bitbucket answer becomes its body or one sentence the model can act on
//!   bitbucket/ jsonrpc protocol stateless args fetch retry coalesce markdown highlight highlight_cache
//!   requirements instructions avatar_cache commit_cache logging encoding                       leaves
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[cfg(not(any(feature = "onig", feature = "fancy")))]
compile_error!(
    "bb-core highlights with a regex engine chosen by a feature: `onig` (the default) or `fancy` (pure Rust); \
     build with one of them, e.g. `--no-default-features --features fancy`"
);

mod args;
pub mod audit;
mod avatar_cache;
mod bitbucket;
mod caches;
mod catalogue;
mod coalesce;
mod codeowners;
mod commit_cache;
mod completion;
mod config;
mod confirm;
mod contract;
mod encoding;
mod errors;
mod fetch;
mod glob;
mod highlight;
mod highlight_cache;
mod instructions;
mod jsonrpc;
pub mod limits;
mod listing;
mod logging;
mod made;
mod markdown;
mod pictures;
mod plan;
mod prompts;
mod protocol;
mod reads;
mod requirements;
mod resources;
pub mod retry;
mod scope;
mod server;
mod session;
mod shared;
mod stateless;
mod text;
mod tool;
mod tools;
mod toolsets;
mod views;
mod work;
mod writes;

#[cfg(fuzzing)]
pub mod fuzzing;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

// The drive contract: what a shell feeds the core, and what it carries out for it.
pub use audit::AuditEvent;
pub use caches::Caches;
pub use config::ServerConfig;
pub use confirm::{ANSWER_WITHIN_MS, Seal, Spent};
pub use contract::{Input, Output, Said, SessionId};
pub use fetch::{
    Batch, BytesAnswer, Credential, Decoded, DiffAnswer, FetchError, FetchErrorKind, FetchOutcome, FetchRequest,
    FetchResponse, Keep, LineShare, LinesAnswer, Method, Share, Ticket, decode,
};
pub use highlight::{HighlightJob, Highlighted};
pub use logging::{Level, rfc3339};
pub use protocol::{ClientProfile, ProtocolVersion};
pub use server::Server;
pub use session::Session;
pub use stateless::listen_ended;

// The catalogue and what the operator exposes of it.
pub use catalogue::{Catalogue, ExposureOptions};
pub use scope::{Scope, Scoped};
pub use tool::{Access, Asks, Exposed, Role, ToolSpec, VIEW_URI};
pub use toolsets::{GROUPS, Toolset, Toolsets};

// Identical reads shared between drivers; base64 for avatars and the secrets scrubbed from logs.
pub use coalesce::{Coalesce, Flight, Joined, Left, ReadKey};
pub use encoding::{base64, base64_decode};
