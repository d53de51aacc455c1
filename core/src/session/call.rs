//! Tool calls: a call's arguments are checked, its tool starts, and it answers at once or becomes a
//! plan ([`crate::plan`]) that waits on reads, jobs and steps of CPU work filed in the table of
//! calls' work ([`crate::work`]). Each outcome resumes the plan; when the plan answers, whatever the
//! call still waits on is withdrawn and the answer goes to the client (or into its batch).
//!
//! A tool that asks ([`crate::tool::Asks`]) puts its question to the person first ([`crate::confirm`]):
//! in the handshake's era the session sends `elicitation/create` and the call waits (at most
//! `ServerConfig::answer_within_ms`, 10 minutes, holding nothing of Bitbucket's) for the client's response; on 2026-07-28 the
//! call answers `input_required` and its retry brings the sealed state back. What the person confirms
//! starts the tool again with the question's pin; anything else writes nothing.
//!
//! ```text
//!   Running(plan) ──plan asks──▶ Asking{ask id} ──accept, box ticked──▶ Running(plan, Confirmed(pin))
//!                                     └─ decline, cancel, unticked, 10 min, cancelled ─▶ answered: nothing written
//!   (2026-07-28 retry) Spending{pin} ──ledger: fresh──▶ Running(plan, Confirmed(pin))
//!                                    └─ used before ─▶ -32602; unknown ─▶ tool error
//! ```

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::read::Dress;
use super::{Answer, Session, scoped, truncate};
use crate::confirm::{self, Answered, CONFIRM_KEY, Confirming, Question, Spent};
use crate::fetch::{FetchOutcome, Ticket};
use crate::highlight::Highlighted;
use crate::jsonrpc::{self, ErrorReply, INVALID_PARAMS, Id, MISSING_REQUIRED_CLIENT_CAPABILITY};
use crate::logging::Level;
use crate::plan::{Issued, Step, ToolResult, Waiting};
use crate::protocol::ClientProfile;
use crate::shared::Shared;
use crate::stateless;
use crate::tool::{Call, Exposed, Role, ToolSpec};
use crate::work::Kind;

/// The dress of a call that asks the person: a write, which links to nothing.
const ASKED: Dress = Dress::Tool { link: None };

/// What a large call is answered when the process has no room for it.
pub(crate) const BUSY: &str = "bb is busy: other large diffs hold the memory it sets aside for them (see --memory-budget). \
Try again in a few seconds, or ask for fewer files.";

/// A tool call waiting on its work, or on the person.
#[derive(Debug)]
pub(super) struct Pending {
    state: State,
    /// The tag of the input that brought it.
    pub(super) tag: u64,
    /// The batch it belongs to, if any.
    pub(super) batch: Option<u64>,
    /// A 2026-07-28 call: its answer is completed ([`stateless::complete`]).
    stateless: bool,
    /// How its answer is dressed: a tool's result, or a resource's contents.
    dress: Dress,
}

/// Where a call is.
#[derive(Debug)]
enum State {
    /// Its plan waits on reads, jobs or steps; `again` when it may still ask the person.
    Running(Box<dyn Waiting>, Option<Box<Again>>),
    /// The person was asked (`elicitation/create` under `ask`); the call's steps ticket is the deadline.
    Asking { ask: Id, question: Question, again: Box<Again> },
    /// A 2026-07-28 acceptance waits for the ledger to say it was not used before.
    Spending { pin: Value, again: Box<Again> },
    /// Taken apart while it changes state.
    Done,
}

/// A running call taken apart to be stepped: the call, its plan, and what starts it again.
type Taken = (Pending, Box<dyn Waiting>, Option<Box<Again>>);

/// How a tool starts: asking nobody, asking first, or as the person confirmed the question's pin.
#[derive(Debug)]
enum Mode {
    Off,
    Ask,
    Confirmed(Value),
}

/// What starts a tool again once the person confirmed.
#[derive(Debug)]
struct Again {
    tool: ToolSpec,
    args: Map<String, Value>,
    client: ClientProfile,
    exposed: Arc<Exposed>,
    /// How the answer is dressed when not as the tool's result (a resource read, a prompt's part);
    /// `None` for `tools/call`.
    dress: Option<Dress>,
}

