//! Files at each commit: a commit's tree, the merge base of two commits, which paths differ between two trees,
//! a file's diff computed from its two versions (with the `similar` crate), patches applied to files, and blame.
//!
//! A commit either carries a tree of its own (`Repo::trees`: the seed's first commit of each history, pull
//! requests' source commits, pushes, merges) or has its first parent's tree with its subject added as the last
//! line of `CHANGELOG.md`, so any commit made without files (a seed branch's start, a commit a test inserts)
//! still changes something, as the stand-in's compare always showed.

use crate::model::{Entry, FileDiff, Hunk, Line, Repo, Tree, ancestors};
use crate::patches;
use similar::{Algorithm, DiffOp};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

/// The file a commit without files of its own adds its subject to.
pub const CHANGELOG: &str = "CHANGELOG.md";

/// The context lines a diff carries when the request names none. [assumed: Bitbucket's default of 10 is
/// configurable (`page.diff.context.lines`); bb asks for its own number]
pub const DEFAULT_CONTEXT: usize = 10;

/// A commit's tree; `None` for a commit the repository does not hold.
pub fn tree_of(repo: &Repo, commit: &str) -> Option<Tree> {
    let mut derived = Vec::new();
    let mut id = commit.to_string();
    let base = loop {
        if let Some(t) = repo.trees.get(&id) {
            break t.clone();
        }
        let Some(c) = repo.commits.get(&id) else {
            if derived.is_empty() {
                return None;
            }
            break Tree::default();
        };
        derived.push(c);
        match c.parents.first() {
            Some(p) => id = p.clone(),
            None => break Tree::default(),
        }
    };
    let mut tree = base;
    for c in derived.into_iter().rev() {
        let subject = c.message.lines().next().unwrap_or("");
        let line = format!("- {subject} ({})", &c.id[..7.min(c.id.len())]);
        let mut lines = match tree.get(CHANGELOG) {
            Some(Entry::Text(l)) => l.as_ref().clone(),
            _ => vec!["# Changelog".to_string(), String::new()],
        };
        lines.push(line);
        Arc::make_mut(&mut tree).insert(CHANGELOG.to_string(), Entry::text(lines));
    }
    Some(tree)
}

/// The nearest commit both reach (breadth first from `b`), if any.
pub fn merge_base(repo: &Repo, a: &str, b: &str) -> Option<String> {
    let from_a = ancestors(repo, a);
    let mut seen = BTreeSet::new();
    let mut todo = VecDeque::from([b.to_string()]);
    while let Some(id) = todo.pop_front() {
        if from_a.contains(&id) {
            return Some(id);
        }
        if let Some(c) = repo.commits.get(&id)
            && seen.insert(id)
        {
            todo.extend(c.parents.iter().cloned());
        }
    }
    None
}

/// The first-parent chain from `head`, newest first.
pub fn first_parents(repo: &Repo, head: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut id = Some(head.to_string());
    while let Some(c) = id.and_then(|i| repo.commits.get(&i)) {
        out.push(c.id.clone());
        id = c.parents.first().cloned();
    }
    out
}

fn same(a: Option<&Entry>, b: Option<&Entry>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x.same(y),
        (None, None) => true,
        _ => false,
    }
}

fn is_binary(e: Option<&Entry>) -> bool {
    matches!(e, Some(Entry::Binary(_)))
}

