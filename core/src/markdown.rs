//! Markdown from Bitbucket (descriptions, comments) as a node tree the view page draws with
//! `el()`, so the page never parses a string as HTML (ADR-101).
//!
//! Parsed with pulldown-cmark (CommonMark plus tables, strikethrough and task lists, as
//! Bitbucket renders them). Raw HTML, inline or in blocks, becomes text. Only `http`, `https`
//! and `mailto` links survive; a link with any other scheme (`javascript:`, `data:`, `file:`)
//! keeps its text and loses its target. A relative link is resolved against the server's base
//! URL when one is given. Images are never loaded (the page's frame admits only `data:` images):
//! an image becomes a link to it, labelled with its alt text.
//!
//! The tree is JSON: a text node is a string; an element is `{"t": tag, "c": [children], ...}`
//! with tags `p h1..h6 blockquote ul ol li pre code em strong del a hr br table thead tbody tr
//! th td check`. `ol` may carry `start`; `pre` carries `text` and `lang`; `code` carries `text`;
//! `a` carries `href`; `th`/`td` carry `align`; `check` carries `checked`.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use serde_json::{Map, Value, json};

/// How deep elements may nest; deeper content is flattened into its ancestor, so hostile input
/// cannot make the page recurse without bound.
pub const MAX_DEPTH: usize = 24;

/// Renders `source` as a node tree (an array of block nodes).
pub fn to_tree(source: &str, base_url: Option<&str>) -> Value {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut b = Builder { stack: vec![Frame::root()], base_url, table_aligns: Vec::new(), cell: 0, in_head: false };
    for event in Parser::new_ext(source, options) {
        b.event(event);
    }
    while b.stack.len() > 1 {
        b.close();
    }
    Value::Array(b.stack.pop().map(|f| f.children).unwrap_or_default())
}

/// The ```suggestion blocks of a comment, in order, each as its lines: the code blocks whose info string's first
/// word is `suggestion`, found by the parser that builds the page's tree, so the i-th is the tree's i-th `pre` of
/// that language. A block's text ends with a newline, which is not a line of its own; an empty block proposes
/// deleting the lines. [Bitbucket's suggested changes: a fenced block named `suggestion` in a line comment]
pub fn suggestions(source: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut open: Option<String> = None;
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(source, options) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info)))
                if info.split_whitespace().next() == Some("suggestion") =>
            {
                open = Some(String::new());
            }
            Event::Text(t) => {
                if let Some(o) = open.as_mut() {
                    o.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(text) = open.take() {
                    let body = text.strip_suffix('\n').unwrap_or(&text);
                    out.push(if text.is_empty() { vec![] } else { body.split('\n').map(str::to_owned).collect() });
                }
            }
            _ => {}
        }
    }
    out
}

/// An element being built.
struct Frame {
    /// `None` for the root and for an element flattened away (past [`MAX_DEPTH`] or unknown).
    tag: Option<&'static str>,
    attrs: Map<String, Value>,
    children: Vec<Value>,
    /// For `pre` and `code`: the text gathered, kept as an attribute rather than children.
    text: Option<String>,
}

impl Frame {
    fn root() -> Frame {
        Frame { tag: None, attrs: Map::new(), children: Vec::new(), text: None }
    }
}

struct Builder<'a> {
    stack: Vec<Frame>,
    base_url: Option<&'a str>,
    table_aligns: Vec<Alignment>,
    cell: usize,
    in_head: bool,
}

