//! What waits for a place by [`Lane`], and in each lane by queue: the order the Bitbucket client's
//! connections (bb-bitbucket's `InFlight`) and the read threads ([`crate::Pool`]) are handed out in.
//!
//! ```text
//!   a place comes free ──▶ the first lane (Check, Call, Refresh) with something waiting and fewer than
//!                          its share of the places taken ([`Lane::most_of`]) ──▶ in it, the queue whose
//!                          turn it is (round robin), its oldest ──▶ that queue to the back if it still waits
//! ```

use std::collections::{BTreeMap, VecDeque};

use crate::reach::Lane;

/// Items waiting by lane and queue, and how many places each lane holds.
#[derive(Debug)]
pub struct Lanes<T> {
    lines: [Line<T>; 3],
}

#[derive(Debug)]
struct Line<T> {
    /// Items by queue, oldest first; a queue is here only while it has items.
    queues: BTreeMap<u64, VecDeque<T>>,
    /// The queues that wait, in the order of their turns.
    turns: VecDeque<u64>,
    /// Places this lane holds.
    inside: usize,
}

impl<T> Default for Lanes<T> {
    fn default() -> Self {
        let line = || Line { queues: BTreeMap::new(), turns: VecDeque::new(), inside: 0 };
        Lanes { lines: [line(), line(), line()] }
    }
}

impl<T> Lanes<T> {
    /// `item` waits in `lane`, behind what `queue` has waiting there.
    pub fn push(&mut self, lane: Lane, queue: u64, item: T) {
        let line = &mut self.lines[lane.index()];
        let items = line.queues.entry(queue).or_default();
        items.push_back(item);
        if items.len() == 1 {
            line.turns.push_back(queue);
        }
    }

    /// The next item to take one of `places`, with its lane and queue: of the first lane with an
    /// item and room in its share, the oldest of the first queue in turn that `may` go (a queue
    /// that may not keeps its turn). Its lane holds one more place until [`Lanes::done`].
    pub fn next(&mut self, places: usize, may: impl Fn(u64) -> bool) -> Option<(Lane, u64, T)> {
        for lane in Lane::ALL {
            let line = &mut self.lines[lane.index()];
            if line.inside >= lane.most_of(places) {
                continue;
            }
            let Some(at) = line.turns.iter().position(|q| may(*q)) else { continue };
            let Some(queue) = line.turns.remove(at) else { continue };
            let Some(items) = line.queues.get_mut(&queue) else { continue };
            let Some(item) = items.pop_front() else { continue };
            if items.is_empty() {
                line.queues.remove(&queue);
            } else {
                line.turns.push_back(queue);
            }
            line.inside += 1;
            return Some((lane, queue, item));
        }
        None
    }

    /// A place `lane` held is given back.
    pub fn done(&mut self, lane: Lane) {
        let line = &mut self.lines[lane.index()];
        line.inside = line.inside.saturating_sub(1);
    }

    /// Takes the items of `queue` in `lane` that `gone` says gave up out of it.
    pub fn remove(&mut self, lane: Lane, queue: u64, gone: impl Fn(&T) -> bool) {
        let line = &mut self.lines[lane.index()];
        if let Some(items) = line.queues.get_mut(&queue) {
            items.retain(|i| !gone(i));
            if items.is_empty() {
                line.queues.remove(&queue);
                line.turns.retain(|q| *q != queue);
            }
        }
    }

    /// How many places `lane` holds.
    pub fn inside(&self, lane: Lane) -> usize {
        self.lines[lane.index()].inside
    }

    /// How many items wait, in every lane.
    pub fn waiting(&self) -> usize {
        self.lines.iter().flat_map(|l| l.queues.values()).map(VecDeque::len).sum()
    }

    /// How many items of `queue` wait, in every lane.
    pub fn waiting_in(&self, queue: u64) -> usize {
        self.lines.iter().filter_map(|l| l.queues.get(&queue)).map(VecDeque::len).sum()
    }

    /// How many queues of `lane` have items waiting.
    pub fn queues_waiting(&self, lane: Lane) -> usize {
        self.lines[lane.index()].queues.len()
    }
}
