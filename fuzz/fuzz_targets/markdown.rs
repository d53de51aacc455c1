//! Feeds arbitrary text to the Markdown renderer: it must never panic, only produce the element
//! tags the page knows, and only links the page may open.
#![no_main]

use bb_core::fuzzing::markdown::to_tree;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const TAGS: &[&str] = &[
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "ul",
    "ol",
    "li",
    "pre",
    "code",
    "em",
    "strong",
    "del",
    "a",
    "hr",
    "br",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "check",
];

fn check(node: &Value, depth: usize) {
    assert!(depth < 64, "nesting is bounded");
    match node {
        Value::String(_) => {}
        Value::Array(items) => items.iter().for_each(|n| check(n, depth + 1)),
        Value::Object(o) => {
            let tag = o.get("t").and_then(Value::as_str).expect("an element has a tag");
            assert!(TAGS.contains(&tag), "unknown tag {tag}");
            if let Some(href) = o.get("href").and_then(Value::as_str) {
                let lower = href.to_ascii_lowercase();
                assert!(["http://", "https://", "mailto:"].iter().any(|s| lower.starts_with(s)), "unsafe href {href}");
            }
            if let Some(c) = o.get("c") {
                check(c, depth + 1);
            }
        }
        other => panic!("unexpected node {other}"),
    }
}

fuzz_target!(|text: &str| {
    check(&to_tree(text, Some("https://git.example.com")), 0);
});
