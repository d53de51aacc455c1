//! The plain request and response every handler works on, so handlers unit-test without sockets.

use std::collections::BTreeMap;

/// One HTTP request as the stack's handlers see it: already read whole, path split from query.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Upper-case method name (`GET`, `POST`, ...).
    pub method: String,
    /// The path as sent, still percent-encoded, without the query.
    pub path: String,
    /// Query parameters in the order sent, percent-decoded.
    pub query: Vec<(String, String)>,
    /// Headers by lower-case name (the last value wins).
    pub headers: BTreeMap<String, String>,
    /// The body, read whole before any handler runs; [`Request::json`] parses it.
    pub body: Vec<u8>,
}

impl Request {
    /// A request with a method and a target such as `/rest/api/latest/projects?limit=2`.
    pub fn new(method: &str, target: &str) -> Request {
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p, parse_query(q)),
            None => (target, Vec::new()),
        };
        Request { method: method.to_ascii_uppercase(), path: path.to_string(), query, ..Request::default() }
    }

    /// The same request with a header added (the name is lower-cased).
    pub fn with_header(mut self, name: &str, value: &str) -> Request {
        self.headers.insert(name.to_ascii_lowercase(), value.to_string());
        self
    }

    /// The same request with a JSON body.
    pub fn with_json(mut self, body: &serde_json::Value) -> Request {
        self.body = body.to_string().into_bytes();
        self.headers.insert("content-type".into(), "application/json".into());
        self
    }

    /// The first value of a query parameter.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// Every value of a query parameter that may repeat, in the order sent, leaving out empty ones.
    pub fn params(&self, name: &str) -> Vec<&str> {
        self.query.iter().filter(|(k, v)| k == name && !v.is_empty()).map(|(_, v)| v.as_str()).collect()
    }

    /// A header's value by (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str)
    }

    /// The path's segments, percent-decoded, without empty ones.
    pub fn segments(&self) -> Vec<String> {
        self.path.split('/').filter(|s| !s.is_empty()).map(percent_decode).collect()
    }

    /// The body parsed as JSON; an empty body is `null`, and a body that is not JSON is an error message.
    pub fn json(&self) -> Result<serde_json::Value, String> {
        if self.body.iter().all(u8::is_ascii_whitespace) {
            return Ok(serde_json::Value::Null);
        }
        serde_json::from_slice(&self.body).map_err(|e| format!("The request body is not valid JSON: {e}"))
    }
}

/// One HTTP response made by a handler.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The HTTP status; an error's body is Bitbucket's `{"errors": [...]}` ([`crate::errors::error`]).
    pub status: u16,
    /// Headers to send besides Content-Length.
    pub headers: Vec<(String, String)>,
    /// The body, sent whole with its length unless a fault cuts it.
    pub body: Vec<u8>,
}

impl Response {
    /// A JSON response: a `Value`, or a typed answer whose fields are declared in sorted order (as a `Value`'s keys
    /// are written), so both write the same bytes.
    pub fn json<T: serde::Serialize + ?Sized>(status: u16, value: &T) -> Response {
        Response {
            status,
            headers: vec![("Content-Type".into(), "application/json;charset=UTF-8".into())],
            body: serde_json::to_vec(value).unwrap_or_default(),
        }
    }

    /// A response with no body (204 and the like).
    pub fn empty(status: u16) -> Response {
        Response { status, headers: Vec::new(), body: Vec::new() }
    }

    /// A response with bytes of the given content type.
    pub fn bytes(status: u16, content_type: &str, body: Vec<u8>) -> Response {
        Response { status, headers: vec![("Content-Type".into(), content_type.into())], body }
    }

    /// The same response with a header added.
    pub fn with_header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// The body parsed as JSON (`null` when it is not JSON); for tests and the control API.
    pub fn body_json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// Splits and percent-decodes a query string (`+` is a space, as forms send it).
pub fn parse_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (percent_decode(&k.replace('+', " ")), percent_decode(&v.replace('+', " ")))
        })
        .collect()
}

/// Decodes `%XX` escapes; malformed escapes are kept as written, invalid UTF-8 is replaced.
pub fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_and_path_segments_are_percent_decoded() {
        let r = Request::new("get", "/a/b%2Fc/d%20e?x=1%2B1&y=a+b&z");
        assert_eq!(r.method, "GET");
        assert_eq!(r.segments(), vec!["a", "b/c", "d e"]);
        assert_eq!(r.param("x"), Some("1+1"));
        assert_eq!(r.param("y"), Some("a b"));
        assert_eq!(r.param("z"), Some(""));
    }

    #[test]
    fn malformed_percent_escapes_are_kept_as_written() {
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }
}
