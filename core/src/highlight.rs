//! Code highlighted in bb, not in the page: each line goes out as runs of `[length, class]` over a small
//! fixed vocabulary of classes the page colours from the host's theme (ADR-101: "Code is highlighted in
//! bb, which sends each line's token classes, and the page colours them").
//!
//! Syntaxes are syntect's with bat's extra ones (two-face), parsed with Oniguruma as bat parses them (the
//! feature `onig`, the default; `fancy` builds the pure-Rust fancy-regex instead, at about half the speed:
//! `examples/highlight_vs_bat.rs`); the rules of theirs that made syntect's parser loop forever are mended
//! at build time (`build.rs`), for either engine. The
//! language comes from the path, then from the first line. One parse state is carried through the lines
//! of a side of a diff (the new file's context and added lines; the old file's context and removed lines),
//! so multi-line strings and comments come out right within a hunk; across the gap between two hunks the
//! state is carried on as if the lines were adjacent, which is right unless a construct opens inside a gap.
//!
//! The work is stepped: [`SideHighlighter::line`] does one line, and the caller stops after a budget of
//! characters per step (the shell decides when its deadline has passed). A line longer than
//! [`MAX_LINE_CHARS`] goes plain, and so does the rest of its side (a parse state cannot skip a line).
//! A syntax that embeds others (HTML with script and style, PHP, Vue, Svelte, Jinja, ERB, Handlebars, …)
//! cannot be stopped midway through its nested parse; it is used only when the operator asks
//! (`--highlight-templates`), else its lines go plain. Markdown is not among them, by its measured cost
//! (`examples/template_cost.rs`): its slowest line was 6 ms warm and 75 ms the first time a process meets it
//! with fancy-regex (TypeScript's, which is no template, 470 ms); with Oniguruma 0.4 ms warm and 32 ms cold
//! (TypeScript's 43 ms). And it is the file a pull request carries most.

use std::collections::HashMap;
use std::sync::LazyLock;

use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference, SyntaxSet};

/// The syntaxes: syntect's defaults and bat's extras (two-face's set), with the rules that made
/// syntect's parser spin forever mended at build time (see `build.rs`), loaded once from the dump in
/// the binary. A dump that does not load (it is made by the same build, so only a broken build) leaves
/// an empty set: every file then goes out plain.
///
/// A static, unlike the caches ([`crate::Caches`]), because it is immutable data made from the binary
/// alone: nothing any server does changes it, so sharing it hides no state, and passing it in would only
/// thread a reference through every job. Loaded lazily, on the first file highlighted (7.7 MB resident
/// once loaded): an idle server holds none of it (bench/compare's idle RSS counts on that).
static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(|| {
    syntect::dumps::from_uncompressed_data(include_bytes!(concat!(env!("OUT_DIR"), "/syntaxes.bin")))
        .unwrap_or_default()
});

/// The regex engine syntect parses with, as bb-core was built (its features `onig`, the default, and `fancy`;
/// with both, syntect takes Oniguruma).
#[cfg(any(test, feature = "testing"))]
pub const ENGINE: &str = if cfg!(feature = "onig") { "Oniguruma" } else { "fancy-regex" };

/// The longest line highlighted, in characters; longer ones (minified code) go plain.
pub const MAX_LINE_CHARS: usize = 2_000;

/// The classes a run can have; the page colours each from the host's theme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// `fn`, `if`, `return`, storage modifiers.
    Keyword,
    /// String literals.
    String,
    /// Comments.
    Comment,
    /// Numeric literals.
    Number,
    /// Other constants (`true`, `None`, character escapes).
    Constant,
    /// Function names, at definition and call.
    Function,
    /// Type names.
    Type,
    /// Markup tag names.
    Tag,
    /// Markup attribute names.
    Attribute,
    /// Operators.
    Operator,
}

impl Class {
    /// The class's letter in the view data's runs (one letter: a diff carries thousands of runs).
    pub fn letter(self) -> char {
        match self {
            Class::Keyword => 'k',
            Class::String => 's',
            Class::Comment => 'c',
            Class::Number => 'n',
            Class::Constant => 'o',
            Class::Function => 'f',
            Class::Type => 't',
            Class::Tag => 'g',
            Class::Attribute => 'a',
            Class::Operator => 'p',
        }
    }

