//! Prompts (issue 53 item 1): listed while their tools are exposed, a prompt's pull request, diff and
//! threads embedded as the resources `resources/read` gives, an unknown prompt or a missing argument
//! refused as invalid params, the admin's scope binding a prompt as it binds a tool, and the
//! capability declared in both eras.
#![allow(clippy::unwrap_used, clippy::panic)]

#[path = "stack_harness/mod.rs"]
mod stack_harness;

use std::collections::BTreeSet;

use bb_core::ExposureOptions;
use serde_json::{Value, json};
use stack_harness::StackHarness;

const PR: &str = "bitbucket://projects/BB/repos/api/pull-requests/1";

fn args() -> Value {
    json!({"project": "BB", "repo": "api", "pr_id": "1"})
}

fn stateless(params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}});
    params
}

fn embedded(result: &Value) -> Vec<Value> {
    let messages = result["messages"].as_array().unwrap();
    messages.iter().filter(|m| m["content"]["type"] == "resource").map(|m| m["content"]["resource"].clone()).collect()
}

#[test]
fn both_prompts_are_listed_with_their_three_required_arguments() {
    let mut d = StackHarness::new();
    let listed = d.request("prompts/list", json!({}));
    let prompts = listed["result"]["prompts"].as_array().unwrap();
    let names: Vec<&str> = prompts.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["review_pull_request", "explain_pull_request"]);
    for p in prompts {
        assert!(p["title"].is_string() && p["description"].is_string(), "{p}");
        let arguments: Vec<(&str, bool)> = p["arguments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| (a["name"].as_str().unwrap(), a["required"] == true))
            .collect();
        assert_eq!(arguments, [("project", true), ("repo", true), ("pr_id", true)]);
    }
}

#[test]
fn reviewing_pull_request_1_embeds_it_its_diff_and_threads_as_resources_read_gives_them() {
    let mut d = StackHarness::new();
    let got = d.request("prompts/get", json!({"name": "review_pull_request", "arguments": args()}));
    let result = &got["result"];
    let messages = result["messages"].as_array().unwrap_or_else(|| panic!("{got}"));
    // The instruction first: a colleague's review, findings by file and line, a verdict not submitted.
    let instruction = messages[0]["content"]["text"].as_str().unwrap();
    assert_eq!(messages[0]["role"], "user");
    for words in ["BB/api #1", "file", "line number", "verdict", "Do not approve, comment or submit"] {
        assert!(instruction.contains(words), "{words}: {instruction}");
    }
    let resources = embedded(result);
    let uris: Vec<&str> = resources.iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, [PR.to_owned(), format!("{PR}/diff"), format!("{PR}/threads")]);
    assert!(resources.iter().all(|r| r["mimeType"] == "text/plain"));
    assert!(resources[0]["text"].as_str().unwrap().contains("Add retry with backoff to the HTTP client"), "{got}");
    // Each is the text resources/read gives: one function makes both.
    for r in &resources {
        let read = d.request("resources/read", json!({"uri": r["uri"]}));
        assert_eq!(read["result"]["contents"][0]["text"], r["text"], "{}", r["uri"]);
    }
    // The diff's lines are there, numbered as the diff tool numbers them.
    let diff = d.call("get_pull_request_diff", json!({"project": "BB", "repo": "api", "pr_id": 1}));
    assert_eq!(resources[1]["text"], diff.text.as_str());
    assert!(diff.text.lines().any(|l| l.contains('+')), "{}", diff.text);
}

