//! bb-hyper-smol: hyper 1 served on smol. hyper leaves its runtime open (byte streams and a timer are
//! traits); this crate gives it async-net's streams and async-io's timers, as smol re-exports them.
//!
//! Written here rather than pulled in: it is small, and it keeps its users' dependencies to hyper
//! and smol. Two crates serve with it: bb's Streamable HTTP shell (`bb-http`, `shell-http/`) and the
//! local Bitbucket Data Center stand-in (`bb-stack`, `tools/stack/`), which therefore does not build
//! the shell. It knows nothing of either: no MCP, no Bitbucket, only transport.
//!
//! Module by what it decides: `io` (how a smol byte stream reads and writes as hyper's
//! [`hyper::rt::Read`] and [`hyper::rt::Write`]: [`SmolIo`]), `timer` (how hyper sleeps on smol's
//! timer: [`SmolTimer`]), `head_clock` (when a connection that waits too long for a request head
//! ends, with one timer per connection rather than one per request: [`HeadClock`]), `write_clock`
//! (when a connection whose client stopped reading ends: [`WriteClock`], [`Watched`]). The four
//! import none of each other; the two clocks keep their instant in `instant` (an optional instant
//! threads share without a lock).
//!
//! The repository's map, with where this crate sits among the others, is `docs/ARCHITECTURE.md`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod head_clock;
mod instant;
mod io;
mod timer;
mod write_clock;

pub use head_clock::{HeadClock, Heard};
pub use io::SmolIo;
pub use timer::SmolTimer;
pub use write_clock::{PROGRESS, Watched, WriteClock};