impl Pending {
    /// A request that waits on `plan`'s reads and is answered as `dress` says (a completion).
    pub(super) fn reading(
        plan: Box<dyn Waiting>,
        tag: u64,
        batch: Option<u64>,
        stateless: bool,
        dress: Dress,
    ) -> Pending {
        Pending { state: State::Running(plan, None), tag, batch, stateless, dress }
    }

    /// Whether the call reads a part of a prompt (`session/prompt.rs`): it is cancelled with its prompt.
    pub(super) fn is_part(&self) -> bool {
        matches!(self.dress, Dress::Embedded { .. })
    }

    /// Whether the call waits on the person.
    pub(super) fn asking(&self) -> Option<&Id> {
        match &self.state {
            State::Asking { ask, .. } => Some(ask),
            _ => None,
        }
    }
}

impl Session {
    /// Starts a tool call. `stateless` is the client a 2026-07-28 request declared; `None` for the
    /// session's own. `dress`: how a `resources/read` or a prompt's part is answered (`session/read.rs`);
    /// `None` for `tools/call`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tools_call(
        &mut self,
        id: &Id,
        params: &Value,
        stateless: Option<ClientProfile>,
        tag: u64,
        batch: Option<u64>,
        dress: Option<Dress>,
        sh: &mut Shared,
    ) -> Answer {
        let version = sh.config.version;
        let is_stateless = stateless.is_some();
        let finish = |result: ToolResult| {
            let v = result.into_value();
            Answer::Now(Ok(if is_stateless { stateless::complete(v, version) } else { v }))
        };
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Answer::Now(Err(ErrorReply::new(
                Some(id.clone()),
                INVALID_PARAMS,
                "Invalid params: `tools/call` needs the tool's `name`.",
            )));
        };
        let exposed = if is_stateless { Arc::clone(&sh.config.exposed) } else { self.exposed(sh) };
        // A tool only views call is no tool for a client that renders none.
        let apps = stateless.as_ref().unwrap_or(&self.client).renders_views;
        if exposed.withheld_as_write(name) {
            self.log(Level::Info, format!("{} refused: the server is read-only", truncate(name, 100)), sh);
            self.denied(id, name, None, "read-only (--read-only)", sh);
            return finish(ToolResult::error(format!(
                "{name} changes Bitbucket, and this bb is read-only (--read-only): nothing was done. Ask the person to do it in Bitbucket."
            )));
        }
        if exposed.gated(name) {
            self.log(Level::Info, format!("{name} refused: the write gate (--allow-writes)"), sh);
            self.denied(id, name, None, "the write gate (--allow-writes)", sh);
            return Answer::Now(Err(ErrorReply::new(
                Some(id.clone()),
                INVALID_PARAMS,
                format!(
                    "Unknown tool: `{name}` cannot be undone, and this bb does not expose it (an admin exposes it with --allow-writes, or by naming it in --tools): nothing was done."
                ),
            )));
        }
        let Some(tool) = exposed.get_for(name, apps).copied() else {
            return Answer::Now(Err(ErrorReply::new(
                Some(id.clone()),
                INVALID_PARAMS,
                format!("Unknown tool: `{}`. Call tools/list for the tools this server exposes.", truncate(name, 100)),
            )));
        };
        self.audit_start(id, tool.name, params, stateless.as_ref(), sh);
        if sh.audit_failing && sh.config.audit {
            let reason = "the audit trail could not be written";
            self.denied(id, tool.name, None, reason, sh);
            return finish(ToolResult::error(format!(
                "bb refused {}: it could not be recorded in the audit trail, and bb acts only on what it records \
(the operator's log says why). Nothing was done; try again later.",
                tool.name
            )));
        }
        let args = params.get("arguments");
        if tool.role == Role::Session {
            return finish(self.enable_toolset(args, tag, sh));
        }
        // The admin's scope: the repository filled in before the arguments are checked (a tool's schema
        // requires it), and the call refused after, before anything is read.
        let scope = sh.config.scope.clone();
        let filled;
        let args = match (&scope, args) {
            (Some(scope), None | Some(Value::Object(_))) => {
                let mut a = args.and_then(Value::as_object).cloned().unwrap_or_default();
                scoped::fill(&tool, &exposed, scope, &mut a);
                filled = Value::Object(a);
                Some(&filled)
            }
            _ => args,
        };
        if let Err(why) = crate::args::validate(args, &exposed.checked_schema(&tool)) {
            return finish(ToolResult::error(format!("Invalid arguments for {}: {why}", tool.name)));
        }
        let args = args.and_then(Value::as_object).cloned().unwrap_or_default();
        if let Err(why) = crate::args::check_places(&args) {
            return finish(ToolResult::error(format!("Invalid arguments for {}: {why}", tool.name)));
        }
        if let Some(scope) = &scope
            && let Err(why) = scoped::admit(&tool, &exposed, scope, &args)
        {
            self.log(Level::Info, format!("{} refused: outside the scope", tool.name), sh);
            self.denied(id, tool.name, Some(&args), "outside the scope", sh);
            return finish(ToolResult::error(why));
        }
        let client = stateless.unwrap_or_else(|| self.client.clone());
        let asks = sh.config.confirm && tool.asks.applies(&args);
        if !asks {
            let again = Again { tool, args, client, exposed, dress };
            return self.launch(id, again, Mode::Off, tag, batch, is_stateless, sh);
        }
        if !client.asks_forms {
            self.denied(id, tool.name, Some(&args), "the client cannot show a confirmation", sh);
            return self.cannot_ask(id, &tool, is_stateless, sh);
        }
        let again = Again { tool, args, client, exposed, dress };
        if is_stateless && params.get("requestState").is_some() {
            return self.retried(id, params, again, tag, sh);
        }
        if batch.is_some() {
            // Only 2025-03-26 has batches, and it has no elicitation.
            return finish(ToolResult::error(format!(
                "{} asks the person first, which a batch cannot wait for: {}. Call it on its own.",
                tool.name,
                tool.asks.untouched()
            )));
        }
        self.launch(id, again, Mode::Ask, tag, batch, is_stateless, sh)
    }

    /// Starts `again`'s tool, asking nobody, asking first, or as the person confirmed.
    #[allow(clippy::too_many_arguments)]
    fn launch(
        &mut self,
        id: &Id,
        again: Again,
        mode: Mode,
        tag: u64,
        batch: Option<u64>,
        is_stateless: bool,
        sh: &mut Shared,
    ) -> Answer {
        let version = sh.config.version;
        let dress = match &again.dress {
            Some(dress) => dress.clone(),
            None => Dress::Tool {
                link: self
                    .takes_links(is_stateless)
                    .then(|| crate::resources::link(again.tool.name, &again.args))
                    .flatten(),
            },
        };
        let finish = |result: ToolResult| Answer::Now(dress.finish(id, result.into_value(), is_stateless, version));
        self.audit_args(id, &again.args);
        let confirming = match &mode {
            Mode::Off => Confirming::Off,
            Mode::Ask => Confirming::Ask,
            Mode::Confirmed(pin) => Confirming::Confirmed(pin),
        };
        let call = Call {
            client: &again.client,
            exposed: &again.exposed,
            now_ms: sh.now_ms,
            bitbucket_user: self.bitbucket_user.as_deref(),
            base_url: sh.config.base_url.as_deref(),
            highlight_templates: sh.config.highlight_templates,
            confirming,
            asks: sh.config.confirm,
            scope: sh.config.scope.as_deref(),
            spread: crate::tool::spread_of(self.principal.as_deref()),
        };
        let step = (again.tool.start)(&again.args, &call);
        let may_ask = confirming == Confirming::Ask;
        match step {
            Step::Done(result) => finish(result),
            Step::Ask(question) if may_ask => self.ask(id, question, Box::new(again), tag, is_stateless, sh),
            Step::Ask(_) => finish(ToolResult::error(format!(
                "{} asked the person twice. This is a bug in bb; nothing was written.",
                again.tool.name
            ))),
            Step::Wait(mut plan) => {
                let mut desk = sh.desk();
                plan.begin(&mut desk);
                let issued = desk.take();
                if may_ask && let Some(answer) = wrote_first(&again.tool, &issued, is_stateless, version) {
                    return answer;
                }
                if issued.reads.is_empty() {
                    // A plan that asked for nothing can never be resumed: that is a bug in the tool.
                    return finish(ToolResult::error(format!(
                        "{} could not run: it waited on nothing. This is a bug in bb.",
                        again.tool.name
                    )));
                }
                self.log(
                    Level::Debug,
                    format!("{} waits on {} Bitbucket request(s)", again.tool.name, issued.reads.len()),
                    sh,
                );
                if let Some(bytes) = plan.room() {
                    sh.work.ask_room(self.id, id, bytes, &mut sh.out);
                }
                for (ticket, request) in issued.reads {
                    sh.work.file_read(self.id, id, ticket, request, &mut sh.out);
                }
                for (ticket, job) in issued.jobs {
                    sh.work.file_job(self.id, id, ticket, job, &mut sh.out);
                }
                if let Some(b) = batch {
                    self.batch_waits_on_one(b);
                }
                let again = may_ask.then(|| Box::new(again));
                let state = State::Running(plan, again);
                self.pending.insert(id.clone(), Pending { state, tag, batch, stateless: is_stateless, dress });
                Answer::Later
            }
        }
    }

    /// A tool that asks, for a client that cannot: nothing is read or written.
    fn cannot_ask(&mut self, id: &Id, tool: &ToolSpec, is_stateless: bool, sh: &mut Shared) -> Answer {
        self.log(Level::Info, format!("{} refused: the client cannot show a confirmation", tool.name), sh);
        if is_stateless {
            let mut reply = ErrorReply::new(
                Some(id.clone()),
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                format!(
                    "Missing required client capability: bb asks the person before {} runs, and this request declares no form elicitation; nothing was done.",
                    tool.name
                ),
            );
            reply.data = Some(json!({"requiredCapabilities": {"elicitation": {"form": {}}}}));
            return Answer::Now(Err(reply));
        }
        Answer::Now(Ok(ToolResult::error(format!(
            "This client cannot show a confirmation (it declared no form elicitation), and bb asks the person before {} runs: {}. \
Ask the person to do it in Bitbucket, or to use a client that can ask them.",
            tool.name,
            tool.asks.untouched()
        ))
        .into_value()))
    }

    /// Puts `question` to the person: sent now in the handshake's era (the call waits), answered as
    /// `input_required` on 2026-07-28.
    fn ask(
        &mut self,
        id: &Id,
        question: Question,
        again: Box<Again>,
        tag: u64,
        is_stateless: bool,
        sh: &mut Shared,
    ) -> Answer {
        let version = sh.config.version;
        let tool = again.tool;
        self.log(Level::Info, format!("{} asks the person to confirm", tool.name), sh);
        self.audit_confirmation(id, None, sh);
        if is_stateless {
            let Some(seal) = sh.config.seal.clone() else {
                return Answer::Now(Ok(stateless::complete(
                    ToolResult::error(format!(
                        "bb has no key to seal a confirmation with, so it cannot ask the person: {}.",
                        tool.asks.untouched()
                    ))
                    .into_value(),
                    version,
                )));
            };
            let state = confirm::State {
                tool: tool.name.into(),
                args: confirm::args_digest(&again.args, seal.as_ref()),
                principal: self.principal(),
                pin: question.pin.clone(),
                expires_ms: sh.now_ms.saturating_add(sh.config.answer_within_ms),
            };
            let result = json!({
                "inputRequests": {CONFIRM_KEY: {
                    "method": "elicitation/create",
                    "params": question.params(Some(crate::protocol::ProtocolVersion::STATELESS)),
                }},
                "requestState": state.seal(seal.as_ref()),
            });
            return Answer::Now(Ok(stateless::input_required(result, version)));
        }
        self.next_ask += 1;
        let ask = Id::from_value(&Value::from(format!("bb-confirm-{}", self.next_ask))).unwrap_or_else(|| id.clone());
        let request = json!({"jsonrpc": "2.0", "id": ask.to_value(), "method": "elicitation/create",
                             "params": question.params(self.version)});
        self.send(request, Some(tag), sh);
        // The call's deadline: a step at it is the last (no answer came).
        sh.work.ask_step(self.id, id, sh.now_ms.saturating_add(sh.config.answer_within_ms), &mut sh.out);
        let state = State::Asking { ask, question, again };
        self.pending.insert(id.clone(), Pending { state, tag, batch: None, stateless: false, dress: ASKED });
        Answer::Later
    }

    /// A 2026-07-28 retry that brings a state back: checked, then (accepted) spent once in the
    /// ledger replicas share before the tool writes.
    fn retried(&mut self, id: &Id, params: &Value, again: Again, tag: u64, sh: &mut Shared) -> Answer {
        let version = sh.config.version;
        let invalid = |why: &str| {
            Answer::Now(Err(ErrorReply::new(
                Some(id.clone()),
                INVALID_PARAMS,
                format!(
                    "Invalid params: {why}; nothing was done. Call the tool again without `requestState` to ask the person again."
                ),
            )))
        };
        let Some(seal) = sh.config.seal.clone() else {
            return invalid("`requestState` is not one this server made");
        };
        let Some(token) = params.get("requestState").and_then(Value::as_str) else {
            return invalid("`requestState` must be the string bb sent");
        };
        let Some((state, state_id)) = confirm::State::open(token, seal.as_ref()) else {
            return invalid("`requestState` is not one bb made, or it was altered");
        };
        if state.tool != again.tool.name {
            return invalid("`requestState` was made for another tool");
        }
        if state.args != confirm::args_digest(&again.args, seal.as_ref()) {
            return invalid("`requestState` was made for other arguments");
        }
        if state.principal != self.principal() {
            return invalid("`requestState` was made for another person");
        }
        let untouched = again.tool.asks.untouched();
        let answer = params.get("inputResponses").and_then(|r| r.get(CONFIRM_KEY));
        let Some(answer) = answer else {
            // No answer to bb's question: ask again (MRTR: a missing input is asked for anew).
            return self.launch(id, again, Mode::Ask, tag, None, true, sh);
        };
        let answered = Answered::read(answer);
        self.audit_confirmation(id, Some(super::audit::answer_word(&answered)), sh);
        if let Some(refusal) = answered.refusal(again.tool.name, untouched) {
            self.log(Level::Info, format!("{}: the person did not confirm ({answered:?})", again.tool.name), sh);
            return Answer::Now(Ok(stateless::complete(declined(refusal, &answered), version)));
        }
        if sh.now_ms >= state.expires_ms {
            return Answer::Now(Ok(stateless::complete(
                ToolResult::error(format!(
                    "The confirmation came after its {} had passed: {untouched}. Call {} again to ask the person again.",
                    confirm::duration_words(sh.config.answer_within_ms),
                    again.tool.name
                ))
                .into_value(),
                version,
            )));
        }
        sh.work.ask_spend(self.id, id, state_id, state.expires_ms, &mut sh.out);
        let state = State::Spending { pin: state.pin, again: Box::new(again) };
        self.pending.insert(id.clone(), Pending { state, tag, batch: None, stateless: true, dress: ASKED });
        Answer::Later
    }

    /// The ledger's answer for a 2026-07-28 acceptance.
    pub(crate) fn spent(&mut self, call: Id, spent: Spent, sh: &mut Shared) {
        let Some(pending) = self.pending.remove(&call) else { return };
        let Pending { state: State::Spending { pin, again }, tag, .. } = pending else {
            self.pending.insert(call, pending);
            return;
        };
        let untouched = again.tool.asks.untouched();
        let answer = match spent {
            Spent::Fresh => {
                self.log(Level::Info, format!("{}: confirmed by the person", again.tool.name), sh);
                self.launch(&call, *again, Mode::Confirmed(pin), tag, None, true, sh)
            }
            Spent::Used => Answer::Now(Err(ErrorReply::new(
                Some(call.clone()),
                INVALID_PARAMS,
                format!(
                    "Invalid params: this `requestState` was used already; {untouched} this time. Call the tool again without it to ask the person again."
                ),
            ))),
            Spent::Unknown(why) => Answer::Now(Ok(stateless::complete(
                ToolResult::error(format!(
                    "bb could not check that this confirmation was not used before ({why}): {untouched}. Try again shortly."
                ))
                .into_value(),
                sh.config.version,
            ))),
        };
        self.answer_now(&call, answer, tag, sh);
    }

    /// The client's response to bb's `elicitation/create` under `ask`.
    pub(super) fn responded(&mut self, ask: &Id, outcome: Result<Value, Value>, sh: &mut Shared) {
        let Some(call) = self.pending.iter().find(|(_, p)| p.asking() == Some(ask)).map(|(id, _)| id.clone()) else {
            self.log(Level::Debug, format!("ignored a response to id {ask}: no question waits on it"), sh);
            return;
        };
        let Some(Pending { state: State::Asking { again, question, .. }, tag, .. }) = self.pending.remove(&call) else {
            return;
        };
        sh.work.cancel_steps(self.id, &call, &mut sh.out);
        let untouched = again.tool.asks.untouched();
        let answered = match &outcome {
            Ok(result) => Answered::read(result),
            Err(error) => Answered::Unreadable(format!(
                "the client could not show the confirmation ({})",
                truncate(error.get("message").and_then(Value::as_str).unwrap_or("an error"), 200)
            )),
        };
        self.audit_confirmation(&call, Some(super::audit::answer_word(&answered)), sh);
        let answer = match answered.refusal(again.tool.name, untouched) {
            None => {
                self.log(Level::Info, format!("{}: confirmed by the person", again.tool.name), sh);
                self.launch(&call, *again, Mode::Confirmed(question.pin), tag, None, false, sh)
            }
            Some(refusal) => {
                self.log(Level::Info, format!("{}: the person did not confirm ({answered:?})", again.tool.name), sh);
                Answer::Now(Ok(declined(refusal, &answered)))
            }
        };
        self.answer_now(&call, answer, tag, sh);
    }

    /// Answers a call that finished outside a step (an answer, the ledger, a deadline), then says its
    /// input is done.
    fn answer_now(&mut self, call: &Id, answer: Answer, tag: u64, sh: &mut Shared) {
        match answer {
            Answer::Now(Ok(result)) => self.send(jsonrpc::result_value(call, result), Some(tag), sh),
            Answer::Now(Err(reply)) => self.send(reply.to_value(), Some(tag), sh),
            Answer::Made(_) | Answer::Later => {}
        }
        self.settle(tag, sh);
    }
}

