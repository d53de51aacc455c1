//! The admin's scope (`--project`, `--repo`; issue 52): every tool's rule pinned, and each rule's cases
//! against the stand-in — filled in, refused (with nothing read), narrowed, a commit alone withheld, and
//! the views (`show`, `refresh_view` navigating in place, `download_file`, `suggest_form_values`).
#![allow(clippy::unwrap_used, clippy::panic)]

mod stack_harness;

use std::collections::BTreeMap;

use bb_core::{Catalogue, ExposureOptions, Scoped, Toolsets};
use serde_json::json;
use stack_harness::StackHarness;

/// Every tool bb has, with its rule, from the catalogue (the union of what the operator's options can expose).
fn rules() -> BTreeMap<&'static str, (Scoped, serde_json::Value)> {
    let mut out = BTreeMap::new();
    for options in [ExposureOptions::everything(), ExposureOptions::default()] {
        let exposed = Catalogue::standard().expose(&options).unwrap();
        // What a session sees too: `enable_toolset` while a group is off.
        let session = exposed.session_sees(Toolsets::NONE);
        for e in std::iter::once(&*exposed).chain(session.as_ref()) {
            for t in e.tools() {
                out.insert(t.name, (t.scope, e.input_schema(t)));
            }
        }
    }
    out
}

#[test]
fn every_tool_has_the_rule_its_arguments_call_for() {
    let rules = rules();
    assert_eq!(rules.len(), Catalogue::standard().names().count(), "a tool the table does not reach");
    let special: &[(&str, Scoped)] = &[
        ("list_pull_requests", Scoped::RepositoryOrNarrowed),
        ("search_repositories", Scoped::Narrowed),
        ("search_code", Scoped::Narrowed),
        ("get_build_status", Scoped::Commit),
        ("set_build_status", Scoped::Commit),
        ("show", Scoped::View),
        ("refresh_view", Scoped::View),
        ("enable_toolset", Scoped::Session),
    ];
    for (name, (rule, schema)) in &rules {
        let want = special.iter().find(|(n, _)| n == name).map_or(Scoped::Repository, |(_, r)| *r);
        assert_eq!(*rule, want, "{name}");
        // A tool bound to a repository requires one: what it reads is always the repository checked.
        if *rule == Scoped::Repository {
            let required = schema["required"].as_array().cloned().unwrap_or_default();
            assert!(required.contains(&json!("project")) && required.contains(&json!("repo")), "{name}: {schema}");
        }
        assert_ne!(*rule, Scoped::Unscoped, "{name}: no bb tool is unscoped today");
    }
}

