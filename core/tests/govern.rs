//! `--read-only` (issue 52): only tools that change nothing are listed or run, whatever `--toolsets`,
//! `--tools`, `--allow-writes` or `enable_toolset` say; a call to a write is refused in one sentence and
//! reaches nothing; the instructions say the server is read-only (and, with a scope, the scope).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;

use bb_core::{Access, Catalogue, ExposureOptions, Toolsets};
use common::Harness;
use serde_json::{Value, json};

fn read_only(tools: &[&str]) -> ExposureOptions {
    ExposureOptions {
        toolsets: Some(Toolsets::ALL),
        tools: (!tools.is_empty()).then(|| tools.iter().map(|t| t.to_string()).collect::<BTreeSet<_>>()),
        allow_writes: true,
        read_only: true,
        ..ExposureOptions::default()
    }
}

fn listed(h: &mut Harness) -> Vec<String> {
    let a = h.request(json!({"jsonrpc": "2.0", "id": 90, "method": "tools/list"}));
    a["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn every_way_of_asking_for_a_write_lists_none() {
    let catalogue = Catalogue::standard();
    let writes: BTreeSet<&str> = Catalogue::standard()
        .expose(&ExposureOptions::everything())
        .unwrap()
        .tools()
        .iter()
        .filter(|t| t.access != Access::Read)
        .map(|t| t.name)
        .collect();
    assert!(writes.contains("add_pr_comment") && writes.contains("merge_pull_request"));
    for options in [read_only(&[]), read_only(&["add_pr_comment", "merge_pull_request"]), {
        let mut o = read_only(&["create_pull_request"]);
        o.toolsets = None;
        o
    }] {
        let exposed = catalogue.expose(&options).unwrap();
        let names: Vec<&str> = exposed.tools().iter().map(|t| t.name).collect();
        assert!(names.iter().all(|n| !writes.contains(n)), "{options:?}: {names:?}");
        assert!(exposed.kind("pull_request_form").is_none(), "the form's tool creates: not offered");
    }
    let said = read_only(&["add_pr_comment", "merge_pull_request"]).withheld_by_read_only(&catalogue);
    assert_eq!(said, ["add_pr_comment", "merge_pull_request"]);
}

#[test]
fn a_call_to_a_write_is_refused_in_one_sentence_and_reaches_nothing() {
    let mut h = Harness::of(&Catalogue::standard(), read_only(&["add_pr_comment"]), 100).initialize("2025-11-25", true);
    assert!(!listed(&mut h).contains(&"add_pr_comment".to_owned()));
    let out = h.call(1, "add_pr_comment", json!({"project": "BB", "repo": "api", "pr_id": 1, "text": "hi"}));
    assert_eq!(out[0]["result"]["isError"], true, "{out:?}");
    let text = out[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        text,
        "add_pr_comment changes Bitbucket, and this bb is read-only (--read-only): nothing was done. Ask the person to do it in Bitbucket."
    );
    assert!(h.fetches.is_empty(), "nothing reached Bitbucket");
}

#[test]
fn a_session_that_turns_a_group_on_still_sees_no_write() {
    let options = ExposureOptions { read_only: true, allow_writes: true, ..ExposureOptions::default() };
    let mut h = Harness::of(&Catalogue::standard(), options, 100).initialize("2025-11-25", false);
    let before = listed(&mut h);
    assert!(before.contains(&"enable_toolset".to_owned()), "{before:?}");
    let out = h.call(2, "enable_toolset", json!({"toolset": "repositories"}));
    assert_ne!(out.last().unwrap()["result"]["isError"], true, "{out:?}");
    let after = listed(&mut h);
    assert!(after.contains(&"search_repositories".to_owned()), "{after:?}");
    for write in ["add_pr_comment", "merge_pull_request", "create_tag", "create_pull_request", "set_build_status"] {
        assert!(!after.contains(&write.to_owned()), "{write} in {after:?}");
    }
}

#[test]
fn the_instructions_say_the_server_is_read_only() {
    let mut h = Harness::of(&Catalogue::standard(), read_only(&[]), 100);
    let a = h.request(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
    let instructions = a["result"]["instructions"].as_str().unwrap();
    assert!(instructions.contains("This bb is read-only: it changes nothing in Bitbucket"), "{instructions}");
    let mut d = Harness::of(&Catalogue::standard(), ExposureOptions::default(), 100);
    let b: Value = d.request(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
    assert!(!b["result"]["instructions"].as_str().unwrap().contains("read-only"));
}

#[test]
fn the_instructions_say_the_scope() {
    let scope = bb_core::Scope::parse(["BB/api", "OPS"]).unwrap();
    let mut h = Harness::everything_with(|c| c.scope = Some(std::sync::Arc::new(scope)));
    let a = h.request(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
    let instructions = a["result"]["instructions"].as_str().unwrap();
    assert!(instructions.contains("This bb works only in "), "{instructions}");
    assert!(instructions.contains("BB/api") && instructions.contains("OPS"), "{instructions}");
}
