//! What `--metrics ADDR` serves: the process's counters in Prometheus' text format (OpenMetrics),
//! kept by `prometheus-client`. One set per application, made once ([`crate::Process`]) and handed to
//! the drivers, the Bitbucket client and the HTTP transport, which all add to it.
//!
//! Every label value is one of a fixed set, chosen here or by the catalogue: an MCP method name bb
//! knows (else `other`), an exposed tool's name (else `other`), a class of Bitbucket endpoint (the
//! kind of resource, never a project, repository, pull request or person), an HTTP status or a
//! failure kind. So the number of series is bounded whatever clients send.

use std::sync::atomic::AtomicU64;

use bb_core::{FetchErrorKind, FetchOutcome};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// An MCP request's method and, for `tools/call`, its tool (`""` otherwise).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct Call {
    /// The JSON-RPC method, one of [`METHODS`] or `other`.
    pub method: &'static str,
    /// The tool called, one of the exposed tools or `other`; empty for other methods.
    pub tool: &'static str,
}

/// Who decided a rate budget's take: the shared store, or the process alone (no store answering).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ViaLabel {
    via: &'static str,
}

/// An MCP method.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct MethodLabel {
    method: &'static str,
}

/// Why a request was answered with an error.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabel {
    kind: &'static str,
}

/// One Bitbucket request: the kind of endpoint, and its status or failure.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BitbucketLabel {
    endpoint: &'static str,
    status: &'static str,
}

/// The MCP methods counted by name; any other is `other`.
pub const METHODS: [&str; 16] = [
    "initialize",
    "notifications/initialized",
    "notifications/cancelled",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "notifications/progress",
    "notifications/roots/list_changed",
    "subscriptions/listen",
];

/// Path segments that name a kind of Bitbucket resource, most specific first: a request's endpoint
/// class is the first of these its path holds (`other` when none).
const ENDPOINTS: [&str; 30] = [
    "application-properties",
    "build-status",
    "builds",
    "merge",
    "auto-merge",
    "review",
    "participants",
    "activities",
    "comments",
    "tasks",
    "blocker-comments",
    "changes",
    "diff",
    "raw",
    "browse",
    "files",
    "blame",
    "commits",
    "compare",
    "branches",
    "branchmodel",
    "tags",
    "default-reviewers",
    "conditions",
    "search",
    "avatar.png",
    "users",
    "pull-requests",
    "repos",
    "projects",
];

/// The process's metrics.
pub struct Metrics {
    registry: Registry,
    mcp_requests: Family<Call, Counter>,
    mcp_duration: Family<MethodLabel, Histogram>,
    mcp_errors: Family<KindLabel, Counter>,
    bitbucket_requests: Family<BitbucketLabel, Counter>,
    bitbucket_retries: Counter,
    refreshes_put_off: Counter,
    bitbucket_rate_limited: Counter,
    bitbucket_retry_after: Counter<f64, AtomicU64>,
    reads_shared: Counter,
    reads_in_flight: Gauge,
    cpu_jobs: Gauge,
    sessions_open: Gauge,
    connections_open: Gauge,
    refresh_unchanged: Counter,
    highlight_past_deadline: Counter,
    rate_store_decisions: Family<ViaLabel, Counter>,
    rate_store_outages: Counter,
    rate_store_answering: Gauge,
    resident_bytes: Gauge,
    audit_records: Counter,
    audit_failures: Counter,
}

