//! The registry: every tool and view kind bb has, and which of them a server exposes. It imports the
//! tools and the views; none of them imports it.
//!
//! [`Catalogue::expose`] applies the operator's `--toolsets`, `--tools`, `--exclude` and
//! `--allow-writes` with the rules of the views decision record (ADR-101):
//!
//! - a data tool is exposed when its group is on (`--toolsets`, else the default groups; none when
//!   `--tools` alone names tools) or `--tools` names it, and `--exclude` does not; an unsafe write
//!   (merge) additionally needs `writes` (`--toolsets writes` or `--allow-writes`) or to be named
//!   in `--tools`;
//! - `show` is exposed when groups are on or `--tools` names it, `--exclude` does not, and at least
//!   one of its kinds is offered; a kind is offered only while the data tool whose answer it
//!   shows is exposed;
//! - in a session, while a group is off that it may turn on, `enable_toolset` turns it on for that
//!   session (never `writes`, which only the operator gives); not when `--tools` alone names the tools,
//!   nor with `--dynamic-toolsets off`;
//! - the view companions (`refresh_view`, `suggest_form_values`) go with `show` whatever
//!   `--tools` names, and are withheld only by `--exclude`; a companion of one kind (the form's
//!   suggestions) goes only where that kind is offered.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::plan::{Step, ToolResult};
use crate::tool::{Access, Annotations, Asks, Call, Exposed, KindSpec, Role, Scoped, ToolSpec, Widen};
use crate::toolsets::{GROUPS, Toolsets};

/// The operator's choice of tools: `--toolsets`, `--tools`, `--exclude`, `--allow-writes`, `--dynamic-toolsets`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExposureOptions {
    /// `--toolsets a,b` (or `BB_TOOLSETS`): these groups; `None` = [`Toolsets::DEFAULT`], or none
    /// when `--tools` names tools alone.
    pub toolsets: Option<Toolsets>,
    /// `--tools a,b`: these too (plus `show`'s companions); alone, only these.
    pub tools: Option<BTreeSet<String>>,
    /// `--exclude a,b`: never these.
    pub exclude: BTreeSet<String>,
    /// `--allow-writes`: `writes` (the tools that cannot be undone, with their groups).
    pub allow_writes: bool,
    /// Whether a session may turn more groups on (`enable_toolset`); not when `--tools` alone names the tools.
    pub dynamic: bool,
    /// `--read-only` (or `BB_READ_ONLY`): only tools that change nothing, whatever `--toolsets`, `--tools`,
    /// `--allow-writes` or `enable_toolset` say; a write tool named in `--tools` is withheld, and said so.
    pub read_only: bool,
}

impl Default for ExposureOptions {
    /// bb's defaults: the default groups, and sessions may turn the others on.
    fn default() -> ExposureOptions {
        ExposureOptions {
            toolsets: None,
            tools: None,
            exclude: BTreeSet::new(),
            allow_writes: false,
            dynamic: true,
            read_only: false,
        }
    }
}

impl ExposureOptions {
    /// Every group, and `writes`: every tool bb has (tests and benches that reach every tool).
    pub fn everything() -> ExposureOptions {
        ExposureOptions { toolsets: Some(Toolsets::ALL), allow_writes: true, ..ExposureOptions::default() }
    }

    /// The groups on from the start (and whether `writes` is given: never on a read-only server).
    pub fn toolsets_on(&self) -> Toolsets {
        let on = self.toolsets.unwrap_or(if self.tools.is_some() { Toolsets::NONE } else { Toolsets::DEFAULT });
        if self.allow_writes && !self.read_only { on.with_writes() } else { on }
    }

    /// The tools `--tools` names that change Bitbucket, which a read-only server withholds (in `catalogue`'s
    /// order): what bb says at start.
    pub fn withheld_by_read_only(&self, catalogue: &Catalogue) -> Vec<&'static str> {
        if !self.read_only {
            return Vec::new();
        }
        let named = |n: &str| self.tools.as_ref().is_some_and(|t| t.contains(n));
        catalogue.tools.iter().filter(|t| t.access != Access::Read && named(t.name)).map(|t| t.name).collect()
    }

    /// Whether a session may turn groups on: not when the operator named the tools alone, turned it
    /// off, or excluded `enable_toolset`.
    fn widens(&self) -> bool {
        self.dynamic
            && !(self.tools.is_some() && self.toolsets.is_none())
            && !self.exclude.contains(ENABLE_TOOLSET.name)
    }
}

