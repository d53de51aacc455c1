//! A graceful stop: when it begins (SIGTERM, Ctrl-C) the listener closes, `/readyz` answers 503,
//! every connection finishes the request it is serving and then closes, no Bitbucket write that was
//! not already on its way is sent, and new MCP requests on a connection still open are told to
//! send again elsewhere. Calls still running when the grace period ends are answered with an error
//! that says bb is restarting.
//!
//! ```text
//!   serving ──begin()──▶ draining ──every connection closed──▶ stopped
//!                           └──grace period over──▶ cut (answer what is left) ──▶ stopped
//! ```
//!
//! Both events are a channel closing, so every task waiting on one wakes; the open connections are
//! counted under a mutex with a condition variable, so the thread that stops the server waits for a
//! condition, never for a guessed time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bb_core::{FetchErrorKind, FetchOutcome, FetchRequest, Method};
use bb_drive::{Bitbucket, Cancel, PersonalToken, Requester};
use smol::channel::{Receiver, Sender};

/// The sentence a call cut at the end of the grace period gets (as a JSON-RPC error).
pub(crate) const CUT: &str = "Service unavailable: bb is restarting and could not finish this call within its grace \
     period. A read can be sent again at once (another bb, or this one once back, answers it); a write may or may \
     not have reached Bitbucket — check it there before sending it again.";

/// The sentence a new request gets once the stop began.
pub(crate) const REFUSED: &str = "Service unavailable: bb is restarting and takes no new calls; nothing was read or \
     written. Send the request again (another bb, or this one once back, answers it).";

/// The detail of a Bitbucket write held back because the stop began (the core says it as the call's error).
pub(crate) const WRITE_HELD: &str = "Not sent: bb is restarting, so it did not send this change to Bitbucket and \
     nothing was written. Send the call again once bb answers again.";

/// The state of a stop, shared by the accept loop, the connections, the answers and Bitbucket.
pub(crate) struct Drain {
    begun: AtomicBool,
    /// Closed (dropped) when the stop begins.
    begin_tx: Mutex<Option<Sender<()>>>,
    begin_rx: Receiver<()>,
    /// Closed (dropped) when the grace period is over.
    cut_tx: Mutex<Option<Sender<()>>>,
    cut_rx: Receiver<()>,
    open: Mutex<usize>,
    changed: Condvar,
}

/// How a stop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped {
    /// Connections still open when the grace period ended (their calls were answered with an error).
    pub cut: usize,
    /// Connections still open after their cut answers had a moment to be written.
    pub left: usize,
}

impl Drain {
    pub(crate) fn new() -> Arc<Drain> {
        let (begin_tx, begin_rx) = smol::channel::bounded(1);
        let (cut_tx, cut_rx) = smol::channel::bounded(1);
        Arc::new(Drain {
            begun: AtomicBool::new(false),
            begin_tx: Mutex::new(Some(begin_tx)),
            begin_rx,
            cut_tx: Mutex::new(Some(cut_tx)),
            cut_rx,
            open: Mutex::new(0),
            changed: Condvar::new(),
        })
    }

    /// Whether the stop has begun.
    pub(crate) fn begun(&self) -> bool {
        self.begun.load(Ordering::Acquire)
    }

    /// Begins the stop (once; later calls do nothing).
    pub(crate) fn begin(&self) {
        self.begun.store(true, Ordering::Release);
        drop(self.begin_tx.lock().unwrap_or_else(PoisonError::into_inner).take());
    }

    /// Ends the grace period: calls still running are answered with [`CUT`].
    pub(crate) fn cut(&self) {
        drop(self.cut_tx.lock().unwrap_or_else(PoisonError::into_inner).take());
    }

    /// Resolves when the stop begins.
    pub(crate) async fn on_begin(&self) {
        let _ = self.begin_rx.recv().await;
    }

    /// Resolves when the grace period is over.
    pub(crate) async fn on_cut(&self) {
        let _ = self.cut_rx.recv().await;
    }

    /// A receiver that yields `None` once the stop has begun (for a stream that ends then, not at the cut).
    pub(crate) fn begin_signal(&self) -> Receiver<()> {
        self.begin_rx.clone()
    }

    /// A receiver that yields `None` once the grace period is over (for a stream to poll).
    pub(crate) fn cut_signal(&self) -> Receiver<()> {
        self.cut_rx.clone()
    }

