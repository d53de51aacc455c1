//! Streamable HTTP in MCP 2026-07-28: a POST whose body names 2026-07-28 in `_meta` (or whose
//! `MCP-Protocol-Version` header does) is answered on its own, with no `Mcp-Session-Id` minted,
//! read or echoed, so any bb process behind a load balancer can answer it.
//!
//! ```text
//!   POST ─▶ headers checked against the body ─▶ person's token vouched ─▶ a one-request core session
//!           (MCP-Protocol-Version, Mcp-Method,   (per-person mode)         closed when the answer is
//!            Mcp-Name) ─✗▶ 400 HeaderMismatch                              sent or its stream dropped
//! ```
//!
//! Closing the answer's stream cancels the request (the spec's cancellation for this era): the
//! one-request session closes and its Bitbucket reads stop. The modern errors are `400`, an unknown
//! method `404`, each with the JSON-RPC error the core wrote.

use hyper::header::HeaderMap;
use hyper::{Response, StatusCode};
use serde_json::{Value, json};

use crate::reply::{self, Reply};

/// The revision whose requests need no session.
pub(crate) const VERSION: &str = "2026-07-28";
const PROTOCOL_VERSION: &str = "mcp-protocol-version";
const MCP_METHOD: &str = "mcp-method";
const MCP_NAME: &str = "mcp-name";
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// MCP 2026-07-28's `HeaderMismatch`.
const HEADER_MISMATCH: i64 = -32020;

/// Whether a POST belongs to the stateless era: its header says 2026-07-28, or its body's `_meta`
/// names a revision (a handshake session never needs one there), or it is `server/discover`.
pub(crate) fn is_stateless(h: &HeaderMap, body: &Value) -> bool {
    let header = h.get(PROTOCOL_VERSION).is_some_and(|v| v.as_bytes() == VERSION.as_bytes());
    let params = body.get("params");
    header
        || params.and_then(|p| p.get("_meta")).and_then(|m| m.get(META_VERSION)).is_some()
        || body.get("method").and_then(Value::as_str) == Some("server/discover")
}

/// Checks the headers 2026-07-28 requires against the body; the `HeaderMismatch` message if not.
pub(crate) fn check_headers(h: &HeaderMap, body: &Value) -> Result<(), String> {
    let header = |name: &str| -> Result<Option<String>, String> {
        let mut values = h.get_all(name).iter();
        let Some(v) = values.next() else { return Ok(None) };
        if values.next().is_some() {
            return Err(format!("send exactly one {name} header"));
        }
        v.to_str().map(|s| Some(s.to_owned())).map_err(|_| format!("the {name} header holds characters it may not"))
    };
    let method = body.get("method").and_then(Value::as_str).unwrap_or_default();
    let params = body.get("params");
    let meta_version = params.and_then(|p| p.get("_meta")).and_then(|m| m.get(META_VERSION)).and_then(Value::as_str);
    match (header(PROTOCOL_VERSION)?, meta_version) {
        (None, _) => return Err("the MCP-Protocol-Version header is required".into()),
        (Some(v), Some(m)) if v != m => {
            return Err(format!("MCP-Protocol-Version header `{}` does not match the body's `{}`", clip(&v), clip(m)));
        }
        _ => {}
    }
    match header(MCP_METHOD)? {
        None => return Err("the Mcp-Method header is required".into()),
        Some(v) if v != method => {
            return Err(format!("Mcp-Method header `{}` does not match the body's `{}`", clip(&v), clip(method)));
        }
        Some(_) => {}
    }
    let named = match method {
        "tools/call" | "prompts/get" => params.and_then(|p| p.get("name")),
        "resources/read" => params.and_then(|p| p.get("uri")),
        _ => None,
    };
    if let Some(named) = named.and_then(Value::as_str) {
        let Some(given) = header(MCP_NAME)? else { return Err("the Mcp-Name header is required".into()) };
        let given = decode(&given).ok_or("the Mcp-Name header's base64 value does not decode")?;
        if given != named {
            return Err(format!("Mcp-Name header `{}` does not match the body's `{}`", clip(&given), clip(named)));
        }
    }
    Ok(())
}

/// `400` with a `HeaderMismatch` error answering `id`.
pub(crate) fn mismatch(id: Option<&Value>, why: &str) -> Response<Reply> {
    let body = json!({"jsonrpc": "2.0", "id": id.cloned().unwrap_or(Value::Null),
                      "error": {"code": HEADER_MISMATCH, "message": format!("Header mismatch: {why}.")}});
    let mut r = reply::json(body.to_string().into_bytes());
    *r.status_mut() = StatusCode::BAD_REQUEST;
    r
}