impl Builder<'_> {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(end) => self.end(end),
            Event::Text(t) => self.text(&t),
            Event::Code(t) => self.leaf(json!({"t": "code", "text": t.as_ref()})),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t),
            // Raw HTML is shown as the text it is.
            Event::Html(t) | Event::InlineHtml(t) => self.text(&t),
            Event::FootnoteReference(t) => self.text(&format!("[{t}]")),
            Event::SoftBreak => self.text("\n"),
            Event::HardBreak => self.leaf(json!({"t": "br"})),
            Event::Rule => self.leaf(json!({"t": "hr"})),
            Event::TaskListMarker(checked) => self.leaf(json!({"t": "check", "checked": checked})),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        let mut attrs = Map::new();
        let name: Option<&'static str> = match tag {
            Tag::Paragraph => Some("p"),
            Tag::Heading { level, .. } => Some(match level {
                HeadingLevel::H1 => "h1",
                HeadingLevel::H2 => "h2",
                HeadingLevel::H3 => "h3",
                HeadingLevel::H4 => "h4",
                HeadingLevel::H5 => "h5",
                HeadingLevel::H6 => "h6",
            }),
            Tag::BlockQuote(_) => Some("blockquote"),
            Tag::CodeBlock(kind) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.split_whitespace().next().unwrap_or_default().to_owned(),
                    CodeBlockKind::Indented => String::new(),
                };
                attrs.insert("lang".into(), Value::String(lang));
                Some("pre")
            }
            Tag::HtmlBlock => Some("p"),
            Tag::List(Some(start)) => {
                attrs.insert("start".into(), Value::from(start));
                Some("ol")
            }
            Tag::List(None) => Some("ul"),
            Tag::Item => Some("li"),
            Tag::Table(aligns) => {
                self.table_aligns = aligns;
                Some("table")
            }
            Tag::TableHead => {
                self.in_head = true;
                self.cell = 0;
                Some("thead")
            }
            Tag::TableRow => {
                self.cell = 0;
                Some("tr")
            }
            Tag::TableCell => {
                let align = match self.table_aligns.get(self.cell) {
                    Some(Alignment::Left) => "left",
                    Some(Alignment::Center) => "center",
                    Some(Alignment::Right) => "right",
                    _ => "",
                };
                self.cell += 1;
                if !align.is_empty() {
                    attrs.insert("align".into(), Value::from(align));
                }
                Some(if self.in_head { "th" } else { "td" })
            }
            Tag::Emphasis => Some("em"),
            Tag::Strong => Some("strong"),
            Tag::Strikethrough => Some("del"),
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                match safe_href(&dest_url, self.base_url) {
                    Some(href) => {
                        attrs.insert("href".into(), Value::String(href));
                        Some("a")
                    }
                    // The text stays; the target goes.
                    None => None,
                }
            }
            // Footnote definitions, definition lists, metadata, super/subscript: their content,
            // flattened into the parent.
            _ => None,
        };
        let tag = if self.stack.len() > MAX_DEPTH { None } else { name };
        let text = (tag == Some("pre")).then(String::new);
        self.stack.push(Frame { tag, attrs, children: Vec::new(), text });
    }

    fn end(&mut self, end: TagEnd) {
        if matches!(end, TagEnd::TableHead) {
            self.in_head = false;
            // pulldown-cmark puts header cells straight under the head: wrap them in a row.
            if let Some(top) = self.stack.last_mut()
                && top.tag == Some("thead")
            {
                let cells = std::mem::take(&mut top.children);
                top.children.push(json!({"t": "tr", "c": cells}));
            }
        }
        if matches!(end, TagEnd::Table) {
            // Rows after the head form the body.
            if let Some(top) = self.stack.last_mut()
                && top.tag == Some("table")
            {
                let mut head = Vec::new();
                let mut rows = Vec::new();
                for child in std::mem::take(&mut top.children) {
                    if child.get("t").and_then(Value::as_str) == Some("thead") {
                        head.push(child);
                    } else {
                        rows.push(child);
                    }
                }
                top.children = head;
                top.children.push(json!({"t": "tbody", "c": rows}));
            }
        }
        self.close();
    }

    /// Closes the innermost element and attaches it to its parent.
    fn close(&mut self) {
        if self.stack.len() <= 1 {
            return;
        }
        let Some(frame) = self.stack.pop() else { return };
        match frame.tag {
            Some(tag) => {
                let mut node = frame.attrs;
                node.insert("t".into(), Value::from(tag));
                if let Some(text) = frame.text {
                    node.insert("text".into(), Value::String(text));
                } else {
                    node.insert("c".into(), Value::Array(frame.children));
                }
                self.leaf(Value::Object(node));
            }
            None => {
                for child in frame.children {
                    match child {
                        Value::String(s) => self.text(&s),
                        other => self.leaf(other),
                    }
                }
            }
        }
    }

    fn text(&mut self, text: &str) {
        let Some(top) = self.stack.last_mut() else { return };
        if let Some(t) = top.text.as_mut() {
            t.push_str(text);
            return;
        }
        if let Some(Value::String(last)) = top.children.last_mut() {
            last.push_str(text);
        } else {
            top.children.push(Value::String(text.to_owned()));
        }
    }

    fn leaf(&mut self, node: Value) {
        let Some(top) = self.stack.last_mut() else { return };
        if let Some(t) = top.text.as_mut() {
            // Inside a code block everything is text.
            if let Some(s) = node.get("text").and_then(Value::as_str) {
                t.push_str(s);
            }
            return;
        }
        top.children.push(node);
    }
}

