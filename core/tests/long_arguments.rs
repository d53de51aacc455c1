//! Every string argument of every tool, given a megabyte: the answer stays short. A name (a reviewer, a
//! user, a branch, a build's key) is refused before anything is sent, as project and repository are, and
//! whatever an answer quotes back of an argument is clipped.
#![allow(clippy::unwrap_used, clippy::panic)]

mod stack_harness;

use bb_core::{Catalogue, ExposureOptions};
use serde_json::{Map, Value, json};
use stack_harness::StackHarness;

/// The longest answer a call with one absurd argument may get.
const SHORT: usize = 2_000;

/// A value that fits `schema`, for the arguments a call needs beside the one under test.
fn fitting(key: &str, schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    match (key, schema["type"].as_str()) {
        ("project", _) => json!("BB"),
        ("repo", _) => json!("api"),
        ("kind", _) => json!("card"),
        (_, Some("integer" | "number")) => json!(1),
        (_, Some("boolean")) => json!(true),
        (_, Some("array")) => json!([fitting("", &schema["items"])]),
        _ => json!("main"),
    }
}

#[test]
fn update_pull_request_with_a_megabyte_reviewer_name_answers_a_short_error_and_writes_nothing() {
    let mut d = StackHarness::new();
    let name = "r".repeat(1 << 20);
    let a = d.call("update_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 1, "add_reviewers": [name]}));
    assert!(a.is_error, "{}", &a.text[..200.min(a.text.len())]);
    assert!(a.text.len() < SHORT, "{} characters: {}", a.text.len(), &a.text[..200]);
    assert_eq!(d.count("PUT", "/pull-requests/1"), 0);
}

#[test]
fn a_megabyte_in_any_string_argument_of_any_tool_gets_a_short_answer() {
    let exposed = Catalogue::standard().expose(&ExposureOptions::everything()).unwrap();
    let long = "n".repeat(1 << 20);
    let mut long_answers = Vec::new();
    for tool in exposed.listed() {
        let name = tool["name"].as_str().unwrap().to_owned();
        let schema = &tool["inputSchema"];
        let Some(properties) = schema["properties"].as_object() else { continue };
        let required: Vec<&str> =
            schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        for (key, property) in properties {
            let is_string = property["type"] == "string" && property["enum"].is_null();
            let is_strings = property["type"] == "array" && property["items"]["type"] == "string";
            if !(is_string || is_strings) {
                continue;
            }
            let mut args = Map::new();
            for r in &required {
                args.insert((*r).to_owned(), fitting(r, &properties[*r]));
            }
            args.insert(key.clone(), if is_strings { json!([long]) } else { json!(long) });
            let mut d = StackHarness::with_views();
            let a = d.call(&name, Value::Object(args));
            if a.text.len() >= SHORT {
                long_answers.push(format!("{name}.{key}: {} characters", a.text.len()));
            }
        }
    }
    assert!(long_answers.is_empty(), "{long_answers:#?}");
}

/// The longest value bb accepts for `key` (its schema's `maxLength`, else bb's bound on names).
fn longest_accepted(key: &str, schema: &Value) -> usize {
    let bound = match key {
        "project" | "repo" | "project_key" | "user" | "reviewers" | "add_reviewers" | "remove_reviewers" => 256,
        _ => 4096,
    };
    let max = schema["maxLength"].as_u64().or(schema["items"]["maxLength"].as_u64());
    max.map_or(bound, |m| bound.min(usize::try_from(m).unwrap()))
}

#[test]
fn an_argument_as_long_as_bb_accepts_is_clipped_where_an_answer_quotes_it_back() {
    let exposed = Catalogue::standard().expose(&ExposureOptions::everything()).unwrap();
    let mut echoes = Vec::new();
    for tool in exposed.listed() {
        let name = tool["name"].as_str().unwrap().to_owned();
        let schema = &tool["inputSchema"];
        let Some(properties) = schema["properties"].as_object() else { continue };
        let required: Vec<&str> =
            schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
        for (key, property) in properties {
            let is_string = property["type"] == "string" && property["enum"].is_null();
            let is_strings = property["type"] == "array" && property["items"]["type"] == "string";
            if !(is_string || is_strings) {
                continue;
            }
            let mut args = Map::new();
            for r in &required {
                args.insert((*r).to_owned(), fitting(r, &properties[*r]));
            }
            let short_value = if is_strings { json!(["zq"]) } else { json!("zq") };
            args.insert(key.clone(), short_value);
            let baseline = StackHarness::with_views().call(&name, Value::Object(args.clone())).text.len();
            let long = "z".repeat(longest_accepted(key, property));
            args.insert(key.clone(), if is_strings { json!([long]) } else { json!(long) });
            let a = StackHarness::with_views().call(&name, Value::Object(args));
            if a.text.len() > baseline + 1_000 {
                echoes.push(format!("{name}.{key}: {} characters ({baseline} with a short value)", a.text.len()));
            }
        }
    }
    assert!(echoes.is_empty(), "{echoes:#?}");
}
