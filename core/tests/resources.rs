//! Bitbucket as MCP resources (issue 53 items 2 and 4): the templates listed, a read of each giving the
//! text its tool gives, a missing one as each era says it, reads held to the admin's scope, and the
//! `resource_link` a tool's answer carries for clients on 2025-06-18 or later.
#![allow(clippy::unwrap_used, clippy::panic)]

#[path = "stack_harness/mod.rs"]
mod stack_harness;

use serde_json::{Value, json};
use stack_harness::StackHarness;

const PR: &str = "bitbucket://projects/BB/repos/api/pull-requests/1";

fn stateless(params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}});
    params
}

fn links(result: &Value) -> Vec<Value> {
    result["content"].as_array().unwrap().iter().filter(|c| c["type"] == "resource_link").cloned().collect()
}

#[test]
fn the_five_templates_are_listed_with_name_title_description_and_mime_type() {
    let mut d = StackHarness::new();
    let listed = d.request("resources/templates/list", json!({}));
    let templates = listed["result"]["resourceTemplates"].as_array().unwrap();
    let uris: Vec<&str> = templates.iter().map(|t| t["uriTemplate"].as_str().unwrap()).collect();
    assert_eq!(
        uris,
        [
            "bitbucket://projects/{project}/repos/{repo}/pull-requests/{id}",
            "bitbucket://projects/{project}/repos/{repo}/pull-requests/{id}/diff",
            "bitbucket://projects/{project}/repos/{repo}/pull-requests/{id}/threads",
            "bitbucket://projects/{project}/repos/{repo}/files/{+path}{?at}",
            "bitbucket://projects/{project}/repos/{repo}/commits/{id}",
        ]
    );
    for t in templates {
        for key in ["name", "title", "description", "mimeType"] {
            assert!(t[key].as_str().is_some_and(|s| !s.is_empty()), "{key} of {t}");
        }
    }
    // The view page stays where it was.
    let page = d.request("resources/read", json!({"uri": "ui://bb/view"}));
    assert_eq!(page["result"]["contents"][0]["uri"], "ui://bb/view");
}

