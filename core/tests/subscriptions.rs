//! Resource subscriptions (issue 53 item 2): a subscriber is told `notifications/resources/updated` when a
//! pull request it watches changes, read as a live card is read (its reads, its cadence), never more; on
//! 2026-07-28 through `subscriptions/listen`, acknowledged first, each message naming its subscription.
//! The clock is the test's: the core's timers are fed at their time (`StackHarness::run_until`).
#![allow(clippy::unwrap_used, clippy::panic)]

#[path = "stack_harness/mod.rs"]
mod stack_harness;

use serde_json::{Value, json};
use stack_harness::StackHarness;

const PR: &str = "bitbucket://projects/BB/repos/api/pull-requests/1";
const MINUTE: u64 = 60_000;

/// Another person comments on BB/api #1, as Bitbucket would record it.
fn bob_comments(d: &mut StackHarness, text: &str) {
    d.control(
        "POST",
        "/comments",
        json!({"project": "BB", "repo": "api", "pullRequest": 1, "user": "bob", "text": text}),
    );
}

fn updates(d: &StackHarness) -> Vec<Value> {
    d.notes
        .iter()
        .filter(|(_, n)| n["method"] == "notifications/resources/updated")
        .map(|(_, n)| n["params"].clone())
        .collect()
}

#[test]
fn initialize_and_discover_say_pull_requests_can_be_subscribed_to() {
    let mut d = StackHarness::speaking(None);
    let init = d.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}),
    );
    assert_eq!(init["result"]["capabilities"]["resources"], json!({"listChanged": false, "subscribe": true}));
    let mut s = StackHarness::speaking(None);
    let found = s.request(
        "server/discover",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}),
    );
    assert_eq!(found["result"]["capabilities"]["resources"], json!({"listChanged": false, "subscribe": true}));
}

#[test]
fn a_subscriber_is_told_once_when_the_pull_request_changes_and_not_while_it_does_not() {
    let mut d = StackHarness::new();
    let answer = d.request("resources/subscribe", json!({"uri": PR}));
    assert_eq!(answer["result"], json!({}), "{answer}");
    // Answered once the first read has learnt the state subscribed to: a change made while that read was in
    // flight would otherwise be taken for it, and never told.
    assert!(d.requests.iter().any(|r| r.contains("/pull-requests/1?")), "{:?}", d.requests);
    // The first read tells nobody.
    d.run_background();
    assert!(updates(&d).is_empty(), "{:?}", d.notes);
    assert_eq!(d.timers.len(), 1, "one timer: the next read");
    // Quiet for two minutes: read again at the card's cadence, nobody told.
    let start = d.now();
    d.run_until(start + 2 * MINUTE);
    assert!(updates(&d).is_empty(), "{:?}", d.notes);
    // Another person comments: the next read tells the subscriber, once.
    bob_comments(&mut d, "Looks fine to me");
    let now = d.now();
    d.run_until(now + MINUTE);
    assert_eq!(updates(&d), vec![json!({"uri": PR})], "{:?}", d.notes);
    let (tag, _) = d.notes.iter().find(|(_, n)| n["method"] == "notifications/resources/updated").unwrap();
    assert_eq!(*tag, None, "tied to no input: the session's own notification");
    let now = d.now();
    d.run_until(now + 3 * MINUTE);
    assert_eq!(updates(&d).len(), 1, "nothing changed since: {:?}", d.notes);
}