    /// The class of the innermost scope that has one, by TextMate scope name.
    fn of(scope: &str) -> Option<Class> {
        // Order matters: the more specific prefixes first.
        const TABLE: &[(&str, Class)] = &[
            ("comment", Class::Comment),
            ("string", Class::String),
            ("constant.numeric", Class::Number),
            ("constant", Class::Constant),
            ("keyword.operator", Class::Operator),
            ("keyword", Class::Keyword),
            ("storage", Class::Keyword),
            ("entity.name.function", Class::Function),
            ("support.function", Class::Function),
            ("meta.function-call", Class::Function),
            ("entity.name.tag", Class::Tag),
            ("entity.other.attribute-name", Class::Attribute),
            ("entity.name", Class::Type),
            ("support.type", Class::Type),
            ("support.class", Class::Type),
        ];
        TABLE.iter().find(|(prefix, _)| scope.starts_with(prefix)).map(|(_, c)| *c)
    }
}

/// Why a line went out plain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plain {
    /// The shell's deadline passed before it was reached.
    Deadline,
    /// It (or a line before it on its side) is longer than [`MAX_LINE_CHARS`].
    Long,
    /// Its syntax embeds others and the operator did not ask for such lexers.
    Template,
}

impl Plain {
    /// The reason's name in the view data.
    pub fn as_str(self) -> &'static str {
        match self {
            Plain::Deadline => "deadline",
            Plain::Long => "long",
            Plain::Template => "template",
        }
    }
}

/// What one line came out as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    /// Runs, encoded as the view data carries them (`"3k6_1n"`).
    Runs(String),
    /// Plain, and why.
    Plain(Plain),
}

/// One file's highlighting as a job of its own, which the shell may run on another thread: the
/// lines it owns (each with its side, `b'A'` added, `b'R'` removed, `b'C'` context, which feeds both
/// sides' parse states), and the key it is kept under in the highlight cache. A lexer cannot be
/// stopped inside a line, so a deadline is kept by not waiting for the job, never by stopping it.
#[derive(Debug, Clone)]
pub struct HighlightJob {
    /// The file's key in the highlight cache.
    pub key: u64,
    /// `None` for a warm-up, which finds its languages on the thread that runs it.
    language: Option<Language>,
    templates: bool,
    lines: Vec<(u8, String)>,
    /// For a warm-up: the paths whose languages it warms up.
    warm_up: Option<Vec<String>>,
}

impl PartialEq for HighlightJob {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key && self.templates == other.templates && self.lines == other.lines
    }
}

/// A job's outcome: one mark per line of the job, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Highlighted {
    /// The job's key: the file's key in the highlight cache, where the outcome is kept.
    pub key: u64,
    /// One mark per line.
    pub marks: Vec<Mark>,
}

impl HighlightJob {
    /// A job over `lines` of a file in `language`.
    pub fn new(key: u64, language: Language, templates: bool, lines: Vec<(u8, String)>) -> HighlightJob {
        HighlightJob { key, language: Some(language), templates, lines, warm_up: None }
    }

    /// Whether it only warms languages up ([`HighlightJob::warm_up`]): nothing waits for it.
    pub fn is_warm_up(&self) -> bool {
        self.warm_up.is_some()
    }

    /// A job that only warms up the languages of the files at `paths`: the grammars are loaded the
    /// first time any file's language is asked for (a few ms), and a grammar's patterns are compiled
    /// the first time the parser meets them, which costs a fresh process 20–40 ms on its first file
    /// of a language (measured: a cold diff view 33 ms over its round trips, 0 with highlighting
    /// off). Run on a CPU thread while the view still waits on Bitbucket for the files, the real
    /// files find both done. A few lines that enter the contexts most files do; its marks are
    /// thrown away.
    pub fn warm_up(paths: Vec<String>, templates: bool) -> HighlightJob {
        let lines = WARM_UP_SAMPLE.iter().map(|l| (b'A', (*l).to_owned())).collect();
        HighlightJob { key: u64::from_le_bytes(*b"bbwarmup"), language: None, templates, lines, warm_up: Some(paths) }
    }
}

/// Files of the languages pull requests carry most, whose grammars a new process prepares off the critical path
/// ([`HighlightJob::prepare_common`]): the first diff of a session then meets them compiled. Measured cold in a fresh
/// process (`examples/template_cost.rs`, release, this machine) with fancy-regex: TypeScript 780 ms (one line 470 ms),
/// Markdown with fenced Rust/Python/JS/YAML/sh 352 ms, JavaScript 63 ms, Rust 41 ms, Python 36 ms, Go and Java 25 ms,
/// YAML 5 ms, JSON 2 ms; warm, every one of them under 7 ms for its slowest line. With Oniguruma (Dec 2026, the
/// machine loaded): Rust 69 ms, Markdown 59, JavaScript 56, TypeScript 49, Java 8, Python 2, Go 1, YAML and JSON
/// under 1; warm, under 0.4 ms for the slowest line of each.
pub const PREPARED: [&str; 10] = ["a.rs", "a.py", "a.js", "a.ts", "a.go", "a.java", "a.yaml", "a.json", "a.md", "a.sh"];

