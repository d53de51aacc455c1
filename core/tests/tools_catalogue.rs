//! The standard catalogue: names, annotations, view kinds, and the size of the tool list.
#![allow(clippy::unwrap_used, clippy::panic)]

use bb_core::{Catalogue, ExposureOptions};
use serde_json::Value;

#[test]
fn every_tool_definition_the_model_sees_together_is_at_most_26260_bytes_of_json() {
    let e = Catalogue::standard().expose(&ExposureOptions::everything()).unwrap();
    // Tools offered to views only (`_meta.ui.visibility: ["app"]`) are kept from the model by the host
    // (MCP Apps: "app" visibility hides a tool from the agent), so they are not in the model's budget.
    let for_model: Vec<Value> =
        e.listed().iter().filter(|t| t["_meta"]["ui"]["visibility"] != serde_json::json!(["app"])).cloned().collect();
    let bytes = Value::Array(for_model.clone()).to_string().len();
    let all = Value::Array(e.listed().to_vec()).to_string().len();
    println!(
        "tools/list: {} tools for the model in {bytes} bytes; {} tools in all, {all} bytes",
        for_model.len(),
        e.listed().len()
    );
    // Every tool definition the model sees, with `--allow-writes`: #17's 20,480 bytes, #27's 24,576 with the file
    // tools, and 25,600 with #28's draft reviews (3 tools and 5 arguments cost 2,351 bytes; 1,041 were taken out
    // of the others: `minLength: 1` is bb's default for a string, shorter shared descriptions). 703 bytes a tool
    // for 36 tools (peers: 20,689 bytes for 25 tools; 57,386 bytes for 59; 125,649 bytes for 121). #30's
    // get_code_insights costs 655 bytes (its 6 arguments, filters described in one word): 26,260 for 37 tools.
    assert!(bytes <= 26_260, "{bytes} bytes");
    assert!(for_model.len() < e.listed().len(), "refresh_view is listed, for views");
    for t in e.listed() {
        for (name, p) in t["inputSchema"]["properties"].as_object().unwrap() {
            assert!(p["description"].as_str().is_some_and(|d| !d.is_empty()), "{} {name}", t["name"]);
        }
    }
}

#[test]
fn merge_is_exposed_only_when_asked_for_and_the_destructive_tools_are_those_that_overwrite() {
    let e = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
    assert!(e.get("merge_pull_request").is_none());
    assert!(e.get("set_build_status").is_none(), "a write that cannot be undone needs --allow-writes");
    assert!(e.get("enable_auto_merge").is_none(), "auto-merge may merge at once, as merge_pull_request does");
    assert!(e.get("apply_pr_suggestion").is_none(), "a commit on someone's branch needs --allow-writes, as merge does");
    // Writes a person can undo are exposed with their group (create_tag with repositories, not on by default).
    let all = Catalogue::standard()
        .expose(&ExposureOptions { toolsets: Some(bb_core::Toolsets::ALL), ..ExposureOptions::default() })
        .unwrap();
    assert!(e.get("create_tag").is_none() && all.get("create_tag").is_some());
    for name in [
        "add_pr_comment",
        "update_pr_comment",
        "update_pull_request",
        "decline_pull_request",
        "reopen_pull_request",
        "disable_auto_merge",
        "delete_pr_comment",
        "discard_pr_review",
    ] {
        assert!(e.get(name).is_some(), "{name}");
    }
    let e = Catalogue::standard().expose(&ExposureOptions::everything()).unwrap();
    // Merging cannot be undone; an edit replaces text Bitbucket keeps no copy of (and a removed reviewer's
    // verdict). A decline is not destructive: reopen_pull_request undoes it.
    // A build result replaces the one under its key, and nothing takes it back. Auto-merge merges at once when the
    // checks already pass. A tag adds (deleting it undoes it); cancelling auto-merge is undone by enabling it.
    // A deleted comment or discarded draft is gone (the text with it). Applying a suggestion adds a commit.
    let destructive = [
        "merge_pull_request",
        "update_pr_comment",
        "update_pull_request",
        "set_build_status",
        "enable_auto_merge",
        "delete_pr_comment",
        "discard_pr_review",
    ];
    // The same call again changes nothing more (an edit finds nothing to change, a state or review status is set).
    let idempotent_writes = [
        "submit_pr_review",
        "update_pr_comment",
        "update_pull_request",
        "decline_pull_request",
        "reopen_pull_request",
        "set_build_status",
        "disable_auto_merge",
        "delete_pr_comment",
        "discard_pr_review",
    ];
    for t in &e.listed() {
        let name = t["name"].as_str().unwrap();
        let reader = name.starts_with("get_")
            || name.starts_with("list_")
            || [
                "show",
                "refresh_view",
                "download_file",
                "suggest_form_values",
                "resolve_ref",
                "compare_refs",
                "search_repositories",
                "search_code",
                "blame_file",
            ]
            .contains(&name);
        assert_eq!(hint(t, "readOnlyHint"), reader, "{name}");
        // MCP: destructive and idempotent are "meaningful only when readOnlyHint == false".
        if !reader {
            assert_eq!(hint(t, "destructiveHint"), destructive.contains(&name), "{name}");
            assert_eq!(hint(t, "idempotentHint"), idempotent_writes.contains(&name), "{name}");
        } else {
            assert!(!destructive.contains(&name) && !idempotent_writes.contains(&name), "{name}");
        }
        assert!(hint(t, "openWorldHint"), "{name}");
    }
}

