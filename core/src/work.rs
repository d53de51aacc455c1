//! The table of calls' work: every ticket the core hands out names one piece of work a call waits
//! on, of one of three kinds, and this table is the one place that knows whose it is and what state
//! it is in. The sessions own their calls' plans; the table owns their tickets.
//!
//! | kind | asked for with | comes back as | while |
//! |---|---|---|---|
//! | [`Kind::Read`] | [`Output::Fetch`] | [`crate::Input::Fetched`] | queued in its session, then sent |
//! | [`Kind::Job`] | [`Output::Compute`] | [`crate::Input::Computed`] | with the shell (a CPU thread) |
//! | [`Kind::Steps`] | [`Output::Work`] (with the call's deadline) | [`crate::Input::Work`], asked again per step; a step at or past the deadline is the last ([`Output::PastDeadline`]) | the call's deadline runs |
//! | [`Kind::Room`] | [`Output::Admit`] | [`crate::Input::Admitted`] | asked for, then held until the call ends |
//! | [`Kind::Spend`] | [`Output::Spend`] | [`crate::Input::Spent`] | the ledger replicas share is asked |
//! | [`Kind::Timer`] | [`Output::Timer`] | [`crate::Input::Timer`] | until its time (a subscription's next read) |
//!
//! Whatever its kind, one [`Output::Cancel`] withdraws it ([`Work::cancel_call`] when its call is
//! answered or cancelled, [`Work::cancel_session`] when its session closes). A read waits in its
//! session's queue until fewer than [`READS_PER_SESSION`] of the session's reads are out, so a
//! session's burst goes out in order without holding every connection; a cancelled call's queued
//! reads are dropped unsent. A call that asked for room in the process's memory ([`Work::ask_room`])
//! sends none of its reads until the shell grants it; the other calls' reads pass it in the queue.
//!
//! ```text
//!   file_read ──▶ queued ──(a slot of the session)──▶ sent ──complete──▶ the slot goes to the next queued
//!   file_job ───▶ with the shell ──complete──▶ gone
//!   steps ──────▶ asked ─(each Input::Work routes by it; asked again while the plan wants steps)
//!   cancel_call / cancel_session ──▶ Output::Cancel for each sent read, job and steps; queued reads vanish
//! ```

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::contract::{Output, SessionId};
use crate::fetch::{FetchRequest, Ticket};
use crate::highlight::HighlightJob;
use crate::jsonrpc::Id;
use crate::limits::READS_PER_SESSION;

/// What a ticket stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A Bitbucket request.
    Read,
    /// A highlighting job on one of the shell's CPU threads.
    Job,
    /// A call's steps of CPU work in the core, and the deadline they run to: one per call.
    Steps,
    /// A call's room in the process's memory budget: one per large call, held until it ends.
    Room,
    /// An accepted confirmation marked used in the ledger replicas share: one per retry.
    Spend,
    /// A time the core acts at on its own: a watched pull request's next read (`session/watch.rs`).
    Timer,
}

#[derive(Debug)]
struct Entry {
    session: SessionId,
    call: Id,
    kind: Kind,
    /// A read handed to the shell (not waiting in its session's queue).
    sent: bool,
    /// A call's steps: the wall-clock time (epoch milliseconds) from which its next step is its last.
    deadline_ms: u64,
}

/// Every ticket in flight, by session and call. See the module docs.
#[derive(Debug, Default)]
pub(crate) struct Work {
    entries: BTreeMap<Ticket, Entry>,
    /// Each call's tickets, so that answering or cancelling it finds them at once.
    calls: BTreeMap<(SessionId, Id), BTreeSet<Ticket>>,
    /// Reads waiting for a slot of their session, oldest first.
    queued: BTreeMap<SessionId, VecDeque<(Ticket, FetchRequest)>>,
    /// How many of each session's reads are with the shell.
    sent: BTreeMap<SessionId, usize>,
    /// Calls whose room the shell has not granted yet: their reads wait.
    unadmitted: BTreeSet<(SessionId, Id)>,
    next: u64,
}

impl Work {
    /// The counter new tickets are numbered from: plans number their reads and jobs as they ask for
    /// them ([`crate::plan::Desk`]), before the session files them here.
    pub(crate) fn numbering(&mut self) -> &mut u64 {
        &mut self.next
    }

    /// A ticket no work of this server has had.
    pub(crate) fn new_ticket(&mut self) -> Ticket {
        let t = Ticket(self.next);
        self.next += 1;
        t
    }

    fn insert(&mut self, ticket: Ticket, session: SessionId, call: &Id, kind: Kind) {
        self.entries.insert(ticket, Entry { session, call: call.clone(), kind, sent: false, deadline_ms: u64::MAX });
        self.calls.entry((session, call.clone())).or_default().insert(ticket);
    }