/// The paths that differ between two trees, as changes (no hunks): the declared changes first, in their order
/// (MOVE and COPY keep their type and source path while their paths differ), then every other differing path in
/// path order, ADD, DELETE or MODIFY by what each tree holds.
pub fn changes(before: &Tree, after: &Tree, declared: &[FileDiff]) -> Vec<FileDiff> {
    let differs = |p: &str| !same(before.get(p), after.get(p));
    let kind = |p: &str| match (before.contains_key(p), after.contains_key(p)) {
        (false, _) => "ADD",
        (_, false) => "DELETE",
        _ => "MODIFY",
    };
    let change = |path: &str, src: Option<&str>, kind: &str| FileDiff {
        path: path.to_string(),
        src_path: src.map(str::to_string),
        change: kind.to_string(),
        binary: is_binary(before.get(src.unwrap_or(path))) || is_binary(after.get(path)),
        hunks: Vec::new(),
        truncated: false,
    };
    let mut covered: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::new();
    for d in declared {
        if covered.contains(&d.path) || !differs(&d.path) {
            continue;
        }
        covered.insert(d.path.clone());
        match (d.change.as_str(), d.src_path.as_deref()) {
            ("MOVE" | "COPY", Some(src)) if after.contains_key(&d.path) && before.contains_key(src) => {
                if d.change == "MOVE" && !after.contains_key(src) {
                    covered.insert(src.to_string());
                }
                out.push(change(&d.path, Some(src), &d.change));
            }
            _ => out.push(change(&d.path, None, kind(&d.path))),
        }
    }
    let all: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    for p in all {
        if !covered.contains(p.as_str()) && differs(p) {
            out.push(change(p, None, kind(p)));
        }
    }
    out
}

fn lines_of(e: Option<&Entry>) -> &[String] {
    match e {
        Some(Entry::Text(l)) => l.as_slice(),
        _ => &[],
    }
}

/// A submodule as a diff shows it: one line naming the commit. [assumed: git's `Subproject commit <id>`]
fn submodule_lines(e: Option<&Entry>) -> Option<Vec<String>> {
    match e {
        Some(Entry::Submodule(id)) => Some(vec![format!("Subproject commit {id}")]),
        _ => None,
    }
}

/// The hunks between two versions of a file (either may be absent), with `context` lines around each change;
/// none for binary files. Numbering and segments follow Bitbucket's diff: REMOVED lines carry the destination
/// line they would precede, ADDED lines the source line they follow.
pub fn file_hunks(before: Option<&Entry>, after: Option<&Entry>, context: usize) -> Vec<Hunk> {
    if is_binary(before) || is_binary(after) {
        return Vec::new();
    }
    let (sb, sa) = (submodule_lines(before), submodule_lines(after));
    let old = sb.as_deref().unwrap_or(lines_of(before));
    let new = sa.as_deref().unwrap_or(lines_of(after));
    diff_lines(old, new, context)
}

#[derive(Clone, Copy)]
enum Edit {
    Same(usize),
    Gone(usize),
    New(usize),
}

/// The hunks between two line lists.
pub fn diff_lines(old: &[String], new: &[String], context: usize) -> Vec<Hunk> {
    let deadline = std::time::Instant::now().checked_add(std::time::Duration::from_secs(2));
    let ops = similar::capture_diff_slices_deadline(Algorithm::Myers, old, new, deadline);
    let mut edits: Vec<Edit> = Vec::with_capacity(old.len().max(new.len()));
    for op in ops {
        match op {
            DiffOp::Equal { old_index, len, .. } => {
                edits.extend((0..len).map(|i| Edit::Same(old_index + i)));
            }
            DiffOp::Delete { old_index, old_len, .. } => edits.extend((0..old_len).map(|i| Edit::Gone(old_index + i))),
            DiffOp::Insert { new_index, new_len, .. } => edits.extend((0..new_len).map(|i| Edit::New(new_index + i))),
            DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                edits.extend((0..old_len).map(|i| Edit::Gone(old_index + i)));
                edits.extend((0..new_len).map(|i| Edit::New(new_index + i)));
            }
        }
    }
    let changed: Vec<usize> =
        edits.iter().enumerate().filter(|(_, e)| !matches!(e, Edit::Same(_))).map(|(i, _)| i).collect();
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for &i in &changed {
        let lo = i.saturating_sub(context);
        let hi = (i + context + 1).min(edits.len());
        match ranges.last_mut() {
            Some(r) if lo <= r.1 => r.1 = hi.max(r.1),
            _ => ranges.push((lo, hi)),
        }
    }
    ranges.into_iter().map(|(lo, hi)| hunk(old, new, &edits, lo, hi)).collect()
}

