//! Which builds a pull request's target branch requires, as Bitbucket's required-builds merge
//! check decides them — or "cannot tell" wherever bb could not decide as the check would.
//!
//! A condition (`GET /rest/required-builds/latest/projects/{key}/repos/{slug}/conditions`, 7.14+,
//! reference/bitbucket-dc.md [spec]) applies when its `refMatcher` matches the PR's **target**
//! branch and its `exemptRefMatcher` does not match the PR's **source** branch. The keys it
//! requires are its `buildParentKeys`.
//!
//! ```text
//!   conditions ──┐
//!   branch model ├─▶ required_keys(target, source) ──▶ Verdict::Required({keys})
//!   (or unread)  ┘                                  └─▶ Verdict::CannotTell(why)
//! ```
//!
//! Matcher types: `ANY_REF`, `BRANCH` (a full ref id), `PATTERN` (branch-permission pattern
//! syntax, see [`pattern_matches`]), `MODEL_BRANCH` (`production`/`development` of the branching
//! model), `MODEL_CATEGORY` (`FEATURE`/`BUGFIX`/`HOTFIX`/`RELEASE`: branches under the type's
//! prefix). Letter case is ignored, as Bitbucket's default does ([assumed], taken from the views
//! decision record; reference/bitbucket-dc.md "Required builds").

use std::collections::BTreeSet;

use serde_json::Value;

use crate::glob::Glob;

/// One ref matcher of a condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefMatcher {
    /// `ANY_REF`: every ref.
    AnyRef,
    /// `BRANCH`: one branch, by its full ref id (`refs/heads/main`).
    Branch(String),
    /// `PATTERN`: a branch-permission pattern.
    Pattern(String),
    /// `MODEL_BRANCH`: the branching model's `production` or `development` branch.
    ModelBranch(String),
    /// `MODEL_CATEGORY`: branches of a branching-model type (`FEATURE`, `BUGFIX`, `HOTFIX`, `RELEASE`).
    ModelCategory(String),
    /// A type bb does not know: bb cannot decide as the check would.
    Unknown(String),
}

/// One required-builds condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// `buildParentKeys`: the keys a build must report under.
    pub keys: Vec<String>,
    /// Which target branches the condition applies to.
    pub ref_matcher: RefMatcher,
    /// Source branches exempt from it.
    pub exempt: Option<RefMatcher>,
}

/// The parts of a repository's branching model the matchers need
/// (`GET /rest/branch-utils/latest/projects/{key}/repos/{slug}/branchmodel`, [rec]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BranchModel {
    /// The development branch's ref id.
    pub development: Option<String>,
    /// The production branch's ref id, when configured.
    pub production: Option<String>,
    /// Enabled branch types: (id such as `FEATURE`, prefix such as `feature/`).
    pub types: Vec<(String, String)>,
}

/// What bb can say about a pull request's required builds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Exactly these build keys are required (possibly none).
    Required(BTreeSet<String>),
    /// bb cannot tell as the merge check would; the view says nothing about requirements.
    CannotTell(String),
}

/// The build keys required for a PR from `source` into `target` (full ref ids).
///
/// `model` is `None` when the branching model could not be read; that matters only if a
/// `MODEL_*` matcher has to be evaluated.
pub fn required_keys(conditions: &[Condition], model: Option<&BranchModel>, target: &str, source: &str) -> Verdict {
    let mut keys = BTreeSet::new();
    for c in conditions {
        match matches(&c.ref_matcher, model, target) {
            Err(why) => return Verdict::CannotTell(why),
            Ok(false) => continue,
            Ok(true) => {}
        }
        let exempt = match &c.exempt {
            None => false,
            Some(m) => match matches(m, model, source) {
                Err(why) => return Verdict::CannotTell(why),
                Ok(e) => e,
            },
        };
        if !exempt {
            keys.extend(c.keys.iter().cloned());
        }
    }
    Verdict::Required(keys)
}

