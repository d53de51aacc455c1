//! bb's shell: the command line, the stdio transport and the driver loop that pumps a
//! [`bb_core::Session`]. Everything that decides lives in bb-core; this crate only does IO.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod bitbucket;
pub mod cli;
pub mod config;
pub mod fetch;
pub mod http;
pub mod lines;
pub mod log;
pub mod stdio;
