//! The token-budget benchmark: for the stack's largest pull requests, each tool's answer in bytes beside
//! the raw Bitbucket JSON it was made from, against the targets (get_pull_request ≤ 2 KB for ten reviewers
//! and a long description; list_pull_requests ≤ 160 bytes per pull request; diffs within their budget).
//!
//! Run: `cargo run -p bb-core --example token_budget`. Exits non-zero when a target is missed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[path = "../tests/stack_harness/mod.rs"]
mod stack_harness;

use bb_core::{Catalogue, Exposed, ExposureOptions, Toolsets};
use serde_json::{Value, json};
use stack_harness::StackHarness;

/// The budget of every tool definition the model sees with `--allow-writes` (issue #17; #30's get_code_insights
/// added 655 bytes, see core/tests/tools_catalogue.rs): its name, description and input schema, what a host
/// gives a model. The title and the four hints (issue #53) are the host's, and printed beside it.
const TOOL_LIST_BUDGET: usize = 26_260;

/// A `tools/list` entry as a host gives it to a model: name, description, input schema.
fn model_part(t: &Value) -> Value {
    json!({"name": t["name"], "description": t["description"], "inputSchema": t["inputSchema"]})
}

fn main() {
    let mut d = StackHarness::new();
    let mut missed = Vec::new();
    // Tools offered to views only (`_meta.ui.visibility: ["app"]`) are kept from the model by the host.
    let e = Catalogue::standard().expose(&ExposureOptions::everything()).unwrap();
    let for_model: Vec<Value> =
        e.listed().iter().filter(|t| t["_meta"]["ui"]["visibility"] != json!(["app"])).cloned().collect();
    let listed = Value::Array(for_model.clone()).to_string().len();
    let bytes = Value::Array(for_model.iter().map(model_part).collect()).to_string().len();
    println!(
        "tools/list with --allow-writes: {} tools for the model in {bytes} bytes (budget {TOOL_LIST_BUDGET}); \
         {listed} bytes listed with titles and hints",
        for_model.len()
    );
    if bytes > TOOL_LIST_BUDGET {
        missed.push(format!("tools/list: {bytes} > {TOOL_LIST_BUDGET} bytes"));
    }
    toolsets_table();
    println!("{:<28} {:<34} {:>9} {:>11} {:>6}", "tool", "arguments", "answer B", "Bitbucket B", "ratio");
    let row = |d: &mut StackHarness, tool: &str, label: &str, args: serde_json::Value| -> (usize, String) {
        let a = d.call(tool, args);
        let ratio = if a.text.is_empty() { 0.0 } else { d.raw_bytes as f64 / a.text.len() as f64 };
        println!("{tool:<28} {label:<34} {:>9} {:>11} {:>5.1}x", a.text.len(), d.raw_bytes, ratio);
        (a.text.len(), a.text)
    };
    let prs = [
        ("OPS", "infra", 2, "10 reviewers, 3 KB description"),
        ("BB", "api", 1, "busiest activity"),
        ("BB", "api", 8, "100 KB title"),
        ("BB", "api", 7, "hostile text"),
    ];
    for (p, r, id, what) in prs {
        let args = json!({"project": p, "repo": r, "pr_id": id});
        let label = format!("{p}/{r}#{id} ({what})");
        let (n, _) = row(&mut d, "get_pull_request", &label, args.clone());
        if n > 2048 {
            missed.push(format!("get_pull_request {label}: {n} > 2048"));
        }
        row(&mut d, "list_pr_comments", &label, args.clone());
        row(&mut d, "list_pr_tasks", &label, args.clone());
        row(&mut d, "get_build_status", &label, args.clone());
    }
    for (p, r, id, budget) in [
        ("BB", "api", 2, 20_000u64),
        ("BB", "api", 9, 20_000),
        ("BB", "api", 9, 100_000),
        ("OPS", "infra", 1, 20_000),
        ("BB", "api", 1, 2_000),
    ] {
        let label = format!("{p}/{r}#{id} max_bytes={budget}");
        let (n, _) = row(
            &mut d,
            "get_pull_request_diff",
            &label,
            json!({"project": p, "repo": r, "pr_id": id, "max_bytes": budget}),
        );
        if n > budget as usize {
            missed.push(format!("get_pull_request_diff {label}: {n} > {budget}"));
        }
    }
    for (p, r) in [("BB", "cli"), ("BB", "api"), ("WEB", "site")] {
        let label = format!("{p}/{r} state=ALL limit=100");
        let (_, text) =
            row(&mut d, "list_pull_requests", &label, json!({"project": p, "repo": r, "state": "ALL", "limit": 100}));
        let lines: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
        let max = lines.iter().map(|l| l.len()).max().unwrap_or(0);
        let per = text.len() / lines.len().max(1);
        println!("{:<28} {:<34} {per:>9} per PR (whole answer), longest line {max}", "", "");
        if per > 160 || max > 160 {
            missed.push(format!("list_pull_requests {label}: {per} per PR, longest {max}"));
        }
    }
    row(&mut d, "list_required_builds", "BB/api", json!({"project": "BB", "repo": "api"}));
    // Code Insights: 500 annotations on one file (and one on a deleted file), within the default budget and max_bytes.
    for (id, limit, budget) in [(1u64, 50u64, 12_000u64), (9, 50, 12_000), (9, 1000, 12_000), (9, 1000, 4_000)] {
        let label = format!("BB/api#{id} limit={limit} max_bytes={budget}");
        let (n, text) = row(
            &mut d,
            "get_code_insights",
            &label,
            json!({"project": "BB", "repo": "api", "pr_id": id, "limit": limit, "max_bytes": budget}),
        );
        if n > budget as usize || (id == 9 && !text.contains("not shown")) {
            missed.push(format!("get_code_insights {label}: {n} > {budget} or the cut is not said"));
        }
    }
    if missed.is_empty() {
        println!("All targets met.");
    } else {
        for m in &missed {
            println!("MISSED: {m}");
        }
        std::process::exit(1);
    }
}