/// A hint as a client reads it: the listed value, or MCP's default when it is left out (schema `ToolAnnotations`:
/// readOnlyHint false, destructiveHint true, idempotentHint false, openWorldHint true).
fn hint(tool: &Value, key: &str) -> bool {
    let default = matches!(key, "destructiveHint" | "openWorldHint");
    tool["annotations"].get(key).map(|v| v.as_bool().unwrap()).unwrap_or(default)
}

#[test]
fn a_hint_equal_to_mcps_default_or_moot_is_left_out_and_every_other_is_stated() {
    let e = Catalogue::standard().expose(&ExposureOptions::everything()).unwrap();
    // A reader says only that it reads: its destructive and idempotent hints mean nothing (MCP's schema).
    let get = e.listed().into_iter().find(|t| t["name"] == "get_pull_request").unwrap();
    assert_eq!(get["annotations"], serde_json::json!({"readOnlyHint": true}));
    let review = e.listed().into_iter().find(|t| t["name"] == "submit_pr_review").unwrap();
    assert_eq!(review["annotations"], serde_json::json!({"destructiveHint": false, "idempotentHint": true}));
    let merge = e.listed().into_iter().find(|t| t["name"] == "merge_pull_request").unwrap();
    assert_eq!(merge["annotations"], serde_json::json!({}));
}

#[test]
fn the_forms_suggestions_are_offered_only_where_the_form_is() {
    let with = |tools: &[&str]| {
        let tools = Some(tools.iter().map(|t| t.to_string()).collect());
        Catalogue::standard().expose(&ExposureOptions { tools, ..Default::default() }).unwrap()
    };
    let card_only = with(&["get_pull_request", "show"]);
    assert!(card_only.get("refresh_view").is_some(), "every view refreshes");
    assert!(card_only.get("suggest_form_values").is_none(), "no form, no suggestions for it");
    let form = with(&["create_pull_request", "show"]);
    assert!(form.get("suggest_form_values").is_some());
    let everything = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
    assert!(everything.get("suggest_form_values").is_some());
}

#[test]
fn the_default_toolsets_cost_the_model_a_fifth_less_than_every_tool() {
    let for_model = |e: &bb_core::Exposed| {
        let listed: Vec<Value> =
            e.listed().into_iter().filter(|t| t["_meta"]["ui"]["visibility"] != serde_json::json!(["app"])).collect();
        (listed.len(), Value::Array(listed).to_string().len())
    };
    let default = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
    let session = default.session_sees(bb_core::Toolsets::NONE).unwrap();
    let everything = Catalogue::standard().expose(&ExposureOptions::everything()).unwrap();
    let (tools, bytes) = for_model(&session);
    let (all_tools, all_bytes) = for_model(&everything);
    println!("default in a session: {tools} tools, {bytes} bytes; everything: {all_tools} tools, {all_bytes} bytes");
    // 28 tools and 20,814 bytes when the toolsets came (#39): a reviewer's whole job, and enable_toolset for the rest.
    assert!(tools <= 28 && bytes <= 20_900, "{tools} tools, {bytes} bytes");
    assert!(bytes * 5 <= all_bytes * 4, "{bytes} of {all_bytes}");
    let enable = session.listed().into_iter().find(|t| t["name"] == "enable_toolset").unwrap();
    assert_eq!(
        enable["annotations"],
        serde_json::json!({"readOnlyHint": true, "openWorldHint": false}),
        "it changes this session's list, nothing in Bitbucket"
    );
}