    /// Counts a connection open until the returned guard drops.
    pub(crate) fn open(self: &Arc<Drain>) -> OpenConnection {
        *self.open.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        OpenConnection(Arc::clone(self))
    }

    /// Connections open now.
    pub(crate) fn open_now(&self) -> usize {
        *self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until no connection is open or `limit` has passed; how many are still open.
    pub(crate) fn wait_closed(&self, limit: Duration) -> usize {
        let until = Instant::now() + limit;
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        while *open > 0 {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            open = self.changed.wait_timeout(open, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        *open
    }
}

/// An open connection, counted until dropped.
pub(crate) struct OpenConnection(Arc<Drain>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        let mut open = self.0.open.lock().unwrap_or_else(PoisonError::into_inner);
        *open = open.saturating_sub(1);
        self.0.changed.notify_all();
    }
}

/// Bitbucket as the sessions see it: once the stop began, a write not yet on its way is not sent
/// (reads still are: a call in flight may finish).
pub(crate) struct NoNewWrites {
    pub(crate) inner: Arc<dyn Bitbucket>,
    pub(crate) drain: Arc<Drain>,
}

impl NoNewWrites {
    fn held(&self, request: &FetchRequest) -> Option<FetchOutcome> {
        (request.method != Method::Get && self.drain.begun())
            .then(|| FetchOutcome::failed(FetchErrorKind::NotConfigured, WRITE_HELD))
    }
}

impl Bitbucket for NoNewWrites {
    fn fetch(&self, request: FetchRequest, person: Option<&PersonalToken>, cancel: &Cancel) -> FetchOutcome {
        match self.held(&request) {
            Some(o) => o,
            None => self.inner.fetch(request, person, cancel),
        }
    }

    fn fetch_for(&self, request: FetchRequest, requester: Requester<'_>, cancel: &Cancel) -> FetchOutcome {
        match self.held(&request) {
            Some(o) => o,
            None => self.inner.fetch_for(request, requester, cancel),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    #[test]
    fn no_sentence_of_a_stop_starts_with_a_capitalised_bb() {
        // bb is always "bb": a sentence that would start with its name starts otherwise, as the core
        // capitalises the first letter of a detail it says as the call's error.
        for said in [CUT, REFUSED, WRITE_HELD] {
            assert!(!said.starts_with("bb") && !said.contains("Bb"), "{said}");
        }
    }

    #[test]
    fn waiting_for_connections_ends_when_the_last_one_closes() {
        let d = Drain::new();
        let a = d.open();
        let b = d.open();
        assert_eq!(d.wait_closed(Duration::ZERO), 2);
        let t = std::thread::spawn(move || {
            drop(a);
            drop(b);
        });
        assert_eq!(d.wait_closed(Duration::from_secs(60)), 0);
        t.join().unwrap();
    }

    #[test]
    fn once_the_stop_begins_writes_are_held_back_and_reads_still_go() {
        let d = Drain::new();
        let sent: Arc<dyn Bitbucket> =
            Arc::new(|_: FetchRequest, _: Option<&PersonalToken>, _: &Cancel| FetchOutcome::response(200, "sent"));
        let b = NoNewWrites { inner: sent, drain: Arc::clone(&d) };
        let write = FetchRequest { method: Method::Post, ..FetchRequest::get("/rest/api/latest/x", vec![]) };
        let read = FetchRequest::get("/rest/api/latest/x", vec![]);
        assert_eq!(b.fetch(write.clone(), None, &Cancel::new()), FetchOutcome::response(200, "sent"));
        d.begin();
        assert_eq!(b.fetch(read, None, &Cancel::new()), FetchOutcome::response(200, "sent"));
        let FetchOutcome::Failed(e) = b.fetch(write, None, &Cancel::new()) else { panic!("the write was sent") };
        assert!(e.detail.contains("did not send this change"), "{}", e.detail);
        assert!(!e.may_have_arrived);
    }

    #[test]
    fn the_begin_and_cut_events_wake_every_waiter() {
        let d = Drain::new();
        d.begin();
        d.begin();
        d.cut();
        smol::block_on(async {
            d.on_begin().await;
            d.on_cut().await;
        });
        assert!(d.begun());
    }
}
