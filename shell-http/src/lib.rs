//! bb-http: the Streamable HTTP transport behind `bb ai mcp serve --http ADDR`.
//!
//! It will drive the same [`bb_core::Session`] as the stdio transport, one per `Mcp-Session-Id`,
//! routing each answer to the POST that carried its request by the input tag the session echoes
//! (see [`bb_core::Output::Send`]). Until its issue lands, bb serves stdio only and this crate
//! holds no code.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
