//! Feeds arbitrary bytes, as a Bitbucket answer with an arbitrary status, to every decoder bb reads
//! Bitbucket with: a pull request, a page of activities, the changes and a file's diff, a build listing
//! (with its legacy fallback and totals), required-build conditions and the branching model, the merge
//! check, an avatar, a window of a file's lines (decoded as the shell decodes it as it reads, and from
//! the bytes), and the error sentence. None may panic, whatever the bytes.
#![no_main]

use bb_core::FetchOutcome;
use bb_core::fuzzing::bitbucket::RawPage;
use bb_core::fuzzing::bitbucket::budget::Share;
use bb_core::fuzzing::bitbucket::errors::{self, Subject};
use bb_core::fuzzing::bitbucket::model::{Activity, MergeCheck, PullRequest};
use bb_core::fuzzing::bitbucket::window::LineShare;
use bb_core::fuzzing::reads::builds::{BuildsRead, BuildsReader, Fallback};
use bb_core::fuzzing::reads::conditions::{ConditionsRead, ConditionsReader};
use bb_core::fuzzing::reads::files::{Browsed, Place, browsed_within};
use bb_core::fuzzing::reads::{avatars, diff};
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
    // A window keeps at most its share: each line cut at its characters, no more text than its bytes
    // but the one line that crosses them; the same whether the shell decoded it or the core did.
    let window = LineShare { bytes: usize::from(status % 64), line_chars: usize::from(status % 7) };
    let place = Place { project: "BB".into(), repo: "api".into(), path: "x".into(), at: None };
    let decoded = bb_core::decode(bb_core::Keep::Lines(window), &mut body.as_slice()).ok();
    let streamed = decoded.map(|d| {
        let bb_core::FetchOutcome::Response(mut r) = FetchOutcome::response(200, Vec::new()) else { unreachable!() };
        r.decoded = Some(d);
        FetchOutcome::Response(r)
    });
    for o in [Some(FetchOutcome::response(200, body.clone())), streamed].into_iter().flatten() {
        if let Ok(Browsed::Lines(l)) = browsed_within(&o, &place, window) {
            assert!(l.lines.iter().all(|t| t.chars().count() <= window.line_chars), "a line past its characters");
            let kept: usize = l.lines.iter().map(|t| t.len() + 1).sum();
            assert!(kept <= window.bytes + 4 * window.line_chars + 1, "kept {kept} bytes past {window:?}");
        }
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
