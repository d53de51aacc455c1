//! How a tool call runs: it answers at once, or it becomes a plan that waits on Bitbucket reads and
//! answers when the responses it needs have come back.
//!
//! ```text
//!   start(args, call) ──▶ Step::Done(result)                     answered at once
//!                     └─▶ Step::wait(plan, first reads)           the session emits Output::Fetch for each
//!   plan.begin(fetches)                                           with them, reads from what the server remembers
//!   plan.on(read, outcome, fetches) ──▶ None                      still waiting (may ask for more reads)
//!                                   └─▶ Some(result)              answered; the plan and its open reads are dropped
//! ```
//!
//! Each plan names its reads with a type of its own ([`Plan::Read`]): an outcome comes back under the
//! name its request was filed with, so no two files share numbers. A cancelled call's plan is
//! dropped; responses that arrive for it afterwards are ignored.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::avatar_cache::AvatarCache;
use crate::commit_cache::CommitCache;
use crate::confirm::Question;
use crate::fetch::{FetchOutcome, FetchRequest, Ticket};
use crate::highlight::{HighlightJob, Highlighted};
use crate::highlight_cache::HighlightCache;
use crate::text::visible;

/// What a tool answers: MCP's `CallToolResult`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// Text blocks for the model.
    pub text: Vec<String>,
    /// Structured content, when the tool has one.
    pub structured: Option<Value>,
    /// Whether this is an error the model should act on.
    pub is_error: bool,
    /// `_meta` of the result (view data travels here).
    pub meta: Option<Map<String, Value>>,
    /// Pictures for the model, after the text: MCP image content, `(mimeType, base64 data)`.
    pub images: Vec<(String, String)>,
}

impl ToolResult {
    /// A plain text answer.
    pub fn text(text: impl Into<String>) -> Self {
        ToolResult { text: vec![text.into()], structured: None, is_error: false, meta: None, images: Vec::new() }
    }

    /// An error the model can act on (`isError: true`).
    pub fn error(text: impl Into<String>) -> Self {
        ToolResult { is_error: true, ..ToolResult::text(text) }
    }

    /// The result as MCP JSON.
    pub fn to_value(&self) -> Value {
        self.clone().into_value()
    }

    /// The result as MCP JSON, taking it: a view's data (megabytes for a large diff) is moved, never copied.
    pub fn into_value(self) -> Value {
        // Every text the model reads, with control and bidi characters made visible.
        let mut content: Vec<Value> = self
            .text
            .into_iter()
            .map(|t| {
                let t = match visible(&t) {
                    Cow::Borrowed(_) => t,
                    Cow::Owned(shown) => shown,
                };
                json!({"type": "text", "text": t})
            })
            .collect();
        content.extend(
            self.images.into_iter().map(|(mime, data)| json!({"type": "image", "data": data, "mimeType": mime})),
        );
        let mut out = Map::new();
        out.insert("content".into(), Value::Array(content));
        if let Some(s) = self.structured {
            out.insert("structuredContent".into(), s);
        }
        if self.is_error {
            out.insert("isError".into(), Value::Bool(true));
        }
        if let Some(meta) = self.meta {
            out.insert("_meta".into(), Value::Object(meta));
        }
        Value::Object(out)
    }
}