/// Whether `matcher` matches `ref_id`; `Err` when bb cannot decide as Bitbucket would.
pub fn matches(matcher: &RefMatcher, model: Option<&BranchModel>, ref_id: &str) -> Result<bool, String> {
    let unreadable = || "the branching model could not be read".to_string();
    Ok(match matcher {
        RefMatcher::AnyRef => true,
        RefMatcher::Branch(id) => same_ref(&full_branch_ref(id), ref_id),
        RefMatcher::Pattern(p) => pattern_matches(p, ref_id),
        RefMatcher::ModelBranch(which) => {
            let model = model.ok_or_else(unreadable)?;
            let branch = match which.to_ascii_lowercase().as_str() {
                "production" => model.production.as_deref(),
                "development" => model.development.as_deref(),
                other => return Err(format!("an unknown branching-model branch `{other}`")),
            };
            branch.is_some_and(|b| same_ref(&full_branch_ref(b), ref_id))
        }
        RefMatcher::ModelCategory(kind) => {
            let model = model.ok_or_else(unreadable)?;
            // A type that is not enabled in the model matches nothing.
            model.types.iter().filter(|(id, _)| id.eq_ignore_ascii_case(kind)).any(|(_, prefix)| {
                let prefix = full_branch_ref(prefix);
                !prefix.is_empty() && fold(ref_id).starts_with(&fold(&prefix))
            })
        }
        RefMatcher::Unknown(kind) => return Err(format!("a ref matcher of unknown type `{kind}`")),
    })
}

/// A branch name or ref id as a full ref id (`main` → `refs/heads/main`).
fn full_branch_ref(id: &str) -> String {
    if id.starts_with("refs/") { id.to_owned() } else { format!("refs/heads/{id}") }
}

fn same_ref(a: &str, b: &str) -> bool {
    fold(a) == fold(b)
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
    // Matching a suffix that starts at a segment is matching the whole ref after a leading `**`.
    let pats: Vec<&str> = std::iter::once("**").chain(pattern.split('/')).collect();
    match_segments(&pats, &fold(ref_id))
}

/// Whole-ref matching of pattern segments against the ref's segments, a `**` segment spanning any
/// number of them: the segments run through the pattern as an NFA whose states are the pattern's
/// segments, so it costs O(segments × pattern segments) segment matches, each linear in the segment
/// ([`crate::glob`]): O(|pattern| × |ref|) in all, whatever the input.
fn match_segments(pats: &[&str], ref_id: &str) -> bool {
    let globs: Vec<Option<Glob>> = pats.iter().map(|p| (*p != "**").then(|| Glob::chars(p))).collect();
    // `now[i]`: the segments so far leave the pattern before its segment i.
    let mut now = vec![false; globs.len() + 1];
    now[0] = true;
    let pass_stars = |now: &mut [bool]| {
        for i in 0..globs.len() {
            if now[i] && globs[i].is_none() {
                now[i + 1] = true;
            }
        }
    };
    for seg in ref_id.split('/') {
        pass_stars(&mut now);
        let mut next = vec![false; globs.len() + 1];
        for (i, g) in globs.iter().enumerate().filter(|&(i, _)| now[i]) {
            match g {
                None => next[i] = true,
                Some(g) => next[i + 1] |= g.matches_chars(seg),
            }
        }
        if !next.contains(&true) {
            return false;
        }
        now = next;
    }
    pass_stars(&mut now);
    now[globs.len()]
}

/// What the required-builds check needs of one listed build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildFacts {
    /// The build's key.
    pub key: String,
    /// The key it reports under for required builds, when it says (Bamboo: the plan, `PROJ-PLAN`
    /// for the build `PROJ-PLAN123`) (reference "Builds"; bitbucket-ui.md D8, BSERV-19804).
    pub parent: Option<String>,
    /// SUCCESSFUL, FAILED, INPROGRESS, CANCELLED or UNKNOWN.
    pub state: String,
    /// The ref it ran for, when it says.
    pub ref_id: Option<String>,
    /// When it was reported, epoch ms.
    pub date: Option<i64>,
}

impl BuildFacts {
    /// The key the build reports under: its parent, else its own key ([assumed] for a build
    /// without a parent; reference "Builds").
    pub fn reports_under(&self) -> &str {
        self.parent.as_deref().filter(|p| !p.is_empty()).unwrap_or(&self.key)
    }

    /// Whether the build counts for a pull request from `source`: it ran for that branch, or names
    /// no ref (reference "Builds": the UI listing's own rule, applied again in case a server does not).
    pub fn counts_for(&self, source: &str) -> bool {
        self.ref_id.as_deref().is_none_or(|r| same_ref(&full_branch_ref(r), source))
    }
}

