//! The standard catalogue: names, annotations, view kinds, and the size of the tool list.
#![allow(clippy::unwrap_used, clippy::panic)]

use bb_core::{Catalogue, ExposureOptions};
use serde_json::Value;

#[test]
fn every_tool_definition_together_is_at_most_12_kilobytes_of_json() {
    let e = Catalogue::standard().expose(&ExposureOptions { allow_writes: true, ..Default::default() }).unwrap();
    let bytes = Value::Array(e.listed().to_vec()).to_string().len();
    println!("tools/list: {} tools, {bytes} bytes", e.listed().len());
    assert!(bytes <= 12 * 1024, "{bytes} bytes");
    for t in e.listed() {
        for (name, p) in t["inputSchema"]["properties"].as_object().unwrap() {
            assert!(p["description"].as_str().is_some_and(|d| !d.is_empty()), "{} {name}", t["name"]);
        }
    }
}

#[test]
fn merge_is_exposed_only_when_asked_for_and_is_the_only_destructive_tool() {
    let e = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
    assert!(e.get("merge_pull_request").is_none());
    let e = Catalogue::standard().expose(&ExposureOptions { allow_writes: true, ..Default::default() }).unwrap();
    for t in e.listed() {
        let destructive = t["annotations"]["destructiveHint"] == true;
        assert_eq!(destructive, t["name"] == "merge_pull_request", "{}", t["name"]);
        let read_only = t["annotations"]["readOnlyHint"] == true;
        let name = t["name"].as_str().unwrap();
        assert_eq!(read_only, name.starts_with("get_") || name.starts_with("list_") || name == "show", "{name}");
        assert_eq!(t["annotations"]["openWorldHint"], true);
    }
}
