//! Tool calls: a call's arguments are checked, its tool starts, and it answers at once or becomes a
//! plan ([`crate::plan`]) that waits on reads, jobs and steps of CPU work filed in the table of
//! calls' work ([`crate::work`]). Each outcome resumes the plan; when the plan answers, whatever the
//! call still waits on is withdrawn and the answer goes to the client (or into its batch).

use serde_json::{Map, Value};

use super::{Answer, Session, truncate};
use crate::fetch::{FetchOutcome, Ticket};
use crate::highlight::Highlighted;
use crate::jsonrpc::{self, ErrorReply, INVALID_PARAMS, Id};
use crate::logging::Level;
use crate::plan::{Issued, Step, ToolResult, Waiting};
use crate::protocol::ClientProfile;
use crate::shared::Shared;
use crate::stateless;
use crate::tool::{Call, Role};
use crate::work::Kind;

/// What a large call is answered when the process has no room for it.
pub(crate) const BUSY: &str = "bb is busy: other large diffs hold the memory it sets aside for them (see --memory-budget). \
Try again in a few seconds, or ask for fewer files.";

/// A tool call waiting on its work.
#[derive(Debug)]
pub(super) struct Pending {
    plan: Box<dyn Waiting>,
    /// The tag of the input that brought it.
    pub(super) tag: u64,
    /// The batch it belongs to, if any.
    pub(super) batch: Option<u64>,
    /// A 2026-07-28 call: its answer is completed ([`stateless::complete`]).
    stateless: bool,
}