impl Metrics {
    /// A set of metrics at zero (the application makes one, [`crate::Process`]).
    #[allow(clippy::new_without_default)]
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("bb");
        let m = Metrics {
            mcp_requests: Family::default(),
            mcp_duration: Family::new_with_constructor(|| Histogram::new(exponential_buckets(0.001, 2.5, 12))),
            mcp_errors: Family::default(),
            bitbucket_requests: Family::default(),
            bitbucket_retries: Counter::default(),
            refreshes_put_off: Counter::default(),
            bitbucket_rate_limited: Counter::default(),
            bitbucket_retry_after: Counter::default(),
            reads_shared: Counter::default(),
            reads_in_flight: Gauge::default(),
            cpu_jobs: Gauge::default(),
            sessions_open: Gauge::default(),
            connections_open: Gauge::default(),
            refresh_unchanged: Counter::default(),
            highlight_past_deadline: Counter::default(),
            rate_store_decisions: Family::default(),
            rate_store_outages: Counter::default(),
            rate_store_answering: Gauge::default(),
            resident_bytes: Gauge::default(),
            audit_records: Counter::default(),
            audit_failures: Counter::default(),
            registry: Registry::default(),
        };
        m.rate_store_answering.set(1);
        let r = &mut registry;
        r.register("mcp_requests", "MCP requests by method and, for tools/call, tool", m.mcp_requests.clone());
        r.register("mcp_request_duration_seconds", "Time from an MCP request to its answer", m.mcp_duration.clone());
        r.register("mcp_errors", "MCP requests answered with an error, by kind", m.mcp_errors.clone());
        r.register(
            "bitbucket_requests",
            "Requests sent to Bitbucket (each attempt), by endpoint class and status or failure",
            m.bitbucket_requests.clone(),
        );
        r.register("bitbucket_retries", "Bitbucket requests sent again after a failure", m.bitbucket_retries.clone());
        r.register(
            "refreshes_put_off",
            "Live views' refresh reads put off, unsent (the view answered unchanged, asked again later): the refreshes going left no room among the connections to Bitbucket",
            m.refreshes_put_off.clone(),
        );
        r.register("bitbucket_rate_limited", "Bitbucket answers 429 (rate limited)", m.bitbucket_rate_limited.clone());
        r.register(
            "bitbucket_retry_after_seconds",
            "Seconds of Retry-After that Bitbucket's 429s asked bb to wait",
            m.bitbucket_retry_after.clone(),
        );
        r.register(
            "reads_shared",
            "Bitbucket reads answered by an identical read already in flight (coalesced)",
            m.reads_shared.clone(),
        );
        r.register("reads_in_flight", "Bitbucket reads in flight", m.reads_in_flight.clone());
        r.register("cpu_jobs", "Highlighting jobs queued or running on the CPU threads", m.cpu_jobs.clone());
        r.register("sessions_open", "MCP sessions open (HTTP)", m.sessions_open.clone());
        r.register("connections_open", "HTTP connections open", m.connections_open.clone());
        r.register("refresh_unchanged", "refresh_view calls answered unchanged", m.refresh_unchanged.clone());
        r.register(
            "highlight_past_deadline",
            "Highlighting work stopped at its deadline (the rest went out plain)",
            m.highlight_past_deadline.clone(),
        );
        r.register(
            "rate_store_decisions",
            "Rate budget takes decided by the shared store (via=store) or by this replica alone (via=local)",
            m.rate_store_decisions.clone(),
        );
        r.register(
            "rate_store_outages",
            "Times the shared rate store stopped answering and this replica fell back to its own share",
            m.rate_store_outages.clone(),
        );
        r.register(
            "rate_store_answering",
            "1 while the shared rate store answers (or none is set), 0 while this replica decides alone",
            m.rate_store_answering.clone(),
        );
        r.register("audit_records", "Records written to the audit trail", m.audit_records.clone());
        r.register("audit_failures", "Records of the audit trail that could not be written", m.audit_failures.clone());
        r.register("resident_memory_bytes", "The process's resident memory", m.resident_bytes.clone());
        Metrics { registry, ..m }
    }

    /// An MCP request answered after `seconds`, with an error of `error` kind if any.
    pub fn mcp_request(&self, call: Call, seconds: f64, error: Option<&'static str>) {
        self.mcp_requests.get_or_create(&call).inc();
        self.mcp_duration.get_or_create(&MethodLabel { method: call.method }).observe(seconds);
        if let Some(kind) = error {
            self.mcp_errors.get_or_create(&KindLabel { kind }).inc();
        }
    }

    /// One attempt of a Bitbucket request to `path`, and what came of it.
    pub fn bitbucket_request(&self, path: &str, outcome: &FetchOutcome) {
        let status = match outcome {
            FetchOutcome::Response(r) => status_label(r.status),
            FetchOutcome::Failed(e) => match e.kind {
                FetchErrorKind::NotConfigured => "not_sent",
                FetchErrorKind::Unreachable => "unreachable",
                FetchErrorKind::Tls => "tls",
                FetchErrorKind::Timeout => "timeout",
                FetchErrorKind::BrokenResponse => "broken",
                FetchErrorKind::Deferred { .. } => "deferred",
            },
        };
        self.bitbucket_requests.get_or_create(&BitbucketLabel { endpoint: endpoint_class(path), status }).inc();
    }

    /// One attempt of a Bitbucket request to `path` was sent, then abandoned (nobody waited for it).
    pub fn bitbucket_abandoned(&self, path: &str) {
        self.bitbucket_requests
            .get_or_create(&BitbucketLabel { endpoint: endpoint_class(path), status: "abandoned" })
            .inc();
    }

    /// A Bitbucket request is sent again.
    pub fn bitbucket_retry(&self) {
        self.bitbucket_retries.inc();
    }

    /// A refresh's read is put off, unsent: the refreshes going left it no room.
    pub fn refresh_put_off(&self) {
        self.refreshes_put_off.inc();
    }

    /// Bitbucket answered 429, asking for `seconds` of wait.
    pub fn rate_limited(&self, seconds: f64) {
        self.bitbucket_rate_limited.inc();
        self.bitbucket_retry_after.inc_by(seconds);
    }

    /// A read waits for an identical one in flight instead of going to Bitbucket.
    pub fn read_shared(&self) {
        self.reads_shared.inc();
    }

    /// A read goes to Bitbucket (`+1`) or comes back (`-1`).
    pub fn read_in_flight(&self, delta: i64) {
        self.reads_in_flight.inc_by(delta);
    }

    /// A highlighting job is queued (`+1`) or done (`-1`).
    pub fn cpu_job(&self, delta: i64) {
        self.cpu_jobs.inc_by(delta);
    }

    /// A `refresh_view` was answered unchanged.
    pub fn refresh_unchanged(&self) {
        self.refresh_unchanged.inc();
    }

    /// A record of the audit trail was written.
    pub fn audit_record(&self) {
        self.audit_records.inc();
    }

    /// A record of the audit trail could not be written.
    pub fn audit_failure(&self) {
        self.audit_failures.inc();
    }

    /// Highlighting reached its deadline.
    pub fn highlight_past_deadline(&self) {
        self.highlight_past_deadline.inc();
    }

    /// A take of a rate budget was decided by the shared store (`true`) or by this replica alone.
    pub fn rate_store_decision(&self, by_store: bool) {
        self.rate_store_decisions.get_or_create(&ViaLabel { via: if by_store { "store" } else { "local" } }).inc();
    }

    /// The shared rate store stopped answering: this replica decides alone.
    pub fn rate_store_outage(&self) {
        self.rate_store_outages.inc();
    }

    /// Whether the shared rate store answers now.
    pub fn rate_store_answering(&self, answering: bool) {
        self.rate_store_answering.set(i64::from(answering));
    }

    /// The transport's open sessions and connections, as of now.
    pub fn set_open(&self, sessions: usize, connections: usize) {
        self.sessions_open.set(i64::try_from(sessions).unwrap_or(i64::MAX));
        self.connections_open.set(i64::try_from(connections).unwrap_or(i64::MAX));
    }

    /// The metrics in Prometheus' text format (OpenMetrics 1.0), the gauges read now.
    pub fn encode(&self) -> String {
        if let Some(bytes) = resident_bytes() {
            self.resident_bytes.set(i64::try_from(bytes).unwrap_or(i64::MAX));
        }
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// The media type of [`Metrics::encode`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The class of a Bitbucket endpoint: the most specific resource kind its path names.
pub fn endpoint_class(path: &str) -> &'static str {
    let segments: Vec<&str> = path.split(['/', '?']).collect();
    ENDPOINTS.iter().find(|e| segments.contains(e)).copied().unwrap_or("other")
}

