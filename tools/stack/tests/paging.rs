//! Paging: clamped limits and walking every page.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod common;
use common::*;
use std::collections::BTreeSet;

#[test]
fn a_large_limit_is_clamped_and_walking_pages_visits_every_value_once() {
    let stack = start();
    let base = "/rest/api/latest/projects/BB/repos/cli/pull-requests?state=ALL";
    let all = get(&stack, &format!("{base}&limit=1000")).json();
    assert_eq!(all["limit"], 500);
    assert_eq!(all["isLastPage"], true);
    let total = all["values"].as_array().unwrap().len();
    assert!(total >= 20, "BB/cli holds the bulk pull requests");

    let mut seen = BTreeSet::new();
    let mut start_at = 0;
    let mut pages = 0;
    loop {
        let page = get(&stack, &format!("{base}&limit=7&start={start_at}")).json();
        let values = page["values"].as_array().unwrap();
        assert_eq!(page["size"].as_u64().unwrap() as usize, values.len(), "size counts this page only");
        for v in values {
            assert!(seen.insert(v["id"].as_u64().unwrap()), "no value twice");
        }
        pages += 1;
        if page["isLastPage"] == true {
            assert!(page.get("nextPageStart").is_none());
            break;
        }
        start_at = page["nextPageStart"].as_u64().unwrap();
    }
    assert_eq!(seen.len(), total);
    assert_eq!(pages, total.div_ceil(7));
}

#[test]
fn without_a_limit_a_page_holds_25() {
    let stack = start();
    let page = get(&stack, "/rest/api/latest/dashboard/pull-requests?state=ALL").json();
    assert_eq!(page["limit"], 25);
    assert!(page["size"].as_u64().unwrap() <= 25);
}