/// A tool call waiting on Bitbucket: the tool's side.
pub trait Plan: Send + std::fmt::Debug + 'static {
    /// Names what each read is for; an outcome comes back under the name its request was filed with.
    type Read: Copy + std::fmt::Debug + Send + 'static;

    /// Asks for reads beside the first that what the server remembers makes worth sending now (a
    /// card's Code Insights for the commit its pull request was last seen at); called once, when the
    /// first reads are filed. Asks for nothing by default.
    fn begin(&mut self, fetches: &mut Fetches<'_, '_, Self::Read>) {
        let _ = fetches;
    }

    /// Takes the outcome of the read filed as `read`; may ask for more. `Some` answers the call.
    fn on(
        &mut self,
        read: Self::Read,
        outcome: FetchOutcome,
        fetches: &mut Fetches<'_, '_, Self::Read>,
    ) -> Option<ToolResult>;

    /// Does a bounded step of the CPU work it asked for with [`Fetches::want_work`] (highlighting);
    /// `last` says the shell's deadline has passed: answer now with what is done. `Some` answers the call.
    fn work(&mut self, last: bool, fetches: &mut Fetches<'_, '_, Self::Read>) -> Option<ToolResult> {
        let _ = (last, fetches);
        None
    }

    /// The room in the process's memory this call may hold at most, when it may hold more than a few
    /// megabytes (a large diff): its reads go out only once the shell has set it aside.
    fn room(&self) -> Option<u64> {
        None
    }

    /// Takes the outcome of a job filed as `read` with [`Fetches::compute`]. `Some` answers the call.
    fn computed(
        &mut self,
        read: Self::Read,
        done: Highlighted,
        fetches: &mut Fetches<'_, '_, Self::Read>,
    ) -> Option<ToolResult> {
        let _ = (read, done, fetches);
        None
    }
}

/// How a tool call starts.
#[derive(Debug)]
pub enum Step {
    /// The answer is ready.
    Done(ToolResult),
    /// The answer waits on the reads the plan asked for first.
    Wait(Box<dyn Waiting>),
    /// The person is asked first ([`crate::confirm`]); what they confirm starts the tool again with
    /// the question's pin.
    Ask(Question),
}

impl Step {
    /// Waits on `first` (at least one read) with `plan`.
    pub fn wait<P: Plan>(plan: P, first: Vec<(P::Read, FetchRequest)>) -> Step {
        Step::Wait(Box::new(Running { plan, pending: BTreeMap::new(), first, wants_work: false }))
    }
}

/// What the session hands a plan: where its requests go, and the server's caches.
#[derive(Debug)]
pub struct Desk<'a> {
    pub(crate) issued: Vec<(Ticket, FetchRequest)>,
    pub(crate) next_ticket: &'a mut u64,
    /// Avatars every session of every server given the same [`crate::Caches`] shares.
    pub avatars: &'a std::sync::Mutex<AvatarCache>,
    /// The source commit each pull request was last seen at, shared as the avatars are.
    pub(crate) commits: &'a std::sync::Mutex<CommitCache>,
    /// Files highlighted whole, every session's.
    pub highlights: &'a mut HighlightCache,
    /// Jobs asked for by this step.
    pub(crate) computes: Vec<(Ticket, HighlightJob)>,
    /// The wall-clock time of the input being handled, epoch milliseconds.
    pub now_ms: u64,
    /// Numbers refreshes' batches of reads, across every server given the same [`crate::Caches`].
    pub(crate) batches: &'a std::sync::atomic::AtomicU64,
    /// The question a plan put to the person ([`Fetches::ask`]), taken with the step.
    pub(crate) asked: Option<Question>,
}

/// What a plan's step asked for: reads, and jobs for the shell's CPU threads, each with its ticket.
#[derive(Debug, Default)]
pub(crate) struct Issued {
    pub(crate) reads: Vec<(Ticket, FetchRequest)>,
    pub(crate) jobs: Vec<(Ticket, HighlightJob)>,
    /// The question the plan put to the person: the plan is done, and the session asks.
    pub(crate) asked: Option<Question>,
}

impl Desk<'_> {
    /// What the plan asked for since the last take.
    pub(crate) fn take(&mut self) -> Issued {
        Issued {
            reads: std::mem::take(&mut self.issued),
            jobs: std::mem::take(&mut self.computes),
            asked: self.asked.take(),
        }
    }

    /// A batch id no other batch of this configuration's servers has.
    pub(crate) fn next_batch(&self) -> u64 {
        self.batches.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    fn issue(&mut self, request: FetchRequest) -> Ticket {
        let ticket = Ticket(*self.next_ticket);
        *self.next_ticket += 1;
        self.issued.push((ticket, request));
        ticket
    }

    fn issue_compute(&mut self, job: HighlightJob) -> Ticket {
        let ticket = Ticket(*self.next_ticket);
        *self.next_ticket += 1;
        self.computes.push((ticket, job));
        ticket
    }
}