/// Every tool bb has, in the order `tools/list` shows them, and the kinds of `show`.
#[derive(Debug, Clone)]
pub struct Catalogue {
    tools: Vec<ToolSpec>,
    kinds: Vec<KindSpec>,
}

/// `enable_toolset`: the session answers it ([`Role::Session`]); its schema offers the groups still off.
pub const ENABLE_TOOLSET: ToolSpec = ToolSpec {
    name: "enable_toolset",
    title: "Enable toolset",
    description: "Turn on a group of bb's tools for this session when the task needs tools you do not have. Your tool list then has them.",
    input_schema: no_schema,
    // It changes what this session lists, nothing in Bitbucket: read-only, idempotent, a closed world.
    annotations: Annotations { read_only: true, destructive: false, idempotent: true, open_world: false },
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Session,
    role: Role::Session,
    start: answered_by_the_session,
};

fn no_schema() -> Value {
    json!({"type": "object", "properties": {}})
}

fn answered_by_the_session(_: &Map<String, Value>, _: &Call<'_>) -> Step {
    // Never reached: the session answers a Role::Session tool before any start.
    Step::Done(ToolResult::error("enable_toolset is answered by the session."))
}

impl Catalogue {
    /// A catalogue of these tools and view kinds. Names must be unique.
    pub fn new(tools: Vec<ToolSpec>, kinds: Vec<KindSpec>) -> Catalogue {
        Catalogue { tools, kinds }
    }

    /// bb's own tools: the pull request data tools, `show` and the kinds of [`crate::views::KINDS`],
    /// and `enable_toolset`.
    pub fn standard() -> Catalogue {
        let mut tools = crate::tools::all();
        tools.push(crate::views::SHOW);
        tools.push(crate::views::refresh::REFRESH_VIEW);
        tools.push(crate::views::download::DOWNLOAD_FILE);
        tools.push(crate::views::suggest::SUGGEST_FORM_VALUES);
        tools.push(ENABLE_TOOLSET);
        Catalogue::new(tools, crate::views::KINDS.to_vec())
    }

