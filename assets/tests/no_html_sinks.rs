//! The page never parses a string as HTML (ADR-101): no script may hold an HTML sink.

const SINKS: &[&str] = &[
    "innerHTML",
    "outerHTML",
    "insertAdjacentHTML",
    "document.write",
    "DOMParser",
    "createContextualFragment",
    "srcdoc",
    "setHTMLUnsafe",
];

#[test]
fn view_scripts_build_no_html_from_strings() {
    for (file, script) in bb_assets::SCRIPTS {
        for sink in SINKS {
            assert!(!script.contains(sink), "{file} holds the HTML sink `{sink}`");
        }
    }
    for sink in SINKS {
        assert!(!bb_assets::VIEW_HTML.contains(sink), "the page holds the HTML sink `{sink}`");
    }
}

#[test]
fn the_page_is_one_self_contained_document() {
    let html = bb_assets::VIEW_HTML;
    assert!(html.starts_with("<!doctype html>"));
    assert!(!html.contains("<script src"), "scripts are inlined: the host's CSP allows no other source");
    assert!(!html.contains("<link"), "styles are inlined");
    assert!(!html.contains("http://") && !html.contains("https://"), "the page names no network address");
}