/// The status a JSON answer of this era goes out with: `400` for the modern errors, `404` for an
/// unknown method, `200` otherwise.
pub(crate) fn status_of(message: &[u8]) -> StatusCode {
    /// Only the error code is read; the rest (a 20 KB tool list) is skipped, not built.
    #[derive(serde::Deserialize)]
    struct Probe {
        error: Option<ProbeError>,
    }
    #[derive(serde::Deserialize)]
    struct ProbeError {
        code: Option<i64>,
    }
    // The core writes every message with its keys sorted (serde_json's maps), so an error starts
    // with its `error` key and an answer with `id`: only errors, which are short, are parsed.
    if !message.starts_with(br#"{"error":"#) {
        return StatusCode::OK;
    }
    let code = serde_json::from_slice::<Probe>(message).ok().and_then(|p| p.error?.code);
    match code {
        Some(-32022..=-32020) => StatusCode::BAD_REQUEST,
        Some(-32601) => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}

/// A header value as sent, or its Base64 sentinel (`=?base64?…?=`) decoded.
fn decode(value: &str) -> Option<String> {
    let Some(inner) = value.strip_prefix("=?base64?").and_then(|v| v.strip_suffix("?=")) else {
        return Some(value.to_owned());
    };
    String::from_utf8(bb_core::base64_decode(inner)?).ok()
}

fn clip(s: &str) -> String {
    s.chars().take(100).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap_or(HeaderValue::from_static("")));
        }
        h
    }

    fn call(name: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": name, "_meta": {META_VERSION: VERSION}}})
    }

    #[test]
    fn matching_headers_pass_and_a_base64_name_is_decoded_first() {
        let ok = [("mcp-protocol-version", VERSION), ("mcp-method", "tools/call"), ("mcp-name", "echo")];
        assert_eq!(check_headers(&headers(&ok), &call("echo")), Ok(()));
        let encoded =
            [("mcp-protocol-version", VERSION), ("mcp-method", "tools/call"), ("mcp-name", "=?base64?ZWNobw==?=")];
        assert_eq!(check_headers(&headers(&encoded), &call("echo")), Ok(()));
        assert_eq!(decode("=?base64?SGVsbG8sIOS4lueVjA==?="), Some("Hello, 世界".to_owned()));
    }

    #[test]
    fn a_missing_or_different_header_is_a_mismatch() {
        let cases: [&[(&'static str, &str)]; 5] = [
            &[("mcp-method", "tools/call"), ("mcp-name", "echo")],
            &[("mcp-protocol-version", VERSION), ("mcp-name", "echo")],
            &[("mcp-protocol-version", VERSION), ("mcp-method", "tools/call")],
            &[("mcp-protocol-version", VERSION), ("mcp-method", "tools/list"), ("mcp-name", "echo")],
            &[("mcp-protocol-version", VERSION), ("mcp-method", "tools/call"), ("mcp-name", "show")],
        ];
        for h in cases {
            assert!(check_headers(&headers(h), &call("echo")).is_err(), "{h:?}");
        }
        let other_version =
            [("mcp-protocol-version", "2025-11-25"), ("mcp-method", "tools/call"), ("mcp-name", "echo")];
        assert!(check_headers(&headers(&other_version), &call("echo")).is_err());
    }

    #[test]
    fn modern_errors_are_400_and_an_unknown_method_404() {
        assert_eq!(status_of(br#"{"error":{"code":-32022}}"#), StatusCode::BAD_REQUEST);
        assert_eq!(status_of(br#"{"error":{"code":-32601}}"#), StatusCode::NOT_FOUND);
        assert_eq!(status_of(br#"{"result":{}}"#), StatusCode::OK);
        assert_eq!(status_of(br#"{"error":{"code":-32602}}"#), StatusCode::OK);
    }

    #[test]
    fn a_client_that_cannot_confirm_is_a_bad_request() {
        // -32021 MissingRequiredClientCapability: a tool that asks, and no form elicitation declared.
        let message = br#"{"error":{"code":-32021,"data":{"requiredCapabilities":{"elicitation":{"form":{}}}},"message":"x"},"id":1,"jsonrpc":"2.0"}"#;
        assert_eq!(status_of(message), StatusCode::BAD_REQUEST);
    }
}
