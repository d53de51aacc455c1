//! How often a repeated warning reaches the log: at most one line per period, carrying how many
//! like it were held back, so a flood of refusals writes a few lines instead of thousands.

use std::sync::Mutex;

/// One kind of repeated warning.
#[derive(Debug)]
pub(crate) struct Throttle {
    period_ms: u64,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    // When the last line was written (epoch ms), if ever.
    last_ms: Option<u64>,
    held: usize,
}

impl Throttle {
    /// At most one line per `period_ms`.
    pub(crate) fn new(period_ms: u64) -> Throttle {
        Throttle { period_ms, state: Mutex::new(State::default()) }
    }

    /// An event at `now_ms`: `Some(held)` when a line is to be written now (`held` like it were
    /// held back since the last line), `None` when this one is held back.
    pub(crate) fn event(&self, now_ms: u64) -> Option<usize> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.last_ms.is_some_and(|last| now_ms.saturating_sub(last) < self.period_ms) {
            s.held += 1;
            return None;
        }
        s.last_ms = Some(now_ms);
        Some(std::mem::take(&mut s.held))
    }

    /// At `now_ms`, how many events were held back and not yet reported, once the period since
    /// the last line has passed (`None` when there are none, or it has not).
    pub(crate) fn flush(&self, now_ms: u64) -> Option<usize> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.held == 0 || s.last_ms.is_some_and(|last| now_ms.saturating_sub(last) < self.period_ms) {
            return None;
        }
        s.last_ms = Some(now_ms);
        Some(std::mem::take(&mut s.held))
    }
}

/// " (and N more like it)" when `held` is not zero.
pub(crate) fn and_more(held: usize) -> String {
    if held == 0 { String::new() } else { format!(" (and {held} more like it since the last such line)") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_writes_one_line_per_period_with_the_count_held_back() {
        let t = Throttle::new(1000);
        assert_eq!(t.event(10_000), Some(0));
        assert_eq!((0..500).filter_map(|i| t.event(10_000 + i)).count(), 0);
        assert_eq!(t.flush(10_500), None, "not before the period has passed");
        assert_eq!(t.event(11_000), Some(500));
        assert_eq!(t.event(11_001), None);
        assert_eq!(t.flush(12_000), Some(1));
        assert_eq!(t.flush(13_000), None, "nothing left to report");
        assert_eq!(t.event(13_000), Some(0));
    }
}
