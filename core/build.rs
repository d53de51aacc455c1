//! The syntaxes bb highlights with, made at build time: two-face's set (syntect's defaults and bat's
//! extras), with the rules that make syntect's parser spin forever mended, linked and dumped to
//! `$OUT_DIR/syntaxes.bin` for `src/highlight.rs` to load.
//!
//! The set is two-face's fancy-regex one whichever engine bb parses with at run time (the dump holds each
//! regex as its source text, compiled on first use by the engine of the build): every regex in it compiles
//! with both, and one set means the engine changes no file's language and no scope
//! (`examples/highlight_scopes.rs`). Two-face's Oniguruma set has 7 syntaxes more (ARM Assembly, Hosts File,
//! JavaScript (Babel), PowerShell, Regular Expressions (Elixir), Salt State (SLS), VimHelp; listed from both
//! sets of two-face 0.5.2): JavaScript (Babel) would take `.js` from the JavaScript syntax mended below, as
//! in bat, and none of them has been swept for loops.
//!
//! Why a mend and not a guard: syntect's parser breaks a loop of a non-consuming `push` and `pop`
//! at one position, but not two contexts that `set` each other without consuming (syntect issue
//! #460; the guard that would catch it is syntect PR #706, unmerged as of syntect 5.3.0), and
//! `parse_line` cannot be stopped from outside. So a grammar with such a pair hangs a thread on one
//! line. Mending the data at build time costs nothing at run time (relinking the set at start would
//! cost ~350 ms per process).
//!
//! Each mend names the syntax, the text it replaces in a rule's regex and how many rules must
//! contain it: a two-face upgrade that changes those rules fails the build here, rather than
//! bringing the hang back unseen.
// A build script fails by panicking: that is how cargo shows the reason.
#![allow(clippy::panic, clippy::expect_used)]

use std::path::PathBuf;

use syntect::parsing::syntax_definition::Pattern;
use syntect::parsing::{Regex, SyntaxSetBuilder};

/// One mend: in syntax `syntax`, every rule whose regex contains `find` gets it replaced by
/// `replace`; exactly `rules` rules must contain it.
struct Mend {
    syntax: &'static str,
    find: &'static str,
    replace: &'static str,
    rules: usize,
    why: &'static str,
}

const MENDS: &[Mend] = &[Mend {
    syntax: "JavaScript",
    // `expression-statement-end` and `variable-binding-list-top` look ahead for an operator that
    // continues the expression on the next token, and their `/` also matched the `/` of `/*`; a
    // second rule in the same contexts looks ahead for "blanks and comments, perhaps an unclosed
    // `/*`, then the end of the line". Both match empty and `set` to each other, so `x /*` or an
    // expression line without a semicolon followed by a line `\t/**` (a doc comment in code written
    // without semicolons) spun forever: 16 of the 1,121 files of npm's own sources did. A `/` that
    // opens a block comment is not an operator; with that said, the first rule no longer matches
    // there and the pair cannot cycle. Over the 1,105 other npm files (178,162 lines) every line
    // parses to the same scopes as before.
    find: r"[-+*/%><=&|^\[(;,.:?] |",
    replace: r"[-+*%><=&|^\[(;,.:?] | /(?!\*) |",
    rules: 2,
    why: "a `/` that opens a block comment is not an operator (`x /*` spun forever)",
}];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let builder = two_face::syntax::extra_newlines().into_builder();
    let mut syntaxes = builder.syntaxes().to_vec();
    for mend in MENDS {
        let mut mended = 0;
        for syntax in syntaxes.iter_mut().filter(|s| s.name == mend.syntax) {
            for context in syntax.contexts.values_mut() {
                for pattern in context.patterns.iter_mut() {
                    let Pattern::Match(rule) = pattern else { continue };
                    let source = rule.regex.regex_str();
                    if !source.contains(mend.find) {
                        continue;
                    }
                    let source = source.replace(mend.find, mend.replace);
                    if let Some(error) = Regex::try_compile(&source) {
                        panic!(
                            "the mend of {} ({}) makes a regex that does not compile: {error}",
                            mend.syntax, mend.why
                        );
                    }
                    rule.regex = Regex::new(source);
                    mended += 1;
                }
            }
        }
        assert_eq!(
            mended, mend.rules,
            "the mend of {} ({}) expected {} rules to mend and found {mended}: two-face's syntaxes changed; \
             check whether the loop is still there (core/tests/highlight_loops.rs) and update the mend",
            mend.syntax, mend.why, mend.rules
        );
    }
    let mut builder = SyntaxSetBuilder::new();
    for syntax in syntaxes {
        builder.add(syntax);
    }
    let set = builder.build();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("syntaxes.bin");
    syntect::dumps::dump_to_uncompressed_file(&set, &out).expect("the syntax dump is written");
}