/// Lets a plan ask for more reads while it takes an outcome.
#[derive(Debug)]
pub struct Fetches<'d, 'a, R> {
    desk: &'d mut Desk<'a>,
    pending: &'d mut BTreeMap<Ticket, R>,
    wants_work: &'d mut bool,
}

impl<R> Fetches<'_, '_, R> {
    /// Asks for `request`; its outcome comes back as `read`.
    pub fn fetch(&mut self, read: R, request: FetchRequest) {
        let ticket = self.desk.issue(request);
        self.pending.insert(ticket, read);
    }

    /// How many reads (and jobs) are still out.
    pub fn waiting(&self) -> usize {
        self.pending.len()
    }

    /// Asks the shell to run `job` (on a thread of its own if it has one); its outcome comes back as
    /// `read` through [`Plan::computed`]. Ask for a step of work too ([`Fetches::want_work`]): the
    /// call's deadline is its work's, and its last step answers with what has come back.
    pub fn compute(&mut self, read: R, job: HighlightJob) {
        let ticket = self.desk.issue_compute(job);
        self.pending.insert(ticket, read);
    }

    /// Asks the shell to run `job` for its side effect only (a warm-up): nothing waits for it, and its
    /// outcome is dropped. It belongs to the call all the same, so it is cancelled with it.
    pub fn warm_up(&mut self, job: HighlightJob) {
        self.desk.issue_compute(job);
    }

    /// Asks the shell for a step of CPU work ([`Plan::work`]) once this step returns, and again after
    /// each work step that asks for it, until the shell's deadline passes.
    pub fn want_work(&mut self) {
        *self.wants_work = true;
    }

    /// The avatar cache every server given the same [`crate::Caches`] shares (the HTTP shell's shards
    /// alike), locked for as long as the guard lives: use it within one statement.
    pub fn avatars(&mut self) -> std::sync::MutexGuard<'_, AvatarCache> {
        self.desk.avatars.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The source commit each pull request was last seen at, shared as the avatars are: locked for as
    /// long as the guard lives, so use it within one statement.
    pub fn commits(&mut self) -> std::sync::MutexGuard<'_, CommitCache> {
        self.desk.commits.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The server's cache of highlighted files.
    pub fn highlights(&mut self) -> &mut HighlightCache {
        self.desk.highlights
    }

    /// The wall-clock time of the input being handled, epoch milliseconds.
    pub fn now_ms(&self) -> u64 {
        self.desk.now_ms
    }

    /// Puts `question` to the person, having read what it names (a call started with
    /// [`crate::confirm::Confirming::Ask`]): return `None` with it. The plan is done; what the person
    /// confirms starts the tool again with the question's pin, and anything else answers that
    /// nothing was written. Reads still out are withdrawn.
    pub fn ask(&mut self, question: Question) {
        self.desk.asked = Some(question);
    }
}

