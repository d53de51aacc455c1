//! The `bb` binary with Bitbucket configured through its environment: bad settings stop it at start with exit
//! code 2 and a message that says what to fix; good ones let it answer a tool call from the stack; no secret
//! reaches stdout or stderr.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bb_stack::tls::test_cert_path;
use bb_stack::{Stack, StackConfig};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};

const SECRET_LOOKING: &str = "wrong-token-ab12cd34ef56";

fn bb(args: &[&str], env: &[(&str, &str)], stdin: &str) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_bb"));
    cmd.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    for var in ["BITBUCKET_URL", "BITBUCKET_TOKEN", "BITBUCKET_USER", "BITBUCKET_PASSWORD", "BB_CA_FILE"] {
        cmd.env_remove(var);
    }
    for var in ["BB_CLIENT_CERT", "BB_CLIENT_KEY", "BB_REQUEST_TIMEOUT", "BB_RETRY_COUNT", "HTTPS_PROXY", "https_proxy"]
    {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn refused(env: &[(&str, &str)]) -> String {
    let out = bb(&["ai", "mcp", "serve"], env, "");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("bb: ") && !stderr.contains("panicked"), "{stderr}");
    stderr
}

#[test]
fn without_a_bitbucket_url_bb_still_starts() {
    let out = bb(&["ai", "mcp", "serve"], &[], "");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn bad_settings_stop_bb_at_start_with_exit_code_2_and_what_to_fix() {
    let ca = test_cert_path("ca.pem").display().to_string();
    let client = test_cert_path("client.pem").display().to_string();
    let wrong_key = test_cert_path("server.key").display().to_string();
    let e = refused(&[("BITBUCKET_URL", "ftp://h")]);
    assert!(e.contains("only http and https"), "{e}");
    let e = refused(&[("BITBUCKET_URL", "https://h"), ("BB_CA_FILE", "/nonexistent/ca.pem")]);
    assert!(e.contains("BB_CA_FILE /nonexistent/ca.pem"), "{e}");
    let e = refused(&[
        ("BITBUCKET_URL", "https://h"),
        ("BB_CA_FILE", &ca),
        ("BB_CLIENT_CERT", &client),
        ("BB_CLIENT_KEY", &wrong_key),
    ]);
    assert!(e.contains("is not the private key"), "{e}");
    let e =
        refused(&[("BITBUCKET_URL", "https://h"), ("BITBUCKET_TOKEN", SECRET_LOOKING), ("BB_REQUEST_TIMEOUT", "soon")]);
    assert!(e.contains("BB_REQUEST_TIMEOUT") && !e.contains(SECRET_LOOKING), "{e}");
}

#[test]
fn a_tool_call_reaches_the_stack_and_a_wrong_token_never_shows() {
    let stack = Stack::start(StackConfig { context_path: "/bitbucket".into(), ..Default::default() }).unwrap();
    let call = |token: &str| -> (String, String) {
        // The flags win over the environment: BITBUCKET_URL points nowhere.
        let url = format!("{}/", stack.base_url);
        let mut child = Command::new(env!("CARGO_BIN_EXE_bb"))
            .args(["ai", "mcp", "serve", "--host", url.as_str(), "--token", token, "--log-level", "debug"])
            .env("BITBUCKET_URL", "http://127.0.0.1:9")
            .env("BB_RETRY_COUNT", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_pull_request","arguments":{"project":"BB","repo":"api","pr_id":1}}}"#,
        ] {
            writeln!(stdin, "{line}").unwrap();
        }
        // Read until the call is answered, then close stdin so bb stops.
        let mut out = String::new();
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let line = line.unwrap();
            out.push_str(&line);
            out.push('\n');
            if line.contains(r#""id":2"#) {
                break;
            }
        }
        drop(stdin);
        let rest = child.wait_with_output().unwrap();
        assert_eq!(rest.status.code(), Some(0));
        (out, String::from_utf8_lossy(&rest.stderr).into_owned())
    };
    let (good, good_err) = call(&stack.token);
    assert!(good.contains(r#""id":2"#) && !good.contains(r#""isError":true"#), "{good}");
    assert!(!good.contains(&stack.token) && !good_err.contains(&stack.token));
    let (bad, bad_err) = call(SECRET_LOOKING);
    assert!(bad.contains(r#""isError":true"#), "{bad}");
    assert!(!bad.contains(SECRET_LOOKING) && !bad_err.contains(SECRET_LOOKING), "{bad}\n{bad_err}");
    let served = stack.with_world(|w| {
        w.control.requests.get(&format!("GET {}", "/rest/api/latest/projects/BB/repos/api/pull-requests/1")).copied()
    });
    assert_eq!(served, Some(2), "each call read the pull request once (no retry of the 401)");
}