fn hunk(old: &[String], new: &[String], edits: &[Edit], lo: usize, hi: usize) -> Hunk {
    // Lines of each side before the hunk.
    let (mut src, mut dst) = (0usize, 0usize);
    for e in &edits[..lo] {
        match e {
            Edit::Same(..) => {
                src += 1;
                dst += 1;
            }
            Edit::Gone(_) => src += 1,
            Edit::New(_) => dst += 1,
        }
    }
    let (src0, dst0) = (src, dst);
    let mut h = Hunk {
        context: function_context(old, src0),
        source_line: 0,
        source_span: 0,
        destination_line: 0,
        destination_span: 0,
        segments: Vec::new(),
        truncated: false,
    };
    for e in &edits[lo..hi] {
        let (kind, text) = match *e {
            Edit::Same(o) => ("CONTEXT", &old[o]),
            Edit::Gone(o) => ("REMOVED", &old[o]),
            Edit::New(n) => ("ADDED", &new[n]),
        };
        let line = Line { source: src as u32 + 1, destination: dst as u32 + 1, text: text.clone() };
        patches::push_line(&mut h, kind, line);
        match kind {
            "CONTEXT" => {
                src += 1;
                dst += 1;
            }
            "REMOVED" => src += 1,
            _ => dst += 1,
        }
    }
    h.source_span = (src - src0) as u32;
    h.destination_span = (dst - dst0) as u32;
    // An empty side is numbered by the line before it, as unified diffs do (`-0,0` for a new file).
    h.source_line = if h.source_span == 0 { src0 as u32 } else { src0 as u32 + 1 };
    h.destination_line = if h.destination_span == 0 { dst0 as u32 } else { dst0 as u32 + 1 };
    h
}

/// The hunk's `@@ … @@` text: the nearest line above it that starts a definition (git's default: a line
/// starting with a letter, `_` or `$`), cut to 80 characters.
fn function_context(old: &[String], before: usize) -> Option<String> {
    old[..before.min(old.len())]
        .iter()
        .rev()
        .find(|l| l.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$'))
        .map(|l| l.chars().take(80).collect::<String>().trim_end().to_string())
}

/// A file with hunks applied at their source line numbers: CONTEXT lines are kept from the file (or taken from
/// the hunk past its end), REMOVED ones skipped, ADDED ones inserted.
pub fn apply(old: &[String], hunks: &[Hunk]) -> Vec<String> {
    let mut out = Vec::with_capacity(old.len() + 16);
    let mut cursor = 0usize;
    for h in hunks {
        let start =
            if h.source_span == 0 { h.source_line as usize } else { (h.source_line as usize).saturating_sub(1) };
        let start = start.max(cursor).min(old.len());
        out.extend_from_slice(&old[cursor..start]);
        cursor = start;
        for s in &h.segments {
            for l in &s.lines {
                match s.kind {
                    "ADDED" => out.push(l.text.clone()),
                    "REMOVED" => cursor += 1,
                    _ => {
                        out.push(old.get(cursor).cloned().unwrap_or_else(|| l.text.clone()));
                        cursor += 1;
                    }
                }
            }
        }
    }
    if cursor < old.len() {
        out.extend_from_slice(&old[cursor..]);
    }
    out
}

/// One run of consecutive lines last changed by the same commit: 0-based first line, line count, commit id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlameRun {
    /// The first line of the run (0-based).
    pub first: usize,
    /// How many lines.
    pub lines: usize,
    /// The commit that last changed them.
    pub commit: String,
}