#[test]
fn a_call_naming_no_repository_is_filled_in_when_the_scope_names_one() {
    let mut d = StackHarness::scoped(&["BB/api"]);
    let a = d.call("get_pull_request", json!({"pr_id": 1}));
    assert!(!a.is_error, "{}", a.text);
    assert!(d.requests.iter().all(|r| r.contains("/projects/BB/repos/api/")), "{:?}", d.requests);
    // Case-insensitive project key, as Bitbucket's.
    let mut d = StackHarness::scoped(&["bb/api"]);
    let a = d.call("get_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 1}));
    assert!(!a.is_error, "{}", a.text);
}

#[test]
fn a_repository_outside_is_refused_with_one_sentence_and_nothing_is_read() {
    let mut d = StackHarness::scoped(&["OPS/infra", "WEB/site"]);
    let a = d.call("get_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 1}));
    assert!(a.is_error);
    assert_eq!(a.text, "BB/api is outside this server's scope: OPS/infra, WEB/site. Nothing was read.");
    assert!(d.requests.is_empty(), "{:?}", d.requests);
    // A write too, and a repository's own list.
    let a = d.call("add_pr_comment", json!({"project": "WEB", "repo": "frontend", "pr_id": 1, "text": "hi"}));
    assert!(a.is_error && a.text.starts_with("WEB/frontend is outside"), "{}", a.text);
    let a = d.call("list_pull_requests", json!({"project": "BB", "repo": "cli"}));
    assert!(a.is_error && a.text.starts_with("BB/cli is outside"), "{}", a.text);
    // Several repositories in scope: nothing to fill in, and no repository named is no call.
    let a = d.call("get_pull_request", json!({"pr_id": 1}));
    assert!(a.is_error, "{}", a.text);
    assert!(d.requests.is_empty(), "{:?}", d.requests);
    // A whole project holds each of its repositories.
    let mut d = StackHarness::scoped(&["WEB"]);
    assert!(!d.call("list_pull_requests", json!({"project": "web", "repo": "site"})).is_error);
    assert!(d.call("list_pull_requests", json!({"project": "BB", "repo": "api"})).is_error);
}

#[test]
fn the_dashboard_and_the_inbox_are_narrowed_and_say_so() {
    let mut all = StackHarness::new();
    let whole = all.call("list_pull_requests", json!({"state": "ALL", "limit": 100}));
    assert!(whole.text.lines().any(|l| l.starts_with("BB/cli#")), "{}", whole.text);
    let mut d = StackHarness::scoped(&["BB/api"]);
    let a = d.call("list_pull_requests", json!({"state": "ALL", "limit": 100}));
    assert!(!a.is_error, "{}", a.text);
    let rows: Vec<&str> = a.text.lines().filter(|l| l.contains('#') && !l.starts_with('(')).collect();
    assert!(!rows.is_empty() && rows.iter().all(|l| l.starts_with("BB/api#")), "{}", a.text);
    let left =
        whole.text.lines().filter(|l| l.contains('#') && !l.starts_with("BB/api#") && !l.starts_with('(')).count();
    assert!(left > 0);
    assert!(
        a.text.contains(&format!("Narrowed to this server's scope: BB/api. {left} outside it left out")),
        "{}",
        a.text
    );
    let inbox = d.call("list_pull_requests", json!({"inbox": true, "limit": 100}));
    assert!(inbox.text.contains("Narrowed to this server's scope: BB/api."), "{}", inbox.text);
    assert!(!inbox.text.contains("Bitbucket counts"), "{}", inbox.text);
    assert!(inbox.text.lines().filter(|l| l.contains('#')).all(|l| l.starts_with("BB/api#")), "{}", inbox.text);
}

#[test]
fn search_repositories_is_narrowed_and_a_project_outside_refused() {
    let mut d = StackHarness::scoped(&["WEB", "BB/api"]);
    let a = d.call("search_repositories", json!({"limit": 100}));
    assert!(!a.is_error, "{}", a.text);
    let repos: Vec<&str> = a.text.lines().skip(1).filter(|l| l.contains('/') && !l.starts_with("Narrowed")).collect();
    assert!(repos.iter().any(|l| l.starts_with("WEB/site")), "{}", a.text);
    assert!(repos.iter().all(|l| l.starts_with("WEB/") || l.starts_with("BB/api ")), "{}", a.text);
    assert!(a.text.contains("Narrowed to this server's scope: project WEB, BB/api."), "{}", a.text);
    let a = d.call("search_repositories", json!({"project_key": "OPS"}));
    assert_eq!(a.text, "project OPS is outside this server's scope: project WEB, BB/api. Nothing was read.");
    assert!(d.requests.is_empty());
    // BB is touched by BB/api: its listing is read, and filtered.
    let a = d.call("search_repositories", json!({"project_key": "BB"}));
    assert!(!a.is_error && a.text.contains("BB/api") && !a.text.contains("BB/cli"), "{}", a.text);
}

#[test]
fn search_code_adds_bitbucket_s_filters_and_filters_the_answer() {
    let mut d = StackHarness::scoped(&["BB/api"]);
    let a = d.call("search_code", json!({"query": "fn"}));
    assert!(!a.is_error, "{}", a.text);
    assert!(d.bodies.iter().chain(std::iter::empty()).count() <= 1);
    let sent = format!("{:?} {:?}", d.requests, d.bodies);
    assert!(sent.contains("project:BB repo:api"), "{sent}");
    assert!(a.text.contains("Narrowed to this server's scope: BB/api."), "{}", a.text);
    let a = d.call("search_code", json!({"query": "fn", "project": "OPS"}));
    assert!(a.is_error && a.text.starts_with("project OPS is outside"), "{}", a.text);
    let a = d.call("search_code", json!({"query": "fn", "project": "BB", "repo": "cli"}));
    assert!(a.is_error && a.text.starts_with("BB/cli is outside"), "{}", a.text);
    assert!(d.requests.is_empty());
    // Two entries: no filter Bitbucket's query can say, so the answer alone is filtered.
    let mut d = StackHarness::scoped(&["BB/api", "WEB/site"]);
    let a = d.call("search_code", json!({"query": "fn", "limit": 100}));
    assert!(!a.is_error, "{}", a.text);
    for l in a
        .text
        .lines()
        .filter(|l| l.contains(':') && l.contains('/') && !l.starts_with("Code search") && !l.starts_with("Narrowed"))
    {
        assert!(l.starts_with("BB/api ") || l.starts_with("WEB/site "), "{l}");
    }
}

#[test]
fn a_commit_alone_is_refused_and_a_commit_through_its_repository_is_bound() {
    let mut d = StackHarness::scoped(&["BB/api"]);
    let a = d.call("get_build_status", json!({"commit_id": "0123456789abcdef"}));
    assert!(a.is_error && a.text.contains("commit_id alone"), "{}", a.text);
    assert!(d.requests.is_empty());
    let a = d.call("get_build_status", json!({"pr_id": 1}));
    assert!(!a.is_error, "{}", a.text);
    assert!(d.requests.iter().any(|r| r.contains("/projects/BB/repos/api/")), "{:?}", d.requests);
    // set_build_status names its repository: filled in, and bound to it.
    let set = json!({"commit": "0123456789abcdef", "key": "ci", "state": "SUCCESSFUL", "url": "https://ci.test/1"});
    let a = d.call("set_build_status", set);
    assert!(d.requests.iter().all(|r| r.contains("/projects/BB/repos/api/commits/")), "{}: {:?}", a.text, d.requests);
    assert_eq!(d.requests.len(), 1, "{}", a.text);
    let set = json!({"project": "WEB", "repo": "site", "commit": "0123456789abcdef", "key": "ci", "state": "SUCCESSFUL", "url": "https://ci.test/1"});
    let a = d.call("set_build_status", set);
    assert!(a.is_error && a.text.starts_with("WEB/site is outside"), "{}", a.text);
    assert!(d.requests.is_empty());
}

#[test]
fn a_view_opens_refreshes_and_saves_nothing_outside_the_scope() {
    let mut d = StackHarness::scoped(&["BB/api"]);
    // show: the kind's tool's rule, filled in.
    let a = d.call("show", json!({"kind": "pull_request", "pr_id": 1}));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(a.raw["_meta"]["bb/view"]["call"]["repo"], "api");
    let a = d.call("show", json!({"kind": "pull_request", "project": "BB", "repo": "cli", "pr_id": 1}));
    assert!(a.is_error && a.text.starts_with("BB/cli is outside"), "{}", a.text);
    assert!(d.requests.is_empty());
    // The list view is narrowed as its tool is.
    let a = d.call("show", json!({"kind": "pull_requests", "state": "ALL", "limit": 100}));
    assert!(!a.is_error && a.text.contains("Narrowed to this server's scope: BB/api."), "{}", a.text);
    let items = a.raw["_meta"]["bb/view"]["list"]["items"].as_array().unwrap().clone();
    assert!(!items.is_empty());
    assert!(items.iter().all(|i| i["project"] == "BB" && i["repo"] == "api"), "{items:?}");
    let a = d.call("show", json!({"kind": "pull_requests", "project": "WEB", "repo": "site"}));
    assert!(a.is_error && a.text.starts_with("WEB/site is outside"), "{}", a.text);
    let a = d.call("refresh_view", json!({"show": {"kind": "pull_requests", "state": "ALL", "limit": 100}}));
    let items = a.raw["_meta"]["bb/view"]["list"]["items"].as_array().unwrap().clone();
    assert!(!items.is_empty() && items.iter().all(|i| i["repo"] == "api"), "{items:?}");
    assert!(a.raw["_meta"]["bb/view"]["list"]["leftOut"].as_u64().unwrap() > 0);
    // refresh_view: the show call it carries, navigation in place included, cannot leave the scope.
    let a =
        d.call("refresh_view", json!({"show": {"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1}}));
    assert!(!a.is_error, "{}", a.text);
    for show in [
        json!({"kind": "pull_request", "project": "WEB", "repo": "site", "pr_id": 1}),
        json!({"kind": "diff", "project": "BB", "repo": "cli", "pr_id": 1}),
        json!({"kind": "file", "project": "OPS", "repo": "infra", "path": "README.md"}),
    ] {
        let a = d.call("refresh_view", json!({"show": show, "fingerprint": "0000000000000000.1"}));
        assert!(a.is_error && a.text.contains("is outside this server's scope"), "{show}: {}", a.text);
        assert!(d.requests.is_empty(), "{show}: {:?}", d.requests);
    }
    let a = d.call("refresh_view", json!({"show": {"kind": "pull_request", "pr_id": 1}}));
    assert!(!a.is_error, "{}", a.text);
    // download_file and the form's suggestions.
    let a = d.call("download_file", json!({"project": "BB", "repo": "cli", "pr_id": 1}));
    assert!(a.is_error && a.text.starts_with("BB/cli is outside"), "{}", a.text);
    let a = d.call("suggest_form_values", json!({"project": "WEB", "repo": "site", "want": "branches"}));
    assert!(a.is_error && a.text.starts_with("WEB/site is outside"), "{}", a.text);
    assert!(d.requests.is_empty());
    let a = d.call("download_file", json!({"project": "BB", "repo": "api", "pr_id": 1}));
    assert!(!a.is_error, "{}", a.text);
}

#[test]
fn without_a_scope_nothing_is_narrowed() {
    let mut d = StackHarness::new();
    let a = d.call("list_pull_requests", json!({}));
    assert!(!a.text.contains("Narrowed"), "{}", a.text);
    let a = d.call("search_repositories", json!({}));
    assert!(!a.text.contains("Narrowed"), "{}", a.text);
}