impl HighlightJob {
    /// The grammars of [`PREPARED`], warmed up: for a shell to run on a thread of its own when it starts.
    pub fn prepare_common() -> HighlightJob {
        HighlightJob::warm_up(PREPARED.iter().map(|p| (*p).to_owned()).collect(), false)
    }
}

/// Lines most languages' grammars have contexts for: imports, definitions with bodies and
/// parameters, control flow, strings with escapes, numbers, comments of each kind, markup.
const WARM_UP_SAMPLE: [&str; 12] = [
    "use std::io; import os; #include <stdio.h>",
    "pub fn main(a: &str, b: u32) -> Result<(), E> {",
    "def f(self, x=1): class A(B): function g(x) { const y = `t${x}`; }",
    "    let s = \"a\\n\"; var c = 'c'; n = 0x1F + 1.5e3;",
    "    if (x == y && !z) { return x; } else { for i in 0..n { } }",
    "    // line comment",
    "    /* block comment */ # hash comment -- dash comment",
    "    obj.method(arg)[0]?.field; Vec::<T>::new(); @decorator",
    "}",
    "<div class=\"a\">text</div> <?php echo $x; ?>",
    "# Heading **bold** _em_ [link](http://x) `code`",
    "key: value # yaml",
];

impl HighlightJob {
    /// How many lines it holds.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether it holds no line.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Whether its lexer embeds others (with `--highlight-templates`, never waited for).
    pub fn is_template(&self) -> bool {
        self.language.is_some_and(|l| l.template)
    }

    /// Highlights every line, one parse state per side.
    pub fn run(&self) -> Highlighted {
        if let Some(paths) = &self.warm_up {
            let mut warmed = std::collections::BTreeSet::new();
            for language in paths.iter().filter_map(|p| Language::detect(p, None)) {
                if warmed.insert(language.name()) && (self.templates || !language.template) {
                    let mut side = SideHighlighter::new(language, self.templates);
                    for (_, text) in &self.lines {
                        let _ = side.line(text);
                    }
                }
            }
            return Highlighted { key: self.key, marks: Vec::new() };
        }
        let Some(language) = self.language else { return Highlighted { key: self.key, marks: Vec::new() } };
        let mut new_side = SideHighlighter::new(language, self.templates);
        let mut old_side = SideHighlighter::new(language, self.templates);
        let marks = self
            .lines
            .iter()
            .map(|(side, text)| {
                let result = match side {
                    b'A' => new_side.line(text),
                    b'R' => old_side.line(text),
                    _ => {
                        let _ = old_side.line(text);
                        new_side.line(text)
                    }
                };
                match result {
                    Ok(runs) => Mark::Runs(encode(&runs)),
                    Err(why) => Mark::Plain(why),
                }
            })
            .collect();
        Highlighted { key: self.key, marks }
    }
}

/// A line's runs: `(characters, class)`, `None` for plain text; they cover the line exactly.
pub type Runs = Vec<(usize, Option<Class>)>;

/// Runs as the view data carries them: each run its length in characters (Unicode scalar values) and
/// its class's letter, `_` for plain — `"2k1_4f"` is two characters of keyword, one plain, four of a
/// function name. A string, not an array of pairs: it keeps a 5,000-line diff's data under 400 KB.
pub fn encode(runs: &Runs) -> String {
    let mut out = String::with_capacity(runs.len() * 3);
    for (n, class) in runs {
        out.push_str(&n.to_string());
        out.push(class.map_or('_', Class::letter));
    }
    out
}

/// What a path (and, failing that, a first line) is written in, as bb highlights it.
#[derive(Debug, Clone, Copy)]
pub struct Language {
    syntax: &'static SyntaxReference,
    template: bool,
}

impl Language {
    /// The language of the file at `path`, else of a file whose first line is `first_line`; `None`
    /// for plain text.
    pub fn detect(path: &str, first_line: Option<&str>) -> Option<Language> {
        let set: &'static SyntaxSet = &SYNTAXES;
        let name = path.rsplit('/').next().unwrap_or(path);
        let extension = name.rsplit_once('.').map(|(_, e)| e);
        let syntax = set
            .find_syntax_by_extension(name)
            .or_else(|| extension.and_then(|e| set.find_syntax_by_extension(e)))
            .or_else(|| first_line.and_then(|l| set.find_syntax_by_first_line(l)))?;
        if syntax.name == "Plain Text" {
            return None;
        }
        Some(Language { syntax, template: embeds_others(&syntax.name) })
    }

