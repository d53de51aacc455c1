//! bb's shell: the command line, configuration, Bitbucket IO and the stdio transport. Everything
//! that decides lives in bb-core; the loop that drives it lives in bb-drive; this crate only does IO.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod cli;
pub mod client;
pub mod config;
pub mod http;
pub mod lines;
pub mod stdio;
