//! bb's stdio transport: newline-delimited JSON-RPC on stdin and stdout, one session, driven by a
//! [`bb_drive::Driver`] (`stdio.rs`), over bounded framing (`lines.rs`: a line longer than the limit is
//! skipped, never held whole). It reaches Bitbucket through whatever [`bb_drive::Bitbucket`] it is
//! given; the application (`app/`, the `bb` binary) gives it bb-bitbucket's client. The repository's
//! map is `docs/ARCHITECTURE.md`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod lines;
mod stdio;

pub use lines::MAX_LINE;
pub use stdio::{END_OF_INPUT_GRACE, serve, serve_stdio};