/// Who last changed each line of a text file at `head`, along first parents: each version is diffed with the
/// one before it and the lines it brought are its commit's. `None` when the path is not a text file at `head`.
pub fn blame(repo: &Repo, head: &str, path: &str) -> Option<Vec<BlameRun>> {
    // The distinct versions, newest first, each with the oldest commit of the run that held it unchanged.
    let mut versions: Vec<(String, Arc<Vec<String>>)> = Vec::new();
    for id in first_parents(repo, head) {
        let tree = tree_of(repo, &id)?;
        let Some(Entry::Text(lines)) = tree.get(path) else {
            break;
        };
        match versions.last_mut() {
            Some((commit, held)) if Arc::ptr_eq(held, lines) || held == lines => *commit = id,
            _ => versions.push((id, lines.clone())),
        }
    }
    let (_, top) = versions.first()?;
    let mut owner: Vec<Option<usize>> = vec![None; top.len()];
    // Where each line of the top version sits in the version being looked at.
    let mut at: Vec<Option<usize>> = (0..top.len()).map(Some).collect();
    for v in 0..versions.len() {
        let Some((_, older)) = versions.get(v + 1) else {
            for (o, a) in owner.iter_mut().zip(&at) {
                if o.is_none() && a.is_some() {
                    *o = Some(v);
                }
            }
            break;
        };
        let newer = &versions[v].1;
        let mut back: Vec<Option<usize>> = vec![None; newer.len()];
        for op in similar::capture_diff_slices(Algorithm::Myers, older, newer) {
            if let DiffOp::Equal { old_index, new_index, len } = op {
                for i in 0..len {
                    back[new_index + i] = Some(old_index + i);
                }
            }
        }
        for (o, a) in owner.iter_mut().zip(at.iter_mut()) {
            if o.is_some() {
                continue;
            }
            match a.and_then(|i| back.get(i).copied().flatten()) {
                Some(j) => *a = Some(j),
                None => {
                    *o = Some(v);
                    *a = None;
                }
            }
        }
    }
    let mut runs: Vec<BlameRun> = Vec::new();
    for (i, o) in owner.iter().enumerate() {
        let commit = &versions[o.unwrap_or(0)].0;
        match runs.last_mut() {
            Some(r) if r.commit == *commit => r.lines += 1,
            _ => runs.push(BlameRun { first: i, lines: 1, commit: commit.clone() }),
        }
    }
    Some(runs)
}

/// A tree with one path set (or removed, for `None`).
pub fn with(tree: &Tree, path: &str, entry: Option<Entry>) -> Tree {
    let mut t = tree.clone();
    let map: &mut BTreeMap<String, Entry> = Arc::make_mut(&mut t);
    match entry {
        Some(e) => {
            map.insert(path.to_string(), e);
        }
        None => {
            map.remove(path);
        }
    }
    t
}

/// `onto` with every path that differs between `from` and `to` set as `to` has it (a merge's tree).
pub fn carry(onto: &Tree, from: &Tree, to: &Tree) -> Tree {
    let mut t = onto.clone();
    let paths: BTreeSet<&String> = from.keys().chain(to.keys()).collect();
    for p in paths {
        if !same(from.get(p), to.get(p)) {
            t = with(&t, p, to.get(p).cloned());
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn a_diff_has_its_context_and_numbers_and_applies_back() {
        let old = v(&["a", "b", "c", "d", "e", "f", "g"]);
        let new = v(&["a", "b", "c", "D", "e", "f", "g", "h"]);
        let h = diff_lines(&old, &new, 1);
        assert_eq!(h.len(), 2);
        assert_eq!((h[0].source_line, h[0].source_span, h[0].destination_line, h[0].destination_span), (3, 3, 3, 3));
        let kinds: Vec<_> = h[0].segments.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, ["CONTEXT", "REMOVED", "ADDED", "CONTEXT"]);
        assert_eq!(h[0].segments[1].lines[0].source, 4);
        assert_eq!(h[0].segments[2].lines[0].destination, 4);
        assert_eq!(apply(&old, &h), new);
        let none = diff_lines(&old, &new, 0);
        assert!(none.iter().flat_map(|h| &h.segments).all(|s| s.kind != "CONTEXT"));
        assert_eq!(apply(&old, &none), new);
        let added = diff_lines(&[], &v(&["x", "y"]), 10);
        assert_eq!((added[0].source_line, added[0].source_span, added[0].destination_line), (0, 0, 1));
    }
}
