//! What a request says, read leniently and within limits: whether its `Accept` admits both answer
//! types (a missing `Accept`, `*/*`, `application/*` and `text/*` count, since each admits both),
//! whether its body is JSON, whether it is `initialize` or asks for progress, and its body itself.

use std::pin::Pin;
use std::time::Duration;

use hyper::body::{Body, Incoming};
use hyper::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use serde_json::Value;

pub(crate) fn accepts_json_and_sse(h: &HeaderMap) -> bool {
    let mut any = false;
    let (mut json, mut sse) = (false, false);
    for v in h.get_all(ACCEPT) {
        any = true;
        for range in v.to_str().unwrap_or_default().split(',') {
            let range = range.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
            json |= matches!(range.as_str(), "application/json" | "application/*" | "*/*");
            sse |= matches!(range.as_str(), "text/event-stream" | "text/*" | "*/*");
        }
    }
    !any || (json && sse)
}

pub(crate) fn is_json(h: &HeaderMap) -> bool {
    h.get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
}

/// The id of an `initialize` request, if the body is one.
pub(crate) fn initialize_id(bytes: &[u8]) -> Option<Value> {
    let v: Value = serde_json::from_slice(bytes).ok()?;
    (v.get("method")?.as_str()? == "initialize").then(|| v.get("id").cloned()).flatten()
}

/// Whether any request in the body carries `params._meta.progressToken`.
pub(crate) fn asks_for_progress(bytes: &[u8]) -> bool {
    if !bytes.windows(13).any(|w| w == b"progressToken") {
        return false;
    }
    let has = |m: &Value| m.get("params").and_then(|p| p.get("_meta")).and_then(|m| m.get("progressToken")).is_some();
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Array(items)) => items.iter().any(has),
        Ok(v) => has(&v),
        Err(_) => false,
    }
}

/// Why a body could not be read.
pub(crate) enum BodyError {
    /// Longer than the limit.
    TooLarge,
    /// Not complete within the timeout.
    Slow,
    /// The connection broke.
    Broken,
}

/// The whole body, at most `max` bytes, within `timeout`.
pub(crate) async fn read_body(mut body: Incoming, max: usize, timeout: Duration) -> Result<Vec<u8>, BodyError> {
    let read = async {
        let mut out = Vec::new();
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
            let frame = frame.map_err(|_| BodyError::Broken)?;
            if let Ok(data) = frame.into_data() {
                if out.len() + data.len() > max {
                    return Err(BodyError::TooLarge);
                }
                out.extend_from_slice(&data);
            }
        }
        Ok(out)
    };
    smol::future::or(read, async {
        smol::Timer::after(timeout).await;
        Err(BodyError::Slow)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn accept(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(ACCEPT, HeaderValue::from_str(v).unwrap_or(HeaderValue::from_static("")));
        }
        h
    }

    #[test]
    fn accept_must_admit_both_json_and_sse() {
        assert!(accepts_json_and_sse(&accept(&["application/json, text/event-stream"])));
        assert!(accepts_json_and_sse(&accept(&["application/json", "text/event-stream;q=0.9"])));
        assert!(accepts_json_and_sse(&accept(&["*/*"])));
        assert!(accepts_json_and_sse(&accept(&[])));
        assert!(!accepts_json_and_sse(&accept(&["application/json"])));
        assert!(!accepts_json_and_sse(&accept(&["text/event-stream"])));
        assert!(!accepts_json_and_sse(&accept(&["text/html"])));
    }

    #[test]
    fn progress_is_asked_only_by_a_progress_token_in_params_meta() {
        assert!(asks_for_progress(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"progressToken":7}}}"#));
        assert!(!asks_for_progress(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"progressToken":7}}"#));
        assert!(!asks_for_progress(br#"{"jsonrpc":"2.0","id":1,"method":"x"}"#));
    }

    #[test]
    fn only_an_initialize_request_has_an_initialize_id() {
        assert_eq!(initialize_id(br#"{"jsonrpc":"2.0","id":3,"method":"initialize"}"#), Some(Value::from(3)));
        assert_eq!(initialize_id(br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#), None);
        assert_eq!(initialize_id(br#"{"jsonrpc":"2.0","method":"initialize"}"#), None);
        assert_eq!(initialize_id(b"nonsense"), None);
    }
}
