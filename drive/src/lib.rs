//! bb-drive: the one loop that drives a [`bb_core::Server`], shared by the stdio and HTTP shells.
//!
//! The shells differ only in framing and connections; everything between a frame and the core is
//! here: the clock ([`now_ms`], the only one the core sees), carrying out the core's outputs
//! ([`Driver`]), making Bitbucket requests on a bounded pool of threads ([`Pool`]) through a [`Bitbucket`] and
//! stopping them with a [`Cancel`], sharing identical reads in flight ([`SharedReads`]), the operator's log ([`Logger`]), and removing credentials from what
//! bb passes on ([`Secrets`]).
//!
//! The repository's map is `docs/ARCHITECTURE.md`. Modules, by what each decides:
//!
//! - `driver`: the drive loop ([`Driver`]): feeding the core, carrying out each output, jobs and deadlines, rooms.
//! - `pool`: bounded thread pools ([`Pool`]): the reads', and the CPU work's (with stuck jobs).
//! - `shared_reads`: identical GETs in flight shared between drivers ([`SharedReads`]).
//! - `room`: the memory budget for large calls ([`Room`]).
//! - `process`: what the application makes once and hands to every driver ([`Process`]: the metrics, the room, the core's caches, the pools, the timer).
//! - `reach`: what a shell gives the driver to reach Bitbucket ([`Bitbucket`], [`Requester`], [`PersonalToken`]).
//! - `audit`: the audit trail's sink ([`Audit`]) and the line made of each record ([`AuditTrail`]).
//! - `cancel`: a request's cancel flag ([`Cancel`]).
//! - `timer`: the process's thread that runs deadlines and grants at their instant (one per [`Process`],
//!   started on first use, gone when idle).
//! - `log`: the operator's log on stderr ([`Logger`]).
//! - [`secrets`]: the credentials bb holds, and their removal from what it passes on ([`Secrets`]).
//!
//! ```text
//!   shell ── Input ──▶ Driver::feed ──▶ Server::handle, then poll_output until None
//!                                          ├─ Send / Done ──▶ deliver(Delivery) ──▶ the shell frames it
//!                                          ├─ Fetch ────────▶ GET in flight already? follow it (SharedReads)
//!                                          │                  else process.reads().run(Bitbucket::fetch_for) ──▶ on_fetched
//!                                          │                  (of every waiter, a shared read's followers too)
//!                                          ├─ Compute ──────▶ the CPU pool (per person, dropped if cancelled first)
//!                                          ├─ Work ─────────▶ a step now; at the core's deadline_ms the timer
//!                                          │                  feeds one more (the core decides it is the last)
//!                                          ├─ PastDeadline ─▶ the timer forgotten, the stop counted in the metrics
//!                                          ├─ Admit ────────▶ the Process's Room: granted now, in turn, or refused
//!                                          ├─ Cancel ───────▶ Cancel set (a read not started never starts),
//!                                          │                  a job dropped, a deadline forgotten, a room given back
//!                                          ├─ Audit ────────▶ a line (person, transport, replica, time; scrubbed)
//!                                          │                  offered to the Audit sink; full: it and what
//!                                          │                  follows are held until Wake::AuditRoom
//!                                          └─ Log ──────────▶ Logger
//!   on_fetched(ticket, outcome) ──▶ the shell feeds Input::Fetched back (from its event loop or its lock)
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod audit;
mod cancel;
mod driver;
mod lanes;
mod ledger;
mod log;
pub mod metrics;
mod pool;
mod process;
mod reach;
mod room;
pub mod secrets;
mod shared_reads;
mod timer;

pub use audit::{Audit, AuditTrail};
pub use cancel::Cancel;
pub use driver::{Delivery, Driver, Wake, now_ms, principal};
pub use lanes::Lanes;
pub use ledger::{Ledger, MemoryLedger};
pub use log::Logger;
pub use pool::{Pool, READ_THREADS};
pub use process::Process;
pub use reach::{Bitbucket, Grant, Lane, PersonalToken, Requester};
pub use room::{Room, Unsent};
pub use secrets::Secrets;
pub use shared_reads::SharedReads;
