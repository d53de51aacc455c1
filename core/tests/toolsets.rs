//! Toolsets in a session: the default groups, `enable_toolset` turning one on for this session only, the
//! list-changed notification before its answer, and what a request without a session sees.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod common;

use bb_core::{Catalogue, ExposureOptions, Toolsets};
use common::Harness;
use serde_json::{Value, json};

fn session(options: ExposureOptions) -> Harness {
    Harness::of(&Catalogue::standard(), options, 100).initialize("2025-11-25", true)
}

fn listed(h: &mut Harness) -> Vec<String> {
    let answer = h.request(json!({"jsonrpc": "2.0", "id": 90, "method": "tools/list"}));
    answer["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"].as_str().unwrap_or_default()
}

#[test]
fn a_session_turns_repositories_on_and_is_told_its_list_changed_before_the_answer() {
    let mut h = Harness::of(&Catalogue::standard(), ExposureOptions::default(), 100);
    let init = h.request(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true, "{init}");
    assert!(init["result"]["instructions"].as_str().unwrap().contains("enable_toolset"), "{init}");

    let before = listed(&mut h);
    assert!(before.contains(&"enable_toolset".to_string()) && !before.contains(&"list_branches".to_string()));
    let refused = h.call(1, "list_branches", json!({"project": "BB", "repo": "api"}));
    assert!(
        refused[0]["error"]["message"].as_str().unwrap().starts_with("Unknown tool: `list_branches`"),
        "{refused:?}"
    );

    let out = h.call(2, "enable_toolset", json!({"toolset": "repositories"}));
    assert_eq!(out.len(), 2, "the notification, then the answer: {out:?}");
    assert_eq!(out[0], json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
    assert_eq!(out[1]["id"], 2);
    let said = text(&out[1]);
    assert!(said.starts_with("Turned on repositories for this session: list_branches, resolve_ref,"), "{said}");
    assert!(said.contains("create_tag") && said.contains("Your tool list has them now."), "{said}");
    assert!(!said.contains("Still off"), "nothing is left off: {said}");

    let after = listed(&mut h);
    assert!(after.contains(&"list_branches".to_string()) && after.contains(&"create_tag".to_string()));
    assert!(!after.contains(&"enable_toolset".to_string()), "nothing left to turn on");
    assert!(!after.contains(&"merge_pull_request".to_string()), "never writes");
    h.fetches.clear();
    let called = h.call(3, "list_branches", json!({"project": "BB", "repo": "api"}));
    assert!(called.is_empty(), "waits on Bitbucket: {called:?}");
    assert_eq!(h.fetches.len(), 1);
    assert!(h.fetches[0].1.path.ends_with("/repos/api/branches"), "{:?}", h.fetches[0].1);
}

#[test]
fn turning_a_group_on_is_this_sessions_alone() {
    let mut h = session(ExposureOptions {
        toolsets: Some(Toolsets::parse_list("pull_requests").unwrap()),
        ..Default::default()
    });
    let out = h.call(1, "enable_toolset", json!({"toolset": "code"}));
    // The tools, then the templates they read (a file, a commit) changed; the answer last.
    let methods: Vec<&Value> = out.iter().map(|m| &m["method"]).collect();
    assert_eq!(
        methods[..2],
        [&json!("notifications/tools/list_changed"), &json!("notifications/resources/list_changed")],
        "{out:?}"
    );
    let said = text(out.last().unwrap());
    assert!(said.contains("get_file") && said.contains("show can draw compare, file too."), "{said}");
    assert!(said.contains("Still off: one of builds (") && said.contains("repositories ("), "{said}");
    // The second session of the same server sees the operator's groups only.
    let other = h.server.open();
    let first = h.session;
    h.session = other;
    h.request(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
    assert!(!listed(&mut h).contains(&"get_file".to_string()));
    h.session = first;
    let mine = listed(&mut h);
    assert!(mine.contains(&"get_file".to_string()) && mine.contains(&"enable_toolset".to_string()));
    let show = h.request(json!({"jsonrpc": "2.0", "id": 91, "method": "tools/list"}))["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "show")
        .cloned()
        .unwrap();
    assert_eq!(
        show["inputSchema"]["properties"]["kind"]["enum"],
        json!(["pull_request", "pull_requests", "threads", "diff", "compare", "pull_request_form", "file"])
    );
}

#[test]
fn writes_an_unknown_group_and_a_group_already_on_are_said_so_and_change_nothing() {
    let mut h = session(ExposureOptions::default());
    let before = listed(&mut h);
    let out = h.call(1, "enable_toolset", json!({"toolset": "writes"}));
    assert_eq!(out.len(), 1, "no notification: {out:?}");
    assert_eq!(out[0]["result"]["isError"], true);
    assert!(text(&out[0]).contains("only the person who runs bb gives it (--allow-writes)"), "{}", text(&out[0]));
    let out = h.call(2, "enable_toolset", json!({"toolset": "issues"}));
    assert_eq!(out[0]["result"]["isError"], true);
    assert!(text(&out[0]).starts_with("`issues` is not a toolset. one of repositories ("), "{}", text(&out[0]));
    let out = h.call(3, "enable_toolset", json!({"toolset": "code"}));
    assert_eq!(out.len(), 1);
    assert!(text(&out[0]).starts_with("code is already on: get_commit, list_commits"), "{}", text(&out[0]));
    let out = h.call(4, "enable_toolset", json!({}));
    assert!(text(&out[0]).starts_with("enable_toolset needs `toolset`"), "{}", text(&out[0]));
    assert_eq!(listed(&mut h), before);
}

#[test]
fn a_request_without_a_session_sees_the_fixed_list_and_is_told_it_never_changes() {
    let mut h = Harness::of(&Catalogue::standard(), ExposureOptions::default(), 100);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let list = h.request(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}));
    let names: Vec<&str> =
        list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(!names.contains(&"enable_toolset") && !names.contains(&"list_branches"), "{names:?}");
    let call = h.request(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "enable_toolset", "arguments": {"toolset": "code"}, "_meta": meta}}));
    assert!(call["error"]["message"].as_str().unwrap().starts_with("Unknown tool"), "{call}");
    let discover =
        h.request(json!({"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {"_meta": meta}}));
    assert_eq!(discover["result"]["capabilities"]["tools"]["listChanged"], false, "{discover}");
}

#[test]
fn with_a_fixed_list_no_session_is_told_its_list_may_change() {
    for options in [
        ExposureOptions { dynamic: false, ..Default::default() },
        ExposureOptions { toolsets: Some(Toolsets::ALL), ..Default::default() },
        ExposureOptions { tools: Some(["get_file".to_string()].into()), ..Default::default() },
    ] {
        let mut h = Harness::of(&Catalogue::standard(), options.clone(), 100);
        let init = h.request(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
        assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], false, "{options:?}");
        assert!(!listed(&mut h).contains(&"enable_toolset".to_string()), "{options:?}");
    }
}

#[test]
fn a_page_of_the_list_follows_the_sessions_groups() {
    let mut h = Harness::of(&Catalogue::standard(), ExposureOptions::default(), 5).initialize("2025-11-25", false);
    h.call(1, "enable_toolset", json!({"toolset": "repositories"}));
    let mut names = Vec::new();
    let mut cursor = Value::Null;
    for _ in 0..20 {
        let params = if cursor.is_null() { json!({}) } else { json!({"cursor": cursor}) };
        let page = h.request(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": params}));
        names
            .extend(page["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()));
        cursor = page["result"]["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert!(names.contains(&"list_tags".to_string()) && !names.contains(&"enable_toolset".to_string()), "{names:?}");
}

#[test]
fn prompts_and_templates_follow_their_tools_when_a_group_is_turned_on() {
    let mut h = Harness::of(
        &Catalogue::standard(),
        ExposureOptions { toolsets: Some(Toolsets::parse_list("builds").unwrap()), ..Default::default() },
        100,
    );
    let init = h.request(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
    // No prompt yet, but the session may gain them: declared as a list that changes.
    assert_eq!(init["result"]["capabilities"]["prompts"], json!({"listChanged": true}), "{init}");
    assert_eq!(init["result"]["capabilities"]["resources"]["listChanged"], true, "{init}");
    let prompts = |h: &mut Harness| {
        h.request(json!({"jsonrpc": "2.0", "id": 80, "method": "prompts/list"}))["result"]["prompts"].clone()
    };
    assert_eq!(prompts(&mut h), json!([]));
    let out = h.call(1, "enable_toolset", json!({"toolset": "pull_requests"}));
    let methods: Vec<&str> = out.iter().filter_map(|m| m["method"].as_str()).collect();
    assert_eq!(
        methods,
        [
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed"
        ],
        "{out:?}"
    );
    let names: Vec<String> =
        prompts(&mut h).as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap().to_owned()).collect();
    assert_eq!(names, ["review_pull_request", "explain_pull_request"]);
    // Turning on a group that brings neither tells only the tools' change.
    let out = h.call(2, "enable_toolset", json!({"toolset": "repositories"}));
    let methods: Vec<&str> = out.iter().filter_map(|m| m["method"].as_str()).collect();
    assert_eq!(methods, ["notifications/tools/list_changed"], "{out:?}");
}
