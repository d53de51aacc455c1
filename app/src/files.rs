//! The process's open-file limit, and how many connections it lets bb hold (`--max-connections`'s
//! default, issue 58).
//!
//! Every connection is an open file, and so is every connection waiting to be admitted (as many
//! again as the cap, `bb_http`'s `connections`); Bitbucket's connections, the rate store's, the
//! audit file, the log and the listening sockets need some more. With the cap fixed at 512, a
//! thousand people behind one bb were turned away ("Server busy") while the machine had files and
//! memory to spare, and a process with the common soft limit of 1,024 files could run out of them
//! before the cap was reached.
//!
//! So at start bb raises its soft limit to the hard one, as Go's runtime does for every Go server on
//! Linux since Go 1.19 (reference/platform.md "Open files"), and sizes the cap from what it has:
//! [`connections_for`]. `--max-connections` (or `BB_MAX_CONNECTIONS`) overrides it, and bb says at
//! start when the file limit cannot hold the cap given.

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// Files kept for what is not a person's connection: Bitbucket's connections and the read threads'
/// (48 in flight and as many idle by default), the rate store, the audit file, the log, the
/// listening sockets, the metrics listener and some room.
pub const RESERVED_FILES: u64 = 256;

/// The most connections the default cap allows, whatever the file limit: beyond it memory, not files,
/// bounds a process (each connection holds its buffers).
pub const MOST_BY_DEFAULT: usize = 10_000;

/// The fewest connections the default cap allows, even with a tiny file limit.
pub const FEWEST: usize = 16;

/// The open-file limit after [`raise`]: the soft limit now, and what it was when bb started if it was raised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileLimit {
    /// The soft limit now; `None` when unlimited.
    pub files: Option<u64>,
    /// The soft limit bb found, when it raised it.
    pub raised_from: Option<u64>,
}

/// Raises the soft open-file limit to the hard limit (never lowers it); what the limit is then. A
/// refusal leaves the limit as it was.
pub fn raise() -> FileLimit {
    let found = getrlimit(Resource::Nofile);
    let (soft, hard) = (found.current, found.maximum);
    let higher = match (soft, hard) {
        (Some(s), Some(h)) if h > s => Some(Some(h)),
        (Some(_), None) => Some(None),
        _ => None,
    };
    if let Some(target) = higher
        && setrlimit(Resource::Nofile, Rlimit { current: target, maximum: hard }).is_ok()
    {
        return FileLimit { files: target, raised_from: soft };
    }
    FileLimit { files: soft, raised_from: None }
}

/// The connections a process with `files` open files may hold: two files each (admitted and
/// waiting), after [`RESERVED_FILES`]; at least [`FEWEST`], at most [`MOST_BY_DEFAULT`].
pub fn connections_for(files: Option<u64>) -> usize {
    let Some(files) = files else { return MOST_BY_DEFAULT };
    let room = files.saturating_sub(RESERVED_FILES) / 2;
    usize::try_from(room).unwrap_or(usize::MAX).clamp(FEWEST, MOST_BY_DEFAULT)
}

/// The files `connections` need, as [`connections_for`] counts them.
pub fn files_for(connections: usize) -> u64 {
    (connections as u64).saturating_mul(2).saturating_add(RESERVED_FILES)
}

/// `BB_MAX_CONNECTIONS`'s value, checked: a positive number.
pub fn parse_max_connections(value: &str, name: &str) -> Result<usize, String> {
    value
        .trim()
        .parse::<usize>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("{name} `{}` is not a positive number", value.trim()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    #[test]
    fn the_cap_is_two_files_a_connection_after_the_reserve_within_bounds() {
        assert_eq!(connections_for(Some(1_024)), 384, "the common soft limit");
        assert_eq!(connections_for(Some(20_000)), 9_872);
        assert_eq!(connections_for(Some(1_048_576)), MOST_BY_DEFAULT);
        assert_eq!(connections_for(None), MOST_BY_DEFAULT);
        assert_eq!(connections_for(Some(64)), FEWEST);
        assert_eq!(connections_for(Some(0)), FEWEST);
        for files in [300, 1_024, 4_096, 20_000] {
            let n = connections_for(Some(files));
            assert!(files_for(n) <= files, "{files} files hold {n} connections");
        }
    }

    #[test]
    fn raising_never_lowers_the_limit_and_says_what_it_found() {
        let before = getrlimit(Resource::Nofile).current;
        let after = raise();
        match (before, after.files) {
            (Some(b), Some(a)) => assert!(a >= b),
            (Some(_), None) | (None, None) => {}
            (None, Some(_)) => panic!("an unlimited soft limit was lowered"),
        }
        if after.raised_from.is_some() {
            assert_eq!(after.raised_from, before);
        }
    }

    #[test]
    fn the_environment_s_value_is_a_positive_number() {
        assert_eq!(parse_max_connections(" 2000 ", "BB_MAX_CONNECTIONS"), Ok(2_000));
        for bad in ["0", "-1", "many", ""] {
            let e = parse_max_connections(bad, "BB_MAX_CONNECTIONS").unwrap_err();
            assert!(e.starts_with("BB_MAX_CONNECTIONS `"), "{e}");
        }
    }
}
