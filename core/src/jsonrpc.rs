//! JSON-RPC 2.0 framing: what one line from the client is, and how an answer is written.
//!
//! Decoding never panics and never trusts its input: a line that is not JSON is a parse error
//! (-32700), JSON that is not a JSON-RPC message is an invalid request (-32600), and both are
//! answered with `id: null` unless the message carried an id we could read. JSON that holds a value
//! no [`Value`] can (a number beyond `f64`: `1e400`) is a request bb cannot read: invalid params
//! (-32602) under its id when its `id` and `method` can be read, else a parse error.
//!
//! ```text
//!   bytes ──decode_line──▶ Decoded::Single(Message)      one message
//!                        ├▶ Decoded::Batch(Vec<..>)      a JSON array (only 2025-03-26 accepts it)
//!                        ├▶ Decoded::Invalid(ErrorReply) answer it and move on
//!                        └▶ Decoded::Blank               an empty line: nothing to do
//! ```

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

/// Parse error: the bytes are not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON is not a valid JSON-RPC request.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters (also: unknown tool, bad cursor).
pub const INVALID_PARAMS: i64 = -32602;
/// Internal error: bb could not do what was asked (a resource Bitbucket could not be read for).
pub const INTERNAL_ERROR: i64 = -32603;
/// MCP: the resource does not exist (2025-11-25 and earlier; 2026-07-28 uses [`INVALID_PARAMS`]).
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// MCP 2026-07-28: the request's protocol version is one the server does not serve that way.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// 2026-07-28's `MissingRequiredClientCapabilityError`: the request needs a capability its client did
/// not declare (schema `MISSING_REQUIRED_CLIENT_CAPABILITY`).
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;

/// A request id: a string or an integer, never null (MCP narrows JSON-RPC here).
///
/// The id is kept as the JSON value it arrived as, so the answer echoes it byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Id(IdRepr);

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum IdRepr {
    Int(i128),
    Str(String),
}

impl Id {
    /// Reads an id from a JSON value; `None` for null, fractions, booleans, objects and arrays.
    pub fn from_value(value: &Value) -> Option<Id> {
        match value {
            Value::String(s) => Some(Id(IdRepr::Str(s.clone()))),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Some(Id(IdRepr::Int(i128::from(i))))
                } else {
                    n.as_u64().map(|u| Id(IdRepr::Int(i128::from(u))))
                }
            }
            _ => None,
        }
    }

    /// The id as JSON, exactly as the client sent it.
    pub fn to_value(&self) -> Value {
        match &self.0 {
            IdRepr::Str(s) => Value::String(s.clone()),
            IdRepr::Int(i) => {
                if let Ok(v) = i64::try_from(*i) {
                    Value::from(v)
                } else if let Ok(v) = u64::try_from(*i) {
                    Value::from(v)
                } else {
                    // Unreachable: ids are built only from i64 or u64.
                    Value::Null
                }
            }
        }
    }
}

impl std::fmt::Display for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            IdRepr::Int(i) => write!(f, "{i}"),
            IdRepr::Str(s) => write!(f, "{s:?}"),
        }
    }
}

/// One decoded JSON-RPC message from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request: it must be answered exactly once (unless cancelled).
    Request {
        /// The id to answer under.
        id: Id,
        method: String,
        /// The params, when present (an object or an array).
        params: Option<Value>,
    },
    /// A notification: never answered.
    Notification {
        method: String,
        /// The params, when present.
        params: Option<Value>,
    },
    /// A response to a request the server sent (bb's only one: `elicitation/create`).
    Response {
        /// The id it answers.
        id: Id,
        /// Its `result`, or its `error` object.
        outcome: Result<Value, Value>,
    },
}

/// An error answer that must be sent: the id (null when unreadable) and the error object.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorReply {
    /// The id to answer under; `None` is written as `null`.
    pub id: Option<Id>,
    /// A JSON-RPC error code: one of this module's constants.
    pub code: i64,
    /// A sentence a person can act on.
    pub message: String,
    /// Optional structured detail.
    pub data: Option<Value>,
}

impl ErrorReply {
    /// An error with no data.
    pub fn new(id: Option<Id>, code: i64, message: impl Into<String>) -> Self {
        ErrorReply { id, code, message: message.into(), data: None }
    }

    /// The answer as a JSON value.
    pub fn to_value(&self) -> Value {
        let mut error = Map::new();
        error.insert("code".into(), Value::from(self.code));
        error.insert("message".into(), Value::String(self.message.clone()));
        if let Some(data) = &self.data {
            error.insert("data".into(), data.clone());
        }
        json!({
            "jsonrpc": "2.0",
            "id": self.id.as_ref().map_or(Value::Null, Id::to_value),
            "error": Value::Object(error),
        })
    }
}

