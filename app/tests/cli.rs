//! The `bb` binary as a user meets it: help, version, errors, `tools`, and `serve` over stdio.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

fn bb(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_bb")).args(args).stdin(Stdio::null()).output().unwrap()
}

#[test]
fn version_prints_the_version_and_the_commit_it_was_built_from() {
    let out = bb(&["--version"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let commit = text
        .strip_prefix(&format!("bb {} (commit ", env!("CARGO_PKG_VERSION")))
        .and_then(|rest| rest.strip_suffix(")\n"))
        .unwrap_or_else(|| panic!("{text}"));
    // Built from this repository: the commit checked out (or `unknown` without git).
    assert!(commit == "unknown" || (commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit())), "{text}");
}

#[test]
fn help_names_the_commands() {
    let out = bb(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("bb ai mcp serve") && text.contains("bb ai mcp tools"));
}

#[test]
fn an_unknown_flag_fails_with_a_clear_error_on_stderr() {
    let out = bb(&["ai", "mcp", "serve", "--bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "nothing on stdout but protocol");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("bb: ") && err.contains("--bogus"), "{err}");
}

#[test]
fn an_unknown_tool_name_in_tools_fails_at_start() {
    let out = bb(&["ai", "mcp", "serve", "--tools", "no_such_tool"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("`no_such_tool`, which is not a bb tool"));
}

#[test]
fn tools_prints_one_line_per_exposed_tool() {
    let out = bb(&["ai", "mcp", "tools"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let (tools, offer) = text.split_once("\n\nIn a session, enable_toolset can turn on:\n").unwrap();
    for line in tools.lines() {
        let name = line.split_whitespace().next().unwrap();
        assert!(name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{line}");
    }
    assert!(tools.lines().any(|l| l.split_whitespace().take(4).eq(["get_file", "code", "read", "never"])), "{tools}");
    assert!(!tools.contains("list_branches"), "repositories is off by default: {tools}");
    assert!(offer.trim_start().starts_with("repositories ") && offer.contains("list_branches, resolve_ref"), "{offer}");
    let every = bb(&["ai", "mcp", "tools", "--toolsets", "all"]);
    let every = String::from_utf8(every.stdout).unwrap();
    assert!(every.contains("list_branches") && !every.contains("enable_toolset can turn on"), "{every}");
    // Each line says whether the tool asks the person first: never, always, or when.
    let writes = bb(&["ai", "mcp", "tools", "--toolsets", "all,writes"]);
    let writes = String::from_utf8(writes.stdout).unwrap();
    let merge = writes.lines().find(|l| l.starts_with("merge_pull_request ")).unwrap();
    let asks = merge.split_whitespace().nth(4).unwrap();
    assert_eq!(asks, "always", "{merge}");
    let review = writes.lines().find(|l| l.starts_with("submit_pr_review ")).unwrap();
    assert!(review.contains("when it approves or says Needs work"), "{review}");
}

#[test]
fn confirm_takes_on_or_off_and_off_is_logged_at_start() {
    let out = bb(&["ai", "mcp", "serve", "--confirm", "maybe"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("--confirm `maybe` is not on or off"));
    let out = bb(&["ai", "mcp", "tools", "--confirm", "off"]);
    assert_eq!(out.status.code(), Some(2));
    let mut child = Command::new(env!("CARGO_BIN_EXE_bb"))
        .args(["ai", "mcp", "serve", "--confirm", "off"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("--confirm off: tools that merge or cannot be undone run without asking anyone"), "{err}");
    let mut quiet = Command::new(env!("CARGO_BIN_EXE_bb"))
        .args(["ai", "mcp", "serve"])
        .env("BB_CONFIRM", "sometimes")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(quiet.stdin.take());
    let out = quiet.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("BB_CONFIRM `sometimes` is not on or off"));
}

#[test]
fn scope_flags_and_bb_scope_are_checked_at_start_and_the_scope_logged() {
    let out = bb(&["ai", "mcp", "serve", "--project", "BB/api"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr).unwrap().contains("--project `BB/api` names a repository: use --repo BB/api")
    );
    let run = |args: &[&str], scope: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bb"))
            .args(args)
            .env("BB_SCOPE", scope)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdin.take());
        child.wait_with_output().unwrap()
    };
    let out = run(&["ai", "mcp", "serve"], "OPS,BB/api/x");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("BB_SCOPE: The scope entry `BB/api/x` is not a project key or KEY/slug"), "{err}");
    let out = run(&["ai", "mcp", "serve", "--log-level", "notice"], "OPS, WEB/site");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("scope: project OPS, WEB/site;"), "{err}");
}

#[test]
fn serve_answers_over_stdio_and_exits_cleanly_when_stdin_closes() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bb"))
        .args(["ai", "mcp", "serve", "--log-level", "debug"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#).unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"ping"}}"#).unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let init: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), r#"{"id":2,"jsonrpc":"2.0","result":{}}"#);
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success());
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(err.contains("session initialized"), "logs go to stderr: {err}");
}

#[test]
fn a_line_over_16_mib_is_refused_without_ending_the_session() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bb"))
        .args(["ai", "mcp", "serve", "--log-level", "off"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let chunk = vec![b'x'; 1 << 20];
        stdin.write_all(br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":""#).unwrap();
        for _ in 0..17 {
            stdin.write_all(&chunk).unwrap();
        }
        stdin.write_all(b"\"}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n").unwrap();
    });
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let e: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(e["error"]["code"], -32600);
    assert!(e["error"]["message"].as_str().unwrap().contains("16777216 bytes"));
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), r#"{"id":2,"jsonrpc":"2.0","result":{}}"#);
    writer.join().unwrap();
    assert!(child.wait().unwrap().success());
}

#[test]
fn read_only_lists_no_write_whatever_asks_for_one_and_says_which_it_withholds() {
    let writes =
        ["add_pr_comment", "merge_pull_request", "submit_pr_review", "create_pull_request", "set_build_status"];
    let out =
        bb(&["ai", "mcp", "tools", "--read-only", "--toolsets", "all", "--tools", "add_pr_comment,merge_pull_request"]);
    assert!(out.status.success());
    let listed = String::from_utf8(out.stdout).unwrap();
    for line in listed.lines().take_while(|l| !l.is_empty()) {
        let mut words = line.split_whitespace();
        let name = words.next().unwrap();
        assert!(!writes.contains(&name), "{line}");
        assert!(!line.contains(" write "), "{line}");
    }
    assert!(listed.contains("get_pull_request"), "{listed}");
    let said = String::from_utf8(out.stderr).unwrap();
    assert!(
        said.contains("--tools names add_pr_comment, merge_pull_request, which change Bitbucket: not exposed"),
        "{said}"
    );
    // BB_READ_ONLY does the same; a value that is not on or off stops bb.
    let env = Command::new(env!("CARGO_BIN_EXE_bb"))
        .args(["ai", "mcp", "tools", "--allow-writes"])
        .env("BB_READ_ONLY", "on")
        .output()
        .unwrap();
    let listed = String::from_utf8(env.stdout).unwrap();
    assert!(!listed.contains("merge_pull_request") && !listed.contains("add_pr_comment"), "{listed}");
    let bad = Command::new(env!("CARGO_BIN_EXE_bb"))
        .args(["ai", "mcp", "tools"])
        .env("BB_READ_ONLY", "maybe")
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8(bad.stderr).unwrap().contains("BB_READ_ONLY `maybe` is not on or off"));
}
