//! When a connection that waits too long for a request head ends: hyper's header-read timeout with one
//! timer per connection rather than one registered and removed for every request.

use hyper::rt::{Sleep, Timer};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::instant::AtomicInstant;

/// hyper's header-read timeout for one connection, without a timer per request.
///
/// hyper asks its timer for a sleep each time it starts waiting for a request head (after every
/// answer on a keep-alive connection) and drops it when the head arrives: over smol that is a
/// timer registered with the reactor and removed again for every request. Here a sleep only
/// records its deadline in the connection's clock, and [`HeadClock::watch`], run beside the
/// connection, ends it once a recorded deadline passes: one timer per connection that fires about
/// once per timeout while requests keep coming. A sleep never wakes hyper itself; hyper's own
/// answer to the timeout would be to close the connection, which the watch does.
///
/// With [`HeadClock::with_idle`], a connection waiting for its next request may sit idle longer than a
/// head may take to arrive: until the first byte of the next head comes the deadline is `idle` after the
/// wait began (a keep-alive client between two refreshes keeps its connection), and from that byte on it
/// is the head timeout after it (a client that starts a head and stalls is still cut short). The bytes
/// are seen by [`Heard`], which wraps the connection's stream.
#[derive(Debug, Clone)]
pub struct HeadClock(Arc<Clock>);

#[derive(Debug)]
struct Clock {
    /// The deadline of the sleep hyper holds (the wait's start plus the head timeout), if it holds one.
    deadline: AtomicInstant,
    /// When the first byte of the head awaited arrived, if one has.
    heard: AtomicInstant,
    /// The head timeout hyper was given and the idle time allowed before a head begins; `None`: the
    /// head timeout bounds idle time too (hyper's own behaviour).
    idle: Option<(Duration, Duration)>,
}

impl Default for HeadClock {
    fn default() -> Self {
        HeadClock::new()
    }
}

impl HeadClock {
    /// A clock with no deadline; an idle connection is bounded by the head timeout.
    pub fn new() -> HeadClock {
        HeadClock(Arc::new(Clock { deadline: AtomicInstant::none(), heard: AtomicInstant::none(), idle: None }))
    }

    /// A clock for a connection whose builder has `head` as its header-read timeout, which may wait
    /// `idle` for the first byte of its next request head.
    pub fn with_idle(head: Duration, idle: Duration) -> HeadClock {
        let idle = (idle > head).then_some((head, idle));
        HeadClock(Arc::new(Clock { deadline: AtomicInstant::none(), heard: AtomicInstant::none(), idle }))
    }

    fn encode(&self, at: Instant) -> u64 {
        self.0.deadline.mark(at)
    }

    fn word(&self) -> &std::sync::atomic::AtomicU64 {
        self.0.deadline.word()
    }

    /// When the connection ends if nothing more arrives, while a head is awaited: hyper's deadline, or
    /// with an idle time, the idle time after the wait began until the head's first byte, and the head
    /// timeout after that byte.
    pub fn deadline(&self) -> Option<Instant> {
        let hyper = self.0.deadline.instant(self.word().load(Ordering::Acquire))?;
        let Some((head, idle)) = self.0.idle else { return Some(hyper) };
        Some(match self.0.heard.instant(self.0.heard.word().load(Ordering::Acquire)) {
            Some(first_byte) => first_byte + head,
            None => hyper.checked_sub(head).unwrap_or(hyper) + idle,
        })
    }

    /// Bytes came from the client: the first while a head is awaited starts the head's own timeout.
    pub fn heard(&self) {
        if self.0.idle.is_some() && self.word().load(Ordering::Acquire) != 0 {
            let now = self.0.heard.mark(Instant::now());
            let _ = self.0.heard.word().compare_exchange(0, now, Ordering::AcqRel, Ordering::Relaxed);
        }
    }

    /// Returns once hyper has waited for a request head past its deadline; `idle` is how long to
    /// wait before looking again while no head is awaited (a request is being answered).
    pub async fn watch(&self, idle: Duration) {
        loop {
            let at = self.deadline().unwrap_or_else(|| Instant::now() + idle);
            smol::Timer::at(at).await;
            if self.deadline().is_some_and(|d| Instant::now() >= d) {
                return;
            }
        }
    }
}

struct HeadSleep {
    clock: HeadClock,
    mark: u64,
}