#[test]
fn a_watch_costs_what_a_live_card_costs() {
    let mut d = StackHarness::with_views();
    // A live card of the same pull request, refreshed at its own `next` for ten minutes: its reads.
    let shown = d.call("show", json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1}));
    let data = shown.raw["_meta"]["bb/view"].clone();
    let (mut fingerprint, mut next) =
        (data["fingerprint"].as_str().unwrap().to_owned(), data["next"].as_u64().unwrap());
    let start = d.now();
    let mut card_reads = 0;
    while d.now() + next <= start + 10 * MINUTE {
        let at = d.now() + next;
        d.run_until(at);
        let refreshed = d.call(
            "refresh_view",
            json!({"show": {"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1}, "fingerprint": fingerprint}),
        );
        card_reads += d.requests.len();
        let meta = &refreshed.raw["_meta"]["bb/view"];
        fingerprint = meta["fingerprint"].as_str().unwrap().to_owned();
        next = meta["next"].as_u64().unwrap();
    }
    // A watch of it over the same ten minutes.
    let mut w = StackHarness::new();
    w.request("resources/subscribe", json!({"uri": PR}));
    // Its first read, as the card's `show`, is not counted.
    w.run_background();
    w.requests.clear();
    let start = w.now();
    w.run_until(start + 10 * MINUTE);
    let watch_reads = w.requests.len();
    // BB/api #1 has a build running: both read every 5 s.
    assert!(watch_reads >= 100, "{watch_reads}");
    assert!(watch_reads <= card_reads, "a watch read {watch_reads} times where a live card read {card_reads}");
}

#[test]
fn the_diff_and_threads_of_one_pull_request_share_one_watch_and_unsubscribing_stops_the_reads() {
    let mut d = StackHarness::new();
    for uri in [PR.to_owned(), format!("{PR}/diff"), format!("{PR}/threads")] {
        assert_eq!(d.request("resources/subscribe", json!({"uri": uri}))["result"], json!({}));
    }
    d.run_background();
    assert_eq!(d.timers.len(), 1, "one watch for the three: {:?}", d.timers);
    bob_comments(&mut d, "A question on the retry loop");
    let now = d.now();
    d.run_until(now + MINUTE);
    let mut told: Vec<String> = updates(&d).iter().map(|u| u["uri"].as_str().unwrap().to_owned()).collect();
    told.sort();
    assert_eq!(told, [PR.to_owned(), format!("{PR}/diff"), format!("{PR}/threads")]);
    for uri in [PR.to_owned(), format!("{PR}/diff"), format!("{PR}/threads")] {
        assert_eq!(d.request("resources/unsubscribe", json!({"uri": uri}))["result"], json!({}));
    }
    assert!(d.timers.is_empty(), "the timer is withdrawn: {:?}", d.timers);
    d.requests.clear();
    let now = d.now();
    d.run_until(now + 10 * MINUTE);
    assert!(d.requests.is_empty(), "{:?}", d.requests);
    // Unsubscribing what was never subscribed is no error.
    assert_eq!(d.request("resources/unsubscribe", json!({"uri": PR}))["result"], json!({}));
}

#[test]
fn what_cannot_be_watched_is_refused_with_a_sentence() {
    let mut d = StackHarness::new();
    for (uri, code) in [
        ("bitbucket://projects/BB/repos/api/files/README.md", -32602),
        ("bitbucket://projects/BB/repos/api/commits/main", -32602),
        ("bitbucket://nowhere", -32002),
        ("file:///etc/passwd", -32002),
    ] {
        let answer = d.request("resources/subscribe", json!({"uri": uri}));
        assert_eq!(answer["error"]["code"], code, "{uri}: {answer}");
        assert!(answer["error"]["message"].as_str().unwrap().len() > 20);
    }
    assert_eq!(d.request("resources/subscribe", json!({}))["error"]["code"], -32602);
    let mut scoped = StackHarness::scoped(&["OPS/infra"]);
    let answer = scoped.request("resources/subscribe", json!({"uri": PR}));
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(scoped.timers.is_empty() && scoped.requests.is_empty());
}

#[test]
fn a_2026_07_28_listen_is_acknowledged_first_and_each_message_names_its_subscription() {
    let mut s = StackHarness::speaking(None);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let params = json!({"_meta": meta, "notifications": {"toolsListChanged": true,
        "resourceSubscriptions": [PR, "bitbucket://projects/BB/repos/api/files/README.md"]}});
    s.open_request(41, "subscriptions/listen", params, 9);
    // Acknowledged once the first read has learnt the state listened to.
    assert!(s.requests.iter().any(|r| r.contains("/pull-requests/1?")), "{:?}", s.requests);
    let (tag, ack) = s.notes.first().cloned().unwrap();
    assert_eq!(tag, Some(9), "on the listen request's stream");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 41);
    // What bb honours: the pull request; a file does not change on its own, and the tool list never does.
    assert_eq!(ack["params"]["notifications"], json!({"resourceSubscriptions": [PR]}));
    assert!(!s.done_tags.contains(&9), "the request stays open");
    bob_comments(&mut s, "Please add a test");
    let now = s.now();
    s.run_until(now + MINUTE);
    let told: Vec<&(Option<u64>, Value)> =
        s.notes.iter().filter(|(_, n)| n["method"] == "notifications/resources/updated").collect();
    assert_eq!(told.len(), 1, "{:?}", s.notes);
    assert_eq!(told[0].0, Some(9));
    assert_eq!(told[0].1["params"], json!({"_meta": {"io.modelcontextprotocol/subscriptionId": 41}, "uri": PR}));
    // The client cancels it: the stream ends unanswered, its watch with it.
    s.notify("notifications/cancelled", json!({"requestId": 41}));
    assert!(s.done_tags.contains(&9), "{:?}", s.done_tags);
    assert!(s.timers.is_empty(), "{:?}", s.timers);
    // resources/subscribe is not part of 2026-07-28.
    let old = s.request("resources/subscribe", json!({"_meta": meta, "uri": PR}));
    assert_eq!(old["error"]["code"], -32601, "{old}");
}

#[test]
fn closing_the_session_withdraws_its_watches() {
    let mut d = StackHarness::new();
    d.request("resources/subscribe", json!({"uri": PR}));
    d.run_background();
    assert_eq!(d.timers.len(), 1);
    let session = d.session;
    d.server.close(session);
    d.run_background();
    assert!(d.timers.is_empty(), "{:?}", d.timers);
}

#[test]
fn a_listen_of_thousands_of_uris_watches_at_most_a_hundred_pull_requests() {
    let mut s = StackHarness::speaking(None);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let uris: Vec<String> = (1..=5000)
        .map(|i| format!("bitbucket://projects/BB/repos/api/pull-requests/{i}"))
        .chain([PR.to_owned()])
        .collect();
    s.open_request(
        7,
        "subscriptions/listen",
        json!({"_meta": meta, "notifications": {"resourceSubscriptions": uris}}),
        4,
    );
    let (_, ack) = s.notes.first().cloned().unwrap();
    let honoured = ack["params"]["notifications"]["resourceSubscriptions"].as_array().unwrap();
    assert_eq!(honoured.len(), 100);
    assert_eq!(s.timers.len(), 100, "one timer a pull request watched");
    // One subscribe too many on a handshake session is refused with a sentence.
    let mut d = StackHarness::new();
    for i in 1..=100 {
        let uri = format!("bitbucket://projects/BB/repos/api/pull-requests/{i}");
        assert_eq!(d.request("resources/subscribe", json!({"uri": uri}))["result"], json!({}));
    }
    let refused =
        d.request("resources/subscribe", json!({"uri": "bitbucket://projects/BB/repos/api/pull-requests/101"}));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("at most 100"));
}