    /// Files a read of `call`; it goes out as soon as its session has a slot.
    pub(crate) fn file_read(
        &mut self,
        session: SessionId,
        call: &Id,
        ticket: Ticket,
        request: FetchRequest,
        out: &mut VecDeque<Output>,
    ) {
        self.insert(ticket, session, call, Kind::Read);
        self.queued.entry(session).or_default().push_back((ticket, request));
        self.send_queued(session, out);
    }

    /// Files a job of `call` and hands it to the shell at once: a job holds no Bitbucket slot.
    pub(crate) fn file_job(
        &mut self,
        session: SessionId,
        call: &Id,
        ticket: Ticket,
        job: HighlightJob,
        out: &mut VecDeque<Output>,
    ) {
        self.insert(ticket, session, call, Kind::Job);
        out.push_back(Output::Compute { session, ticket, job: Box::new(job) });
    }

    /// Asks the shell for a step of `call`'s CPU work, under the call's one steps ticket. The first
    /// ask makes the ticket and fixes the call's deadline at `deadline_ms` (epoch milliseconds); every
    /// ask repeats that deadline, so the shell keeps one timer for the call.
    pub(crate) fn ask_step(&mut self, session: SessionId, call: &Id, deadline_ms: u64, out: &mut VecDeque<Output>) {
        let (ticket, deadline_ms) = match self.ticket_of(session, call, Kind::Steps) {
            Some(t) => (t, self.entries.get(&t).map_or(deadline_ms, |e| e.deadline_ms)),
            None => {
                let t = self.new_ticket();
                self.insert(t, session, call, Kind::Steps);
                if let Some(e) = self.entries.get_mut(&t) {
                    e.deadline_ms = deadline_ms;
                }
                (t, deadline_ms)
            }
        };
        out.push_back(Output::Work { session, ticket, deadline_ms });
    }

    /// Asks the shell for [`crate::Input::Timer`] at `at_ms`, under `call` (a watch's own id).
    pub(crate) fn ask_timer(&mut self, session: SessionId, call: &Id, at_ms: u64, out: &mut VecDeque<Output>) {
        let ticket = self.new_ticket();
        self.insert(ticket, session, call, Kind::Timer);
        out.push_back(Output::Timer { session, ticket, at_ms });
    }

    /// Asks the shell to mark the confirmation `id` used until `until_ms` ([`Output::Spend`]).
    pub(crate) fn ask_spend(
        &mut self,
        session: SessionId,
        call: &Id,
        id: String,
        until_ms: u64,
        out: &mut VecDeque<Output>,
    ) {
        let ticket = self.new_ticket();
        self.insert(ticket, session, call, Kind::Spend);
        out.push_back(Output::Spend { session, ticket, id, until_ms });
    }

    /// Whose steps `ticket` are, and the call's deadline (epoch milliseconds); `None` when the core no
    /// longer waits on them.
    pub(crate) fn steps(&self, ticket: Ticket) -> Option<(SessionId, Id, u64)> {
        self.entries.get(&ticket).filter(|e| e.kind == Kind::Steps).map(|e| (e.session, e.call.clone(), e.deadline_ms))
    }

    /// Asks the shell for `bytes` of room in the process's memory for `call`; its reads wait until
    /// the room is granted.
    pub(crate) fn ask_room(&mut self, session: SessionId, call: &Id, bytes: u64, out: &mut VecDeque<Output>) {
        let ticket = self.new_ticket();
        self.insert(ticket, session, call, Kind::Room);
        self.unadmitted.insert((session, call.clone()));
        out.push_back(Output::Admit { session, ticket, bytes });
    }

    /// Takes the shell's answer on a call's room: granted, the call's reads go out; refused, the
    /// call must answer (its room is forgotten). The call, and whether it was granted; `None` when
    /// the core no longer waits on it.
    pub(crate) fn admitted(
        &mut self,
        ticket: Ticket,
        granted: bool,
        out: &mut VecDeque<Output>,
    ) -> Option<(SessionId, Id, bool)> {
        let (session, call) = self.owner(ticket, Kind::Room)?;
        if !self.unadmitted.remove(&(session, call.clone())) {
            return None;
        }
        if granted {
            self.send_queued(session, out);
        } else {
            self.remove(ticket);
        }
        Some((session, call, granted))
    }

    /// Whose `ticket` is, while it is of `kind`: the outcome of anything else is not the core's to take.
    pub(crate) fn owner(&self, ticket: Ticket, kind: Kind) -> Option<(SessionId, Id)> {
        self.entries.get(&ticket).filter(|e| e.kind == kind).map(|e| (e.session, e.call.clone()))
    }

