//! How a tool call runs: it answers at once, or it becomes a plan that asks the shell for
//! Bitbucket requests and answers when the responses it needs have come back.
//!
//! ```text
//!   start(args, cx) ──▶ Step::Done(result)                      answered at once
//!                   └─▶ Step::Wait(plan)  + cx.fetch(..) × n     the session emits Output::Fetch
//!   plan.resume(fetched, cx) ──▶ None                            still waiting (may fetch more)
//!                            └─▶ Some(result)                    answered; the plan is dropped
//! ```
//!
//! A cancelled call's plan is dropped; responses that arrive for it afterwards are ignored.

use serde_json::{Map, Value, json};

/// An HTTP method bb uses against Bitbucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Method {
    /// GET: reads; safe to retry.
    Get,
    /// POST: creates; never retried blindly.
    Post,
    /// PUT: updates.
    Put,
    /// DELETE: removes.
    Delete,
}

impl Method {
    /// The method's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
        }
    }
}

/// One Bitbucket request a plan needs. The shell adds the base URL, credentials and timeouts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchRequest {
    /// The method.
    pub method: Method,
    /// The path below the server's base URL, starting with `/` (e.g. `/rest/api/latest/...`).
    pub path: String,
    /// Query parameters, in order.
    pub query: Vec<(String, String)>,
    /// A JSON body, for writes.
    pub body: Option<Value>,
}

impl FetchRequest {
    /// A GET of `path` with `query`.
    pub fn get(path: impl Into<String>, query: Vec<(String, String)>) -> Self {
        FetchRequest { method: Method::Get, path: path.into(), query, body: None }
    }
}

/// The outcome of a Bitbucket request, as the shell observed it (after the shell's retries).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchOutcome {
    /// Bitbucket answered (any status).
    Response(FetchResponse),
    /// No (complete) answer.
    Failed(FetchError),
}

impl FetchOutcome {
    /// A response with this status and body and no `Retry-After`.
    pub fn response(status: u16, body: impl Into<Vec<u8>>) -> FetchOutcome {
        FetchOutcome::Response(FetchResponse { status, body: body.into(), retry_after_s: None, user: None })
    }

    /// A failure of this kind, with a detail that names no secret.
    pub fn failed(kind: FetchErrorKind, detail: impl Into<String>) -> FetchOutcome {
        FetchOutcome::Failed(FetchError { kind, detail: detail.into(), may_have_arrived: false })
    }
}

/// A complete HTTP answer from Bitbucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchResponse {
    /// The HTTP status.
    pub status: u16,
    /// The whole body.
    pub body: Vec<u8>,
    /// `Retry-After` in seconds, when Bitbucket sent one (429, 503).
    pub retry_after_s: Option<u64>,
    /// The slug of the user Bitbucket authenticated, from the `X-AUSERNAME` header of an
    /// authenticated response (reference/bitbucket-dc.md "Users": [rec in third-party clients;
    /// assumed for 9.x]). The session remembers it for tools that act as the current user.
    pub user: Option<String>,
}

/// Why a Bitbucket request got no complete answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchError {
    /// The kind of failure.
    pub kind: FetchErrorKind,
    /// What happened, in words that name no secret (no token, no password, no Authorization header).
    pub detail: String,
    /// Whether the request may have reached Bitbucket (it was sent, then the answer failed):
    /// a write in this state has an unknown outcome and must not be retried blindly.
    pub may_have_arrived: bool,
}

/// The kinds of [`FetchError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchErrorKind {
    /// bb has no Bitbucket server configured.
    NotConfigured,
    /// No connection: name resolution, refused, reset, proxy.
    Unreachable,
    /// TLS failed: an untrusted certificate, or a client certificate refused.
    Tls,
    /// No answer in time.
    Timeout,
    /// The answer broke off, or was larger than bb accepts.
    BrokenResponse,
}

/// Identifies one outstanding Bitbucket request across the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticket(pub u64);

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
}

impl ToolResult {
    /// A plain text answer.
    pub fn text(text: impl Into<String>) -> Self {
        ToolResult { text: vec![text.into()], structured: None, is_error: false, meta: None }
    }

    /// An error the model can act on (`isError: true`).
    pub fn error(text: impl Into<String>) -> Self {
        ToolResult { is_error: true, ..ToolResult::text(text) }
    }

    /// The result as MCP JSON.
    pub fn to_value(&self) -> Value {
        let content: Vec<Value> = self.text.iter().map(|t| json!({"type": "text", "text": t})).collect();
        let mut out = Map::new();
        out.insert("content".into(), Value::Array(content));
        if let Some(s) = &self.structured {
            out.insert("structuredContent".into(), s.clone());
        }
        if self.is_error {
            out.insert("isError".into(), Value::Bool(true));
        }
        if let Some(meta) = &self.meta {
            out.insert("_meta".into(), Value::Object(meta.clone()));
        }
        Value::Object(out)
    }
}

/// What a plan may ask of the session while it runs.
#[derive(Debug, Default)]
pub struct PlanContext {
    pub(crate) wanted: Vec<FetchRequest>,
    pub(crate) issued: Vec<Ticket>,
    pub(crate) next_ticket: u64,
}

impl PlanContext {
    /// Asks for a Bitbucket request; its outcome comes back to `Plan::resume` with this ticket.
    pub fn fetch(&mut self, request: FetchRequest) -> Ticket {
        let ticket = Ticket(self.next_ticket);
        self.next_ticket += 1;
        self.wanted.push(request);
        self.issued.push(ticket);
        ticket
    }
}

/// A tool call in progress.
pub trait Plan: Send + std::fmt::Debug {
    /// Takes one fetched response. `Some` answers the call; `None` waits for more.
    fn resume(&mut self, ticket: Ticket, outcome: FetchOutcome, cx: &mut PlanContext) -> Option<ToolResult>;
}

/// How a tool call starts.
#[derive(Debug)]
pub enum Step {
    /// The answer is ready.
    Done(ToolResult),
    /// The answer waits on the requests the start asked for.
    Wait(Box<dyn Plan>),
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

    #[test]
    fn tickets_are_issued_in_order() {
        let mut cx = PlanContext::default();
        let a = cx.fetch(FetchRequest::get("/a", vec![]));
        let b = cx.fetch(FetchRequest::get("/b", vec![]));
        assert!(a < b);
        assert_eq!(cx.wanted.len(), 2);
    }
}