/// Where one required key stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyStatus {
    /// One of the `buildParentKeys` of the conditions that apply; builds report under their `parent`, else
    /// their `key`.
    pub key: String,
    /// The state of the latest build reporting under it, or `MISSING` when none has (the merge
    /// check blocks on it).
    pub state: String,
}

impl KeyStatus {
    /// Whether this key keeps the merge check from passing.
    pub fn blocks(&self) -> bool {
        self.state != "SUCCESSFUL"
    }
}

/// The state of each required key for a pull request from `source`, in key order. The latest build
/// reporting under a key (by the time it was reported) decides its state [assumed: Bitbucket's check
/// reads the latest status per key].
pub fn key_statuses(required: &BTreeSet<String>, builds: &[BuildFacts], source: &str) -> Vec<KeyStatus> {
    required
        .iter()
        .map(|key| {
            let latest = builds
                .iter()
                .filter(|b| b.reports_under() == key && b.counts_for(source))
                .max_by_key(|b| b.date.unwrap_or(i64::MIN));
            KeyStatus { key: key.clone(), state: latest.map_or_else(|| "MISSING".to_owned(), |b| b.state.clone()) }
        })
        .collect()
}

/// A summary in Bitbucket's manner: "2 of 3 required builds passed", "No builds are required".
pub fn summary(statuses: &[KeyStatus]) -> String {
    let passed = statuses.iter().filter(|s| !s.blocks()).count();
    match statuses.len() {
        0 => "No builds are required".to_owned(),
        1 if passed == 1 => "The required build passed".to_owned(),
        1 => "The required build has not passed".to_owned(),
        n => format!("{passed} of {n} required builds passed"),
    }
}

/// Reads one ref matcher from Bitbucket JSON: `{id, displayId, type: {id, name}}`.
pub fn matcher_from_json(value: &Value) -> Option<RefMatcher> {
    let id = value.get("id").and_then(Value::as_str)?.to_owned();
    let kind = value.get("type").and_then(|t| t.get("id")).and_then(Value::as_str)?;
    Some(match kind.to_ascii_uppercase().as_str() {
        "ANY_REF" => RefMatcher::AnyRef,
        "BRANCH" => RefMatcher::Branch(id),
        "PATTERN" => RefMatcher::Pattern(id),
        "MODEL_BRANCH" => RefMatcher::ModelBranch(id),
        "MODEL_CATEGORY" => RefMatcher::ModelCategory(id),
        other => RefMatcher::Unknown(other.to_owned()),
    })
}

/// Reads one condition from Bitbucket JSON; `None` when it lacks what the check needs.
pub fn condition_from_json(value: &Value) -> Option<Condition> {
    let keys: Vec<String> =
        value.get("buildParentKeys")?.as_array()?.iter().filter_map(Value::as_str).map(str::to_owned).collect();
    let ref_matcher = matcher_from_json(value.get("refMatcher")?)?;
    let exempt = match value.get("exemptRefMatcher") {
        None | Some(Value::Null) => None,
        Some(m) => Some(matcher_from_json(m)?),
    };
    Some(Condition { keys, ref_matcher, exempt })
}

