//! bb, the application: the command line, the configuration, and the wiring of the transports. Everything
//! that decides lives in bb-core; the loop that drives it lives in bb-drive; Bitbucket is reached through
//! bb-bitbucket's client; the transports are bb-stdio and bb-http. This crate only puts them together
//! (the `bb` binary); the repository's map is `docs/ARCHITECTURE.md`.
//!
//! Modules: [`audit`] (`--audit-file`: the audit trail's writer), [`cli`] (the command line), [`confirm`] (the seal of 2026-07-28 confirmation states, its key and
//! the ledger of used ones replicas share), [`config`] (where Bitbucket is and how bb talks to it: flags,
//! environment, TLS, proxy; read into bb-bitbucket's options), [`http`] (starting the Streamable HTTP
//! server of bb-http with bb-bitbucket's client and this process's log), and [`oauth`] (`--oauth`: the
//! incoming link's credentials, Bitbucket's token endpoint, where logins live), with `metadata_fetch` (a
//! client's metadata document, read without reaching inside bb's network).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod audit;
pub mod cli;
pub mod config;
pub mod confirm;
pub mod files;
pub mod http;
mod metadata_fetch;
pub mod oauth;
