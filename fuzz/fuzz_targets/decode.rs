//! Feeds arbitrary bytes, as a Bitbucket answer with an arbitrary status, to every decoder bb reads
//! Bitbucket with: a pull request, a page of activities, the changes and a file's diff, a build listing
//! (with its legacy fallback and totals), required-build conditions and the branching model, the merge
//! check, an avatar, and the error sentence. None may panic, whatever the bytes.
#![no_main]

use bb_core::fuzzing::bitbucket::errors::{self, Subject};
use bb_core::fuzzing::bitbucket::model::{Activity, MergeCheck, PullRequest};
use bb_core::fuzzing::bitbucket::RawPage;
use bb_core::fuzzing::bitbucket::budget::Share;
use bb_core::fuzzing::reads::builds::{BuildsRead, BuildsReader, Fallback};
use bb_core::fuzzing::reads::conditions::{ConditionsRead, ConditionsReader};
use bb_core::fuzzing::reads::{avatars, diff};
use bb_core::FetchOutcome;
use libfuzzer_sys::fuzz_target;

const ABOUT: Subject<'static> = Subject { project: "BB", repo: "api", pr: Some(1) };

fuzz_target!(|input: (u16, bool, Vec<u8>)| {
    let (status, write, body) = input;
    let outcome = FetchOutcome::response(status % 600, body.clone());
    let w = errors::Write { effect: "it happened", check: "check it" };
    let _ = errors::body(&outcome, ABOUT, write.then_some(w));
    let _ = errors::json::<PullRequest>(&outcome, ABOUT, None);
    let _ = errors::json::<MergeCheck>(&outcome, ABOUT, None);
    if let Ok(page) = errors::json::<RawPage>(&outcome, ABOUT, None) {
        let _ = page.decode::<Activity>();
    }
    let _ = diff::changes(&outcome, ABOUT);
    let _ = diff::file(&outcome, ABOUT);
    let share = Share { lines: usize::from(status % 50), bytes: usize::from(status) * 3 };
    if let Ok(d) = diff::file_within(&outcome, ABOUT, share) {
        let kept: usize = d.hunks.iter().flat_map(|h| &h.segments).map(|s| s.lines.len()).sum();
        assert!(kept <= share.lines, "kept {kept} lines past a share of {}", share.lines);
    }
    let _ = avatars::from_outcome(&outcome);
    let mut more = |_, _| {};
    for fallback in [Fallback::Nothing, Fallback::Stats, Fallback::CommitListing] {
        let (mut reader, _) = BuildsReader::new(("BB", "api", 1), 0, 100, 5, fallback, true);
        reader.on(BuildsRead::Listing, &outcome, &mut more);
        reader.source_commit(Some("abc"), &mut more);
        reader.on(BuildsRead::Legacy, &outcome, &mut more);
        reader.on(BuildsRead::Stats, &outcome, &mut more);
        let _ = reader.whole();
    }
    let (mut conditions, _) = ConditionsReader::new("BB", "api");
    let mut more = |_, _| {};
    conditions.on(ConditionsRead::Page, &outcome, &mut more);
    conditions.on(ConditionsRead::Model, &outcome, &mut more);
    let _ = conditions.verdict("refs/heads/main", "refs/heads/feature/x");
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body) {
        let _ = bb_core::fuzzing::requirements::condition_from_json(&v);
        let _ = bb_core::fuzzing::requirements::branch_model_from_json(&v);
    }
});