    /// The language's name, as the page shows it.
    pub fn name(&self) -> &'static str {
        &self.syntax.name
    }

    /// Whether its lexer embeds others and cannot be stopped midway.
    pub fn is_template(&self) -> bool {
        self.template
    }
}

/// Whether a syntax embeds others (its nested parse cannot be stopped midway). [assumed: by name;
/// these are the syntaxes of syntect's and bat's sets that include other languages' grammars]
fn embeds_others(name: &str) -> bool {
    const EMBEDDERS: &[&str] = &[
        "HTML",
        "PHP",
        "Vue",
        "Svelte",
        "Jinja",
        "ERB",
        "Rails",
        "Handlebars",
        "Twig",
        "Liquid",
        "Razor",
        "ASP",
        "JSP",
        "Astro",
    ];
    EMBEDDERS.iter().any(|e| name.contains(e))
}

/// Highlights the lines of one side of a file, in order, one at a time.
#[derive(Debug)]
pub struct SideHighlighter {
    state: ParseState,
    stack: ScopeStack,
    classes: HashMap<Scope, Option<Class>>,
    stopped: Option<Plain>,
}

impl SideHighlighter {
    /// A highlighter for `language`; `templates` when the operator allows lexers that embed others.
    pub fn new(language: Language, templates: bool) -> SideHighlighter {
        SideHighlighter {
            state: ParseState::new(language.syntax),
            stack: ScopeStack::new(),
            classes: HashMap::new(),
            stopped: (language.template && !templates).then_some(Plain::Template),
        }
    }

    /// The next line's runs, or why it is plain. After a line it cannot highlight, the rest of the
    /// side is plain too: the parse state would be wrong.
    pub fn line(&mut self, text: &str) -> Result<Runs, Plain> {
        if let Some(why) = self.stopped {
            return Err(why);
        }
        if text.chars().count() > MAX_LINE_CHARS {
            self.stopped = Some(Plain::Long);
            return Err(Plain::Long);
        }
        let mut line = String::with_capacity(text.len() + 1);
        line.push_str(text);
        line.push('\n');
        let Ok(ops) = self.state.parse_line(&line, &SYNTAXES) else {
            // A grammar that fails on this input: plain from here on, as for a long line.
            self.stopped = Some(Plain::Long);
            return Err(Plain::Long);
        };
        let mut runs: Runs = Vec::new();
        let mut at = 0;
        for (offset, op) in ops {
            let offset = offset.min(text.len());
            if offset > at {
                let class = self.class();
                push(&mut runs, text[at..offset].chars().count(), class);
                at = offset;
            }
            if self.stack.apply(&op).is_err() {
                self.stopped = Some(Plain::Long);
                return Err(Plain::Long);
            }
        }
        if at < text.len() {
            let class = self.class();
            push(&mut runs, text[at..].chars().count(), class);
        }
        Ok(runs)
    }

    /// The class of the current scope stack: a comment or a string wherever it is in the stack (its
    /// quotes and markers included), else the innermost scope's that has one.
    fn class(&mut self) -> Option<Class> {
        let mut innermost = None;
        for scope in self.stack.as_slice().iter() {
            let class = *self.classes.entry(*scope).or_insert_with(|| Class::of(&scope.build_string()));
            match class {
                Some(Class::Comment | Class::String) => return class,
                Some(_) => innermost = class,
                None => {}
            }
        }
        innermost
    }
}

/// Each line's scope operations as syntect's parser gives them (`offset push scope` / `offset pop n`, one
/// string per line), one parse state through `lines`: for comparing what the two regex engines make of the
/// same files (`examples/highlight_scopes.rs`), below the classes bb keeps of them.
#[cfg(any(test, feature = "testing"))]
pub fn scope_operations(language: Language, lines: &[&str]) -> Vec<String> {
    use std::fmt::Write;
    use syntect::parsing::ScopeStackOp;
    let mut state = ParseState::new(language.syntax);
    lines
        .iter()
        .map(|text| {
            let Ok(ops) = state.parse_line(&format!("{text}\n"), &SYNTAXES) else { return "error".to_owned() };
            let mut out = String::new();
            for (at, op) in ops {
                let _ = match op {
                    ScopeStackOp::Push(scope) => write!(out, "{at} push {}; ", scope.build_string()),
                    ScopeStackOp::Pop(n) => write!(out, "{at} pop {n}; "),
                    other => write!(out, "{at} {other:?}; "),
                };
            }
            out
        })
        .collect()
}