impl Future for HeadSleep {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        // Ready if polled past the deadline; otherwise the watch acts on it, so no waker is kept.
        if self.clock.encode(Instant::now()) >= self.mark && self.clock.0.idle.is_none() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Sleep for HeadSleep {}

impl Drop for HeadSleep {
    fn drop(&mut self) {
        // The head arrived (or hyper replaced the sleep): no deadline, unless a newer sleep set one; the
        // next head's first byte is yet to come.
        if self.clock.word().compare_exchange(self.mark, 0, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
            self.clock.0.heard.word().store(0, Ordering::Release);
        }
    }
}

/// A connection's byte stream whose reads tell its [`HeadClock`] that the client is sending.
#[derive(Debug)]
pub struct Heard<T> {
    io: T,
    clock: HeadClock,
}

impl<T> Heard<T> {
    /// `io`, its reads told to `clock`.
    pub fn new(io: T, clock: HeadClock) -> Heard<T> {
        Heard { io, clock }
    }
}

impl<T: smol::io::AsyncRead + Unpin> smol::io::AsyncRead for Heard<T> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.io).poll_read(cx, buf);
        if let Poll::Ready(Ok(n)) = &polled
            && *n > 0
        {
            self.clock.heard();
        }
        polled
    }
}

impl<T: smol::io::AsyncWrite + Unpin> smol::io::AsyncWrite for Heard<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_close(cx)
    }
}

impl Timer for HeadClock {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        self.sleep_until(Instant::now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        let mut mark = self.encode(deadline);
        // Never the mark of the sleep this one replaces, whose drop must not clear it.
        if self.word().load(Ordering::Acquire) == mark {
            mark += 1;
        }
        self.word().store(mark, Ordering::Release);
        Box::pin(HeadSleep { clock: self.clone(), mark })
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn Sleep>>, new_deadline: Instant) {
        *sleep = self.sleep_until(new_deadline);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn with_an_idle_time_a_waiting_connection_may_idle_until_a_head_begins_then_has_the_head_timeout() {
        let (head, idle) = (Duration::from_secs(15), Duration::from_secs(75));
        let clock = HeadClock::with_idle(head, idle);
        let began = Instant::now();
        let sleep = clock.sleep_until(began + head);
        let d = clock.deadline().unwrap();
        assert!(
            d >= began + idle - Duration::from_millis(50) && d <= began + idle + Duration::from_millis(50),
            "idle: {:?}",
            d - began
        );
        clock.heard();
        let d = clock.deadline().unwrap();
        assert!(d <= Instant::now() + head && d + Duration::from_secs(1) >= Instant::now() + head, "a head began");
        // The head arrived: the next wait starts idle again.
        drop(sleep);
        assert_eq!(clock.deadline(), None);
        let _next = clock.sleep_until(Instant::now() + head);
        assert!(clock.deadline().unwrap() > Instant::now() + head, "idle again, not the head timeout");
        // Bytes read while no head is awaited (a body) do not start a head's timeout.
        let body = HeadClock::with_idle(head, idle);
        body.heard();
        let _wait = body.sleep_until(Instant::now() + head);
        assert!(body.deadline().unwrap() > Instant::now() + head);
    }

    #[test]
    fn a_sleep_records_its_deadline_until_it_is_dropped_or_replaced() {
        let clock = HeadClock::new();
        assert_eq!(clock.deadline(), None);
        let at = Instant::now() + Duration::from_secs(5);
        let mut sleep = clock.sleep_until(at);
        let recorded = clock.deadline().map(|d| d.saturating_duration_since(at));
        assert!(recorded.is_some_and(|d| d < Duration::from_micros(1)), "{recorded:?}");
        // Replaced at the same deadline: the new sleep's deadline stays when the old one drops.
        clock.reset(&mut sleep, at);
        assert!(clock.deadline().is_some());
        drop(sleep);
        assert_eq!(clock.deadline(), None);
    }

    #[test]
    fn the_watch_returns_once_a_head_is_late_and_not_while_none_is_awaited() {
        let clock = HeadClock::new();
        let late = clock.sleep_until(Instant::now() + Duration::from_millis(20));
        let started = Instant::now();
        smol::block_on(clock.watch(Duration::from_secs(60)));
        assert!(started.elapsed() >= Duration::from_millis(15));
        drop(late);
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
        assert!(!idle, "no head is awaited, so the watch keeps looking");
    }
}