/// The tool list the model sees for each toolset choice: alone, the default (without a session, and as a
/// session sees it, with `enable_toolset`), every group, and every group with `writes` (README "Toolsets").
fn toolsets_table() {
    let for_model = |e: &Exposed| -> (usize, usize, usize, usize) {
        let listed: Vec<Value> =
            e.listed().into_iter().filter(|t| t["_meta"]["ui"]["visibility"] != json!(["app"])).collect();
        let model = Value::Array(listed.iter().map(model_part).collect()).to_string().len();
        let before = Value::Array(listed.iter().map(before_hints).collect()).to_string().len();
        (listed.len(), Value::Array(listed).to_string().len(), model, before)
    };
    let catalogue = Catalogue::standard();
    let with = |list: &str| ExposureOptions {
        toolsets: Some(Toolsets::parse_list(list).unwrap()),
        ..ExposureOptions::default()
    };
    println!("{:<44} {:>6} {:>8} {:>8} {:>8} {:>7}", "--toolsets", "tools", "bytes", "model B", "before", "growth");
    let mut rows: Vec<(String, ExposureOptions, bool)> =
        bb_core::GROUPS.iter().map(|g| (g.name().to_owned(), with(g.name()), false)).collect();
    rows.push(("default (no session: 2026-07-28)".into(), ExposureOptions::default(), false));
    rows.push(("default (a session: with enable_toolset)".into(), ExposureOptions::default(), true));
    rows.push(("all".into(), with("all"), false));
    rows.push(("all,writes".into(), with("all,writes"), false));
    for (label, options, session) in rows {
        let e = catalogue.expose(&options).unwrap();
        let e = if session { std::sync::Arc::new(e.session_sees(Toolsets::NONE).unwrap()) } else { e };
        let (tools, bytes, model, before) = for_model(&e);
        let growth = (bytes as f64 / before as f64 - 1.0) * 100.0;
        println!("{label:<44} {tools:>6} {bytes:>8} {model:>8} {before:>8} {growth:>6.1}%");
    }
}

/// An entry as `tools/list` wrote it before every tool stated a title and its four hints (issue 53): the
/// title only when it says more than the name, and only the hints that differ from MCP's defaults (a
/// read-only tool's destructive and idempotent hints not at all). The baseline the hints' bytes are held to.
fn before_hints(t: &Value) -> Value {
    let mut e = t.clone();
    let words = |s: &str| s.to_ascii_lowercase().replace(['_', '-'], " ").replace("pull request", "pr");
    if let (Some(title), Some(name)) = (t["title"].as_str(), t["name"].as_str())
        && words(title) == words(name)
    {
        e.as_object_mut().unwrap().remove("title");
    }
    let read_only = t["annotations"]["readOnlyHint"] == json!(true);
    if let Some(hints) = e["annotations"].as_object_mut() {
        for (key, default) in
            [("readOnlyHint", false), ("destructiveHint", true), ("idempotentHint", false), ("openWorldHint", true)]
        {
            let moot = read_only && matches!(key, "destructiveHint" | "idempotentHint");
            if hints.get(key) == Some(&json!(default)) || moot {
                hints.remove(key);
            }
        }
    }
    e
}
