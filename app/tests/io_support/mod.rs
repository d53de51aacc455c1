//! Helpers for the tests of bb and its binary: bb-bitbucket's test helpers (one file, shared by path: a stack
//! started in-process, bb's client pointed at it, the stack's control API), and `bb` itself over stdio.
#![allow(dead_code)]

#[path = "../../../bitbucket/tests/io_support/mod.rs"]
mod client;

pub use client::*;

use bb_stack::RunningStack;

/// `bb ai mcp serve ARGS` over stdio against `stack` with its token and no other credentials: stdin and stdout
/// piped, stderr dropped unless the caller sets it.
pub fn serve_over_stdio(stack: &RunningStack, args: &[&str]) -> std::process::Command {
    let mut bb = std::process::Command::new(env!("CARGO_BIN_EXE_bb"));
    bb.args(["ai", "mcp", "serve"])
        .args(args)
        .env("BITBUCKET_URL", &stack.base_url)
        .env("BITBUCKET_TOKEN", &stack.token)
        .env_remove("BITBUCKET_USER")
        .env_remove("BITBUCKET_PASSWORD")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    bb
}