impl Session {
    /// The shell has no room for a large call now: it answers so, and nothing of it is read.
    pub(crate) fn refused_room(&mut self, call: Id, sh: &mut Shared) {
        let Some(pending) = self.pending.remove(&call) else { return };
        sh.work.cancel_call(self.id, &call, &mut sh.out);
        let tag = pending.tag;
        let result = ToolResult::error(BUSY);
        self.answer_later(&call, pending, result.into_value(), sh);
        self.settle(tag, sh);
    }

    /// The plan of a running call, taken out with what starts it again (the call's state is left
    /// `Done` until [`Session::after_step`] puts it back); a call not running stays as it is.
    fn running(&mut self, call: &Id) -> Option<Taken> {
        let mut pending = self.pending.remove(call)?;
        match std::mem::replace(&mut pending.state, State::Done) {
            State::Running(plan, again) => Some((pending, plan, again)),
            other => {
                pending.state = other;
                self.pending.insert(call.clone(), pending);
                None
            }
        }
    }

    /// Takes the outcome of a read a call's plan asked for.
    pub(crate) fn fetched(&mut self, call: Id, ticket: Ticket, outcome: FetchOutcome, sh: &mut Shared) {
        if let FetchOutcome::Response(r) = &outcome
            && let Some(user) = &r.user
            && self.bitbucket_user.as_ref() != Some(user)
        {
            self.bitbucket_user = Some(user.clone());
        }
        let Some((mut pending, mut plan, again)) = self.running(&call) else { return };
        if matches!(&outcome, FetchOutcome::Response(r) if r.status == 404) {
            pending.dress.saw_missing();
        }
        let mut desk = sh.desk();
        let answer = plan.resume(ticket, outcome, &mut desk);
        let issued = desk.take();
        self.after_step(call, (pending, plan, again), answer, issued, sh);
    }