/// Appends a run, merging it into the last one when their classes match.
fn push(runs: &mut Runs, len: usize, class: Option<Class>) {
    if len == 0 {
        return;
    }
    match runs.last_mut() {
        Some((n, c)) if *c == class => *n += len,
        _ => runs.push((len, class)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn classes(lang: &str, line: &str) -> Vec<(String, Option<Class>)> {
        let mut h = SideHighlighter::new(Language::detect(lang, None).unwrap(), false);
        let runs = h.line(line).unwrap();
        let chars: Vec<char> = line.chars().collect();
        let mut at = 0;
        runs.into_iter()
            .map(|(n, c)| {
                let s: String = chars[at..at + n].iter().collect();
                at += n;
                (s, c)
            })
            .collect()
    }

    #[test]
    fn runs_cover_the_line_exactly_and_name_keywords_strings_and_comments() {
        let line = r#"fn main() { let s = "hé"; } // done"#;
        let runs = classes("src/main.rs", line);
        assert_eq!(runs.iter().map(|(s, _)| s.as_str()).collect::<String>(), line);
        assert!(runs.contains(&("fn".into(), Some(Class::Keyword))), "{runs:?}");
        assert!(runs.iter().any(|(s, c)| s.contains("hé") && *c == Some(Class::String)), "{runs:?}");
        assert!(runs.iter().any(|(s, c)| s.contains("done") && *c == Some(Class::Comment)), "{runs:?}");
    }

    #[test]
    fn one_parse_state_carries_a_comment_across_lines() {
        let mut h = SideHighlighter::new(Language::detect("a.c", None).unwrap(), false);
        h.line("/* starts here").unwrap();
        let second = h.line("still a comment */ int x;").unwrap();
        assert_eq!(second[0].1, Some(Class::Comment), "{second:?}");
    }

    #[test]
    fn the_language_comes_from_the_path_then_the_first_line() {
        assert_eq!(Language::detect("x/y/build.rs", None).unwrap().name(), "Rust");
        assert_eq!(Language::detect("scripts/run", Some("#!/bin/bash")).unwrap().name(), "Bourne Again Shell (bash)");
        assert!(Language::detect("notes.unknown-ext", None).is_none());
    }

    #[test]
    fn a_template_syntax_goes_plain_unless_asked_for() {
        let html = Language::detect("index.html", None).unwrap();
        assert!(html.is_template());
        assert_eq!(SideHighlighter::new(html, false).line("<p>hi</p>"), Err(Plain::Template));
        assert!(SideHighlighter::new(html, true).line("<p>hi</p>").is_ok());
    }

    #[test]
    fn every_rule_of_every_syntax_compiles_with_the_engine_built() {
        use syntect::parsing::Regex;
        use syntect::parsing::syntax_definition::Pattern;
        // A regex that fails to compile would turn its file plain from the line that reaches it; the set is
        // fancy-regex's (build.rs), so this is the check that Oniguruma takes all of it too. Rules that refer
        // to an earlier match's captures (`\1`) are compiled only once those are filled in, and are skipped.
        let builder = SYNTAXES.clone().into_builder();
        let (mut compiled, mut failed) = (0, Vec::new());
        for syntax in builder.syntaxes() {
            for context in syntax.contexts.values() {
                for pattern in &context.patterns {
                    let Pattern::Match(rule) = pattern else { continue };
                    if rule.has_captures {
                        continue;
                    }
                    match Regex::try_compile(rule.regex.regex_str()) {
                        None => compiled += 1,
                        Some(error) => failed.push(format!("{}: {error}", syntax.name)),
                    }
                }
            }
        }
        assert!(compiled > 10_000, "{compiled} rules");
        assert!(failed.is_empty(), "{ENGINE} fails {} rule(s): {failed:#?}", failed.len());
    }

    #[test]
    fn a_long_line_goes_plain_and_so_does_the_rest_of_its_side() {
        let mut h = SideHighlighter::new(Language::detect("app.js", None).unwrap(), false);
        assert_eq!(h.line(&"x".repeat(MAX_LINE_CHARS + 1)), Err(Plain::Long));
        assert_eq!(h.line("let a = 1;"), Err(Plain::Long));
    }
}
