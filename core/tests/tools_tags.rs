//! `create_tag` against the stand-in: a tag made at a branch (annotated with a message) is what list_tags then
//! lists; a name already taken is said as such; a failed write is sent once and says its outcome is unknown.
#![allow(clippy::unwrap_used, clippy::panic)]

mod stack_harness;

use serde_json::json;
use stack_harness::StackHarness;

#[test]
fn a_tag_made_at_a_branch_is_listed_at_its_head_and_a_message_makes_it_annotated() {
    let mut d = StackHarness::new();
    let head = d.world.model.repos[&("BB".to_owned(), "api".to_owned())].branches["main"].clone();
    let a = d.call(
        "create_tag",
        json!({"project": "BB", "repo": "api", "name": "v9.9.9", "start_point": "main", "message": "Release 9.9.9"}),
    );
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(d.requests, ["POST /rest/api/latest/projects/BB/repos/api/tags?"]);
    assert_eq!(d.bodies[0], json!({"name": "v9.9.9", "startPoint": "main", "message": "Release 9.9.9"}));
    assert_eq!(a.text, format!("Created annotated tag v9.9.9 at {} in BB/api.", &head[..11]));
    let listed = d.call("list_tags", json!({"project": "BB", "repo": "api", "filter": "v9.9"}));
    assert!(listed.text.contains(&format!("v9.9.9 {} (annotated)", &head[..11])), "{}", listed.text);
    let plain = d.call("create_tag", json!({"project": "BB", "repo": "api", "name": "light", "start_point": "main"}));
    assert!(plain.text.starts_with("Created tag light at "), "{}", plain.text);
    assert_eq!(d.bodies[0], json!({"name": "light", "startPoint": "main"}), "no message, no annotation");
}

#[test]
fn a_tag_that_already_exists_is_said_so_and_nothing_is_created() {
    let mut d = StackHarness::new();
    let existing = d.world.model.repos[&("BB".to_owned(), "api".to_owned())].tags.keys().next().unwrap().clone();
    let a = d.call("create_tag", json!({"project": "BB", "repo": "api", "name": existing, "start_point": "main"}));
    assert!(a.is_error);
    assert!(a.text.starts_with(&format!("Tag {existing} already exists in BB/api (Bitbucket: \"")), "{}", a.text);
    assert!(a.text.contains("nothing was created"), "{}", a.text);
    assert_eq!(d.count("POST", "/tags"), 1);
}

#[test]
fn a_start_point_that_names_nothing_is_refused_in_bitbuckets_words() {
    let mut d = StackHarness::new();
    let a = d.call("create_tag", json!({"project": "BB", "repo": "api", "name": "t", "start_point": "no-such-branch"}));
    assert!(a.is_error);
    assert!(a.text.starts_with("Bitbucket refused the request: "), "{}", a.text);
    assert!(a.text.contains("no-such-branch"), "{}", a.text);
}

#[test]
fn a_tag_write_that_fails_is_sent_once_and_says_its_outcome_is_unknown() {
    let mut d = StackHarness::new();
    d.fault("/rest/api/latest/projects/BB/repos/api/tags", 502, 5, None);
    let a = d.call("create_tag", json!({"project": "BB", "repo": "api", "name": "t", "start_point": "main"}));
    assert!(a.is_error);
    assert_eq!(d.count("POST", "/tags"), 1, "never retried");
    assert!(a.text.contains("outcome is unknown") && a.text.contains("list_tags"), "{}", a.text);
}
