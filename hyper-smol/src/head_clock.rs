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
#[derive(Debug, Clone)]
pub struct HeadClock(Arc<AtomicInstant>);

impl Default for HeadClock {
    fn default() -> Self {
        HeadClock::new()
    }
}

impl HeadClock {
    /// A clock with no deadline.
    pub fn new() -> HeadClock {
        // The deadline of the sleep hyper holds, if it holds one.
        HeadClock(Arc::new(AtomicInstant::none()))
    }

    fn encode(&self, at: Instant) -> u64 {
        self.0.mark(at)
    }

    /// The deadline of the head hyper waits for, if it waits for one.
    pub fn deadline(&self) -> Option<Instant> {
        self.0.instant(self.0.word().load(Ordering::Acquire))
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
        if self.clock.encode(Instant::now()) >= self.mark { Poll::Ready(()) } else { Poll::Pending }
    }
}

impl Sleep for HeadSleep {}

impl Drop for HeadSleep {
    fn drop(&mut self) {
        // The head arrived (or hyper replaced the sleep): no deadline, unless a newer sleep set one.
        let _ = self.clock.0.word().compare_exchange(self.mark, 0, Ordering::AcqRel, Ordering::Relaxed);
    }
}

impl Timer for HeadClock {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        self.sleep_until(Instant::now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        let mut mark = self.encode(deadline);
        // Never the mark of the sleep this one replaces, whose drop must not clear it.
        if self.0.word().load(Ordering::Acquire) == mark {
            mark += 1;
        }
        self.0.word().store(mark, Ordering::Release);
        Box::pin(HeadSleep { clock: self.clone(), mark })
    }

    fn reset(&self, sleep: &mut Pin<Box<dyn Sleep>>, new_deadline: Instant) {
        *sleep = self.sleep_until(new_deadline);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