#[test]
fn reading_a_picture_gives_its_sentence_and_its_bytes_as_a_blob() {
    let mut d = StackHarness::new();
    let uri = "bitbucket://projects/BB/repos/api/files/assets/icon.png";
    let read = d.request("resources/read", json!({"uri": uri}));
    let contents = read["result"]["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 2, "{read}");
    assert!(contents[0]["text"].as_str().unwrap().contains("a PNG picture, 10×10 pixels"), "{read}");
    assert_eq!(contents[1]["uri"], uri);
    assert_eq!(contents[1]["mimeType"], "image/png");
    assert!(contents[1]["blob"].as_str().is_some_and(|b| b.starts_with("iVBORw0KGgo")), "{read}");
}

#[test]
fn reading_a_pull_request_gives_the_text_get_pull_request_gives() {
    let mut d = StackHarness::new();
    let tool = d.call("get_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 1}));
    let read = d.request("resources/read", json!({"uri": PR}));
    let contents = &read["result"]["contents"];
    assert_eq!(contents.as_array().unwrap().len(), 1, "{read}");
    assert_eq!(contents[0]["uri"], PR);
    assert_eq!(contents[0]["mimeType"], "text/plain");
    assert_eq!(contents[0]["text"], tool.text.as_str());
    // The same reads a tool call makes.
    assert!(d.requests.iter().any(|r| r.contains("/projects/BB/repos/api/pull-requests/1")), "{:?}", d.requests);
}

#[test]
fn each_template_reads_as_its_tool_answers() {
    let mut d = StackHarness::new();
    for (uri, tool, args) in [
        (format!("{PR}/diff"), "get_pull_request_diff", json!({"pr_id": 1})),
        (format!("{PR}/threads"), "list_pr_comments", json!({"pr_id": 1})),
        (
            "bitbucket://projects/BB/repos/api/files/src/generated/tables.rs?at=main".into(),
            "get_file",
            json!({"path": "src/generated/tables.rs", "at": "main"}),
        ),
        ("bitbucket://projects/BB/repos/api/commits/main".into(), "get_commit", json!({"commit_id": "main"})),
    ] {
        let mut args = args;
        args["project"] = json!("BB");
        args["repo"] = json!("api");
        let answer = d.call(tool, args);
        assert!(!answer.is_error, "{tool}: {}", answer.text);
        let read = d.request("resources/read", json!({"uri": uri}));
        assert_eq!(read["result"]["contents"][0]["text"], answer.text.as_str(), "{uri}: {read}");
    }
}

#[test]
fn a_missing_resource_is_32002_before_2026_07_28_and_32602_on_it() {
    let mut d = StackHarness::new();
    for uri in [
        "bitbucket://projects/BB/repos/api/pull-requests/999",
        "bitbucket://projects/BB/repos/api/commits/deadbeef",
        "bitbucket://projects/BB/repos/api/pull-requests/1/merge",
        "bitbucket://projects/BB/repos/api/files/a/../b",
        "bitbucket://nowhere",
    ] {
        let read = d.request("resources/read", json!({"uri": uri}));
        assert_eq!(read["error"]["code"], -32002, "{uri}: {read}");
        assert_eq!(read["error"]["data"]["uri"], uri);
    }
    let mut s = StackHarness::speaking(None);
    let read =
        s.request("resources/read", stateless(json!({"uri": "bitbucket://projects/BB/repos/api/pull-requests/999"})));
    assert_eq!(read["error"]["code"], -32602, "{read}");
    let read =
        s.request("resources/read", stateless(json!({"uri": "bitbucket://projects/BB/repos/api/pull-requests/1/x"})));
    assert_eq!(read["error"]["code"], -32602, "{read}");
}

#[test]
fn a_2026_07_28_read_is_complete_and_cacheable_only_for_its_reader() {
    let mut s = StackHarness::speaking(None);
    let read = s.request("resources/read", stateless(json!({"uri": PR})));
    let result = &read["result"];
    assert_eq!(result["resultType"], "complete", "{read}");
    assert_eq!(result["cacheScope"], "private");
    assert!(result["ttlMs"].as_u64().is_some_and(|t| t > 0));
    assert!(result["contents"][0]["text"].as_str().unwrap().contains("#1"), "{read}");
    let templates = s.request("resources/templates/list", stateless(json!({})));
    assert_eq!(templates["result"]["resourceTemplates"].as_array().unwrap().len(), 5);
}

#[test]
fn a_resource_outside_the_admins_scope_is_refused_before_anything_is_read() {
    let mut d = StackHarness::scoped(&["OPS/infra"]);
    let read = d.request("resources/read", json!({"uri": PR}));
    assert_eq!(read["error"]["code"], -32002, "{read}");
    assert!(read["error"]["message"].as_str().unwrap().contains("OPS/infra"), "{read}");
    assert!(d.requests.is_empty(), "{:?}", d.requests);
    let inside = d.request("resources/read", json!({"uri": "bitbucket://projects/OPS/repos/infra/pull-requests/1"}));
    assert!(inside["result"]["contents"][0]["text"].is_string(), "{inside}");
}

#[test]
fn the_four_reading_tools_link_the_resource_they_read_beside_the_same_text() {
    let mut d = StackHarness::new();
    let pr = d.call("get_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 1}));
    assert_eq!(
        links(&pr.raw),
        [json!({"type": "resource_link", "uri": PR, "name": "BB/api#1", "mimeType": "text/plain"})]
    );
    let diff = d.call("get_pull_request_diff", json!({"project": "BB", "repo": "api", "pr_id": 1}));
    assert_eq!(links(&diff.raw)[0]["uri"], format!("{PR}/diff"));
    let file =
        d.call("get_file", json!({"project": "BB", "repo": "api", "path": "src/generated/tables.rs", "at": "main"}));
    assert_eq!(links(&file.raw)[0]["uri"], "bitbucket://projects/BB/repos/api/files/src/generated/tables.rs?at=main");
    let commit = d.call("get_commit", json!({"project": "BB", "repo": "api", "commit_id": "main"}));
    assert_eq!(links(&commit.raw)[0]["uri"], "bitbucket://projects/BB/repos/api/commits/main");
    // The link is its own content item: the text the model reads is the text alone.
    assert_eq!(pr.raw["content"][0]["type"], "text");
    assert_eq!(pr.raw["content"].as_array().unwrap().len(), 2);
    // A tool that reads no one resource, or an error, links nothing.
    let list = d.call("list_pull_requests", json!({"project": "BB", "repo": "api"}));
    assert!(links(&list.raw).is_empty());
    let missing = d.call("get_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 999}));
    assert!(missing.is_error && links(&missing.raw).is_empty());
}

#[test]
fn a_client_older_than_2025_06_18_gets_no_link_and_2026_07_28_gets_one() {
    let mut old = StackHarness::speaking(Some("2025-03-26"));
    let pr = old.call("get_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 1}));
    assert!(!pr.is_error, "{}", pr.text);
    assert!(links(&pr.raw).is_empty(), "{}", pr.raw);
    let mut newer = StackHarness::speaking(Some("2025-11-25"));
    let pr = newer.call("get_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 1}));
    assert_eq!(links(&pr.raw).len(), 1);
    let mut s = StackHarness::speaking(None);
    let answer = s.request(
        "tools/call",
        stateless(json!({"name": "get_pull_request", "arguments": {"project": "BB", "repo": "api", "pr_id": 1}})),
    );
    assert_eq!(links(&answer["result"]).len(), 1, "{answer}");
}

/// The URIs of a `resources/list` answer.
fn listed_uris(listed: &Value) -> Vec<String> {
    let resources = listed["result"]["resources"].as_array().unwrap_or_else(|| panic!("{listed}"));
    resources.iter().map(|r| r["uri"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn resources_list_offers_the_persons_pull_requests_and_those_awaiting_their_review() {
    let mut d = StackHarness::new();
    let listed = d.request("resources/list", json!({}));
    let uris = listed_uris(&listed);
    // The stand-in's person authors 8 open pull requests and is asked to review 14.
    assert_eq!(uris.len(), 22, "{listed}");
    assert!(listed["result"].get("nextCursor").is_none(), "{listed}");
    let mine = listed["result"]["resources"].as_array().unwrap().iter().find(|r| r["uri"] == PR).unwrap();
    assert_eq!(mine["name"], "BB/api#1");
    assert_eq!(mine["title"], "Add retry with backoff to the HTTP client");
    assert!(mine["description"].as_str().unwrap().starts_with("Your pull request · BB/api #1 · "), "{mine}");
    assert_eq!(mine["mimeType"], "text/plain");
    assert!(mine["annotations"]["lastModified"].as_str().unwrap().ends_with('Z'), "{mine}");
    let reviewing = "bitbucket://projects/BB/repos/api/pull-requests/11";
    let theirs = listed["result"]["resources"].as_array().unwrap().iter().find(|r| r["uri"] == reviewing).unwrap();
    assert!(theirs["description"].as_str().unwrap().starts_with("Reviewing · by "), "{theirs}");
    // Two reads: the dashboard (author, open) and the reviewer inbox, 25 of each.
    assert_eq!(d.requests.len(), 2, "{:?}", d.requests);
    assert!(d.requests.iter().any(|r| r.contains("/dashboard/pull-requests") && r.contains("role=AUTHOR")));
    assert!(d.requests.iter().any(|r| r.contains("/inbox/pull-requests") && r.contains("limit=25")));
    // A listed resource reads.
    let read = d.request("resources/read", json!({"uri": reviewing}));
    assert!(read["result"]["contents"][0]["text"].as_str().unwrap().contains("#11"), "{read}");
}

#[test]
fn resources_list_pages_each_list_with_its_own_cursor() {
    let mut d = StackHarness::new();
    // The inbox says it goes on at 25; the dashboard has ended.
    d.rewrite_answers(|request, answer| {
        if request.path.contains("/inbox/pull-requests") && !request.path.ends_with("/count") {
            answer["isLastPage"] = json!(false);
            answer["nextPageStart"] = json!(25);
        }
    });
    let first = d.request("resources/list", json!({}));
    let cursor = first["result"]["nextCursor"].as_str().unwrap().to_owned();
    let second = d.request("resources/list", json!({"cursor": cursor}));
    // Only the list that goes on is read again, from where it stopped.
    assert_eq!(d.requests.len(), 1, "{:?}", d.requests);
    assert!(d.requests[0].contains("/inbox/pull-requests") && d.requests[0].contains("start=25"), "{:?}", d.requests);
    assert!(listed_uris(&second).iter().all(|u| listed_uris(&first).contains(u)), "{second}");
    // A cursor bb did not give is invalid params, and nothing is read.
    for bad in [json!("bb1:-:-"), json!("elsewhere"), json!(7)] {
        let refused = d.request("resources/list", json!({"cursor": bad}));
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert!(d.requests.is_empty());
    }
}

#[test]
fn resources_list_keeps_to_the_admins_scope() {
    let mut d = StackHarness::scoped(&["BB/api"]);
    let listed = d.request("resources/list", json!({}));
    let uris = listed_uris(&listed);
    assert!(!uris.is_empty(), "{listed}");
    assert!(uris.iter().all(|u| u.starts_with("bitbucket://projects/BB/repos/api/")), "{uris:?}");
}

#[test]
fn resources_list_on_2026_07_28_is_complete_and_private_to_its_reader() {
    let mut s = StackHarness::speaking(None);
    let listed = s.request("resources/list", stateless(json!({})));
    assert_eq!(listed["result"]["resultType"], "complete", "{listed}");
    assert_eq!(listed["result"]["cacheScope"], "private");
    assert!(listed["result"]["ttlMs"].as_u64().is_some_and(|t| t > 0));
    assert_eq!(listed_uris(&listed).len(), 22);
}

#[test]
fn resources_list_that_cannot_read_bitbucket_says_why_rather_than_list_half() {
    let mut d = StackHarness::new();
    d.fault("/rest/api/latest/inbox/pull-requests", 500, 100, None);
    let listed = d.request("resources/list", json!({}));
    assert_eq!(listed["error"]["code"], -32603, "{listed}");
    let said = listed["error"]["message"].as_str().unwrap();
    assert!(said.starts_with("Could not list the pull requests awaiting your review: "), "{said}");
}

#[test]
fn not_found_is_bitbucket_s_404_not_the_words_of_a_sentence() {
    // A server error whose message happens to say "does not exist" is a failure to read (-32603)…
    let mut d = StackHarness::new();
    d.answer_with(|r| {
        r.path.ends_with("/pull-requests/1").then(|| {
            stack_harness::error_body(
                500,
                "java.lang.IllegalStateException",
                "Pull request #1 does not exist",
                json!({}),
            )
        })
    });
    let read = d.request("resources/read", json!({"uri": PR}));
    assert_eq!(read["error"]["code"], -32603, "{read}");
    // …and Bitbucket's 404, whatever it says, is a missing resource.
    let mut d = StackHarness::new();
    d.answer_with(|r| {
        r.path
            .ends_with("/pull-requests/1")
            .then(|| stack_harness::error_body(404, "com.example.SomethingElseException", "Gone fishing", json!({})))
    });
    let read = d.request("resources/read", json!({"uri": PR}));
    assert_eq!(read["error"]["code"], -32002, "{read}");
}

#[test]
fn resources_list_of_a_bb_with_no_bitbucket_configured_is_empty_not_an_error() {
    let mut d = StackHarness::new();
    d.answer_with(|_| Some(stack_harness::failed(bb_core::FetchErrorKind::NotConfigured, "no server", false)));
    let listed = d.request("resources/list", json!({}));
    assert_eq!(listed["result"], json!({"resources": []}), "{listed}");
}
