//! A read nobody waits for any more is abandoned on the wire: its thread and its slot come free, and
//! its connection is closed, never reused.
//!
//! ureq blocks the calling thread while it waits for an answer, and a [`Cancel`] cannot interrupt
//! a blocked read. So every connection of bb's agent is wrapped in [`Watched`]: while the thread
//! runs a read inside [`watching`], the wrapper waits for input in slices of [`CHECK`] and, once
//! the read's cancel is set, fails with an error instead of waiting on. ureq then drops the
//! connection: it returns a connection to its pool only when an answer was read to its end
//! (`BodyHandler::ended` in ureq 3's `run.rs`), and a failed or dropped, half-read answer closes it.
//!
//! ```text
//!   attempt ── watching(cancel, call + read body) ── Watched::await_input ──▶ slice of 50 ms ─┐
//!                                                        ▲     cancel set? ── error, closed ◀┤
//!                                                        └──── input, or the real timeout ◀──┘
//! ```
//!
//! Writes are not watched: once sent, a write's answer is awaited to the end.

use std::cell::RefCell;
use std::io;

use bb_drive::Cancel;
use ureq::Error;
use ureq::unversioned::transport::time::Duration;
use ureq::unversioned::transport::{Buffers, ConnectionDetails, Connector, NextTimeout, Transport};

/// How often a watched read looks at its cancel while it waits for input.
pub const CHECK: std::time::Duration = std::time::Duration::from_millis(50);

thread_local! {
    /// The cancel of the read this thread is making, if it is watched.
    static WATCHED: RefCell<Option<Cancel>> = const { RefCell::new(None) };
}

/// Runs `read` (a ureq call and the reading of its answer) so that setting `cancel` abandons it.
pub fn watching<R>(cancel: &Cancel, read: impl FnOnce() -> R) -> R {
    let before = WATCHED.with(|w| w.replace(Some(cancel.clone())));
    let result = read();
    WATCHED.with(|w| *w.borrow_mut() = before);
    result
}

fn watched() -> Option<Cancel> {
    WATCHED.with(|w| w.borrow().clone())
}

/// The last link of bb's connector chain: wraps every connection in a [`Watched`].
#[derive(Debug, Default)]
pub struct Abandonable;

impl Connector<Box<dyn Transport>> for Abandonable {
    type Out = Watched;

    fn connect(&self, _: &ConnectionDetails, chained: Option<Box<dyn Transport>>) -> Result<Option<Watched>, Error> {
        Ok(chained.map(Watched))
    }
}

/// A connection whose waits for input end early once the watched read is cancelled.
#[derive(Debug)]
pub struct Watched(Box<dyn Transport>);

impl Transport for Watched {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.0.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), Error> {
        self.0.transmit_output(amount, timeout)
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, Error> {
        let Some(cancel) = watched() else { return self.0.await_input(timeout) };
        let started = std::time::Instant::now();
        loop {
            if cancel.is_cancelled() {
                return Err(Error::Io(io::Error::other("abandoned: the call no longer needs this answer")));
            }
            let left = match timeout.after {
                Duration::Exact(d) => Duration::Exact(d.saturating_sub(started.elapsed())),
                never => never,
            };
            let slice = left.min(Duration::Exact(CHECK));
            let per_read_binds = timeout.per_read.is_some_and(|p| p <= slice);
            match self.0.await_input(NextTimeout { after: slice, ..timeout }) {
                Err(e) if slice < left && !per_read_binds && expired(&e) => continue,
                other => return other,
            }
        }
    }

    fn is_open(&mut self) -> bool {
        self.0.is_open()
    }

    fn is_tls(&self) -> bool {
        self.0.is_tls()
    }
}

/// Whether `e` says only that the wait's time ran out (no byte was consumed).
fn expired(e: &Error) -> bool {
    match e {
        Error::Timeout(_) => true,
        Error::Io(io) => matches!(io.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock),
        _ => false,
    }
}
