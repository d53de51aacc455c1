//! bb's shell: the command line, configuration and the stdio transport. Everything
//! that decides lives in bb-core; the loop that drives it lives in bb-drive; this crate only does IO.
//! It is the application crate (the `bb` binary), in the folder the design named `shell-stdio/`; the
//! repository's map is `docs/ARCHITECTURE.md`.
//!
//! Modules: [`cli`] (the command line), [`config`] (where Bitbucket is and how bb talks to it: flags,
//! environment, TLS, proxy; the client itself is bb-bitbucket's),
//! [`stdio`] (the stdio transport) with [`lines`] (its bounded framing), [`http`] (starting the
//! Streamable HTTP server of bb-http with this crate's client and log), and [`oauth`] (`--oauth`:
//! the incoming link's credentials, Bitbucket's token endpoint, where logins live).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod cli;
pub mod config;
pub mod http;
pub mod lines;
pub mod oauth;
pub mod stdio;
