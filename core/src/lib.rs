//! bb-core: everything bb decides, with no IO.
//!
//! The core never touches a socket, a file, the environment, a clock or a random source. A shell
//! (stdio or HTTP) owns those and drives a [`Server`]: it feeds [`Input`]s with the current time
//! and drains [`Server::poll_output`] after every call, carrying out each [`Output`]:
//!
//! ```
//! use bb_core::{Catalogue, ExposureOptions, Input, Output, Server, ServerConfig};
//!
//! let exposed = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
//! let mut server = Server::new(ServerConfig::new(exposed, "0.0.0"));
//! let session = server.open();
//! let line = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
//! server.handle(Input::Message { session, bytes: line, tag: 7 }, 0);
//! let mut outputs = Vec::new();
//! while let Some(out) = server.poll_output() {
//!     outputs.push(out);
//! }
//! assert_eq!(outputs, [
//!     Output::Send { session, tag: Some(7), message: br#"{"id":1,"jsonrpc":"2.0","result":{}}"#.to_vec() },
//!     Output::Done { session, tag: 7 },
//! ]);
//! ```
//!
//! Layers, each importing only those below it:
//!
//! ```text
//!   server        what sessions share; owns the sessions                    (quinn: Endpoint)
//!   session       one client's conversation: handshake, calls, cancellation   (quinn: Connection);
//!                 a 2026-07-28 request is answered from itself alone (stateless)
//!   shared        what the sessions share while one runs, and the outputs to the shell
//!   catalogue     the registry: imports the tools and the kinds, never imported by them
//!   tools/ views/ one file per data tool; one file per show kind, listed in views::KINDS
//!   reads/        each Bitbucket read written once, typed; tools and views render the same reads
//!   writes/       each Bitbucket write written once: the request a write tool sends
//!   tool          what every tool and kind is made of, and what a call sees
//!   plan fetch coalesce bitbucket jsonrpc protocol stateless args retry markdown requirements text
//!   avatar_cache encoding                                                                        leaves
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod args;
pub mod avatar_cache;
pub mod bitbucket;
pub mod catalogue;
pub mod coalesce;
mod config;
mod contract;
pub mod encoding;
pub mod fetch;
pub mod highlight;
pub mod highlight_cache;
pub mod instructions;
pub mod jsonrpc;
pub mod limits;
mod listing;
pub mod logging;
mod made;
pub mod markdown;
pub mod plan;
pub mod protocol;
pub mod reads;
pub mod requirements;
pub mod retry;
pub mod server;
pub mod session;
mod shared;
pub mod stateless;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod text;
pub mod tool;
pub mod tools;
pub mod views;
mod work;
pub mod writes;

pub use catalogue::{Catalogue, ExposureOptions};
pub use config::ServerConfig;
pub use contract::{Input, Output, SessionId};
pub use fetch::{FetchError, FetchErrorKind, FetchOutcome, FetchRequest, FetchResponse, Method, Ticket};
pub use logging::Level;
pub use plan::ToolResult;
pub use protocol::ProtocolVersion;
pub use server::Server;
pub use session::Session;
pub use tool::{Exposed, ToolSpec, VIEW_URI};