    /// Takes the outcome of a job a call's plan asked for.
    pub(crate) fn computed(&mut self, call: Id, ticket: Ticket, done: Highlighted, sh: &mut Shared) {
        let Some((pending, mut plan, again)) = self.running(&call) else { return };
        let mut desk = sh.desk();
        let answer = plan.computed(ticket, done, &mut desk);
        let issued = desk.take();
        self.after_step(call, (pending, plan, again), answer, issued, sh);
    }

    /// Takes a step of a call's CPU work (`last` once the shell's deadline has passed). For a call
    /// that waits on the person, the step at its deadline ends the wait: no answer came.
    pub(crate) fn worked(&mut self, call: Id, last: bool, sh: &mut Shared) {
        if let Some(pending) = self.pending.get(&call)
            && let Some(ask) = pending.asking().cloned()
        {
            if last {
                self.unanswered(call, ask, sh);
            }
            return;
        }
        let Some((pending, mut plan, again)) = self.running(&call) else { return };
        let mut desk = sh.desk();
        let answer = plan.work(last, &mut desk);
        let issued = desk.take();
        self.after_step(call, (pending, plan, again), answer, issued, sh);
    }

    /// No answer came within the configured wait: the question is withdrawn and nothing is written.
    fn unanswered(&mut self, call: Id, ask: Id, sh: &mut Shared) {
        let Some(Pending { state: State::Asking { again, .. }, tag, .. }) = self.pending.remove(&call) else {
            return;
        };
        sh.work.cancel_call(self.id, &call, &mut sh.out);
        self.audit_confirmation(&call, Some("no answer"), sh);
        let within = confirm::duration_words(sh.config.answer_within_ms);
        self.withdraw_question(&ask, &format!("No answer came within {within}."), tag, sh);
        let result = ToolResult::error(format!(
            "No answer came from the person within {within}: {}. Call {} again when they are there to confirm.",
            again.tool.asks.untouched(),
            again.tool.name
        ));
        self.answer_now(&call, Answer::Now(Ok(result.into_value())), tag, sh);
    }

