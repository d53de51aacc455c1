//! `docs/fault-matrix.md` is what bb does: the fault matrix (`examples/fault_matrix.rs`) run again gives the
//! same document. It takes about 15 s of mostly waiting (retries, `Retry-After`, timeouts) and 30 s more of
//! login floods against the `bb` binary (its second section), so it is ignored here; CI runs the example with `--check` after the fuzz step. Run it with
//! `cargo test -p bb --test fault_matrix -- --ignored`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../examples/fault_matrix.rs"]
#[allow(dead_code)]
mod fault_matrix;

#[test]
#[ignore = "about 45 s; CI runs `cargo run -p bb --example fault_matrix -- --check`"]
fn the_committed_fault_matrix_is_what_bb_does() {
    let committed = std::fs::read_to_string(fault_matrix::doc_path()).expect("docs/fault-matrix.md exists");
    let now = fault_matrix::render();
    let diff = fault_matrix::differences(&committed, &now);
    assert!(
        diff.is_empty(),
        "docs/fault-matrix.md is not what bb does now; regenerate it with \
         `cargo run -p bb --example fault_matrix -- --write`:\n{}",
        diff.join("\n")
    );
    // Every row says something, none saw a secret, and bb held under every login flood.
    assert!(!now.contains("**YES**"), "a secret appeared:\n{now}");
    assert!(!now.contains("**NO**"), "bb did not hold under a login flood:\n{now}");
    assert!(!now.contains("has no arguments for this tool"), "a tool has no arguments in the matrix:\n{now}");
}

#[test]
fn every_tool_and_kind_has_a_row_with_arguments() {
    let subjects = fault_matrix::subjects();
    let missing: Vec<&str> = subjects.iter().filter(|s| s.args.is_none()).map(|s| s.label.as_str()).collect();
    assert!(missing.is_empty(), "add arguments for {missing:?} to the fault matrix's args_for");
    assert!(subjects.iter().any(|s| s.label == "merge_pull_request"), "writes are included");
    assert!(subjects.iter().any(|s| s.label == "show pull_request"), "show kinds are included");
    assert!(fault_matrix::Fault::all().len() == 15, "the baseline and the 14 faults");
}
