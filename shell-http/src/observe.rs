//! What the transport tells the metrics ([`bb_drive::metrics`]): each MCP request's method, tool,
//! time to its answer and kind of error, and `refresh_view` calls answered unchanged; and the
//! `--metrics ADDR` listener that serves them, apart from `/mcp` (its own address, loopback unless
//! told otherwise, no token: it holds no person, project or pull request).

use std::io;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::sync::Arc;
use std::time::Instant;

use bb_drive::metrics::{self, Call, Metrics};
use bb_hyper_smol::SmolIo;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Response, StatusCode};
use serde_json::Value;
use smol::net::TcpListener;

use crate::reply::{Reply, empty, json};

/// One MCP request on its way to its answer.
pub(crate) struct Timing {
    call: Call,
    started: Instant,
}

impl Timing {
    /// Starts timing the request `body`; `tools` are the exposed tools (the only tool names counted by name).
    pub(crate) fn start(body: &Value, tools: &[&'static str]) -> Timing {
        let method = metrics::method_label(body.get("method").and_then(Value::as_str).unwrap_or_default());
        let tool = if method == "tools/call" {
            let name = body.pointer("/params/name").and_then(Value::as_str).unwrap_or_default();
            tools.iter().find(|t| **t == name).copied().unwrap_or("other")
        } else {
            ""
        };
        Timing { call: Call { method, tool }, started: Instant::now() }
    }

    /// The answer `message` went out.
    pub(crate) fn answered(self, message: &[u8]) {
        let kind = serde_json::from_slice::<Value>(message).ok().map_or(Some("unreadable"), |v| error_kind(&v));
        let m = Metrics::global();
        if self.call.tool == "refresh_view" && kind.is_none() && unchanged(message) {
            m.refresh_unchanged();
        }
        m.mcp_request(self.call, self.started.elapsed().as_secs_f64(), kind);
    }

    /// The request was cut at the end of the stop's grace period.
    pub(crate) fn cut(self) {
        Metrics::global().mcp_request(self.call, self.started.elapsed().as_secs_f64(), Some("restarting"));
    }
}

/// The kind of error an answer carries, if any: JSON-RPC's by code, or a tool's (`isError`).
fn error_kind(v: &Value) -> Option<&'static str> {
    if let Some(code) = v.pointer("/error/code").and_then(Value::as_i64) {
        return Some(match code {
            -32700 => "parse_error",
            -32600 => "invalid_request",
            -32601 => "method_not_found",
            -32602 => "invalid_params",
            -32603 => "internal_error",
            -32099..=-32000 => "server_error",
            _ => "other",
        });
    }
    (v.pointer("/result/isError") == Some(&Value::Bool(true))).then_some("tool")
}

/// Whether a `refresh_view` answer says the view is unchanged (its `_meta` view data).
fn unchanged(message: &[u8]) -> bool {
    let Ok(v) = serde_json::from_slice::<Value>(message) else { return false };
    v.pointer("/result/_meta")
        .and_then(Value::as_object)
        .is_some_and(|meta| meta.values().any(|d| d.get("unchanged") == Some(&Value::Bool(true))))
}

/// The `--metrics` listener, serving on its own thread until the process ends.
pub struct MetricsServer {
    addr: SocketAddr,
}

impl MetricsServer {
    /// Binds `addr` and serves `GET /metrics` there; `before` runs before each scrape (to read the
    /// gauges that are counted elsewhere, such as open sessions).
    pub fn serve(addr: SocketAddr, before: Arc<dyn Fn() + Send + Sync>) -> io::Result<MetricsServer> {
        let std_listener = StdListener::bind(addr)?;
        let addr = std_listener.local_addr()?;
        let listener = TcpListener::try_from(std_listener)?;
        std::thread::Builder::new().name("bb-metrics".into()).spawn(move || {
            let ex = smol::LocalExecutor::new();
            smol::block_on(ex.run(async {
                while let Ok((stream, _)) = listener.accept().await {
                    let before = Arc::clone(&before);
                    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let before = Arc::clone(&before);
                        async move { Ok::<_, std::convert::Infallible>(scrape(&req, &*before)) }
                    });
                    ex.spawn(async move {
                        let _ = http1::Builder::new().serve_connection(SmolIo(stream), service).await;
                    })
                    .detach();
                }
            }));
        })?;
        Ok(MetricsServer { addr })
    }

    /// The address bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

fn scrape(req: &hyper::Request<hyper::body::Incoming>, before: &dyn Fn()) -> Response<Reply> {
    if req.method() != Method::GET || req.uri().path() != "/metrics" {
        return empty(StatusCode::NOT_FOUND);
    }
    before();
    let mut r = json(Metrics::global().encode().into_bytes());
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(metrics::CONTENT_TYPE));
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_not_exposed_is_counted_as_other_and_errors_by_kind() {
        let t = Timing::start(&json!({"method": "tools/call", "params": {"name": "secret_project"}}), &["get_file"]);
        assert_eq!((t.call.method, t.call.tool), ("tools/call", "other"));
        let t = Timing::start(&json!({"method": "weird/SECRET"}), &[]);
        assert_eq!((t.call.method, t.call.tool), ("other", ""));
        assert_eq!(error_kind(&json!({"error": {"code": -32602}})), Some("invalid_params"));
        assert_eq!(error_kind(&json!({"result": {"isError": true}})), Some("tool"));
        assert_eq!(error_kind(&json!({"result": {}})), None);
        assert!(unchanged(br#"{"result":{"_meta":{"bb/view":{"unchanged":true}}}}"#));
        assert!(!unchanged(br#"{"result":{"_meta":{"bb/view":{"fingerprint":"x"}}}}"#));
    }
}