    /// Tells the client that bb's question under `ask` no longer needs an answer.
    pub(super) fn withdraw_question(&mut self, ask: &Id, reason: &str, tag: u64, sh: &mut Shared) {
        let note = jsonrpc::notification_value(
            "notifications/cancelled",
            json!({"requestId": ask.to_value(), "reason": reason}),
        );
        self.send(note, Some(tag), sh);
    }

    /// After a plan's step: files the reads and jobs it asked for, asks the shell for a step of work
    /// when the plan wants one, puts the plan's question to the person when it asked one, and answers
    /// the call when the plan did (withdrawing what it no longer needs).
    fn after_step(
        &mut self,
        id: Id,
        (mut pending, mut plan, again): Taken,
        answer: Option<ToolResult>,
        issued: Issued,
        sh: &mut Shared,
    ) {
        let tag = pending.tag;
        if let Some(question) = issued.asked {
            // The plan is done: what it still waits on goes, and the person is asked.
            sh.work.cancel_call(self.id, &id, &mut sh.out);
            let Some(again) = again else {
                let result = ToolResult::error(
                    "A tool asked the person when it was not to. This is a bug in bb; nothing was written.",
                );
                self.answer_later(&id, pending, result.into_value(), sh);
                self.settle(tag, sh);
                return;
            };
            let answer = self.ask(&id, question, again, tag, pending.stateless, sh);
            if let Some(b) = pending.batch {
                self.batch_lost_one(b, sh);
            }
            self.answer_now(&id, answer, tag, sh);
            return;
        }
        if let Some(again) = &again
            && let Some(Answer::Now(Ok(result))) = wrote_first(&again.tool, &issued, false, "")
        {
            sh.work.cancel_call(self.id, &id, &mut sh.out);
            self.answer_later(&id, pending, result, sh);
            self.settle(tag, sh);
            return;
        }
        for (ticket, request) in issued.reads {
            sh.work.file_read(self.id, &id, ticket, request, &mut sh.out);
        }
        for (ticket, job) in issued.jobs {
            sh.work.file_job(self.id, &id, ticket, job, &mut sh.out);
        }
        // While a call waits on jobs its steps ticket stays: it is the call's deadline.
        let on_jobs = sh.work.ticket_of(self.id, &id, Kind::Job).is_some();
        if answer.is_none() && plan.wants_work() {
            let deadline_ms = sh.now_ms.saturating_add(sh.config.highlight_deadline_ms);
            sh.work.ask_step(self.id, &id, deadline_ms, &mut sh.out);
        } else if answer.is_some() || !on_jobs {
            sh.work.cancel_steps(self.id, &id, &mut sh.out);
        }
        match answer {
            Some(result) => {
                sh.work.cancel_call(self.id, &id, &mut sh.out);
                self.answer_later(&id, pending, result.into_value(), sh);
            }
            None if !sh.work.waits(self.id, &id) => {
                let result =
                    ToolResult::error("The call stopped waiting on Bitbucket without an answer. This is a bug in bb.");
                self.answer_later(&id, pending, result.into_value(), sh);
            }
            None => {
                pending.state = State::Running(plan, again);
                self.pending.insert(id, pending);
                return;
            }
        }
        self.settle(tag, sh);
    }

