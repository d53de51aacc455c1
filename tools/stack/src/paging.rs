//! Bitbucket's paging: which slice of a list a request gets, and the page object around it.
//!
//! Source: reference "Conventions" [spec][rec]: pages are `{size, limit, isLastPage, start, values, nextPageStart}`;
//! `size` counts this page only; default limit 25; the server clamps `limit` (asked 1000, got 500);
//! `nextPageStart` is absent on the last page.

use crate::exchange::Request;
use serde_json::{Value, json};

/// The limit when the request names none (or an unusable one). [spec]
pub const DEFAULT_LIMIT: usize = 25;
/// The largest limit served; larger ones are clamped to it. [rec: "asked 1000, got 500"]
pub const MAX_LIMIT: usize = 500;

/// Which slice of a list a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    /// Index of the first value.
    pub start: usize,
    /// Most values on the page, already clamped.
    pub limit: usize,
}

impl PageRequest {
    /// Reads `start` and `limit` from the query: missing, unparsable or non-positive limits become the default,
    /// limits above the cap become the cap, unusable starts become 0.
    pub fn from_request(req: &Request) -> PageRequest {
        let start = req.param("start").and_then(|s| s.trim().parse::<usize>().ok()).unwrap_or(0);
        let limit = match req.param("limit").and_then(|s| s.trim().parse::<i64>().ok()) {
            Some(n) if n > 0 => (n as u64).min(MAX_LIMIT as u64) as usize,
            _ => DEFAULT_LIMIT,
        };
        PageRequest { start, limit }
    }

    /// The page object for this slice of `all`.
    pub fn page(&self, all: Vec<Value>) -> Value {
        let total = all.len();
        let values: Vec<Value> = all.into_iter().skip(self.start).take(self.limit).collect();
        let size = values.len();
        let is_last = self.start.saturating_add(size) >= total;
        let mut page = json!({
            "size": size,
            "limit": self.limit,
            "isLastPage": is_last,
            "start": self.start,
            "values": values,
        });
        if !is_last {
            page["nextPageStart"] = json!(self.start + size);
        }
        page
    }
}

/// The page a request asks for, over all values.
pub fn page_of(req: &Request, all: Vec<Value>) -> Value {
    PageRequest::from_request(req).page(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize) -> Vec<Value> {
        (0..n).map(|i| json!(i)).collect()
    }

    #[test]
    fn limit_defaults_to_25_and_large_limits_are_clamped() {
        assert_eq!(PageRequest::from_request(&Request::new("GET", "/x")).limit, 25);
        assert_eq!(PageRequest::from_request(&Request::new("GET", "/x?limit=1000")).limit, 500);
        assert_eq!(PageRequest::from_request(&Request::new("GET", "/x?limit=0")).limit, 25);
        assert_eq!(PageRequest::from_request(&Request::new("GET", "/x?limit=-3&start=x")).start, 0);
    }

    #[test]
    fn a_middle_page_says_where_the_next_starts_and_size_counts_only_itself() {
        let p = PageRequest { start: 2, limit: 3 }.page(values(10));
        assert_eq!(p["size"], 3);
        assert_eq!(p["isLastPage"], false);
        assert_eq!(p["nextPageStart"], 5);
        assert_eq!(p["values"], json!([2, 3, 4]));
    }

    #[test]
    fn the_last_page_has_no_next_page_start() {
        let p = PageRequest { start: 8, limit: 3 }.page(values(10));
        assert_eq!(p["size"], 2);
        assert_eq!(p["isLastPage"], true);
        assert!(p.get("nextPageStart").is_none());
        let past = PageRequest { start: 50, limit: 3 }.page(values(10));
        assert_eq!(past["size"], 0);
        assert_eq!(past["isLastPage"], true);
    }
}