    /// Every tool's name, in catalogue order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tools.iter().map(|t| t.name)
    }

    /// The data tools of each group, in catalogue order (help, README, the token budget).
    pub fn groups(&self) -> Vec<(crate::toolsets::Toolset, Vec<&ToolSpec>)> {
        GROUPS.into_iter().map(|g| (g, self.tools.iter().filter(|t| t.role == Role::Data(g)).collect())).collect()
    }

    /// Applies the operator's options: what a server exposes from the start, as `tools/list` lists it
    /// for a request without a session (2026-07-28). A session (2025-11-25) sees the same and, while
    /// groups are off that it may turn on, `enable_toolset` ([`Exposed::widen`]). Naming a tool the
    /// catalogue does not have is an error that lists the tools it has.
    pub fn expose(&self, options: &ExposureOptions) -> Result<Arc<Exposed>, String> {
        // Built only when a flag names tools: a start without one reads no tool's name.
        let known: BTreeSet<&str> = if options.tools.is_some() || !options.exclude.is_empty() {
            self.names().collect()
        } else {
            BTreeSet::new()
        };
        for (flag, names) in [
            ("--tools", options.tools.iter().flatten().collect::<Vec<_>>()),
            ("--exclude", options.exclude.iter().collect()),
        ] {
            if let Some(unknown) = names.iter().find(|n| !known.contains(n.as_str())) {
                let list: Vec<&str> = self.names().collect();
                let list = if list.is_empty() { "none yet".to_owned() } else { list.join(", ") };
                return Err(format!("{flag} names `{unknown}`, which is not a bb tool. bb's tools: {list}."));
            }
        }
        let mut exposed = self.exposure(options, Toolsets::NONE, false);
        if options.widens() && !self.offerable(options, Toolsets::NONE).is_empty() {
            let (catalogue, options) = (self.clone(), options.clone());
            exposed.widen = Some(Widen::new(move |extra| catalogue.exposure(&options, extra, true)));
        }
        Ok(Arc::new(exposed))
    }

    /// The groups off that a session could turn on to some effect (a group whose every tool is excluded
    /// would add nothing).
    fn offerable(&self, options: &ExposureOptions, extra: Toolsets) -> Toolsets {
        let on = options.toolsets_on().union(extra);
        on.missing()
            .groups()
            .filter(|g| self.tools.iter().any(|t| t.role == Role::Data(*g) && !options.exclude.contains(t.name)))
            .fold(Toolsets::NONE, Toolsets::with)
    }

    /// What `options` expose with the groups of `extra` turned on too; `session`: as a session sees it.
    fn exposure(&self, options: &ExposureOptions, extra: Toolsets, session: bool) -> Exposed {
        let on = options.toolsets_on().union(extra);
        let excluded = |name: &str| options.exclude.contains(name);
        let named_explicitly = |name: &str| options.tools.as_ref().is_some_and(|t| t.contains(name));

        let data_exposed = |t: &ToolSpec| match t.role {
            // A read-only server runs no tool that changes Bitbucket, whoever names it.
            Role::Data(_) if options.read_only && t.access != Access::Read => false,
            Role::Data(group) => {
                !excluded(t.name)
                    && (named_explicitly(t.name)
                        || (on.contains(group) && (t.access != Access::UnsafeWrite || on.writes())))
            }
            _ => false,
        };
        let mut kinds: Vec<KindSpec> = self
            .kinds
            .iter()
            .filter(|k| self.tools.iter().any(|t| t.name == k.tool && data_exposed(t)))
            .copied()
            .collect();
        // `show` comes with the groups whose kinds it draws; with `--tools` alone, only when named.
        let show_wanted = |name: &str| {
            !excluded(name) && (options.tools.is_none() || options.toolsets.is_some() || named_explicitly(name))
        };
        let show_exposed = !kinds.is_empty() && self.tools.iter().any(|t| t.role == Role::Show && show_wanted(t.name));
        let offerable = if session && options.widens() { self.offerable(options, extra) } else { Toolsets::NONE };
        let tools: Vec<ToolSpec> = self
            .tools
            .iter()
            .filter(|t| match t.role {
                Role::Data(_) => data_exposed(t),
                Role::Show => show_exposed,
                Role::ViewCompanion { kind } => {
                    show_exposed && !excluded(t.name) && kind.is_none_or(|k| kinds.iter().any(|o| o.name == k))
                }
                Role::Session => !offerable.is_empty() && !excluded(t.name),
            })
            .copied()
            .collect();
        if !show_exposed {
            kinds.clear();
        }
        let gated: Vec<&'static str> = self
            .tools
            .iter()
            .filter(|t| t.access == Access::UnsafeWrite && !excluded(t.name) && !tools.iter().any(|e| e.name == t.name))
            .map(|t| t.name)
            .collect();
        let mut exposed = Exposed::offering(tools, kinds, offerable);
        if !options.read_only {
            exposed.gated = gated;
        }
        if options.read_only {
            let writes = self.tools.iter().filter(|t| t.access != Access::Read).map(|t| t.name).collect();
            exposed.read_only = Some(writes);
        }
        exposed
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use crate::testing::test_catalogue;
    use crate::tool::VIEW_URI;
    use serde_json::{Value, json};

    fn exposed(tools: Option<&[&str]>, exclude: &[&str], allow_writes: bool) -> Vec<&'static str> {
        let options = ExposureOptions {
            tools: tools.map(|t| t.iter().map(|s| s.to_string()).collect()),
            exclude: exclude.iter().map(|s| s.to_string()).collect(),
            allow_writes,
            ..ExposureOptions::default()
        };
        test_catalogue().expose(&options).unwrap().tools().iter().map(|t| t.name).collect()
    }

    #[test]
    fn by_default_everything_but_unsafe_writes_is_exposed() {
        assert_eq!(
            exposed(None, &[], false),
            [
                "echo",
                "get_thing",
                "list_things",
                "add_note",
                "fetch_twice",
                "show",
                "refresh_view",
                "suggest_form_values"
            ]
        );
    }

    #[test]
    fn allow_writes_exposes_unsafe_writes() {
        assert!(exposed(None, &[], true).contains(&"merge_thing"));
    }

    #[test]
    fn naming_an_unsafe_write_in_tools_exposes_it_without_allow_writes() {
        assert_eq!(exposed(Some(&["merge_thing"]), &[], false), ["merge_thing"]);
    }

    #[test]
    fn companions_go_with_show_whatever_tools_names() {
        assert_eq!(
            exposed(Some(&["get_thing", "show"]), &[], false),
            ["get_thing", "show", "refresh_view", "suggest_form_values"]
        );
    }

    #[test]
    fn companions_are_withheld_only_by_exclude() {
        assert_eq!(
            exposed(Some(&["get_thing", "show"]), &["refresh_view"], false),
            ["get_thing", "show", "suggest_form_values"]
        );
        assert!(!exposed(None, &["suggest_form_values"], false).contains(&"suggest_form_values"));
    }

    #[test]
    fn companions_never_come_without_show() {
        assert_eq!(exposed(Some(&["get_thing", "refresh_view"]), &[], false), ["get_thing"]);
        assert_eq!(
            exposed(None, &["show"], false).iter().filter(|n| n.contains("view") || n.contains("form")).count(),
            0
        );
    }

    #[test]
    fn a_show_kind_is_offered_only_while_its_data_tool_is_exposed() {
        let options = ExposureOptions { exclude: ["list_things".to_string()].into(), ..Default::default() };
        let e = test_catalogue().expose(&options).unwrap();
        assert_eq!(e.kinds().iter().map(|k| (k.name, k.tool)).collect::<Vec<_>>(), [("thing", "get_thing")]);
        let listed = e.listed();
        let schema = &listed.iter().find(|t| t["name"] == "show").unwrap()["inputSchema"];
        assert_eq!(schema["properties"]["kind"]["enum"], json!(["thing"]));
    }

    #[test]
    fn show_without_any_kind_is_not_exposed() {
        assert_eq!(exposed(Some(&["show", "echo"]), &[], false), ["echo"]);
        assert!(!exposed(None, &["get_thing", "list_things"], false).contains(&"show"));
    }

    #[test]
    fn a_kind_whose_tool_is_an_unexposed_unsafe_write_is_not_offered() {
        let e = test_catalogue().expose(&ExposureOptions::default()).unwrap();
        assert!(!e.kinds().iter().any(|k| k.name == "merge_form"));
        let e = test_catalogue().expose(&ExposureOptions::everything()).unwrap();
        assert!(e.kinds().iter().any(|k| k.name == "merge_form"));
    }

    #[test]
    fn exclude_wins_over_tools() {
        assert_eq!(exposed(Some(&["echo", "get_thing"]), &["echo"], false), ["get_thing"]);
    }

    #[test]
    fn an_unknown_name_is_an_error_listing_the_known_tools() {
        let options = ExposureOptions { tools: Some(["nope".to_string()].into()), ..Default::default() };
        let e = test_catalogue().expose(&options).unwrap_err();
        assert!(e.starts_with("--tools names `nope`, which is not a bb tool."), "{e}");
        assert!(e.contains("get_thing"));
        let options = ExposureOptions { exclude: ["nada".to_string()].into(), ..Default::default() };
        assert!(test_catalogue().expose(&options).unwrap_err().starts_with("--exclude names `nada`"));
    }

    #[test]
    fn show_carries_the_view_uri_and_companions_are_app_only() {
        let e = test_catalogue().expose(&ExposureOptions::default()).unwrap();
        let entry = |n: &str| e.listed().iter().find(|t| t["name"] == n).unwrap().clone();
        assert_eq!(entry("show")["_meta"]["ui"]["resourceUri"], VIEW_URI);
        assert_eq!(entry("show")["_meta"]["ui/resourceUri"], VIEW_URI);
        assert_eq!(entry("refresh_view")["_meta"]["ui"]["visibility"], json!(["app"]));
        assert!(entry("get_thing").get("_meta").is_none());
    }

    #[test]
    fn every_listed_tool_has_a_valid_name_a_description_and_an_object_schema() {
        let e = test_catalogue().expose(&ExposureOptions::everything()).unwrap();
        for t in e.listed() {
            let name = t["name"].as_str().unwrap();
            assert!(name.len() <= 128 && name.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)));
            assert!(!t["description"].as_str().unwrap().is_empty());
            assert_eq!(t["inputSchema"]["type"], "object");
            for hint in t["annotations"].as_object().unwrap().values() {
                assert!(hint.is_boolean(), "{name}");
            }
        }
    }

    #[test]
    fn standard_catalogue_schemas_use_only_keywords_the_validator_checks() {
        fn walk(v: &Value, tool: &str) {
            if let Some(obj) = v.as_object() {
                for (k, sub) in obj {
                    assert!(crate::args::KNOWN_KEYWORDS.contains(&k.as_str()), "{tool}: keyword {k}");
                    match k.as_str() {
                        "properties" => sub.as_object().unwrap().values().for_each(|p| walk(p, tool)),
                        "items" => walk(sub, tool),
                        _ => {}
                    }
                }
            }
        }
        for cat in [Catalogue::standard(), test_catalogue()] {
            let e = cat.expose(&ExposureOptions::everything()).unwrap();
            for t in e.tools() {
                walk(&e.input_schema(t), t.name);
            }
        }
    }

    fn standard(options: &ExposureOptions) -> Arc<Exposed> {
        Catalogue::standard().expose(options).unwrap()
    }

    fn names(e: &Exposed) -> Vec<&'static str> {
        e.tools().iter().map(|t| t.name).collect()
    }

    fn with_toolsets(list: &str) -> ExposureOptions {
        ExposureOptions { toolsets: Some(Toolsets::parse_list(list).unwrap()), ..ExposureOptions::default() }
    }

    #[test]
    fn every_data_tool_is_in_a_group_and_the_groups_are_what_the_readme_says() {
        let c = Catalogue::standard();
        let groups = c.groups();
        let total: usize = groups.iter().map(|(_, tools)| tools.len()).sum();
        assert_eq!(total, crate::tools::all().len());
        let names = |g: usize| groups[g].1.iter().map(|t| t.name).collect::<Vec<_>>();
        assert_eq!(
            names(1),
            ["get_commit", "list_commits", "compare_refs", "get_file", "list_files", "blame_file", "search_code"]
        );
        assert_eq!(names(2), ["get_build_status", "set_build_status", "list_required_builds", "get_code_insights"]);
        assert_eq!(
            names(3),
            [
                "list_branches",
                "resolve_ref",
                "search_repositories",
                "get_repository_clone_info",
                "list_tags",
                "create_tag"
            ]
        );
    }

    #[test]
    fn the_default_is_a_reviewers_whole_job_without_repositories_or_what_cannot_be_undone() {
        let e = standard(&ExposureOptions::default());
        let tools = names(&e);
        for t in [
            "get_pull_request",
            "get_pull_request_diff",
            "add_pr_comment",
            "submit_pr_review",
            "get_file",
            "blame_file",
        ] {
            assert!(tools.contains(&t), "{t}");
        }
        for t in ["get_build_status", "get_code_insights", "list_required_builds", "show", "refresh_view"] {
            assert!(tools.contains(&t), "{t}");
        }
        for t in ["list_branches", "list_tags", "merge_pull_request", "set_build_status", "enable_toolset"] {
            assert!(!tools.contains(&t), "{t} is not in the default list (enable_toolset only in a session)");
        }
        assert!(e.widen.is_some(), "a session may turn repositories on");
        assert_eq!(e.offerable(), Toolsets::NONE, "the list without a session offers nothing to turn on");
    }

    #[test]
    fn a_group_brings_show_with_only_the_kinds_it_draws() {
        let e = standard(&with_toolsets("code"));
        let kinds: Vec<&str> = e.kinds().iter().map(|k| k.name).collect();
        assert_eq!(kinds, ["compare", "file"]);
        assert!(names(&e).contains(&"show") && !names(&e).contains(&"suggest_form_values"));
        assert!(!names(&e).contains(&"get_pull_request"));
        let e = standard(&with_toolsets("builds"));
        assert!(!names(&e).contains(&"show"), "no kind draws a build: {:?}", names(&e));
        assert_eq!(names(&e), ["get_build_status", "list_required_builds", "get_code_insights"]);
    }

    #[test]
    fn writes_comes_only_from_the_operator_and_only_with_its_group() {
        let e = standard(&with_toolsets("all"));
        assert!(!names(&e).contains(&"merge_pull_request"), "all does not give writes");
        let e = standard(&with_toolsets("pull_requests,writes"));
        assert!(names(&e).contains(&"merge_pull_request") && names(&e).contains(&"apply_pr_suggestion"));
        assert!(!names(&e).contains(&"set_build_status"), "builds is off");
        let e = standard(&ExposureOptions { allow_writes: true, ..ExposureOptions::default() });
        assert!(names(&e).contains(&"set_build_status") && !names(&e).contains(&"list_branches"));
        let e = standard(&ExposureOptions::everything());
        assert_eq!(names(&e).len(), Catalogue::standard().names().count() - 1, "all but enable_toolset");
    }

    #[test]
    fn tools_add_to_toolsets_alone_they_are_the_list_and_exclude_wins() {
        let e =
            standard(&ExposureOptions { tools: Some(["list_branches".to_string()].into()), ..with_toolsets("code") });
        assert!(names(&e).contains(&"list_branches") && names(&e).contains(&"get_file"));
        let alone = ExposureOptions { tools: Some(["get_file".to_string()].into()), ..ExposureOptions::default() };
        let e = standard(&alone);
        assert_eq!(names(&e), ["get_file"]);
        assert!(e.widen.is_none(), "tools named alone are a fixed list");
        let e = standard(&ExposureOptions { exclude: ["get_file".to_string()].into(), ..with_toolsets("code") });
        assert!(!names(&e).contains(&"get_file") && !e.kinds().iter().any(|k| k.name == "file"));
    }

    #[test]
    fn a_session_sees_enable_toolset_while_a_group_is_off_and_each_group_it_turns_on() {
        let e = standard(&with_toolsets("pull_requests"));
        let widen = e.widen.as_ref().unwrap();
        let mine = widen.exposure(Toolsets::NONE);
        assert!(names(&mine).contains(&"enable_toolset"));
        assert_eq!(mine.offerable().names(), ["code", "builds", "repositories"]);
        let schema = mine.input_schema(mine.get("enable_toolset").unwrap());
        assert_eq!(schema["properties"]["toolset"]["enum"], json!(["code", "builds", "repositories"]));
        let wider = widen.exposure(Toolsets::NONE.with(crate::toolsets::Toolset::Code));
        assert!(names(&wider).contains(&"get_file") && wider.kinds().iter().any(|k| k.name == "file"));
        assert_eq!(wider.offerable().names(), ["builds", "repositories"]);
        let all = widen.exposure(Toolsets::ALL);
        assert!(!names(&all).contains(&"enable_toolset"), "nothing left to turn on");
        assert!(!names(&all).contains(&"merge_pull_request"), "never writes");
    }

    #[test]
    fn no_session_may_turn_groups_on_when_the_operator_says_so_or_none_is_left() {
        assert!(standard(&ExposureOptions { dynamic: false, ..ExposureOptions::default() }).widen.is_none());
        assert!(standard(&with_toolsets("all")).widen.is_none());
        let every_repo_tool_excluded = ExposureOptions {
            exclude: [
                "list_branches",
                "resolve_ref",
                "search_repositories",
                "get_repository_clone_info",
                "list_tags",
                "create_tag",
            ]
            .map(String::from)
            .into(),
            ..ExposureOptions::default()
        };
        assert!(standard(&every_repo_tool_excluded).widen.is_none(), "repositories would add nothing");
        let excluded = ExposureOptions { exclude: ["enable_toolset".to_string()].into(), ..ExposureOptions::default() };
        assert!(standard(&excluded).widen.is_none(), "--exclude enable_toolset: a fixed list");
    }

    #[test]
    fn a_tools_schema_is_made_once_per_exposure_and_is_the_one_listed() {
        let e = standard(&ExposureOptions::default());
        let show = *e.get("show").unwrap();
        let first = e.checked_schema(&show);
        assert!(matches!(first, std::borrow::Cow::Borrowed(_)));
        assert!(std::ptr::eq(first.as_ref(), e.checked_schema(&show).as_ref()), "the same value, not made again");
        assert_eq!(first.as_ref(), &e.input_schema(&show));
        let listed = e.listed().into_iter().find(|t| t["name"] == "get_file").unwrap();
        assert_eq!(&listed["inputSchema"], e.checked_schema(e.get("get_file").unwrap()).as_ref());
    }
}
