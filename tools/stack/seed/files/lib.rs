//! @NAME@: the client library behind the @SLUG@ service.
//!
//! The crate keeps its public surface small: a [`Client`] built from a [`Config`], requests that are
//! plain values, and errors that say what to do next.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// How the client reaches the server.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Base URL, without a trailing slash.
    pub base_url: String,
    /// How long one request may take.
    pub timeout: Duration,
    /// Extra headers sent with every request.
    pub headers: BTreeMap<String, String>,
    /// How many requests may be in flight at once.
    pub concurrency: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            base_url: "http://localhost:7990".to_string(),
            timeout: Duration::from_secs(30),
            headers: BTreeMap::new(),
            concurrency: 8,
        }
    }
}

/// What went wrong, in words a caller can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The server could not be reached.
    Unreachable(String),
    /// The server answered with an error status.
    Status { code: u16, message: String },
    /// The answer was not what the client expected.
    Decode(String),
    /// The request took longer than the configured timeout.
    TimedOut,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Unreachable(why) => write!(f, "cannot reach the server: {why}"),
            Error::Status { code, message } => write!(f, "the server answered {code}: {message}"),
            Error::Decode(why) => write!(f, "unexpected answer: {why}"),
            Error::TimedOut => write!(f, "the request timed out"),
        }
    }
}

impl std::error::Error for Error {}

/// Whether an error is worth another attempt.
pub fn is_transient(error: &Error) -> bool {
    match error {
        Error::Unreachable(_) | Error::TimedOut => true,
        Error::Status { code, .. } => *code == 429 || *code >= 500,
        Error::Decode(_) => false,
    }
}

/// A request, as a value.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// GET, POST, PUT or DELETE.
    pub method: &'static str,
    /// Path under the base URL.
    pub path: String,
    /// Query parameters in the order they are sent.
    pub query: Vec<(String, String)>,
    /// JSON body, if any.
    pub body: Option<String>,
}

impl Request {
    /// A GET of `path`.
    pub fn get(path: impl Into<String>) -> Request {
        Request { method: "GET", path: path.into(), query: Vec::new(), body: None }
    }

    /// The same request with a query parameter added.
    pub fn param(mut self, key: &str, value: impl ToString) -> Request {
        self.query.push((key.to_string(), value.to_string()));
        self
    }

    /// The path and query as sent.
    pub fn target(&self) -> String {
        if self.query.is_empty() {
            return self.path.clone();
        }
        let pairs: Vec<String> = self.query.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{}?{}", self.path, pairs.join("&"))
    }
}

/// One page of a paged listing.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    /// The values on this page.
    pub values: Vec<T>,
    /// Where the next page starts, if there is one.
    pub next_page_start: Option<u64>,
}

impl<T> Page<T> {
    /// Whether this is the last page.
    pub fn is_last(&self) -> bool {
        self.next_page_start.is_none()
    }
}

/// The client: configuration and the counters it keeps.
#[derive(Debug, Default)]
pub struct Client {
    config: Config,
    sent: u64,
    failed: u64,
}

impl Client {
    /// A client for a configuration.
    pub fn new(config: Config) -> Client {
        Client { config, sent: 0, failed: 0 }
    }

    /// The configuration in use.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Requests sent so far, and how many failed.
    pub fn counters(&self) -> (u64, u64) {
        (self.sent, self.failed)
    }

    /// Records the outcome of one request.
    pub fn record(&mut self, outcome: &Result<(), Error>) {
        self.sent += 1;
        if outcome.is_err() {
            self.failed += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_writes_its_query_in_order() {
        let r = Request::get("/rest/api/latest/projects").param("start", 0).param("limit", 25);
        assert_eq!(r.target(), "/rest/api/latest/projects?start=0&limit=25");
    }

    #[test]
    fn server_errors_and_rate_limits_are_transient() {
        assert!(is_transient(&Error::Status { code: 503, message: String::new() }));
        assert!(is_transient(&Error::Status { code: 429, message: String::new() }));
        assert!(!is_transient(&Error::Status { code: 404, message: String::new() }));
    }
}