/// An HTTP status as a label: the code for those bb meets, else its class.
fn status_label(status: u16) -> &'static str {
    const KNOWN: [&str; 20] = [
        "200", "201", "202", "204", "304", "400", "401", "403", "404", "405", "409", "412", "413", "414", "422", "429",
        "500", "502", "503", "504",
    ];
    let code = status.to_string();
    if let Some(k) = KNOWN.iter().find(|k| **k == code) {
        return k;
    }
    match status {
        100..=199 => "1xx",
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    }
}

/// The method as a label: its name when bb knows it, else `other`.
pub fn method_label(method: &str) -> &'static str {
    METHODS.iter().find(|m| **m == method).copied().unwrap_or("other")
}

/// The process's resident memory, from `/proc/self/statm` (Linux; `None` elsewhere).
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // The page size is 4 KiB on the machines bb runs on [assumed]: x86-64 and most arm64 Linux.
    Some(pages * 4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_classes_name_the_resource_and_never_its_project_or_id() {
        assert_eq!(endpoint_class("/rest/api/latest/projects/SECRET/repos/r/pull-requests/7/activities"), "activities");
        assert_eq!(endpoint_class("/rest/api/latest/projects/SECRET/repos/r/pull-requests/7"), "pull-requests");
        assert_eq!(endpoint_class("/rest/build-status/latest/commits/abc"), "build-status");
        assert_eq!(endpoint_class("/rest/api/latest/application-properties"), "application-properties");
        assert_eq!(endpoint_class("/somewhere/else"), "other");
        assert_eq!(status_label(404), "404");
        assert_eq!(status_label(418), "4xx");
        assert_eq!(method_label("tools/call"), "tools/call");
        assert_eq!(method_label("x/SECRET"), "other");
    }

    #[test]
    fn the_text_holds_every_family_with_the_bb_prefix() {
        let m = Metrics::new();
        m.mcp_request(Call { method: "tools/call", tool: "get_pull_request" }, 0.01, Some("tool"));
        m.bitbucket_request("/rest/api/latest/projects/P/repos/r/pull-requests/1", &FetchOutcome::response(200, ""));
        m.rate_limited(3.0);
        let text = m.encode();
        assert!(text.contains(r#"bb_mcp_requests_total{method="tools/call",tool="get_pull_request"} 1"#), "{text}");
        assert!(text.contains(r#"bb_mcp_errors_total{kind="tool"} 1"#), "{text}");
        assert!(text.contains(r#"bb_bitbucket_requests_total{endpoint="pull-requests",status="200"} 1"#), "{text}");
        assert!(text.contains("bb_bitbucket_retry_after_seconds_total 3.0"), "{text}");
        assert!(text.contains("bb_mcp_request_duration_seconds_bucket"), "{text}");
        assert!(text.ends_with("# EOF\n"), "{text}");
    }
}