/// What one line of input turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    /// Nothing but whitespace: ignored, as stdio clients may send keep-alive newlines.
    Blank,
    /// One message.
    Single(Message),
    /// A JSON array: each element decoded on its own. Empty arrays never get here.
    Batch(Vec<Result<Message, ErrorReply>>),
    /// The line must be answered with this error and nothing else.
    Invalid(ErrorReply),
}

/// Decodes one line (one JSON-RPC message or batch) without ever panicking.
pub fn decode_line(bytes: &[u8]) -> Decoded {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Decoded::Blank;
    }
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => return unreadable(bytes, e),
    };
    match value {
        Value::Array(items) if items.is_empty() => {
            Decoded::Invalid(ErrorReply::new(None, INVALID_REQUEST, "Invalid request: an empty batch."))
        }
        Value::Array(items) => Decoded::Batch(items.into_iter().map(decode_value).collect()),
        other => match decode_value(other) {
            Ok(message) => Decoded::Single(message),
            Err(reply) => Decoded::Invalid(reply),
        },
    }
}

/// The answer to bytes serde_json would not read as a [`Value`]. JSON that is well formed but holds what
/// no `Value` can (a number beyond `f64`, such as `1e400`) is read again, leniently, message by message:
/// a request whose `id` and `method` can be read is answered invalid params under its id (each of a
/// batch's on its own, the rest decoded as usual); anything else is a parse error with a null id.
fn unreadable(bytes: &[u8], e: serde_json::Error) -> Decoded {
    let parse_error =
        || ErrorReply::new(None, PARSE_ERROR, format!("Parse error: the message is not valid JSON ({e})."));
    if let Ok(items) = serde_json::from_slice::<Vec<&RawValue>>(bytes)
        && !items.is_empty()
    {
        return Decoded::Batch(
            items
                .into_iter()
                .map(|raw| match serde_json::from_str::<Value>(raw.get()) {
                    Ok(v) => decode_value(v),
                    Err(e) => Err(lenient(raw.get(), &e).unwrap_or_else(|| {
                        ErrorReply::new(None, PARSE_ERROR, format!("Parse error: the message is not valid JSON ({e})."))
                    })),
                })
                .collect(),
        );
    }
    Decoded::Invalid(std::str::from_utf8(bytes).ok().and_then(|text| lenient(text, &e)).unwrap_or_else(parse_error))
}

/// Invalid params under the request's id, when `text` is one JSON-RPC request whose `id` and `method`
/// can be read though the whole of it cannot (`e` says why).
fn lenient(text: &str, e: &serde_json::Error) -> Option<ErrorReply> {
    /// The envelope alone; every other member is skipped unread.
    #[derive(serde::Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        method: Option<String>,
    }
    let envelope: Envelope<'_> = serde_json::from_str(text).ok()?;
    envelope.method?;
    let id = serde_json::from_str::<Value>(envelope.id?.get()).ok().as_ref().and_then(Id::from_value)?;
    Some(ErrorReply::new(
        Some(id),
        INVALID_PARAMS,
        format!(
            "Invalid params: the request holds a value bb cannot read ({e}); send numbers within the range of a 64-bit float."
        ),
    ))
}

/// Decodes one JSON value as a message (not a batch).
pub fn decode_value(value: Value) -> Result<Message, ErrorReply> {
    let Value::Object(mut object) = value else {
        return Err(ErrorReply::new(None, INVALID_REQUEST, "Invalid request: a JSON-RPC message is a JSON object."));
    };
    // The id is read first so that every later complaint can be answered under it.
    let id = match object.get("id") {
        None => None,
        Some(raw) => match Id::from_value(raw) {
            Some(id) => Some(id),
            None => {
                return Err(ErrorReply::new(
                    None,
                    INVALID_REQUEST,
                    "Invalid request: `id` must be a string or an integer.",
                ));
            }
        },
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(ErrorReply::new(id, INVALID_REQUEST, "Invalid request: `jsonrpc` must be \"2.0\"."));
    }
    let params = object.remove("params");
    if let Some(p) = &params
        && !(p.is_object() || p.is_array())
    {
        return Err(ErrorReply::new(id, INVALID_REQUEST, "Invalid request: `params` must be an object or an array."));
    }
    match object.remove("method") {
        Some(Value::String(method)) => Ok(match id {
            Some(id) => Message::Request { id, method, params },
            None => Message::Notification { method, params },
        }),
        Some(_) => Err(ErrorReply::new(id, INVALID_REQUEST, "Invalid request: `method` must be a string.")),
        None => match id {
            Some(id) if object.contains_key("result") || object.contains_key("error") => {
                let outcome = match object.remove("result") {
                    Some(result) => Ok(result),
                    None => Err(object.remove("error").unwrap_or(Value::Null)),
                };
                Ok(Message::Response { id, outcome })
            }
            _ => Err(ErrorReply::new(
                id,
                INVALID_REQUEST,
                "Invalid request: a message needs a `method` (or, as a response, a `result` or an `error`).",
            )),
        },
    }
}