    /// Takes a read's or a job's outcome: the ticket is done, and a read's slot goes to the next read
    /// queued in its session. `None` when the core no longer waits on it (cancelled, answered) or
    /// it is not of `kind`.
    pub(crate) fn complete(
        &mut self,
        ticket: Ticket,
        kind: Kind,
        out: &mut VecDeque<Output>,
    ) -> Option<(SessionId, Id)> {
        if !self.entries.get(&ticket).is_some_and(|e| e.kind == kind) {
            return None;
        }
        let entry = self.remove(ticket)?;
        if entry.sent {
            self.send_queued(entry.session, out);
        }
        Some((entry.session, entry.call))
    }

    /// The call's ticket of `kind`, its first if it has several.
    pub(crate) fn ticket_of(&self, session: SessionId, call: &Id, kind: Kind) -> Option<Ticket> {
        let tickets = self.calls.get(&(session, call.clone()))?;
        tickets.iter().copied().find(|t| self.entries.get(t).is_some_and(|e| e.kind == kind))
    }

    /// Whether `call` still waits on anything (its room, held, is not waited on).
    pub(crate) fn waits(&self, session: SessionId, call: &Id) -> bool {
        self.calls.get(&(session, call.clone())).is_some_and(|tickets| {
            self.unadmitted.contains(&(session, call.clone()))
                || tickets.iter().any(|t| self.entries.get(t).is_some_and(|e| e.kind != Kind::Room))
        })
    }

    /// Withdraws the call's steps: its deadline is forgotten.
    pub(crate) fn cancel_steps(&mut self, session: SessionId, call: &Id, out: &mut VecDeque<Output>) {
        if let Some(t) = self.ticket_of(session, call, Kind::Steps) {
            self.withdraw(t, out);
        }
    }

    /// Withdraws everything `call` waits on (it was answered or cancelled), then lets the session's
    /// next queued reads take the slots it freed.
    pub(crate) fn cancel_call(&mut self, session: SessionId, call: &Id, out: &mut VecDeque<Output>) {
        let tickets = self.calls.get(&(session, call.clone())).cloned().unwrap_or_default();
        for t in tickets {
            self.withdraw(t, out);
        }
        self.unadmitted.remove(&(session, call.clone()));
        self.send_queued(session, out);
    }

    /// Withdraws everything a closing session waits on; its queue goes with it.
    pub(crate) fn cancel_session(&mut self, session: SessionId, out: &mut VecDeque<Output>) {
        let tickets: Vec<Ticket> = self.entries.iter().filter(|(_, e)| e.session == session).map(|(t, _)| *t).collect();
        for t in tickets {
            self.withdraw(t, out);
        }
        self.queued.remove(&session);
        self.sent.remove(&session);
        self.unadmitted.retain(|(s, _)| *s != session);
    }

    /// Drops one ticket: a queued read vanishes unsent; anything with the shell is cancelled there.
    fn withdraw(&mut self, ticket: Ticket, out: &mut VecDeque<Output>) {
        let Some(entry) = self.remove(ticket) else { return };
        if entry.kind == Kind::Read && !entry.sent {
            if let Some(q) = self.queued.get_mut(&entry.session) {
                q.retain(|(t, _)| *t != ticket);
            }
        } else {
            out.push_back(Output::Cancel(ticket));
        }
    }

    fn remove(&mut self, ticket: Ticket) -> Option<Entry> {
        let entry = self.entries.remove(&ticket)?;
        let key = (entry.session, entry.call.clone());
        if let Some(tickets) = self.calls.get_mut(&key) {
            tickets.remove(&ticket);
            if tickets.is_empty() {
                self.calls.remove(&key);
            }
        }
        if entry.sent
            && let Some(n) = self.sent.get_mut(&entry.session)
        {
            *n -= 1;
            if *n == 0 {
                self.sent.remove(&entry.session);
            }
        }
        Some(entry)
    }

