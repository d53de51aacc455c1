//! bb-core: everything bb decides, with no IO.
//!
//! The core never touches a socket, a file, the environment, a clock or a random source. A shell
//! (stdio or HTTP) owns those and drives a [`Session`]: it feeds [`Input`]s with the current time
//! and drains [`Session::poll_output`] after every call, carrying out each [`Output`]:
//!
//! ```
//! use bb_core::{Catalogue, ExposureOptions, Input, Output, ServerConfig, Session};
//! use std::sync::Arc;
//!
//! let exposed = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
//! let mut session = Session::new(Arc::new(ServerConfig::new(exposed, "0.0.0")));
//! let line = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
//! session.handle(Input::Message { bytes: line, tag: 0 }, 0);
//! while let Some(out) = session.poll_output() {
//!     if let Output::Send { message, .. } = out {
//!         assert_eq!(message, br#"{"id":1,"jsonrpc":"2.0","result":{}}"#);
//!     }
//! }
//! ```
//!
//! Modules are named after what they decide: [`jsonrpc`] (framing), [`protocol`] (revisions and
//! the client's profile), [`catalogue`] (the tools and their exposure), [`args`] (argument
//! checking), [`plan`] (how a call waits on Bitbucket), [`session`] (the state machine).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod args;
pub mod bitbucket;
pub mod catalogue;
pub mod instructions;
pub mod jsonrpc;
pub mod logging;
pub mod markdown;
pub mod plan;
pub mod protocol;
pub mod requirements;
pub mod retry;
pub mod session;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod tools;
pub mod views;

pub use catalogue::{Catalogue, Exposed, ExposureOptions, ToolSpec, VIEW_URI};
pub use logging::Level;
pub use plan::{FetchError, FetchErrorKind, FetchOutcome, FetchRequest, FetchResponse, Method, Ticket, ToolResult};
pub use protocol::ProtocolVersion;
pub use session::{Input, Output, ServerConfig, Session};