/// A started plan as the session holds it, whatever its read type.
pub trait Waiting: Send + std::fmt::Debug {
    /// Files the plan's first reads, and those it adds from what the server remembers ([`Plan::begin`]).
    fn begin(&mut self, desk: &mut Desk<'_>);
    /// Takes the outcome of `ticket`; `Some` answers the call.
    fn resume(&mut self, ticket: Ticket, outcome: FetchOutcome, desk: &mut Desk<'_>) -> Option<ToolResult>;
    /// Does a step of the plan's CPU work; `last` when the deadline has passed. `Some` answers the call.
    fn work(&mut self, last: bool, desk: &mut Desk<'_>) -> Option<ToolResult>;
    /// Takes the outcome of job `ticket`; `Some` answers the call.
    fn computed(&mut self, ticket: Ticket, done: Highlighted, desk: &mut Desk<'_>) -> Option<ToolResult>;
    /// Whether the last step asked for a work step (and forgets that it did).
    fn wants_work(&mut self) -> bool;
    /// The room in memory the call asks for before its reads go out ([`Plan::room`]).
    fn room(&self) -> Option<u64>;
    /// How many reads are still out.
    fn waiting(&self) -> usize;
}

#[derive(Debug)]
struct Running<P: Plan> {
    plan: P,
    pending: BTreeMap<Ticket, P::Read>,
    first: Vec<(P::Read, FetchRequest)>,
    wants_work: bool,
}

impl<P: Plan> Waiting for Running<P> {
    fn begin(&mut self, desk: &mut Desk<'_>) {
        for (read, request) in std::mem::take(&mut self.first) {
            let ticket = desk.issue(request);
            self.pending.insert(ticket, read);
        }
        let mut fetches = Fetches { desk, pending: &mut self.pending, wants_work: &mut self.wants_work };
        self.plan.begin(&mut fetches);
    }

    fn resume(&mut self, ticket: Ticket, outcome: FetchOutcome, desk: &mut Desk<'_>) -> Option<ToolResult> {
        let read = self.pending.remove(&ticket)?;
        let mut fetches = Fetches { desk, pending: &mut self.pending, wants_work: &mut self.wants_work };
        self.plan.on(read, outcome, &mut fetches)
    }

    fn work(&mut self, last: bool, desk: &mut Desk<'_>) -> Option<ToolResult> {
        let mut fetches = Fetches { desk, pending: &mut self.pending, wants_work: &mut self.wants_work };
        self.plan.work(last, &mut fetches)
    }

    fn computed(&mut self, ticket: Ticket, done: Highlighted, desk: &mut Desk<'_>) -> Option<ToolResult> {
        let read = self.pending.remove(&ticket)?;
        let mut fetches = Fetches { desk, pending: &mut self.pending, wants_work: &mut self.wants_work };
        self.plan.computed(read, done, &mut fetches)
    }

    fn wants_work(&mut self) -> bool {
        std::mem::take(&mut self.wants_work)
    }

    fn room(&self) -> Option<u64> {
        self.plan.room()
    }

    fn waiting(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_result_carries_is_error_and_its_text() {
        let v = ToolResult::error("Pull request 7 does not exist.").to_value();
        assert_eq!(v["isError"], true);
        assert_eq!(v["content"][0]["type"], "text");
        assert_eq!(v["content"][0]["text"], "Pull request 7 does not exist.");
    }

    #[test]
    fn a_plain_result_leaves_is_error_out() {
        assert!(ToolResult::text("ok").to_value().get("isError").is_none());
    }

    #[derive(Debug)]
    struct Two;

    impl Plan for Two {
        type Read = &'static str;
        fn on(
            &mut self,
            read: &'static str,
            _: FetchOutcome,
            f: &mut Fetches<'_, '_, &'static str>,
        ) -> Option<ToolResult> {
            (f.waiting() == 0).then(|| ToolResult::text(read))
        }
    }

    #[test]
    fn an_outcome_comes_back_under_the_name_its_read_was_filed_with() {
        let Step::Wait(mut w) =
            Step::wait(Two, vec![("a", FetchRequest::get("/a", vec![])), ("b", FetchRequest::get("/b", vec![]))])
        else {
            unreachable!()
        };
        let (mut next, avatars, mut highlights) = (0, std::sync::Mutex::default(), HighlightCache::default());
        let commits = std::sync::Mutex::default();
        let mut desk = Desk {
            issued: vec![],
            next_ticket: &mut next,
            avatars: &avatars,
            commits: &commits,
            highlights: &mut highlights,
            computes: vec![],
            now_ms: 0,
            batches: &std::sync::atomic::AtomicU64::new(0),
            asked: None,
        };
        w.begin(&mut desk);
        let tickets: Vec<Ticket> = desk.issued.iter().map(|(t, _)| *t).collect();
        assert_eq!(tickets, [Ticket(0), Ticket(1)]);
        assert_eq!(w.resume(Ticket(1), FetchOutcome::response(200, ""), &mut desk), None);
        assert_eq!(w.resume(Ticket(0), FetchOutcome::response(200, ""), &mut desk), Some(ToolResult::text("a")));
        assert_eq!(
            w.resume(Ticket(0), FetchOutcome::response(200, ""), &mut desk),
            None,
            "an outcome twice is ignored"
        );
    }
}