    /// Starts `plan` for request `id` (a completion, `resources/list`, a watch's read): its reads and jobs
    /// filed in the table of work as a tool call's are, the request answered as `dress` says once it
    /// answers. `what` names it in the debug log.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn read_later(
        &mut self,
        id: &Id,
        mut plan: Box<dyn Waiting>,
        what: &str,
        tag: u64,
        batch: Option<u64>,
        stateless: bool,
        dress: Dress,
        sh: &mut Shared,
    ) {
        let mut desk = sh.desk();
        plan.begin(&mut desk);
        let issued = desk.take();
        self.log(Level::Debug, format!("{what} waits on {} Bitbucket request(s)", issued.reads.len()), sh);
        for (ticket, request) in issued.reads {
            sh.work.file_read(self.id, id, ticket, request, &mut sh.out);
        }
        for (ticket, job) in issued.jobs {
            sh.work.file_job(self.id, id, ticket, job, &mut sh.out);
        }
        if let Some(b) = batch {
            self.batch_waits_on_one(b);
        }
        self.pending.insert(id.clone(), Pending::reading(plan, tag, batch, stateless, dress));
    }

    fn answer_later(&mut self, id: &Id, pending: Pending, result: Value, sh: &mut Shared) {
        // A watch's read is no request's: what it read decides whom to tell (`session/watch.rs`).
        if let Dress::Watch = pending.dress {
            return self.watched(id, &result, sh);
        }
        // A completion's listing is kept for the person's next keystrokes; a failed one is not.
        if let Dress::Completion { source, .. } = &pending.dress
            && let Some(listed) = crate::completion::listed(&result)
        {
            let person = self.principal();
            sh.completions.put(&person, source.clone(), listed, sh.now_ms);
        }
        let dressed = pending.dress.finish(id, result, pending.stateless, sh.config.version);
        if let Dress::Embedded { prompt, index, .. } = &pending.dress {
            return self.gathered(id, prompt, *index, dressed, sh);
        }
        let answer = match dressed {
            Ok(result) => jsonrpc::result_value(id, result),
            Err(reply) => reply.to_value(),
        };
        match pending.batch {
            Some(b) => self.batch_answered(b, answer, sh),
            None => self.send(answer, Some(pending.tag), sh),
        }
    }
}

/// The safety net under every tool that asks: before the person confirmed, a call only reads. A
/// write among its requests is never sent; the call answers that this is a bug. `version`: the
/// server's, to complete a 2026-07-28 answer (`is_stateless`).
fn wrote_first(tool: &ToolSpec, issued: &Issued, is_stateless: bool, version: &'static str) -> Option<Answer> {
    if issued.reads.iter().all(|(_, r)| r.method == crate::fetch::Method::Get) {
        return None;
    }
    let v = ToolResult::error(format!(
        "{} tried to write before the person confirmed. This is a bug in bb; nothing was written.",
        tool.name
    ))
    .into_value();
    Some(Answer::Now(Ok(if is_stateless { stateless::complete(v, version) } else { v })))
}

/// What a call answers when the person did not confirm: a plain result (their choice is no error),
/// marked so a view tells it as nothing changed; an unreadable answer is an error.
fn declined(refusal: String, answered: &Answered) -> Value {
    let mut result = if matches!(answered, Answered::Unreadable(_)) {
        ToolResult::error(refusal)
    } else {
        ToolResult::text(refusal)
    };
    let mut meta = Map::new();
    meta.insert("bb/confirmation".into(), Value::from("declined"));
    result.meta = Some(meta);
    result.into_value()
}
