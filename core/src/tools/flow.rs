//! The plan every tool runs: requests filed under the tool's own slot numbers, each outcome handed to
//! the tool, which may ask for more (the next stage) or answer.

use std::collections::BTreeMap;

use crate::plan::{FetchOutcome, FetchRequest, Plan, PlanContext, Step, Ticket, ToolResult};

/// A tool's side of a running call.
pub trait Flow: Send + std::fmt::Debug + 'static {
    /// Takes the outcome of the request filed under `slot`; `Some` answers the call.
    fn on(&mut self, slot: u32, outcome: FetchOutcome, f: &mut Fetcher<'_>) -> Option<ToolResult>;
}

/// Lets a flow ask for more requests while it handles an outcome.
#[derive(Debug)]
pub struct Fetcher<'a> {
    cx: &'a mut PlanContext,
    pending: &'a mut BTreeMap<Ticket, u32>,
}

impl Fetcher<'_> {
    /// Asks for `request`; its outcome comes back under `slot`.
    pub fn fetch(&mut self, slot: u32, request: FetchRequest) {
        let t = self.cx.fetch(request);
        self.pending.insert(t, slot);
    }

    /// How many requests are still out.
    pub fn waiting(&self) -> usize {
        self.pending.len()
    }
}

#[derive(Debug)]
struct Run<F: Flow> {
    flow: F,
    pending: BTreeMap<Ticket, u32>,
}

impl<F: Flow> Plan for Run<F> {
    fn resume(&mut self, ticket: Ticket, outcome: FetchOutcome, cx: &mut PlanContext) -> Option<ToolResult> {
        let slot = self.pending.remove(&ticket)?;
        let mut f = Fetcher { cx, pending: &mut self.pending };
        self.flow.on(slot, outcome, &mut f)
    }
}

/// Starts `flow` with its first requests (at least one).
pub fn start<F: Flow>(flow: F, cx: &mut PlanContext, first: Vec<(u32, FetchRequest)>) -> Step {
    let mut pending = BTreeMap::new();
    let mut f = Fetcher { cx, pending: &mut pending };
    for (slot, request) in first {
        f.fetch(slot, request);
    }
    Step::Wait(Box::new(Run { flow, pending }))
}
