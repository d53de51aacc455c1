//! The session's side of the audit trail ([`crate::audit`]): each tool call is noted when its tool
//! is known, and its record is emitted ([`Output::Audit`]) just before its answer is sent, so the
//! drive can hold the answer until the record is queued. A refusal before the tool runs
//! ([`Session::denied`]), a confirmation asked and answered, and a call cancelled are records too.

use serde_json::{Map, Value};

use super::Session;
use crate::audit::{self, AuditEvent};
use crate::confirm::Answered;
use crate::contract::Output;
use crate::jsonrpc::Id;
use crate::protocol::ClientProfile;
use crate::shared::Shared;

/// A tool call the trail will record when it is answered.
#[derive(Debug)]
pub(super) struct Started {
    tool: String,
    args: Map<String, Value>,
    started_ms: u64,
    trace: Option<String>,
    client: String,
    /// Why it was denied, when a check refused it ([`Session::denied`]).
    denied: Option<String>,
}

/// The words of a person's answer, for the record.
pub(super) fn answer_word(answered: &Answered) -> &'static str {
    match answered {
        Answered::Yes => "accept",
        Answered::Declined => "decline",
        Answered::Cancelled => "cancel",
        Answered::Unticked => "unticked",
        Answered::Unreadable(_) => "unreadable",
    }
}

fn client_words(client: &ClientProfile) -> String {
    match (client.name.is_empty(), client.version.is_empty()) {
        (true, _) => "unnamed".into(),
        (false, true) => client.name.clone(),
        (false, false) => format!("{} {}", client.name, client.version),
    }
}

impl Session {
    /// Notes a tool call the trail will record (when the server keeps one).
    pub(super) fn audit_start(
        &mut self,
        id: &Id,
        tool: &str,
        params: &Value,
        client: Option<&ClientProfile>,
        sh: &Shared,
    ) {
        if !sh.config.audit {
            return;
        }
        let args = params.get("arguments").and_then(Value::as_object).cloned().unwrap_or_default();
        let started = Started {
            tool: tool.to_owned(),
            args,
            started_ms: sh.now_ms,
            trace: audit::traceparent(params),
            client: client_words(client.unwrap_or(&self.client)),
            denied: None,
        };
        self.calls.insert(id.clone(), started);
    }

    /// The call's arguments as its tool runs them (after filling in), for its record.
    pub(super) fn audit_args(&mut self, id: &Id, args: &Map<String, Value>) {
        if let Some(started) = self.calls.get_mut(id) {
            started.args = args.clone();
        }
    }

    /// Records that call `id` of `tool` was refused before its tool ran, and why (the write gate,
    /// read-only, the scope, a client that cannot confirm). When the call was noted, its record
    /// goes with its answer (and carries the sentence the model read); otherwise it is emitted now,
    /// with `args`. Either way, one record per call.
    pub(crate) fn denied(
        &mut self,
        id: &Id,
        tool: &str,
        args: Option<&Map<String, Value>>,
        reason: &str,
        sh: &mut Shared,
    ) {
        if !sh.config.audit {
            return;
        }
        if let Some(started) = self.calls.get_mut(id) {
            started.denied = Some(reason.to_owned());
            if let Some(args) = args {
                started.args = args.clone();
            }
            return;
        }
        let started = Started {
            tool: tool.to_owned(),
            args: args.cloned().unwrap_or_default(),
            started_ms: sh.now_ms,
            trace: None,
            client: client_words(&self.client),
            denied: Some(reason.to_owned()),
        };
        let record = self.record(id, &started, "tool_call", "denied", sh);
        self.emit(AuditEvent { reason: started.denied, ..record }, sh);
    }

    /// Records a confirmation of call `id`: asked (`answer` `None`) or answered.
    pub(super) fn audit_confirmation(&mut self, id: &Id, answer: Option<&'static str>, sh: &mut Shared) {
        let Some(started) = self.calls.get(id) else { return };
        let status = if answer.is_some() { "answered" } else { "asked" };
        let record = AuditEvent { answer, ..self.record(id, started, "confirmation", status, sh) };
        self.emit(record, sh);
    }

    /// Records call `id` ended without an answer (cancelled by the client, or its session closed).
    pub(super) fn audit_cancelled(&mut self, id: &Id, reason: &str, sh: &mut Shared) {
        let Some(started) = self.calls.remove(id) else { return };
        let record = self.record(id, &started, "tool_call", "cancelled", sh);
        self.emit(AuditEvent { reason: Some(reason.to_owned()), ..record }, sh);
    }

    /// Records the outcome of the call `message` answers, if it is a tool call the trail waits on.
    /// Called just before the answer is sent (or added to its batch).
    pub(super) fn audit_answer(&mut self, message: &Value, sh: &mut Shared) {
        if self.calls.is_empty() {
            return;
        }
        if let Value::Array(items) = message {
            for item in items {
                self.audit_answer(item, sh);
            }
            return;
        }
        if message.get("method").is_some() {
            return;
        }
        let Some(id) = message.get("id").and_then(Id::from_value) else { return };
        let Some(started) = self.calls.remove(&id) else { return };
        let result = message.get("result");
        if result.and_then(|r| r.get("resultType")).and_then(Value::as_str) == Some("input_required") {
            // The confirmation asked is this answer's record; the retry is a call of its own.
            return;
        }
        let said = match (message.get("error"), result) {
            (Some(error), _) => Some(error.get("message").and_then(Value::as_str).unwrap_or("an error").to_owned()),
            (None, Some(r)) if r.get("isError") == Some(&Value::Bool(true)) => Some(text_of(r)),
            _ => None,
        };
        let declined = result.and_then(|r| r.pointer("/_meta/bb~1confirmation")).is_some_and(|d| d == "declined");
        let (status, reason, error) = match (&started.denied, declined, said) {
            (Some(why), _, said) => ("denied", Some(why.clone()), said.or_else(|| result.map(text_of))),
            (None, true, said) => {
                ("denied", Some("the person did not confirm".to_owned()), said.or_else(|| result.map(text_of)))
            }
            (None, false, Some(said)) => ("error", None, Some(said)),
            (None, false, None) => ("ok", None, None),
        };
        let record = self.record(&id, &started, "tool_call", status, sh);
        self.emit(AuditEvent { reason, error, ..record }, sh);
    }

    fn record(&self, id: &Id, started: &Started, event: &'static str, status: &'static str, sh: &Shared) -> AuditEvent {
        let text = |k: &str| started.args.get(k).and_then(Value::as_str).map(str::to_owned);
        AuditEvent {
            event,
            tool: started.tool.clone(),
            status,
            reason: None,
            answer: None,
            error: None,
            call: id.to_value(),
            project: text("project"),
            repo: text("repo"),
            pr: started.args.get("pr_id").and_then(Value::as_u64),
            arguments: Value::Object(audit::redact_map(&started.args)),
            duration_ms: sh.now_ms.saturating_sub(started.started_ms),
            client: started.client.clone(),
            bitbucket_user: self.bitbucket_user.clone(),
            trace: started.trace.clone(),
        }
    }

    fn emit(&self, record: AuditEvent, sh: &mut Shared) {
        sh.out.push_back(Output::Audit { session: self.id, record: Box::new(record) });
    }
}

/// The text a tool's result says (its text blocks, joined).
fn text_of(result: &Value) -> String {
    let blocks = result.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let text: Vec<&str> = blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect();
    super::truncate(&text.join("\n"), 1000)
}
