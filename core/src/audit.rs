//! The audit trail's records as the core knows them ([`crate::Output::Audit`]): one per event of a
//! tool call (its outcome, a refusal before its tool runs, a confirmation asked and answered). The
//! core fills what it knows (the call, its arguments with secrets removed by key name and long text
//! cut, the client, the trace); the drive adds the person, the transport, the replica and the time,
//! scrubs every credential bb holds from the whole record, and hands the line to the application's
//! writer before it delivers the call's answer.
//!
//! Only a server configured with [`crate::ServerConfig::audit`] emits them.

use serde_json::{Map, Value};

/// What an argument whose name looks secret is replaced with.
pub const REMOVED: &str = "[removed]";

/// Strings in the arguments longer than this many bytes are cut, their length said.
pub const LONGEST_TEXT: usize = 2048;

/// One event of the audit trail, as the core knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEvent {
    /// `tool_call` (a call's outcome, or a refusal before its tool ran) or `confirmation` (bb asked
    /// the person, or the person answered).
    pub event: &'static str,
    /// The tool called.
    pub tool: String,
    /// `ok`, `error`, `denied`, `asked`, `answered` (a confirmation's answer), `cancelled`.
    pub status: &'static str,
    /// Why a call was denied (the write gate, read-only, the scope, a client that cannot confirm,
    /// the person's refusal, the audit trail failing).
    pub reason: Option<String>,
    /// The person's answer to a confirmation: `accept`, `decline`, `cancel`, `unticked`, `unreadable`,
    /// `no answer`.
    pub answer: Option<&'static str>,
    /// The sentence the model read, for an error or a denial.
    pub error: Option<String>,
    /// The JSON-RPC id of the call.
    pub call: Value,
    /// The `project` argument, after filling in.
    pub project: Option<String>,
    /// The `repo` argument, after filling in.
    pub repo: Option<String>,
    /// The `pr_id` argument.
    pub pr: Option<u64>,
    /// The call's arguments, secrets removed by key name and long text cut ([`redact`]).
    pub arguments: Value,
    /// From the call's start to this event, by the core's clock (`now_ms` of the inputs).
    pub duration_ms: u64,
    /// The client, as `clientInfo` names it: `name version`.
    pub client: String,
    /// The Bitbucket user the session learned from an answer (`X-AUSERNAME`), when it has.
    pub bitbucket_user: Option<String>,
    /// The W3C `traceparent` the request's `_meta` carried.
    pub trace: Option<String>,
}

impl AuditEvent {
    /// The record's fields as JSON, in the order a person reads them; the drive adds its own.
    pub fn fields(&self) -> Vec<(&'static str, Value)> {
        let mut f: Vec<(&'static str, Value)> = vec![("event", self.event.into()), ("tool", self.tool.clone().into())];
        let opt = |v: &Option<String>| v.clone().map_or(Value::Null, Value::from);
        f.push(("project", opt(&self.project)));
        f.push(("repo", opt(&self.repo)));
        f.push(("pr", self.pr.map_or(Value::Null, Value::from)));
        f.push(("status", self.status.into()));
        if let Some(reason) = &self.reason {
            f.push(("reason", reason.clone().into()));
        }
        if let Some(answer) = self.answer {
            f.push(("answer", answer.into()));
        }
        if let Some(error) = &self.error {
            f.push(("error", error.clone().into()));
        }
        f.push(("duration_ms", self.duration_ms.into()));
        f.push(("client", self.client.clone().into()));
        f.push(("call", self.call.clone()));
        if let Some(trace) = &self.trace {
            f.push(("trace", trace.clone().into()));
        }
        f.push(("arguments", self.arguments.clone()));
        f
    }
}

/// Whether an argument named `key` looks like it holds a secret: its name holds token, password,
/// secret, authorization, cookie or credential, or it is a key (`key`, `api_key`, `private_key`,
/// …; not `project_key`, which names a project).
pub fn secret_name(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    const WORDS: [&str; 8] =
        ["token", "password", "passwd", "secret", "authorization", "cookie", "credential", "apikey"];
    if WORDS.iter().any(|w| lower.contains(w)) {
        return true;
    }
    let parts: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).filter(|p| !p.is_empty()).collect();
    match parts.as_slice() {
        ["key"] | ["keys"] => true,
        [.., before, "key"] => {
            ["api", "access", "private", "secret", "signing", "ssh", "auth", "session"].contains(before)
        }
        _ => false,
    }
}

/// `value` with every member whose name looks secret ([`secret_name`]) replaced by [`REMOVED`], at
/// any depth, and every string longer than [`LONGEST_TEXT`] bytes cut, its length said.
pub fn redact(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(redact_map(map)),
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        Value::String(s) if s.len() > LONGEST_TEXT => {
            let mut end = LONGEST_TEXT;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            Value::from(format!("{}… [cut: {} bytes in all]", &s[..end], s.len()))
        }
        other => other.clone(),
    }
}

/// [`redact`] of an object's members.
pub fn redact_map(map: &Map<String, Value>) -> Map<String, Value> {
    map.iter().map(|(k, v)| (k.clone(), if secret_name(k) { Value::from(REMOVED) } else { redact(v) })).collect()
}

/// A W3C `traceparent` as sent, when it looks like one (hex digits and dashes, at most 128 bytes).
pub(crate) fn traceparent(params: &Value) -> Option<String> {
    let t = params.pointer("/_meta/traceparent")?.as_str()?;
    let ok = !t.is_empty() && t.len() <= 128 && t.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
    ok.then(|| t.to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn members_named_as_secrets_go_at_any_depth_and_long_text_is_cut() {
        let long = "é".repeat(3000);
        let args = json!({"project": "BB", "project_key": "BB", "token": "t0k", "nested": [{"Authorization": "Bearer x",
            "apiKey": "k", "private_key": "p", "cookie_jar": {"a": 1}, "text": long}], "accessToken": "y", "key": "z"});
        let out = redact(&args);
        assert_eq!(out["project"], "BB");
        assert_eq!(out["project_key"], "BB");
        for p in [
            "/token",
            "/nested/0/Authorization",
            "/nested/0/apiKey",
            "/nested/0/private_key",
            "/nested/0/cookie_jar",
            "/accessToken",
            "/key",
        ] {
            assert_eq!(out.pointer(p).unwrap(), REMOVED, "{p}");
        }
        let text = out.pointer("/nested/0/text").unwrap().as_str().unwrap();
        assert!(text.len() < 2100 && text.ends_with("[cut: 6000 bytes in all]"), "{}", text.len());
    }

    #[test]
    fn a_traceparent_is_taken_only_when_it_looks_like_one() {
        let t = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert_eq!(traceparent(&json!({"_meta": {"traceparent": t}})).as_deref(), Some(t));
        assert_eq!(traceparent(&json!({"_meta": {"traceparent": "x\ny"}})), None);
        assert_eq!(traceparent(&json!({})), None);
    }
}
