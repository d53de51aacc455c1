//! What the transport tells the metrics ([`bb_drive::metrics`]) and the log: each MCP request's
//! method, tool, time to its answer and kind of error (an `info` line per call, `call answered`),
//! and `refresh_view` calls answered unchanged.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use bb_core::{Level, Said};
use bb_drive::Logger;
use bb_drive::metrics::{self, Call, Metrics};
use serde_json::{Value, json};

/// One MCP request on its way to its answer.
pub(crate) struct Timing {
    call: Call,
    started: Instant,
    /// A number for this call, unique in the process, for the log.
    id: u64,
    logger: Logger,
    metrics: Arc<Metrics>,
}

impl Timing {
    /// Starts timing the request `body`, to be counted in `metrics`; `tools` are the exposed tools (the
    /// only tool names counted by name).
    pub(crate) fn start(body: &Value, tools: &[&'static str], logger: &Logger, metrics: &Arc<Metrics>) -> Timing {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let method = metrics::method_label(body.get("method").and_then(Value::as_str).unwrap_or_default());
        let tool = if method == "tools/call" {
            let name = body.pointer("/params/name").and_then(Value::as_str).unwrap_or_default();
            tools.iter().find(|t| **t == name).copied().unwrap_or("other")
        } else {
            ""
        };
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        Timing {
            call: Call { method, tool },
            started: Instant::now(),
            id,
            logger: logger.clone(),
            metrics: Arc::clone(metrics),
        }
    }

    fn log(&self, seconds: f64, error: Option<&'static str>) {
        if !self.logger.enabled(Level::Info) {
            return;
        }
        let mut fields = vec![
            ("call", json!(self.id)),
            ("method", json!(self.call.method)),
            ("duration_ms", json!((seconds * 1000.0).round() as u64)),
        ];
        if !self.call.tool.is_empty() {
            fields.push(("tool", json!(self.call.tool)));
        }
        if let Some(kind) = error {
            fields.push(("error", json!(kind)));
        }
        self.logger.event(Level::Info, "call answered", &fields);
    }

    /// The answer went out, saying `said` (the core says what it wrote: no answer is parsed back here).
    pub(crate) fn answered(self, said: Said) {
        let kind = error_kind(said);
        let m = &self.metrics;
        if self.call.tool == "refresh_view" && said == Said::Unchanged {
            m.refresh_unchanged();
        }
        let seconds = self.started.elapsed().as_secs_f64();
        self.log(seconds, kind);
        m.mcp_request(self.call, seconds, kind);
    }

    /// The request was cut at the end of the stop's grace period.
    pub(crate) fn cut(self) {
        let seconds = self.started.elapsed().as_secs_f64();
        self.log(seconds, Some("restarting"));
        self.metrics.mcp_request(self.call, seconds, Some("restarting"));
    }
}

/// The kind of error an answer carries, if any: JSON-RPC's by code, or a tool's (`isError`).
fn error_kind(said: Said) -> Option<&'static str> {
    match said {
        Said::Result | Said::Unchanged => None,
        Said::ToolError => Some("tool"),
        Said::Error(code) => Some(match code {
            -32700 => "parse_error",
            -32600 => "invalid_request",
            -32601 => "method_not_found",
            -32602 => "invalid_params",
            -32603 => "internal_error",
            -32099..=-32000 => "server_error",
            _ => "other",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_not_exposed_is_counted_as_other_and_errors_by_kind() {
        let (log, metrics) = (Logger::new(None), Arc::new(Metrics::new()));
        let call = json!({"method": "tools/call", "params": {"name": "secret_project"}});
        let t = Timing::start(&call, &["get_file"], &log, &metrics);
        assert_eq!((t.call.method, t.call.tool), ("tools/call", "other"));
        let t = Timing::start(&json!({"method": "weird/SECRET"}), &[], &log, &metrics);
        assert_eq!((t.call.method, t.call.tool), ("other", ""));
        assert_eq!(error_kind(Said::Error(-32602)), Some("invalid_params"));
        assert_eq!(error_kind(Said::Error(-32001)), Some("server_error"));
        assert_eq!(error_kind(Said::ToolError), Some("tool"));
        assert_eq!(error_kind(Said::Result), None);
        assert_eq!(error_kind(Said::Unchanged), None);
    }
}