    /// Hands the session's queued reads to the shell while fewer than [`READS_PER_SESSION`] are out,
    /// oldest first, passing those of calls still waiting for their room.
    fn send_queued(&mut self, session: SessionId, out: &mut VecDeque<Output>) {
        let Some(queue) = self.queued.get_mut(&session) else { return };
        let sent = self.sent.entry(session).or_default();
        let mut at = 0;
        while *sent < READS_PER_SESSION && at < queue.len() {
            let ticket = queue[at].0;
            let waits_for_room = !self.unadmitted.is_empty()
                && self.entries.get(&ticket).is_some_and(|e| self.unadmitted.contains(&(e.session, e.call.clone())));
            if waits_for_room {
                at += 1;
                continue;
            }
            let Some((ticket, request)) = queue.remove(at) else { break };
            if let Some(e) = self.entries.get_mut(&ticket) {
                e.sent = true;
            }
            *sent += 1;
            out.push_back(Output::Fetch { session, ticket, request });
        }
        if queue.is_empty() {
            self.queued.remove(&session);
        }
        if self.sent.get(&session) == Some(&0) {
            self.sent.remove(&session);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use serde_json::json;

    fn id(n: i64) -> Id {
        Id::from_value(&json!(n)).unwrap()
    }

    fn fetches(out: &VecDeque<Output>) -> Vec<Ticket> {
        out.iter().filter_map(|o| if let Output::Fetch { ticket, .. } = o { Some(*ticket) } else { None }).collect()
    }

    #[test]
    fn a_session_has_at_most_its_share_of_reads_out_and_each_outcome_sends_the_next_in_order() {
        let (mut work, mut out, s) = (Work::default(), VecDeque::new(), SessionId(1));
        let n = READS_PER_SESSION as u64;
        for _ in 0..n + 2 {
            let t = work.new_ticket();
            work.file_read(s, &id(1), t, FetchRequest::get("/x", vec![]), &mut out);
        }
        assert_eq!(fetches(&out), (0..n).map(Ticket).collect::<Vec<_>>());
        out.clear();
        assert_eq!(work.complete(Ticket(2), Kind::Read, &mut out), Some((s, id(1))));
        assert_eq!(fetches(&out), [Ticket(n)]);
        assert_eq!(work.complete(Ticket(2), Kind::Read, &mut out), None, "an outcome twice is dropped");
        assert_eq!(work.complete(Ticket(n + 1), Kind::Job, &mut out), None, "a ticket of another kind is not taken");
    }

    #[test]
    fn cancelling_a_call_cancels_what_is_out_drops_what_is_queued_and_frees_the_slots_for_another_call() {
        let (mut work, mut out, s) = (Work::default(), VecDeque::new(), SessionId(1));
        let n = READS_PER_SESSION as u64;
        for _ in 0..n + 1 {
            let t = work.new_ticket();
            work.file_read(s, &id(1), t, FetchRequest::get("/a", vec![]), &mut out);
        }
        let other = work.new_ticket();
        work.file_read(s, &id(2), other, FetchRequest::get("/b", vec![]), &mut out);
        let job = work.new_ticket();
        work.file_job(
            s,
            &id(1),
            job,
            HighlightJob::new(0, crate::highlight::Language::detect("a.rs", None).unwrap(), false, vec![]),
            &mut out,
        );
        work.ask_step(s, &id(1), 150, &mut out);
        out.clear();
        work.cancel_call(s, &id(1), &mut out);
        let cancelled: Vec<Ticket> =
            out.iter().filter_map(|o| if let Output::Cancel(t) = o { Some(*t) } else { None }).collect();
        let out_then: Vec<Ticket> = (0..n).map(Ticket).chain([job, Ticket(job.0 + 1)]).collect();
        assert_eq!(cancelled, out_then);
        assert_eq!(fetches(&out), [other], "the other call's read takes a freed slot; call 1's last is never sent");
        assert!(!work.waits(s, &id(1)));
        assert!(work.waits(s, &id(2)));
    }

    #[test]
    fn a_call_waiting_for_its_room_sends_nothing_and_the_calls_behind_it_pass() {
        let (mut work, mut out, s) = (Work::default(), VecDeque::new(), SessionId(1));
        work.ask_room(s, &id(1), 1 << 20, &mut out);
        let room = match out.pop_front() {
            Some(Output::Admit { ticket, bytes, .. }) if bytes == 1 << 20 => ticket,
            other => panic!("{other:?}"),
        };
        let large = work.new_ticket();
        work.file_read(s, &id(1), large, FetchRequest::get("/large", vec![]), &mut out);
        let small = work.new_ticket();
        work.file_read(s, &id(2), small, FetchRequest::get("/small", vec![]), &mut out);
        assert_eq!(fetches(&out), [small]);
        assert!(work.waits(s, &id(1)));
        out.clear();
        assert_eq!(work.admitted(room, true, &mut out), Some((s, id(1), true)));
        assert_eq!(fetches(&out), [large], "granted, its reads go out");
        out.clear();
        assert_eq!(work.complete(large, Kind::Read, &mut out), Some((s, id(1))));
        assert!(!work.waits(s, &id(1)), "a room held is not waited on");
        work.cancel_call(s, &id(1), &mut out);
        assert!(out.iter().any(|o| *o == Output::Cancel(room)), "ending the call gives its room back");
    }
}