impl Session {
    /// Starts a tool call. `stateless` is the client a 2026-07-28 request declared; `None` for the
    /// session's own.
    pub(super) fn tools_call(
        &mut self,
        id: &Id,
        params: &Value,
        stateless: Option<ClientProfile>,
        tag: u64,
        batch: Option<u64>,
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
        let exposed = if is_stateless { std::sync::Arc::clone(&sh.config.exposed) } else { self.exposed(sh) };
        // A tool only views call is no tool for a client that renders none.
        let apps = stateless.as_ref().unwrap_or(&self.client).renders_views;
        let Some(tool) = exposed.get_for(name, apps) else {
            return Answer::Now(Err(ErrorReply::new(
                Some(id.clone()),
                INVALID_PARAMS,
                format!("Unknown tool: `{}`. Call tools/list for the tools this server exposes.", truncate(name, 100)),
            )));
        };
        let args = params.get("arguments");
        if tool.role == Role::Session {
            return finish(self.enable_toolset(args, tag, sh));
        }
        if let Err(why) = crate::args::validate(args, &exposed.checked_schema(tool)) {
            return finish(ToolResult::error(format!("Invalid arguments for {}: {why}", tool.name)));
        }
        let empty = Map::new();
        let args = args.and_then(Value::as_object).unwrap_or(&empty);
        if let Err(why) = crate::args::check_places(args) {
            return finish(ToolResult::error(format!("Invalid arguments for {}: {why}", tool.name)));
        }
        let client = stateless.unwrap_or_else(|| self.client.clone());
        let call = Call {
            client: &client,
            exposed: &exposed,
            now_ms: sh.now_ms,
            bitbucket_user: self.bitbucket_user.as_deref(),
            base_url: sh.config.base_url.as_deref(),
            highlight_templates: sh.config.highlight_templates,
        };
        match (tool.start)(args, &call) {
            Step::Done(result) => finish(result),
            Step::Wait(mut plan) => {
                let mut desk = sh.desk();
                plan.begin(&mut desk);
                let issued = desk.take();
                if issued.reads.is_empty() {
                    // A plan that asked for nothing can never be resumed: that is a bug in the tool.
                    return finish(ToolResult::error(format!(
                        "{} could not run: it waited on nothing. This is a bug in bb.",
                        tool.name
                    )));
                }
                self.log(
                    Level::Debug,
                    format!("{} waits on {} Bitbucket request(s)", tool.name, issued.reads.len()),
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
                self.pending.insert(id.clone(), Pending { plan, tag, batch, stateless: is_stateless });
                Answer::Later
            }
        }
    }

    /// The shell has no room for a large call now: it answers so, and nothing of it is read.
    pub(crate) fn refused_room(&mut self, call: Id, sh: &mut Shared) {
        let Some(pending) = self.pending.remove(&call) else { return };
        sh.work.cancel_call(self.id, &call, &mut sh.out);
        let tag = pending.tag;
        let result = ToolResult::error(BUSY);
        self.answer_later(&call, pending, result.into_value(), sh);
        self.settle(tag, sh);
    }

    /// Takes the outcome of a read a call's plan asked for.
    pub(crate) fn fetched(&mut self, call: Id, ticket: Ticket, outcome: FetchOutcome, sh: &mut Shared) {
        if let FetchOutcome::Response(r) = &outcome
            && let Some(user) = &r.user
            && self.bitbucket_user.as_ref() != Some(user)
        {
            self.bitbucket_user = Some(user.clone());
        }
        let Some(mut pending) = self.pending.remove(&call) else { return };
        let mut desk = sh.desk();
        let answer = pending.plan.resume(ticket, outcome, &mut desk);
        let issued = desk.take();
        self.after_step(call, pending, answer, issued, sh);
    }

    /// Takes the outcome of a job a call's plan asked for.
    pub(crate) fn computed(&mut self, call: Id, ticket: Ticket, done: Highlighted, sh: &mut Shared) {
        let Some(mut pending) = self.pending.remove(&call) else { return };
        let mut desk = sh.desk();
        let answer = pending.plan.computed(ticket, done, &mut desk);
        let issued = desk.take();
        self.after_step(call, pending, answer, issued, sh);
    }

    /// Takes a step of a call's CPU work (`last` once the shell's deadline has passed).
    pub(crate) fn worked(&mut self, call: Id, last: bool, sh: &mut Shared) {
        let Some(mut pending) = self.pending.remove(&call) else { return };
        let mut desk = sh.desk();
        let answer = pending.plan.work(last, &mut desk);
        let issued = desk.take();
        self.after_step(call, pending, answer, issued, sh);
    }

    /// After a plan's step: files the reads and jobs it asked for, asks the shell for a step of work
    /// when the plan wants one, and answers the call when the plan did (withdrawing what it no longer
    /// needs).
    fn after_step(
        &mut self,
        id: Id,
        mut pending: Pending,
        answer: Option<ToolResult>,
        issued: Issued,
        sh: &mut Shared,
    ) {
        for (ticket, request) in issued.reads {
            sh.work.file_read(self.id, &id, ticket, request, &mut sh.out);
        }
        for (ticket, job) in issued.jobs {
            sh.work.file_job(self.id, &id, ticket, job, &mut sh.out);
        }
        // While a call waits on jobs its steps ticket stays: it is the call's deadline.
        let on_jobs = sh.work.ticket_of(self.id, &id, Kind::Job).is_some();
        if answer.is_none() && pending.plan.wants_work() {
            let deadline_ms = sh.now_ms.saturating_add(sh.config.highlight_deadline_ms);
            sh.work.ask_step(self.id, &id, deadline_ms, &mut sh.out);
        } else if answer.is_some() || !on_jobs {
            sh.work.cancel_steps(self.id, &id, &mut sh.out);
        }
        let tag = pending.tag;
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
                self.pending.insert(id, pending);
                return;
            }
        }
        self.settle(tag, sh);
    }

    fn answer_later(&mut self, id: &Id, pending: Pending, result: Value, sh: &mut Shared) {
        let result = if pending.stateless { stateless::complete(result, sh.config.version) } else { result };
        let answer = jsonrpc::result_value(id, result);
        match pending.batch {
            Some(b) => self.batch_answered(b, answer, sh),
            None => self.send(answer, Some(pending.tag), sh),
        }
    }
}