#[test]
fn explaining_embeds_the_pull_request_and_its_diff_for_someone_new() {
    let mut d = StackHarness::new();
    let got = d.request("prompts/get", json!({"name": "explain_pull_request", "arguments": args()}));
    let resources = embedded(&got["result"]);
    assert_eq!(resources.len(), 2, "{got}");
    let instruction = got["result"]["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(instruction.contains("new to this code") && instruction.contains("why"), "{instruction}");
}

#[test]
fn an_unknown_prompt_or_a_missing_or_invalid_argument_is_invalid_params_with_a_sentence() {
    let mut d = StackHarness::new();
    let unknown = d.request("prompts/get", json!({"name": "summarize", "arguments": args()}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(unknown["error"]["message"].as_str().unwrap().contains("review_pull_request"), "{unknown}");
    let missing = d.request("prompts/get", json!({"name": "review_pull_request", "arguments": {"project": "BB"}}));
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert!(missing["error"]["message"].as_str().unwrap().contains("`repo`"), "{missing}");
    let invalid = d.request(
        "prompts/get",
        json!({"name": "review_pull_request", "arguments": {"project": "BB", "repo": "api", "pr_id": "one"}}),
    );
    assert_eq!(invalid["error"]["code"], -32602, "{invalid}");
    assert!(d.requests.is_empty(), "nothing read: {:?}", d.requests);
    let absent = d.request(
        "prompts/get",
        json!({"name": "review_pull_request", "arguments": {"project": "BB",
                                                 "repo": "api", "pr_id": "999"}}),
    );
    assert_eq!(absent["error"]["code"], -32602, "{absent}");
}

#[test]
fn a_prompt_is_absent_while_a_tool_it_draws_on_is_not_exposed() {
    let options =
        ExposureOptions { exclude: BTreeSet::from(["list_pr_comments".to_owned()]), ..ExposureOptions::everything() };
    let mut d = StackHarness::exposing(options);
    let listed = d.request("prompts/list", json!({}));
    let names: Vec<&str> =
        listed["result"]["prompts"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["explain_pull_request"]);
    let got = d.request("prompts/get", json!({"name": "review_pull_request", "arguments": args()}));
    assert_eq!(got["error"]["code"], -32602, "{got}");
    // With no pull request tools at all, no prompts, and the capability is not declared.
    let none = ExposureOptions {
        tools: Some(BTreeSet::from(["search_repositories".to_owned()])),
        ..ExposureOptions::default()
    };
    let mut bare = StackHarness::exposing(none);
    assert_eq!(bare.request("prompts/list", json!({}))["result"]["prompts"], json!([]));
    let found = bare.request("server/discover", stateless(json!({})));
    assert!(found["result"]["capabilities"].get("prompts").is_none(), "{found}");
}

#[test]
fn a_repository_outside_the_admins_scope_is_refused_before_anything_is_read() {
    let mut d = StackHarness::scoped(&["OPS/infra"]);
    let got = d.request("prompts/get", json!({"name": "review_pull_request", "arguments": args()}));
    assert_eq!(got["error"]["code"], -32602, "{got}");
    assert!(got["error"]["message"].as_str().unwrap().contains("OPS/infra"), "{got}");
    assert!(d.requests.is_empty(), "{:?}", d.requests);
}

#[test]
fn both_eras_declare_prompts_and_completions_and_answer_prompts() {
    let mut h = StackHarness::speaking(None);
    let init = h.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
                                              "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(init["result"]["capabilities"]["prompts"], json!({"listChanged": false}), "{init}");
    assert_eq!(init["result"]["capabilities"]["completions"], json!({}));
    let mut s = StackHarness::speaking(None);
    let found = s.request("server/discover", stateless(json!({})));
    assert_eq!(found["result"]["capabilities"]["prompts"], json!({"listChanged": false}), "{found}");
    assert_eq!(found["result"]["capabilities"]["completions"], json!({}));
    let listed = s.request("prompts/list", stateless(json!({})));
    assert_eq!(listed["result"]["resultType"], "complete");
    assert_eq!(listed["result"]["prompts"].as_array().unwrap().len(), 2);
    let got = s.request("prompts/get", stateless(json!({"name": "review_pull_request", "arguments": args()})));
    assert_eq!(got["result"]["resultType"], "complete", "{got}");
    assert_eq!(embedded(&got["result"]).len(), 3);
}