/// The link target if it may be opened: `http`, `https` or `mailto`, or a path resolved against
/// the server's base URL. Anything else (`javascript:`, `data:`, `vbscript:`, `file:`, a
/// protocol-relative `//host`) is refused.
pub fn safe_href(dest: &str, base_url: Option<&str>) -> Option<String> {
    let dest = dest.trim();
    // Browsers ignore ASCII tab and newline inside a scheme (`java\tscript:`): refuse any control.
    if dest.is_empty() || dest.chars().any(char::is_control) {
        return None;
    }
    let lower = dest.to_ascii_lowercase();
    if ["http://", "https://", "mailto:"].iter().any(|s| lower.starts_with(s)) {
        return Some(dest.to_owned());
    }
    if dest.starts_with('/') && !dest.starts_with("//") {
        let base = base_url?.trim_end_matches('/');
        let lower_base = base.to_ascii_lowercase();
        if lower_base.starts_with("http://") || lower_base.starts_with("https://") {
            return Some(format!("{base}{dest}"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    fn tree(md: &str) -> Value {
        to_tree(md, Some("https://git.example.com/bitbucket"))
    }

    #[test]
    fn paragraphs_headings_and_emphasis_become_elements() {
        assert_eq!(
            tree("# Title\n\nSome *em* and **strong** and ~~gone~~."),
            json!([
                {"t": "h1", "c": ["Title"]},
                {"t": "p", "c": ["Some ", {"t": "em", "c": ["em"]}, " and ", {"t": "strong", "c": ["strong"]}, " and ", {"t": "del", "c": ["gone"]}, "."]}
            ])
        );
    }

    #[test]
    fn raw_html_becomes_text() {
        let t = tree("Hi <script>alert(1)</script> there\n\n<div onclick=\"x()\">block</div>\n");
        let s = t.to_string();
        assert!(s.contains("<script>alert(1)</script>"), "{s}");
        assert!(s.contains("<div onclick=\\\"x()\\\">block</div>"), "{s}");
        assert!(!s.contains("\"t\":\"script\"") && !s.contains("\"t\":\"div\""));
    }

    #[test]
    fn only_web_and_mail_links_survive() {
        assert_eq!(tree("[a](https://x.test/p)")[0]["c"][0], json!({"t": "a", "href": "https://x.test/p", "c": ["a"]}));
        assert_eq!(tree("[m](mailto:a@b.test)")[0]["c"][0]["href"], "mailto:a@b.test");
        for bad in [
            "javascript:alert(1)",
            "JAVASCRIPT:alert(1)",
            "data:text/html,x",
            "vbscript:x",
            "file:///etc/passwd",
            "//evil.test/x",
        ] {
            let t = tree(&format!("[click]({bad})"));
            assert_eq!(t[0]["c"], json!(["click"]), "{bad}: the text stays, the target goes");
        }
        assert_eq!(tree("<javascript:alert(1)>")[0]["c"], json!(["javascript:alert(1)"]));
    }

    #[test]
    fn relative_links_resolve_against_the_server() {
        assert_eq!(
            tree("[pr](/projects/P/repos/r/pull-requests/1)")[0]["c"][0]["href"],
            "https://git.example.com/bitbucket/projects/P/repos/r/pull-requests/1"
        );
        assert_eq!(to_tree("[pr](/x)", None)[0]["c"], json!(["pr"]));
    }

    #[test]
    fn images_become_links_labelled_with_their_alt_text() {
        assert_eq!(
            tree("![diagram](https://x.test/d.png)")[0]["c"][0],
            json!({"t": "a", "href": "https://x.test/d.png", "c": ["diagram"]})
        );
    }

    #[test]
    fn suggestion_blocks_are_read_in_order_as_lines_and_match_the_trees_pre_nodes() {
        let text = "Use a constant:\n\n```suggestion\nconst A: u32 = 2;\nlet b = A;\n```\n\n```rust\nx\n```\n\n~~~suggestion\n~~~\n";
        assert_eq!(
            suggestions(text),
            vec![vec!["const A: u32 = 2;".to_owned(), "let b = A;".to_owned()], Vec::<String>::new()]
        );
        let pres: Vec<Value> = tree(text)
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["t"] == "pre" && n["lang"] == "suggestion")
            .cloned()
            .collect();
        assert_eq!(pres.len(), 2);
        assert!(suggestions("```suggestions\nx\n```").is_empty(), "only the language `suggestion`");
        assert_eq!(suggestions("```suggestion\n\n```"), vec![vec![String::new()]], "one empty line is a line");
    }

    #[test]
    fn code_blocks_keep_their_text_and_language() {
        assert_eq!(
            tree("```rust\nfn main() {}\n```")[0],
            json!({"t": "pre", "lang": "rust", "text": "fn main() {}\n"})
        );
        assert_eq!(tree("use `x<y>`")[0]["c"][1], json!({"t": "code", "text": "x<y>"}));
    }

    #[test]
    fn lists_tasks_and_tables_are_structured() {
        let t = tree("3. a\n4. b\n\n- [x] done\n- [ ] todo\n\n| h | r |\n|:-|-:|\n| 1 | 2 |\n");
        assert_eq!(t[0]["t"], "ol");
        assert_eq!(t[0]["start"], 3);
        assert_eq!(t[1]["c"][0]["c"][0], json!({"t": "check", "checked": true}));
        let table = &t[2];
        assert_eq!(table["c"][0]["c"][0]["c"][0], json!({"t": "th", "align": "left", "c": ["h"]}));
        assert_eq!(table["c"][1]["t"], "tbody");
        assert_eq!(table["c"][1]["c"][0]["c"][1], json!({"t": "td", "align": "right", "c": ["2"]}));
    }

    #[test]
    fn deep_nesting_is_flattened_past_the_limit() {
        let md = format!("{}deep", "> ".repeat(200));
        let t = tree(&md);
        fn depth(v: &Value) -> usize {
            v.get("c").and_then(Value::as_array).map_or(0, |c| 1 + c.iter().map(depth).max().unwrap_or(0))
        }
        assert!(depth(&t[0]) <= MAX_DEPTH + 1, "depth {}", depth(&t[0]));
        assert!(t.to_string().contains("deep"), "nothing is lost");
    }

    #[test]
    fn bidi_controls_and_other_text_pass_through_unchanged() {
        let s = "evil \u{202E}txt.exe";
        assert_eq!(tree(s)[0]["c"][0], json!(s));
    }
}
