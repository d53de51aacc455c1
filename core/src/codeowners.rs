//! Code owners: who Bitbucket suggests as reviewers of a new pull request from `.bitbucket/CODEOWNERS` on its
//! target branch (Bitbucket Data Center 8.x and later; docs/reference/bitbucket-dc.md "Code owners").
//!
//! One rule a line: a path pattern, then its owners, each `@username` or an e-mail address. Every rule that
//! matches a changed path adds its owners (all rules, not the last alone). A line bb cannot read (a pattern
//! with no owner it can read) is skipped, never an error; a missing or unreadable file suggests no one.
//!
//! Patterns are read as gitignore reads them, less what Bitbucket leaves out: `/` at the start anchors at the
//! root, `/` at the end names a folder and all under it, a pattern with no `/` but at its end matches a name at
//! any depth, `*` any run within a name, `**` any run of folders, `?` one character [assumed: the DC page says
//! only "branch patterns referring to a path"; Bitbucket Cloud's page says gitignore's syntax].

use std::collections::BTreeMap;

use crate::glob::Glob;

/// Rules read at most; a longer file's rules past it are left out.
pub const MAX_RULES: usize = 500;
/// Owners suggested at most.
pub const MAX_OWNERS: usize = 10;

/// Someone a rule names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Owner {
    /// `@username`: a Bitbucket user by their user name (slug).
    User(String),
    /// An e-mail address.
    Email(String),
}

/// One rule: its pattern as written, the glob it is read as, and its owners.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The pattern as the file writes it ("src/**").
    pub pattern: String,
    globs: Vec<Glob>,
    /// Its owners, in the line's order.
    pub owners: Vec<Owner>,
}

/// The rules of a CODEOWNERS file's lines, in order; comments, blank lines and lines bb cannot read skipped.
pub fn parse<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<Rule> {
    let mut rules = Vec::new();
    for line in lines {
        if rules.len() >= MAX_RULES {
            break;
        }
        // A comment: the rest of the line from a `#` at its start or after a space [assumed: inline comments,
        // as Bitbucket Cloud's page allows].
        let text = match line.find(" #").or_else(|| line.find("\t#")) {
            Some(i) => &line[..i],
            None => line,
        };
        let mut words = text.split_whitespace();
        let Some(pattern) = words.next().filter(|p| !p.starts_with('#')) else {
            continue;
        };
        let owners: Vec<Owner> = words.filter_map(owner).collect();
        if owners.is_empty() || pattern.chars().any(char::is_control) {
            continue;
        }
        rules.push(Rule { pattern: pattern.to_owned(), globs: globs(pattern), owners });
    }
    rules
}

/// An owner as a rule writes it, or `None` for a word that is neither (a group, a team, a typo).
fn owner(word: &str) -> Option<Owner> {
    let ok = |s: &str| !s.is_empty() && s.len() <= 255 && !s.chars().any(|c| c.is_control() || c == '"');
    if let Some(slug) = word.strip_prefix('@') {
        // `@@group` and `@"Team"` name groups, which the DC page does not offer [assumed].
        return (ok(slug) && !slug.starts_with('@')).then(|| Owner::User(slug.to_owned()));
    }
    let (local, domain) = word.split_once('@')?;
    (ok(word) && !local.is_empty() && domain.contains('.') && !domain.contains('@'))
        .then(|| Owner::Email(word.to_owned()))
}

/// The globs a pattern is read as (a name without `/` matches at any depth, and as a folder, everything in it).
fn globs(pattern: &str) -> Vec<Glob> {
    let anchored = pattern.starts_with('/');
    let p = pattern.trim_start_matches('/');
    let folder = p.ends_with('/');
    let p = p.trim_end_matches('/');
    if p.is_empty() {
        return vec![Glob::chars("**")];
    }
    let base = if anchored || p.contains('/') { p.to_owned() } else { format!("**/{p}") };
    let mut out = vec![Glob::chars(&format!("{base}/**"))];
    if !folder {
        out.push(Glob::chars(&base));
    }
    out
}

impl Rule {
    /// Whether the rule matches `path` (from the repository's root, no leading `/`).
    pub fn matches(&self, path: &str) -> bool {
        self.globs.iter().any(|g| g.matches_chars(path))
    }
}

/// The owners of `paths` under `rules`, each with the pattern of the first rule that names them, in the order
/// the file names them; at most [`MAX_OWNERS`].
pub fn owners_of<'a>(rules: &[Rule], paths: impl IntoIterator<Item = &'a str> + Clone) -> Vec<(Owner, String)> {
    let mut seen = BTreeMap::new();
    let mut out = Vec::new();
    for rule in rules {
        if !paths.clone().into_iter().any(|p| rule.matches(p)) {
            continue;
        }
        for o in &rule.owners {
            if out.len() < MAX_OWNERS && seen.insert(o.clone(), ()).is_none() {
                out.push((o.clone(), rule.pattern.clone()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const FILE: &str = "# Code owners\n\
        src/** @dave @erin  # the library\n\
        docs/ frank@example.invalid\n\
        *.md @grace\n\
        /web/app.ts @heidi\n\
        this-line-names-no-owner\n\
        lib.rs @@core-team\n\
        \n\
        Cargo.toml not-an-owner @ivan\n";

    #[test]
    fn rules_are_read_a_line_each_and_a_line_without_an_owner_is_skipped() {
        let rules = parse(FILE.lines());
        let pats: Vec<&str> = rules.iter().map(|r| r.pattern.as_str()).collect();
        assert_eq!(pats, ["src/**", "docs/", "*.md", "/web/app.ts", "Cargo.toml"]);
        assert_eq!(rules[0].owners, [Owner::User("dave".into()), Owner::User("erin".into())]);
        assert_eq!(rules[1].owners, [Owner::Email("frank@example.invalid".into())]);
        assert_eq!(rules[4].owners, [Owner::User("ivan".into())], "a word that is no owner is left out");
    }

    #[test]
    fn patterns_match_as_gitignore_reads_them() {
        let rules = parse(FILE.lines());
        let of = |path: &str| -> Vec<&str> {
            rules.iter().filter(|r| r.matches(path)).map(|r| r.pattern.as_str()).collect()
        };
        assert_eq!(of("src/client.rs"), ["src/**"]);
        assert_eq!(of("docs/retry.md"), ["docs/", "*.md"]);
        assert_eq!(of("README.md"), ["*.md"]);
        assert_eq!(of("web/app.ts"), ["/web/app.ts"]);
        assert_eq!(of("other/web/app.ts"), Vec::<&str>::new(), "anchored at the root");
        assert_eq!(of("crates/x/Cargo.toml"), ["Cargo.toml"], "a name matches at any depth");
    }

    #[test]
    fn every_matching_rule_adds_its_owners_once_each_with_the_first_pattern() {
        let rules = parse(FILE.lines());
        let owners = owners_of(&rules, ["src/client.rs", "docs/retry.md"]);
        let said: Vec<(String, &str)> = owners.iter().map(|(o, p)| (format!("{o:?}"), p.as_str())).collect();
        assert_eq!(
            said,
            [
                ("User(\"dave\")".into(), "src/**"),
                ("User(\"erin\")".into(), "src/**"),
                ("Email(\"frank@example.invalid\")".into(), "docs/"),
                ("User(\"grace\")".into(), "*.md"),
            ]
        );
        assert!(owners_of(&parse(["", "# only a comment", "garbage"]), ["src/a.rs"]).is_empty());
    }
}
