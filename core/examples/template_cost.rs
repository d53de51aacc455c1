//! What a lexer costs the first time a process meets it, and what one line of each costs after: the figures that
//! decide which lexers count as templates (not waited for, `--highlight-templates`) and which grammars bb prepares
//! at start. Each language is measured in a fresh process (this example runs itself once per language), since a
//! grammar's regexes compile on first use and stay compiled.
//!
//! `cargo run --release -p bb-core --example template_cost`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::Instant;

use bb_core::testing::highlight::{Language, SideHighlighter};

/// A file of each kind a pull request carries most, with what makes its lexer work: for the templates, blocks of
/// the languages they embed.
fn sample(name: &str) -> String {
    let rust = "use std::io;\npub fn main(a: &str) -> Result<(), E> {\n    let s = \"a\\n\"; // c\n    if a.len() > 3 { return Ok(()); }\n}\n";
    let python = "import os\nclass A(B):\n    def f(self, x=1):\n        return f\"{x}\" # c\n";
    let js = "import x from 'y';\nexport function g(a) { const b = `t${a}`; return b?.c ?? 0; } // c\n";
    match name {
        "a.rs" => rust.repeat(4),
        "a.py" => python.repeat(4),
        "a.js" => js.repeat(4),
        "a.ts" => "interface A { b: number }\nexport const f = (a: A): string => `${a.b}`;\n".repeat(4),
        "a.go" => "package main\nimport \"fmt\"\nfunc main() { fmt.Println(\"x\") }\n".repeat(4),
        "a.java" => "package a;\npublic class A { public static void main(String[] a) { int x = 1; } }\n".repeat(4),
        "a.yaml" => "key: value # c\nlist:\n  - a: 1\n    b: \"s\"\n".repeat(4),
        "a.json" => "{\"a\": [1, 2.5, true, null, \"s\"]}\n".repeat(4),
        "a.md" => format!(
            "# Title\n\nSome **bold** and `code` and [a link](https://x).\n\n```rust\n{rust}```\n\n```python\n{python}```\n\n```js\n{js}```\n\n```yaml\nkey: value\n```\n\n```sh\necho \"$HOME\"\n```\n\n- item\n- item\n"
        ),
        "a.html" => format!(
            "<!doctype html>\n<html><head><style>a {{ color: red; }}</style>\n<script>\n{js}</script></head>\n<body><p class=\"x\">t</p></body></html>\n"
        ),
        "a.vue" => format!(
            "<template>\n  <div :a=\"b\">{{{{ c }}}}</div>\n</template>\n<script>\n{js}</script>\n<style>\na {{ color: red; }}\n</style>\n"
        ),
        "a.php" => "<?php\nfunction f($a) { echo \"$a\"; }\n?>\n<div><?= $x ?></div>\n".repeat(3),
        "a.j2" => "{% for x in y %}\n<p>{{ x | upper }}</p>\n{% endfor %}\n".repeat(3),
        _ => String::new(),
    }
}

const FILES: &[&str] =
    &["a.rs", "a.py", "a.js", "a.ts", "a.go", "a.java", "a.yaml", "a.json", "a.md", "a.html", "a.vue", "a.php", "a.j2"];

/// One language, in this process: the first pass (grammar compiled as it goes) and a second, each line timed.
fn measure(name: &str) {
    let text = sample(name);
    let Some(language) = Language::detect(name, text.lines().next()) else {
        println!("{name:8} no lexer");
        return;
    };
    let pass = || {
        let mut side = SideHighlighter::new(language, true);
        let mut worst = 0f64;
        let t = Instant::now();
        for line in text.lines() {
            let l = Instant::now();
            let _ = side.line(line);
            worst = worst.max(l.elapsed().as_secs_f64() * 1000.0);
        }
        (t.elapsed().as_secs_f64() * 1000.0, worst)
    };
    let (cold, cold_worst) = pass();
    let (warm, warm_worst) = pass();
    println!(
        "{name:8} {:<14} {:>4} lines  cold {cold:8.1} ms (worst line {cold_worst:7.1} ms)  warm {warm:6.2} ms (worst line {warm_worst:5.2} ms)  template: {}",
        language.name(),
        text.lines().count(),
        language.is_template()
    );
}

fn main() {
    if let Some(name) = std::env::args().nth(1) {
        measure(&name);
        return;
    }
    let me = std::env::current_exe().expect("this example's path");
    for name in FILES {
        let out = Command::new(&me).arg(name).output().expect("a run of this example");
        print!("{}", String::from_utf8_lossy(&out.stdout));
    }
}