/// A successful answer as a JSON value.
pub fn result_value(id: &Id, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id.to_value(), "result": result })
}

/// A notification from the server as a JSON value.
pub fn notification_value(method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "method": method, "params": params })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    fn invalid(line: &str) -> ErrorReply {
        match decode_line(line.as_bytes()) {
            Decoded::Invalid(e) => e,
            other => panic!("expected an error for {line:?}, got {other:?}"),
        }
    }

    #[test]
    fn text_that_is_not_json_is_a_parse_error_with_a_null_id() {
        let e = invalid("{\"jsonrpc\":\"2.0\",");
        assert_eq!(e.code, PARSE_ERROR);
        assert_eq!(e.id, None);
        assert_eq!(e.to_value()["id"], Value::Null);
    }

    #[test]
    fn invalid_utf8_is_a_parse_error() {
        assert!(matches!(decode_line(&[0xff, 0xfe, b'{']), Decoded::Invalid(e) if e.code == PARSE_ERROR));
    }

    #[test]
    fn json_that_is_not_an_object_is_an_invalid_request() {
        assert_eq!(invalid("42").code, INVALID_REQUEST);
        assert_eq!(invalid("\"ping\"").code, INVALID_REQUEST);
        assert_eq!(invalid("[]").code, INVALID_REQUEST);
    }

    #[test]
    fn a_wrong_jsonrpc_version_is_answered_under_the_id_it_carried() {
        let e = invalid(r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#);
        assert_eq!(e.code, INVALID_REQUEST);
        assert_eq!(e.id, Some(Id::from_value(&json!(7)).unwrap()));
    }

    #[test]
    fn null_fractional_and_boolean_ids_are_invalid() {
        for id in ["null", "1.5", "true", "{}", "[1]"] {
            let e = invalid(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
            assert_eq!(e.code, INVALID_REQUEST, "id {id}");
            assert_eq!(e.id, None);
        }
    }

    #[test]
    fn scalar_params_are_invalid() {
        assert_eq!(invalid(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":3}"#).code, INVALID_REQUEST);
    }

    #[test]
    fn requests_notifications_and_responses_are_told_apart() {
        assert!(matches!(
            decode_line(br#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#),
            Decoded::Single(Message::Request { .. })
        ));
        assert!(matches!(
            decode_line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Decoded::Single(Message::Notification { .. })
        ));
        assert!(matches!(
            decode_line(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
            Decoded::Single(Message::Response { .. })
        ));
    }

    #[test]
    fn ids_are_echoed_exactly_as_sent() {
        for raw in ["0", "-1", "9007199254740993", "18446744073709551615", "\"x\"", "\"\""] {
            let value: Value = serde_json::from_str(raw).unwrap();
            assert_eq!(Id::from_value(&value).unwrap().to_value(), value);
        }
    }

    #[test]
    fn whitespace_only_lines_are_blank() {
        assert_eq!(decode_line(b"  \r"), Decoded::Blank);
        assert_eq!(decode_line(b""), Decoded::Blank);
    }

    #[test]
    fn a_number_beyond_f64_in_a_request_is_invalid_params_under_its_id() {
        let e =
            invalid(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"n":1e400}}}"#);
        assert_eq!((e.code, e.id), (INVALID_PARAMS, Id::from_value(&json!(7))));
        assert!(e.message.starts_with("Invalid params: "), "{}", e.message);
        let e = invalid(r#"{"params":{"n":-1e400},"method":"tools/call","id":"a","jsonrpc":"2.0"}"#);
        assert_eq!((e.code, e.id), (INVALID_PARAMS, Id::from_value(&json!("a"))));
    }

    #[test]
    fn a_number_beyond_f64_where_no_id_can_be_read_is_still_a_parse_error() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1e400,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"n":1e400}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n":1e400}"#,
        ] {
            let e = invalid(line);
            assert_eq!((e.code, e.id), (PARSE_ERROR, None), "{line}");
        }
    }

    #[test]
    fn a_batch_answers_a_number_beyond_f64_under_its_element_s_id_and_decodes_the_rest() {
        let line = br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"n":1e400}}]"#;
        let Decoded::Batch(items) = decode_line(line) else { panic!("expected a batch") };
        assert!(matches!(&items[0], Ok(Message::Request { method, .. }) if method == "ping"));
        let e = items[1].as_ref().unwrap_err();
        assert_eq!((e.code, e.id.clone()), (INVALID_PARAMS, Id::from_value(&json!(2))));
    }

    #[test]
    fn a_batch_decodes_each_element_on_its_own() {
        let Decoded::Batch(items) = decode_line(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}, 5]"#) else {
            panic!("expected a batch");
        };
        assert!(items[0].is_ok());
        assert_eq!(items[1].as_ref().unwrap_err().code, INVALID_REQUEST);
    }
}
