//! The glob matchers as they were before they became linear (issue #37): `list_files`'s path glob
//! (two backtrack points, O(|path|²) on `***b`) and the branch matchers' `pattern_matches` (every
//! start segment, O(|pattern| × |ref|²)). They are the oracle the linear matchers are held to on small
//! inputs (`tests/glob.rs`), and the baseline `examples/glob_bench.rs` prints beside them. Kept
//! byte for byte; do not fix them here.
#![allow(dead_code)]

/// Whether `path` matches `glob`: `*` any run of characters but `/`, `**` any run at all, `?` one character
/// but `/`. A glob without `/` is matched against the path's last component too (`*.rs` finds `src/a.rs`).
pub fn glob_match(glob: &str, path: &str) -> bool {
    fn go(g: &[u8], p: &[u8]) -> bool {
        // One backtrack point for the last `*` and one for the last `**`: linear-ish on hostile globs.
        let (mut gi, mut pi) = (0, 0);
        let mut shallow: Option<(usize, usize)> = None;
        let mut deep: Option<(usize, usize)> = None;
        while pi < p.len() {
            if gi < g.len() && g[gi] == b'*' {
                if g.get(gi + 1) == Some(&b'*') {
                    let mut next = gi + 2;
                    // `**/` also matches no folder at all.
                    if g.get(next) == Some(&b'/') {
                        next += 1;
                    }
                    deep = Some((next, pi));
                    shallow = None;
                    gi = next;
                } else {
                    shallow = Some((gi + 1, pi));
                    gi += 1;
                }
                continue;
            }
            if gi < g.len() && (g[gi] == p[pi] || (g[gi] == b'?' && p[pi] != b'/')) {
                gi += 1;
                pi += 1;
                continue;
            }
            if let Some((next, at)) = shallow.filter(|&(_, at)| p[at] != b'/') {
                shallow = Some((next, at + 1));
                (gi, pi) = (next, at + 1);
            } else if let Some((next, at)) = deep {
                deep = Some((next, at + 1));
                shallow = None;
                (gi, pi) = (next, at + 1);
            } else {
                return false;
            }
        }
        while gi < g.len() && g[gi] == b'*' {
            gi += 1;
        }
        gi == g.len()
    }
    let last = path.rsplit('/').next().unwrap_or(path);
    go(glob.as_bytes(), path.as_bytes()) || (!glob.contains('/') && go(glob.as_bytes(), last.as_bytes()))
}

/// Letter case folded as the matchers ignore it.
fn fold(s: &str) -> String {
    s.to_lowercase()
}

/// Whether a branch-permission `pattern` matches the full ref id `ref_id`.
///
/// Syntax (reference/bitbucket-dc.md, "PATTERN syntax", [doc]): `?` is one character other than
/// `/`; `*` is any run of characters without `/`; `**` (a whole segment) is any number of path
/// segments, none included (so `tags/` matches `refs/tags/v1` and also a ref ending in `tags`, [assumed]); a trailing `/` means `/**`; and a pattern needs to match only a suffix
/// of the ref that starts at a segment boundary (`PROJECT-*`, `heads/**/master`, `tags/`).
/// Letter case is ignored. A leading `/` is dropped [assumed]. An empty pattern matches nothing.
pub fn pattern_matches(pattern: &str, ref_id: &str) -> bool {
    let pattern = fold(pattern);
    let mut pattern = pattern.trim_start_matches('/').to_owned();
    if pattern.is_empty() {
        return false;
    }
    if pattern.ends_with('/') {
        pattern.push_str("**");
    }
    let pats: Vec<&str> = pattern.split('/').collect();
    let folded = fold(ref_id);
    let segs: Vec<&str> = folded.split('/').collect();
    (0..segs.len()).any(|start| match_segments(&pats, &segs[start..]))
}

/// Whole-path matching of pattern segments against ref segments, `**` spanning segments.
fn match_segments(pats: &[&str], segs: &[&str]) -> bool {
    glob(pats, segs, |p| *p == "**", |p, s| match_segment(p, s))
}

/// Glob matching inside one segment: `*` any run, `?` one character (neither crosses `/`, which a
/// segment never holds). `**` inside a segment acts as `*`.
fn match_segment(pat: &str, seg: &str) -> bool {
    let pat: Vec<char> = pat.chars().collect();
    let seg: Vec<char> = seg.chars().collect();
    glob(&pat, &seg, |p| *p == '*', |p, s| *p == '?' || p == s)
}

/// Glob matching of `items` by `pats`, where a star matches any run of items (none included) and
/// any other pattern item matches one item when `one` says so. Iterative, with one backtrack point
/// (the last star), so it runs in O(pattern × items) time whatever the input.
fn glob<P, S>(pats: &[P], items: &[S], star: impl Fn(&P) -> bool, one: impl Fn(&P, &S) -> bool) -> bool {
    let (mut p, mut s) = (0, 0);
    let mut last_star: Option<(usize, usize)> = None;
    while s < items.len() {
        if p < pats.len() && star(&pats[p]) {
            last_star = Some((p, s));
            p += 1;
        } else if p < pats.len() && one(&pats[p], &items[s]) {
            p += 1;
            s += 1;
        } else if let Some((sp, ss)) = last_star {
            // Let the last star swallow one more item and retry.
            last_star = Some((sp, ss + 1));
            p = sp + 1;
            s = ss + 1;
        } else {
            return false;
        }
    }
    pats[p..].iter().all(star)
}
