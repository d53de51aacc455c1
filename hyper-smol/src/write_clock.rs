//! When a connection whose client stopped reading ends: a write that makes no progress for the write
//! timeout. hyper has a timeout for reading a head, none for writing an answer; an answer the client
//! never reads would otherwise hold its bytes (and its connection) for as long as the socket stays open.
//! Progress is [`PROGRESS`] bytes taken by the client, or everything written: a client that reads a
//! byte now and then to keep a large answer in memory is as stalled as one that reads nothing.
//!
//! ```text
//!   poll_write / poll_flush ── Pending ──────────────────────────────▶ stalled since now (unless already)
//!                           └─ PROGRESS bytes written since, or flushed ─▶ not stalled
//!   WriteClock::watch(timeout) ── stalled for `timeout` ──▶ returns: the caller drops the connection
//! ```

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::rt::ReadBufCursor;

use crate::instant::AtomicInstant;

/// The bytes a stalled connection's client must take to count as reading again.
pub const PROGRESS: u64 = 64 * 1024;

/// Whether, and since when, a connection's writes wait for its client to read.
#[derive(Debug, Clone)]
pub struct WriteClock(Arc<State>);

#[derive(Debug)]
struct State {
    /// Since when writes wait for the client, if they do.
    stalled: AtomicInstant,
    /// Bytes written since the stall began.
    taken: AtomicU64,
}

impl Default for WriteClock {
    fn default() -> Self {
        WriteClock::new()
    }
}

impl WriteClock {
    /// A clock of a connection that has written nothing yet.
    pub fn new() -> WriteClock {
        WriteClock(Arc::new(State { stalled: AtomicInstant::none(), taken: AtomicU64::new(0) }))
    }

    /// Since when writes wait for the client, if they do.
    pub fn stalled_since(&self) -> Option<Instant> {
        let s = &self.0.stalled;
        s.instant(s.word().load(Ordering::Acquire))
    }

    fn stall(&self) {
        let s = &self.0.stalled;
        if s.word().compare_exchange(0, s.mark(Instant::now()), Ordering::AcqRel, Ordering::Relaxed).is_ok() {
            self.0.taken.store(0, Ordering::Release);
        }
    }

    /// `bytes` were written: the stall ends once the client has taken [`PROGRESS`] bytes since it began.
    fn wrote(&self, bytes: u64) {
        if self.0.taken.fetch_add(bytes, Ordering::AcqRel).saturating_add(bytes) >= PROGRESS {
            self.done();
        }
    }

    /// Everything was written: nothing waits.
    fn done(&self) {
        self.0.stalled.word().store(0, Ordering::Release);
        self.0.taken.store(0, Ordering::Release);
    }

    /// Returns once a write has waited `timeout` without progress. One timer per connection, which
    /// fires about once per `timeout` while the connection writes or is idle.
    pub async fn watch(&self, timeout: Duration) {
        loop {
            let at = self.stalled_since().map_or_else(|| Instant::now() + timeout, |since| since + timeout);
            smol::Timer::at(at).await;
            if self.stalled_since().is_some_and(|since| since.elapsed() >= timeout) {
                return;
            }
        }
    }
}

/// A byte stream for hyper whose writes are watched by a [`WriteClock`].
#[derive(Debug)]
pub struct Watched<T> {
    io: T,
    clock: WriteClock,
}

impl<T> Watched<T> {
    /// `io`, its writes watched by `clock`.
    pub fn new(io: T, clock: WriteClock) -> Watched<T> {
        Watched { io, clock }
    }

    fn seen_write(&self, polled: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        match &polled {
            Poll::Pending => self.clock.stall(),
            Poll::Ready(Ok(n)) => self.clock.wrote(*n as u64),
            Poll::Ready(Err(_)) => {}
        }
        polled
    }

    fn seen_flush(&self, polled: Poll<io::Result<()>>) -> Poll<io::Result<()>> {
        match &polled {
            Poll::Pending => self.clock.stall(),
            Poll::Ready(Ok(())) => self.clock.done(),
            Poll::Ready(Err(_)) => {}
        }
        polled
    }
}

impl<T: hyper::rt::Read + Unpin> hyper::rt::Read for Watched<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: ReadBufCursor<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: hyper::rt::Write + Unpin> hyper::rt::Write for Watched<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write(cx, buf);
        self.seen_write(polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.seen_write(polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.io).poll_flush(cx);
        self.seen_flush(polled)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.io).poll_shutdown(cx);
        self.seen_flush(polled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_is_recorded_once_and_cleared_by_progress() {
        let clock = WriteClock::new();
        assert_eq!(clock.stalled_since(), None);
        // A stall that began at the clock's base (mark 1), long before now.
        clock.0.stalled.word().store(1, Ordering::Release);
        let first = clock.stalled_since();
        assert!(first.is_some());
        clock.stall();
        assert_eq!(clock.stalled_since(), first, "a longer stall keeps its start");
        clock.done();
        assert_eq!(clock.stalled_since(), None);
    }

    #[test]
    fn a_client_that_takes_a_few_bytes_now_and_then_is_still_stalled() {
        let clock = WriteClock::new();
        clock.stall();
        let since = clock.stalled_since();
        for _ in 0..100 {
            clock.wrote(1);
            clock.stall();
        }
        assert_eq!(clock.stalled_since(), since, "a hundred bytes are no progress");
        clock.wrote(PROGRESS);
        assert_eq!(clock.stalled_since(), None, "64 KiB taken is");
        clock.stall();
        assert!(clock.stalled_since().is_some_and(|s| Some(s) != since), "a new stall starts anew");
    }

    #[test]
    fn the_watch_returns_once_a_write_waits_past_the_timeout_and_not_while_none_does() {
        let clock = WriteClock::new();
        let idle = smol::block_on(smol::future::or(
            async {
                clock.watch(Duration::from_millis(10)).await;
                true
            },
            async {
                smol::Timer::after(Duration::from_millis(60)).await;
                false
            },
        ));
        assert!(!idle, "nothing waits to be written, so the watch keeps looking");
        clock.stall();
        let started = Instant::now();
        smol::block_on(clock.watch(Duration::from_millis(20)));
        assert!(started.elapsed() >= Duration::from_millis(15));
    }
}
