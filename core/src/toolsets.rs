//! Toolsets: the named groups of data tools a person recognises, which `--toolsets` turns on for a
//! server and `enable_toolset` for one session. Every data tool belongs to one group; the tools that
//! cannot be undone (merge, auto-merge, applying a suggestion, setting a build status) also need
//! `writes`, which only the operator gives (`--toolsets writes` or `--allow-writes`), never the model.
//!
//! The groups and their names follow github-mcp-server's `--toolsets` (a comma-separated list of
//! groups, `all` for every group, `default` for the documented default, combinable with single tools).

/// A group of data tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Toolset {
    /// Pull requests: find, read, diff, comment, review, open and update.
    PullRequests,
    /// Code: files, blame, code search, commits, comparing refs.
    Code,
    /// Builds: build status, required builds, Code Insights.
    Builds,
    /// Repositories: branches, tags, refs, finding repositories, clone URLs.
    Repositories,
}

/// Every group, in the order help and lists name them.
pub const GROUPS: [Toolset; 4] = [Toolset::PullRequests, Toolset::Code, Toolset::Builds, Toolset::Repositories];

/// The name of the gate on the tools that cannot be undone.
pub const WRITES: &str = "writes";

impl Toolset {
    /// The group's name, as `--toolsets` and `enable_toolset` take it.
    pub const fn name(self) -> &'static str {
        match self {
            Toolset::PullRequests => "pull_requests",
            Toolset::Code => "code",
            Toolset::Builds => "builds",
            Toolset::Repositories => "repositories",
        }
    }

    /// What the group is for, in a few words (help, `enable_toolset`'s description).
    pub const fn about(self) -> &'static str {
        match self {
            Toolset::PullRequests => "pull requests: find, read, diff, comment, review, open, update",
            Toolset::Code => "files, blame, code search, commits, comparing refs",
            Toolset::Builds => "build status, required builds, Code Insights",
            Toolset::Repositories => "branches, tags, resolving refs, finding repositories, clone URLs",
        }
    }

    const fn bit(self) -> u8 {
        1 << self as u8
    }

    /// The group named `name`.
    pub fn parse(name: &str) -> Option<Toolset> {
        GROUPS.into_iter().find(|g| g.name() == name)
    }
}

/// A set of groups, and whether `writes` is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Toolsets(u8);

const WRITES_BIT: u8 = 1 << 7;

impl Toolsets {
    /// No group.
    pub const NONE: Toolsets = Toolsets(0);
    /// bb's default: what a reviewer's whole job needs (the pull request, its diff and comments, the
    /// review; the code beside it; its builds and Code Insights). Repositories' tools are left for
    /// when a session asks for them (`enable_toolset`) or the operator names them.
    pub const DEFAULT: Toolsets = Toolsets(Toolset::PullRequests.bit() | Toolset::Code.bit() | Toolset::Builds.bit());
    /// Every group; `writes` still has to be named (or `--allow-writes` given).
    pub const ALL: Toolsets = Toolsets(
        Toolset::PullRequests.bit() | Toolset::Code.bit() | Toolset::Builds.bit() | Toolset::Repositories.bit(),
    );

    /// Whether `group` is in the set.
    pub const fn contains(self, group: Toolset) -> bool {
        self.0 & group.bit() != 0
    }

    /// The set with `group` in it too.
    #[must_use]
    pub const fn with(self, group: Toolset) -> Toolsets {
        Toolsets(self.0 | group.bit())
    }

    /// The set with `writes` given.
    #[must_use]
    pub const fn with_writes(self) -> Toolsets {
        Toolsets(self.0 | WRITES_BIT)
    }

    /// Whether `writes` is given: the tools that cannot be undone are exposed with their group.
    pub const fn writes(self) -> bool {
        self.0 & WRITES_BIT != 0
    }

    /// Both sets' groups (and `writes` if either gives it).
    #[must_use]
    pub const fn union(self, other: Toolsets) -> Toolsets {
        Toolsets(self.0 | other.0)
    }

    /// The groups of this set, in [`GROUPS`] order.
    pub fn groups(self) -> impl Iterator<Item = Toolset> {
        GROUPS.into_iter().filter(move |g| self.contains(*g))
    }

    /// The groups not in this set.
    #[must_use]
    pub const fn missing(self) -> Toolsets {
        Toolsets(Toolsets::ALL.0 & !self.0)
    }

    /// A number from 0 to 15 for the set's groups (`writes` aside), to index a table by.
    pub(crate) const fn index(self) -> usize {
        (self.0 & Toolsets::ALL.0) as usize
    }

    /// Whether the set has no group (`writes` aside).
    pub const fn is_empty(self) -> bool {
        self.0 & Toolsets::ALL.0 == 0
    }

    /// The names of the set's groups, then `writes` if given.
    pub fn names(self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self.groups().map(Toolset::name).collect();
        if self.writes() {
            names.push(WRITES);
        }
        names
    }

    /// Reads `--toolsets` (or `BB_TOOLSETS`): group names, `default`, `all` and `writes`, comma-separated.
    /// An unknown name is an error that lists the names there are.
    pub fn parse_list(list: &str) -> Result<Toolsets, String> {
        let mut set = Toolsets::NONE;
        let mut any = false;
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            any = true;
            set = match name {
                "all" => set.union(Toolsets::ALL),
                "default" => set.union(Toolsets::DEFAULT),
                WRITES => set.with_writes(),
                other => match Toolset::parse(other) {
                    Some(g) => set.with(g),
                    None => {
                        let shown: String = other.chars().take(60).collect();
                        return Err(format!(
                            "`{shown}` is not a toolset. bb's toolsets: {}, {WRITES}; or all, default.",
                            GROUPS.map(Toolset::name).join(", ")
                        ));
                    }
                },
            };
        }
        if !any {
            return Err(
                "names no toolset: give one or more of pull_requests, code, builds, repositories, writes, all, default"
                    .into(),
            );
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_list_reads_groups_keywords_and_writes() {
        assert_eq!(Toolsets::parse_list("default").unwrap(), Toolsets::DEFAULT);
        assert_eq!(Toolsets::parse_list(" all ").unwrap(), Toolsets::ALL);
        assert!(!Toolsets::parse_list("all").unwrap().writes(), "all does not give writes");
        let s = Toolsets::parse_list("code,writes").unwrap();
        assert_eq!(s.names(), ["code", "writes"]);
        assert_eq!(Toolsets::parse_list("default,repositories").unwrap(), Toolsets::ALL);
        assert!(Toolsets::parse_list("writes").unwrap().is_empty());
        let e = Toolsets::parse_list("code,issues").unwrap_err();
        assert!(e.starts_with("`issues` is not a toolset.") && e.contains("repositories"), "{e}");
        assert!(Toolsets::parse_list(" , ").unwrap_err().contains("names no toolset"));
    }

    #[test]
    fn the_default_leaves_repositories_to_be_asked_for() {
        assert_eq!(Toolsets::DEFAULT.names(), ["pull_requests", "code", "builds"]);
        assert_eq!(Toolsets::DEFAULT.missing().names(), ["repositories"]);
        assert!(Toolsets::ALL.missing().is_empty());
    }
}
