//! Draft reviews (7.7+), multi-line anchors and suggestions, as a reviewer meets them on BB/api #11: a draft is
//! seen by its author only until `PUT …/review` publishes it, and an applied suggestion is one commit on the source
//! branch.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod common;
use bb_stack::RunningStack;
use common::*;
use serde_json::{Value, json};

const PR11: &str = "/rest/api/latest/projects/BB/repos/api/pull-requests/11";
const REPO: &str = "/rest/api/latest/projects/BB/repos/api";

fn token(user: &str) -> String {
    bearer(&format!("stack-token-{user}"))
}

fn get_as(stack: &RunningStack, user: &str, path: &str) -> Reply {
    send(stack.addr, "GET", path, Some(&token(user)), None).expect("GET")
}

fn call_by(stack: &RunningStack, user: &str, method: &str, path: &str, body: &Value) -> Reply {
    send(stack.addr, method, path, Some(&token(user)), Some(body)).expect("request")
}

fn ok(r: Reply) -> Value {
    assert!((200..300).contains(&r.status), "{}: {}", r.status, String::from_utf8_lossy(&r.body));
    if r.body.is_empty() { Value::Null } else { r.json() }
}

/// The ids of the comments `user` meets in the activity (each activity's comment and its replies).
fn comments_in_activity(stack: &RunningStack, user: &str) -> Vec<u64> {
    fn walk(c: &Value, out: &mut Vec<u64>) {
        out.push(c["id"].as_u64().unwrap());
        for r in c["comments"].as_array().into_iter().flatten() {
            walk(r, out);
        }
    }
    let page = ok(get_as(stack, user, &format!("{PR11}/activities?limit=500")));
    let mut out = Vec::new();
    for a in page["values"].as_array().unwrap() {
        if a.get("comment").is_some() {
            walk(&a["comment"], &mut out);
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

fn actions(stack: &RunningStack, user: &str) -> Vec<String> {
    let page = ok(get_as(stack, user, &format!("{PR11}/activities?limit=500")));
    page["values"].as_array().unwrap().iter().map(|a| a["action"].as_str().unwrap().to_string()).collect()
}

/// Every id in the diff's lines' `commentIds`, as `user` reads the diff.
fn ids_on_lines(stack: &RunningStack, user: &str) -> Vec<u64> {
    let d = ok(get_as(stack, user, &format!("{PR11}/diff/src/paging.rs")));
    let mut out: Vec<u64> = d["diffs"][0]["hunks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|h| h["segments"].as_array().unwrap().clone())
        .flat_map(|s| s["lines"].as_array().unwrap().clone())
        .flat_map(|l| l["commentIds"].as_array().cloned().unwrap_or_default())
        .map(|id| id.as_u64().unwrap())
        .collect();
    out.sort_unstable();
    out
}

fn comment_count(stack: &RunningStack, user: &str) -> u64 {
    ok(get_as(stack, user, PR11))["properties"]["commentCount"].as_u64().unwrap_or(0)
}

fn active_comments(stack: &RunningStack, user: &str) -> u64 {
    let page = ok(get_as(stack, user, &format!("{PR11}/changes")));
    page["values"][0]["properties"]["activeComments"].as_u64().unwrap_or(0)
}

/// The id of the seeded comment on #11 whose text contains `needle`, as its author or anyone sees it.
fn seeded(stack: &RunningStack, user: &str, needle: &str) -> u64 {
    let page = ok(get_as(stack, user, &format!("{PR11}/activities?limit=500")));
    let found =
        page["values"].as_array().unwrap().iter().find(|a| {
            a["comment"]["text"].as_str().is_some_and(|t| t.contains(needle)) && a["commentAction"] == "ADDED"
        });
    found.unwrap_or_else(|| panic!("no comment with {needle:?} for {user}"))["comment"]["id"].as_u64().unwrap()
}

fn line_anchor(line: u64, line_type: &str) -> Value {
    json!({ "path": "src/paging.rs", "line": line, "lineType": line_type, "fileType": "TO" })
}

fn head(stack: &RunningStack) -> String {
    ok(get(stack, PR11))["fromRef"]["latestCommit"].as_str().unwrap().to_string()
}

fn raw_lines(stack: &RunningStack, at: &str) -> Vec<String> {
    let r = get(stack, &format!("{REPO}/raw/src/paging.rs?at={at}"));
    assert_eq!(r.status, 200);
    String::from_utf8(r.body).unwrap().lines().map(str::to_string).collect()
}

#[test]
fn a_draft_and_its_reply_are_seen_by_their_author_only_until_the_review_is_finished() {
    let stack = start();
    let (count, lines, active) =
        (comment_count(&stack, "carol"), ids_on_lines(&stack, "carol"), active_comments(&stack, "carol"));
    let draft = ok(call_by(
        &stack,
        "alice",
        "POST",
        &format!("{PR11}/comments"),
        &json!({ "text": "Why not `or_else`?", "state": "PENDING", "anchor": line_anchor(22, "CONTEXT") }),
    ));
    assert_eq!(draft["state"], "PENDING");
    assert!(draft.get("pending").is_none() && draft.get("anchored").is_none(), "{draft}");
    let id = draft["id"].as_u64().unwrap();
    let reply = ok(call_by(
        &stack,
        "alice",
        "POST",
        &format!("{PR11}/comments"),
        &json!({ "text": "(and a test)", "parent": { "id": id } }),
    ));
    assert_eq!(reply["state"], "PENDING", "a reply under a draft is a draft");
    let reply_id = reply["id"].as_u64().unwrap();

    assert!(comments_in_activity(&stack, "alice").contains(&id));
    assert!(ids_on_lines(&stack, "alice").contains(&id));
    assert_eq!(ok(get_as(&stack, "alice", &format!("{PR11}/comments/{id}")))["comments"][0]["id"], reply_id);

    let theirs = get_as(&stack, "carol", &format!("{PR11}/comments/{id}"));
    assert_eq!(theirs.status, 404);
    assert_eq!(theirs.json()["errors"][0]["exceptionName"], "com.atlassian.bitbucket.comment.NoSuchCommentException");
    assert_eq!(get_as(&stack, "carol", &format!("{PR11}/comments/{reply_id}")).status, 404);
    assert!(!comments_in_activity(&stack, "carol").iter().any(|c| [id, reply_id].contains(c)));
    assert_eq!(ids_on_lines(&stack, "carol"), lines);
    assert_eq!(active_comments(&stack, "carol"), active);
    assert_eq!(comment_count(&stack, "carol"), count);
    assert_eq!(comment_count(&stack, "alice"), count, "drafts are counted for nobody");
    let edit = call_by(&stack, "carol", "PUT", &format!("{PR11}/comments/{id}"), &json!({ "version": 0, "text": "x" }));
    assert_eq!(edit.status, 404, "another user cannot edit a draft they cannot see");
    let edited = ok(call_by(
        &stack,
        "alice",
        "PUT",
        &format!("{PR11}/comments/{id}"),
        &json!({ "version": 0, "text": "Why not `or_else`? It is lazy." }),
    ));
    assert_eq!((edited["state"].as_str(), edited["version"].as_u64()), (Some("PENDING"), Some(1)));

    let head = head(&stack);
    let done = ok(call_by(
        &stack,
        "alice",
        "PUT",
        &format!("{PR11}/review"),
        &json!({ "commentText": "Two small things.", "participantStatus": "NEEDS_WORK", "lastReviewedCommit": head }),
    ));
    assert_eq!((done["user"]["slug"].as_str(), done["role"].as_str()), (Some("alice"), Some("REVIEWER")));
    assert_eq!((done["status"].as_str(), done["lastReviewedCommit"].as_str()), (Some("NEEDS_WORK"), Some(&*head)));

    let published = ok(get_as(&stack, "carol", &format!("{PR11}/comments/{id}")));
    assert_eq!(published["state"], "OPEN");
    assert_eq!(published["comments"][0]["state"], "OPEN");
    assert!(comments_in_activity(&stack, "carol").contains(&reply_id));
    assert!(ids_on_lines(&stack, "carol").contains(&id));
    assert_eq!(active_comments(&stack, "carol"), active + 2, "this draft and alice's seeded one");
    // This draft, its reply, alice's seeded draft and the review's general comment.
    assert_eq!(comment_count(&stack, "carol"), count + 4);
    let seen = actions(&stack, "carol");
    assert_eq!(&seen[..3], ["REVIEW_FINISHED", "REVIEWED", "COMMENTED"], "newest first");
    assert_eq!(ok(get_as(&stack, "alice", &format!("{PR11}/review")))["size"], 0, "nothing left pending");
}

#[test]
fn setting_a_status_through_participants_publishes_no_draft() {
    let stack = start();
    let draft = seeded(&stack, "alice", "Draft: should this say");
    let r =
        ok(call_by(&stack, "alice", "PUT", &format!("{PR11}/participants/alice"), &json!({ "status": "APPROVED" })));
    assert_eq!(r["status"], "APPROVED");
    assert_eq!(get_as(&stack, "bob", &format!("{PR11}/comments/{draft}")).status, 404);
    assert_eq!(ok(get_as(&stack, "alice", &format!("{PR11}/comments/{draft}")))["state"], "PENDING");
    assert_eq!(ok(get_as(&stack, "alice", &format!("{PR11}/review")))["values"][0]["id"], draft);
}

#[test]
fn a_stale_last_reviewed_commit_is_409_and_changes_nothing() {
    let stack = start();
    let before = (
        ok(get_as(&stack, "alice", PR11)),
        actions(&stack, "alice"),
        ok(get_as(&stack, "alice", &format!("{PR11}/review"))),
    );
    let stale = "0000000000000000000000000000000000000000";
    let r = call_by(
        &stack,
        "alice",
        "PUT",
        &format!("{PR11}/review"),
        &json!({ "lastReviewedCommit": stale, "participantStatus": "APPROVED", "commentText": "Ship it" }),
    );
    assert_eq!(r.status, 409);
    let e = &r.json()["errors"][0];
    assert_eq!(e["exceptionName"], "com.atlassian.bitbucket.pull.PullRequestOutOfDateException");
    assert!(e["message"].as_str().unwrap().contains("has been updated"), "{e}");
    let after = (
        ok(get_as(&stack, "alice", PR11)),
        actions(&stack, "alice"),
        ok(get_as(&stack, "alice", &format!("{PR11}/review"))),
    );
    assert_eq!(after, before);
}

#[test]
fn finishing_is_refused_for_the_authors_status_and_on_a_closed_pull_request() {
    let stack = start();
    let author = call_by(&stack, "dave", "PUT", &format!("{PR11}/review"), &json!({ "participantStatus": "APPROVED" }));
    assert_eq!(author.status, 400);
    let merged = call_by(&stack, "alice", "PUT", &format!("{REPO}/pull-requests/4/review"), &json!({}));
    assert_eq!(merged.status, 409);
    assert_eq!(
        merged.json()["errors"][0]["exceptionName"],
        "com.atlassian.bitbucket.pull.IllegalPullRequestStateException"
    );
}

#[test]
fn the_review_page_holds_the_callers_pending_roots_oldest_first() {
    let stack = start();
    let mine = seeded(&stack, "alice", "Draft: should this say");
    let later = ok(call_by(
        &stack,
        "alice",
        "POST",
        &format!("{PR11}/comments"),
        &json!({ "text": "General draft", "state": "pending" }),
    ));
    let page = ok(get_as(&stack, "alice", &format!("{PR11}/review")));
    let ids: Vec<u64> = page["values"].as_array().unwrap().iter().map(|c| c["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, [mine, later["id"].as_u64().unwrap()]);
    assert_eq!(
        (page["size"].as_u64(), page["isLastPage"].as_bool(), page["start"].as_u64()),
        (Some(2), Some(true), Some(0))
    );
    assert_eq!(page["values"][0]["anchor"]["line"], 21);
    let bobs = ok(get_as(&stack, "bob", &format!("{PR11}/review")));
    assert_eq!(bobs["size"], 1);
    assert!(bobs["values"][0]["text"].as_str().unwrap().starts_with("Bob's draft"));
    assert_eq!(ok(get_as(&stack, "carol", &format!("{PR11}/review")))["size"], 0);
}

#[test]
fn discarding_a_review_removes_only_the_callers_drafts() {
    let stack = start();
    let alices = seeded(&stack, "alice", "Draft: should this say");
    let bobs = seeded(&stack, "bob", "Bob's draft");
    let reply = ok(call_by(
        &stack,
        "alice",
        "POST",
        &format!("{PR11}/comments"),
        &json!({ "text": "more", "parent": { "id": alices } }),
    ));
    let r = send(stack.addr, "DELETE", &format!("{PR11}/review"), Some(&token("alice")), None).unwrap();
    assert_eq!(r.status, 204);
    for id in [alices, reply["id"].as_u64().unwrap()] {
        assert_eq!(get_as(&stack, "alice", &format!("{PR11}/comments/{id}")).status, 404);
    }
    assert_eq!(ok(get_as(&stack, "alice", &format!("{PR11}/review")))["size"], 0);
    assert_eq!(ok(get_as(&stack, "bob", &format!("{PR11}/comments/{bobs}")))["state"], "PENDING");
    assert_eq!(ok(get_as(&stack, "bob", &format!("{PR11}/review")))["size"], 1);
    assert_eq!(actions(&stack, "alice")[0], "REVIEW_DISCARDED");
    assert!(!actions(&stack, "bob").contains(&"REVIEW_DISCARDED".to_string()), "only the caller sees it");
    assert!(!comments_in_activity(&stack, "alice").contains(&alices));
}

#[test]
fn alice_never_sees_bobs_draft_and_bob_never_sees_alices() {
    let stack = start();
    let bobs = seeded(&stack, "bob", "Bob's draft");
    let alices = seeded(&stack, "alice", "Draft: should this say");
    assert!(!comments_in_activity(&stack, "alice").contains(&bobs));
    assert!(!ids_on_lines(&stack, "alice").contains(&bobs));
    assert!(ids_on_lines(&stack, "alice").contains(&alices));
    assert!(!ids_on_lines(&stack, "bob").contains(&alices));
    assert!(ids_on_lines(&stack, "bob").contains(&bobs));
    assert_eq!(get_as(&stack, "alice", &format!("{PR11}/comments/{bobs}")).status, 404);
    let listed = ok(get_as(&stack, "alice", &format!("{PR11}/comments?path=src/paging.rs")));
    assert!(listed["values"].as_array().unwrap().iter().all(|c| c["id"] != bobs));
    let reply = call_by(
        &stack,
        "alice",
        "POST",
        &format!("{PR11}/comments"),
        &json!({ "text": "hi", "parent": { "id": bobs } }),
    );
    assert_eq!(reply.status, 404, "no reply to a draft one cannot see");
}

fn apply(stack: &RunningStack, user: &str, comment: u64, body: &Value) -> Reply {
    call_by(stack, user, "POST", &format!("{PR11}/comments/{comment}/apply-suggestion"), body)
}

#[test]
fn applying_a_suggestion_makes_one_commit_with_exactly_the_proposed_lines_and_rescopes_once() {
    let stack = start();
    let suggestion = seeded(&stack, "alice", "```suggestion");
    let before = ok(get(&stack, PR11));
    let (old_head, version) = (head(&stack), before["version"].as_u64().unwrap());
    let old_lines = raw_lines(&stack, &old_head);
    let body = json!({ "suggestionIndex": 0, "commentVersion": 0, "pullRequestVersion": version, "message": "Apply bob's suggestion" });
    let commit = ok(apply(&stack, "dave", suggestion, &body));
    assert_eq!(commit["message"], "Apply bob's suggestion");
    assert_eq!(commit["author"]["name"], "dave");
    assert_eq!(commit["parents"][0]["id"], old_head.as_str());

    let after = ok(get(&stack, PR11));
    assert_eq!(after["fromRef"]["latestCommit"], commit["id"]);
    assert_eq!(after["version"], version + 1);
    let new_commits = ok(get(&stack, &format!("{REPO}/commits?since={old_head}&until=hotfix/empty-pages")));
    assert_eq!(new_commits["size"], 1, "exactly one commit");
    assert_eq!(new_commits["values"][0]["id"], commit["id"]);
    let mut want = old_lines.clone();
    want[22] = "    self.next_page_start.or_else(|| Some(self.start + self.size))".to_string();
    assert_eq!(raw_lines(&stack, commit["id"].as_str().unwrap()), want);
    let acts = ok(get(&stack, &format!("{PR11}/activities")));
    assert_eq!(acts["values"][0]["action"], "RESCOPED");
    assert_eq!(acts["values"][0]["added"]["commits"][0]["id"], commit["id"]);

    let again = apply(&stack, "dave", suggestion, &body);
    assert_eq!(again.status, 409);
    assert_eq!(
        again.json()["errors"][0]["exceptionName"],
        "com.atlassian.bitbucket.pull.PullRequestOutOfDateException"
    );
    assert_eq!(head(&stack), commit["id"].as_str().unwrap(), "nothing applied twice");

    let read = ok(get(&stack, &format!("{PR11}/comments/{suggestion}")));
    assert_eq!(read["properties"]["appliedSuggestions"], json!([0]), "the comment records the suggestion applied");
    let fresh = json!({ "suggestionIndex": 0, "commentVersion": read["version"], "pullRequestVersion": version + 1, "message": "again" });
    let twice = apply(&stack, "dave", suggestion, &fresh);
    assert_eq!(twice.status, 409, "an applied suggestion is not applied again");
    assert_eq!(twice.json()["errors"][0]["message"], "This suggestion has already been applied.");
    assert_eq!(head(&stack), commit["id"].as_str().unwrap(), "nothing applied twice");
}

#[test]
fn a_suggestion_whose_lines_changed_since_is_refused() {
    let stack = start();
    let bobs = seeded(&stack, "alice", "```suggestion");
    let text = "Or simply:\n```suggestion\n    self.next_page_start.or(Some(self.start + self.size)) // fallback\n```";
    let carols = ok(call_by(
        &stack,
        "carol",
        "POST",
        &format!("{PR11}/comments"),
        &json!({ "text": text, "anchor": line_anchor(23, "ADDED") }),
    ));
    let version = ok(get(&stack, PR11))["version"].as_u64().unwrap();
    let first = json!({ "suggestionIndex": 0, "commentVersion": 0, "pullRequestVersion": version, "message": "bob's" });
    ok(apply(&stack, "dave", bobs, &first));
    let moved = head(&stack);
    let second =
        json!({ "suggestionIndex": 0, "commentVersion": 0, "pullRequestVersion": version + 1, "message": "carol's" });
    let r = apply(&stack, "dave", carols["id"].as_u64().unwrap(), &second);
    assert_eq!(r.status, 409);
    assert!(r.json()["errors"][0]["message"].as_str().unwrap().contains("have changed"), "{}", r.json());
    assert_eq!(head(&stack), moved);
}

#[test]
fn a_multi_line_suggestion_replaces_every_line_it_spans() {
    let stack = start();
    let old_head = head(&stack);
    let old = raw_lines(&stack, &old_head);
    let mut anchor = line_anchor(23, "ADDED");
    anchor["multilineMarker"] = json!({ "startLine": 20, "startLineType": "CONTEXT" });
    let text = "One expression:\n```suggestion\n    if self.is_last_page { None }\n    else { self.next_page_start.or(Some(self.start + self.size)) }\n```";
    let c =
        ok(call_by(&stack, "carol", "POST", &format!("{PR11}/comments"), &json!({ "text": text, "anchor": anchor })));
    let version = ok(get(&stack, PR11))["version"].as_u64().unwrap();
    let body = json!({ "suggestionIndex": 0, "commentVersion": 0, "pullRequestVersion": version, "message": "One expression" });
    let commit = ok(apply(&stack, "alice", c["id"].as_u64().unwrap(), &body));
    let mut want = old[..19].to_vec();
    want.push("    if self.is_last_page { None }".into());
    want.push("    else { self.next_page_start.or(Some(self.start + self.size)) }".into());
    want.extend_from_slice(&old[23..]);
    assert_eq!(raw_lines(&stack, commit["id"].as_str().unwrap()), want);
}

#[test]
fn apply_reads_message_not_commit_message_and_refuses_what_it_cannot_apply() {
    let stack = start();
    let bobs = seeded(&stack, "alice", "```suggestion");
    let multi = seeded(&stack, "alice", "could be one `match`");
    let draft = seeded(&stack, "alice", "Draft: should this say");
    let old_head = head(&stack);
    let version = ok(get(&stack, PR11))["version"].as_u64().unwrap();
    let body = |index: u64, cv: u64, pv: u64| json!({ "suggestionIndex": index, "commentVersion": cv, "pullRequestVersion": pv, "message": "m" });
    let mut no_message = body(0, 0, version);
    no_message.as_object_mut().unwrap().remove("message");
    no_message["commitMessage"] = json!("the spec's name");
    for b in [
        no_message,
        json!({ "suggestionIndex": 0, "commentVersion": 0, "pullRequestVersion": version, "message": "  " }),
    ] {
        let r = apply(&stack, "dave", bobs, &b);
        assert_eq!(r.status, 400);
        assert_eq!(r.json()["errors"][0]["message"], "'message' cannot be null or empty");
    }
    let refused = [
        (bobs, body(1, 0, version), 400, Some("com.atlassian.bitbucket.validation.ArgumentValidationException")),
        (multi, body(0, 0, version), 400, Some("com.atlassian.bitbucket.validation.ArgumentValidationException")),
        (draft, body(0, 0, version), 400, Some("com.atlassian.bitbucket.validation.ArgumentValidationException")),
        (bobs, body(0, 3, version), 409, Some("com.atlassian.bitbucket.comment.CommentOutOfDateException")),
        (bobs, body(0, 0, version + 1), 409, Some("com.atlassian.bitbucket.pull.PullRequestOutOfDateException")),
    ];
    for (comment, b, status, exception) in refused {
        let r = apply(&stack, "alice", comment, &b);
        assert_eq!(r.status, status, "{comment} {b}: {}", String::from_utf8_lossy(&r.body));
        assert_eq!(r.json()["errors"][0]["exceptionName"].as_str(), exception);
    }
    assert_eq!(apply(&stack, "carol", draft, &body(0, 0, version)).status, 404, "someone else's draft is no comment");
    assert_eq!(head(&stack), old_head, "nothing was committed");
}

#[test]
fn an_old_server_has_no_review_endpoints_and_publishes_a_pending_comment() {
    let stack = start();
    let set = ok(control(&stack, "PUT", "/_stack/application", &json!({ "version": "7.6.0" })));
    assert_eq!((set["version"].as_str(), set["buildNumber"].as_str()), (Some("7.6.0"), Some("7006000")));
    assert_eq!(ok(get(&stack, "/rest/api/latest/application-properties"))["version"], "7.6.0");
    assert_eq!(get(&stack, &format!("{PR11}/review")).status, 404);
    assert_eq!(call(&stack, "PUT", &format!("{PR11}/review"), &json!({})).status, 404);
    assert_eq!(
        send(stack.addr, "DELETE", &format!("{PR11}/review"), Some(&bearer(&stack.token)), None).unwrap().status,
        404
    );
    let c = ok(call(
        &stack,
        "POST",
        &format!("{PR11}/comments"),
        &json!({ "text": "Meant as a draft", "state": "PENDING" }),
    ));
    assert_eq!(c["state"], "OPEN", "a 7.6 server knows no drafts");
    let id = c["id"].as_u64().unwrap();
    assert_eq!(ok(get_as(&stack, "carol", &format!("{PR11}/comments/{id}")))["text"], "Meant as a draft");
    assert_eq!(control(&stack, "PUT", "/_stack/application", &json!({ "version": "seven" })).status, 400);
    ok(control(&stack, "POST", "/_stack/reset", &json!({})));
    assert_eq!(ok(control(&stack, "GET", "/_stack/application", &Value::Null))["version"], "9.4.0");
    assert_eq!(get(&stack, &format!("{PR11}/review")).status, 200);
}

#[test]
fn a_multi_line_marker_is_echoed_with_the_diffs_hashes_and_checked() {
    let stack = start();
    let pr = ok(get(&stack, PR11));
    let mut anchor = line_anchor(23, "ADDED");
    anchor["multilineMarker"] = json!({ "startLine": 21, "startLineType": "CONTEXT" });
    let c = ok(call(&stack, "POST", &format!("{PR11}/comments"), &json!({ "text": "These lines", "anchor": anchor })));
    assert_eq!(c["anchor"]["multilineMarker"], json!({ "startLine": 21, "startLineType": "CONTEXT" }));
    assert_eq!((c["anchor"]["line"].as_u64(), c["anchor"]["lineType"].as_str()), (Some(23), Some("ADDED")));
    assert_eq!(c["anchor"]["fromHash"], pr["toRef"]["latestCommit"]);
    assert_eq!(c["anchor"]["toHash"], pr["fromRef"]["latestCommit"]);
    let seeded_multi = seeded(&stack, "carol", "could be one `match`");
    let read = ok(get_as(&stack, "carol", &format!("{PR11}/comments/{seeded_multi}")));
    assert_eq!(read["anchor"]["multilineMarker"], json!({ "startLine": 20, "startLineType": "CONTEXT" }));
    for marker in
        [json!({ "startLine": 24, "startLineType": "ADDED" }), json!({ "startLine": 0 }), json!({ "startLine": "20" })]
    {
        let mut bad = line_anchor(23, "ADDED");
        bad["multilineMarker"] = marker.clone();
        let r = call(&stack, "POST", &format!("{PR11}/comments"), &json!({ "text": "x", "anchor": bad }));
        assert_eq!(r.status, 400, "{marker}");
        assert_eq!(r.json()["errors"][0]["context"], "multilineMarker");
    }
}