/// Reads a branching model from Bitbucket JSON (`development`, `production`, `types[]`).
pub fn branch_model_from_json(value: &Value) -> BranchModel {
    let branch = |key: &str| value.get(key).and_then(|b| b.get("id")).and_then(Value::as_str).map(str::to_owned);
    let types = value
        .get("types")
        .and_then(Value::as_array)
        .map(|ts| {
            ts.iter()
                .filter_map(|t| {
                    let id = t.get("id").and_then(Value::as_str)?;
                    let prefix = t.get("prefix").and_then(Value::as_str)?;
                    Some((id.to_owned(), prefix.to_owned()))
                })
                .collect()
        })
        .unwrap_or_default();
    BranchModel { development: branch("development"), production: branch("production"), types }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use serde_json::json;

    #[test]
    fn a_pattern_costs_at_most_its_length_times_the_refs_in_steps() {
        let ref_id = format!("refs/heads/{}b", "a/".repeat(1_000));
        for pattern in ["**/a*/**/a*/c", "heads/**/**/**/a", "*a*a*a*a*a*a*c"] {
            let before = crate::glob::steps();
            assert!(!pattern_matches(pattern, &ref_id));
            let spent = crate::glob::steps() - before;
            let bound = 2 * (pattern.len() as u64 + 1) * (ref_id.len() as u64 + 1);
            assert!(spent <= bound, "{pattern}: {spent} steps, more than {bound}");
        }
    }

    #[test]
    fn examples_from_bitbucket_documentation() {
        // (pattern, ref, matches)
        let table = [
            ("PROJECT-*", "refs/heads/PROJECT-1234", true),
            ("PROJECT-*", "refs/heads/feature/PROJECT-1", true),
            ("PROJECT-*", "refs/heads/PROJECT/1", false),
            ("?.?", "refs/tags/1.0", true),
            ("?.?", "refs/tags/1.10", false),
            ("?.?", "refs/heads/release/2.x", true),
            ("tags/", "refs/tags/v1", true),
            ("tags/", "refs/tags/release/v1", true),
            // `**` spans zero segments too (Ant-style, as "a trailing `/` means `/**`" reads) [assumed]:
            // so `tags/` also matches a ref whose last segment is `tags`.
            ("tags/", "refs/heads/tags", true),
            ("tags/", "refs/heads/tagsx/v1", false),
            ("heads/**/master", "refs/heads/master", true),
            ("heads/**/master", "refs/heads/a/b/master", true),
            ("heads/**/master", "refs/heads/a/b/main", false),
            ("master", "refs/heads/master", true),
            ("master", "refs/heads/team/master", true),
            ("master", "refs/heads/mastery", false),
            ("refs/heads/main", "refs/heads/main", true),
        ];
        for (p, r, want) in table {
            assert_eq!(pattern_matches(p, r), want, "{p} vs {r}");
        }
    }

    #[test]
    fn letter_case_is_ignored_as_bitbucket_does_by_default() {
        assert!(pattern_matches("release/*", "refs/heads/Release/1.0"));
        assert!(pattern_matches("RELEASE/*", "refs/heads/release/1.0"));
        let m = RefMatcher::Branch("refs/heads/Main".into());
        assert_eq!(matches(&m, None, "refs/heads/main"), Ok(true));
    }

    #[test]
    fn an_empty_pattern_matches_nothing() {
        assert!(!pattern_matches("", "refs/heads/main"));
        assert!(!pattern_matches("/", "refs/heads/main"));
    }

    fn model() -> BranchModel {
        BranchModel {
            development: Some("refs/heads/develop".into()),
            production: Some("refs/heads/main".into()),
            types: vec![("FEATURE".into(), "feature/".into()), ("RELEASE".into(), "release/".into())],
        }
    }

    fn cond(keys: &[&str], m: RefMatcher, exempt: Option<RefMatcher>) -> Condition {
        Condition { keys: keys.iter().map(|k| k.to_string()).collect(), ref_matcher: m, exempt }
    }

    fn required(v: Verdict) -> Vec<String> {
        match v {
            Verdict::Required(k) => k.into_iter().collect(),
            Verdict::CannotTell(why) => panic!("cannot tell: {why}"),
        }
    }

    #[test]
    fn a_condition_applies_by_target_and_is_exempted_by_source() {
        let cs = [
            cond(&["ci"], RefMatcher::AnyRef, None),
            cond(
                &["release-check"],
                RefMatcher::ModelBranch("production".into()),
                Some(RefMatcher::ModelCategory("RELEASE".into())),
            ),
            cond(&["dev"], RefMatcher::Branch("refs/heads/develop".into()), None),
        ];
        let m = model();
        assert_eq!(
            required(required_keys(&cs, Some(&m), "refs/heads/main", "refs/heads/feature/x")),
            ["ci", "release-check"]
        );
        assert_eq!(required(required_keys(&cs, Some(&m), "refs/heads/main", "refs/heads/release/1.0")), ["ci"]);
        assert_eq!(required(required_keys(&cs, Some(&m), "refs/heads/develop", "refs/heads/feature/x")), ["ci", "dev"]);
    }

    #[test]
    fn model_category_matches_branches_under_the_type_prefix_only_when_enabled() {
        let m = model();
        assert_eq!(matches(&RefMatcher::ModelCategory("feature".into()), Some(&m), "refs/heads/Feature/x"), Ok(true));
        assert_eq!(matches(&RefMatcher::ModelCategory("FEATURE".into()), Some(&m), "refs/heads/featurex"), Ok(false));
        assert_eq!(matches(&RefMatcher::ModelCategory("HOTFIX".into()), Some(&m), "refs/heads/hotfix/x"), Ok(false));
    }

    #[test]
    fn an_unreadable_model_makes_model_matchers_undecidable_only_when_consulted() {
        let cs = [cond(&["ci"], RefMatcher::Branch("main".into()), Some(RefMatcher::ModelCategory("RELEASE".into())))];
        assert_eq!(required(required_keys(&cs, None, "refs/heads/develop", "refs/heads/x")), Vec::<String>::new());
        assert!(matches!(required_keys(&cs, None, "refs/heads/main", "refs/heads/x"), Verdict::CannotTell(_)));
    }

    #[test]
    fn an_unknown_matcher_type_is_undecidable() {
        let cs = [cond(&["ci"], RefMatcher::Unknown("REGEX".into()), None)];
        assert!(matches!(
            required_keys(&cs, Some(&model()), "refs/heads/main", "refs/heads/x"),
            Verdict::CannotTell(_)
        ));
    }

    fn build(key: &str, parent: Option<&str>, state: &str, r: Option<&str>, date: i64) -> BuildFacts {
        BuildFacts {
            key: key.into(),
            parent: parent.map(Into::into),
            state: state.into(),
            ref_id: r.map(Into::into),
            date: Some(date),
        }
    }

    #[test]
    fn each_required_key_takes_the_state_of_its_latest_build_for_the_branch() {
        let required: BTreeSet<String> = ["PROJ-PLAN", "lint", "docs"].iter().map(|s| s.to_string()).collect();
        let builds = [
            build("PROJ-PLAN12", Some("PROJ-PLAN"), "FAILED", Some("refs/heads/feature/x"), 1),
            build("PROJ-PLAN13", Some("PROJ-PLAN"), "SUCCESSFUL", Some("feature/x"), 2),
            build("lint", None, "SUCCESSFUL", None, 1),
            build("docs", None, "SUCCESSFUL", Some("refs/heads/other"), 3),
        ];
        let st = key_statuses(&required, &builds, "refs/heads/feature/x");
        let states: Vec<(&str, &str)> = st.iter().map(|s| (s.key.as_str(), s.state.as_str())).collect();
        assert_eq!(states, [("PROJ-PLAN", "SUCCESSFUL"), ("docs", "MISSING"), ("lint", "SUCCESSFUL")]);
        assert_eq!(summary(&st), "2 of 3 required builds passed");
    }

    #[test]
    fn summaries_read_as_bitbucket_would_say_them() {
        assert_eq!(summary(&[]), "No builds are required");
        let one = |state: &str| vec![KeyStatus { key: "k".into(), state: state.into() }];
        assert_eq!(summary(&one("SUCCESSFUL")), "The required build passed");
        assert_eq!(summary(&one("INPROGRESS")), "The required build has not passed");
    }

    #[test]
    fn conditions_and_models_are_read_from_bitbucket_json() {
        let c = condition_from_json(&json!({
            "id": 3, "buildParentKeys": ["PROJ-PLAN"],
            "refMatcher": {"id": "release/**", "displayId": "release/**", "type": {"id": "PATTERN", "name": "Pattern"}},
            "exemptRefMatcher": {"id": "ANY_REF_MATCHER_ID", "displayId": "Any branch", "type": {"id": "ANY_REF", "name": "Any branch"}}
        }))
        .unwrap_or_else(|| panic!("a condition"));
        assert_eq!(c.ref_matcher, RefMatcher::Pattern("release/**".into()));
        assert_eq!(c.exempt, Some(RefMatcher::AnyRef));
        assert!(condition_from_json(&json!({"buildParentKeys": ["x"]})).is_none());
        let m = branch_model_from_json(&json!({"development": {"id": "refs/heads/develop"},
            "types": [{"id": "BUGFIX", "displayName": "Bugfix", "prefix": "bugfix/"}]}));
        assert_eq!(m.production, None);
        assert_eq!(m.types, vec![("BUGFIX".to_string(), "bugfix/".to_string())]);
    }
}
