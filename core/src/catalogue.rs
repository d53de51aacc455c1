//! The tool catalogue, and which of its tools a server exposes.
//!
//! The catalogue knows every tool bb has: its schema, description, annotations, whether it
//! writes, and which view kind (if any) draws its answer. [`Catalogue::expose`] applies the
//! operator's `--tools`, `--exclude` and `--allow-writes` with the rules of the views decision
//! record (ADR-101):
//!
//! - a data tool is exposed when `--tools` is absent or names it, and `--exclude` does not;
//!   an unsafe write (merge) additionally needs `--allow-writes` or to be named in `--tools`;
//! - `show` is exposed when `--tools` is absent or names it, `--exclude` does not, and at least
//!   one of its kinds is offered; a kind is offered only while the data tool whose answer it
//!   shows is exposed;
//! - the view companions (`refresh_view`, `suggest_form_values`) go with `show` whatever
//!   `--tools` names, and are withheld only by `--exclude`.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::plan::{PlanContext, Step};
use crate::protocol::ClientProfile;

/// The URI of bb's one view page.
pub const VIEW_URI: &str = "ui://bb/view";

/// What part a tool plays in the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A tool that answers the model, drawn by the view kind it names (if any).
    Data {
        /// The `show` kind that draws this tool's answer.
        view_kind: Option<&'static str>,
    },
    /// The one view tool, with the kinds it can draw.
    Show {
        /// The view kinds `show` draws; a kind is offered only while its data tool is exposed too.
        kinds: &'static [&'static str],
    },
    /// A tool only views call (`refresh_view`, `suggest_form_values`); goes with `show`.
    ViewCompanion,
}

/// Whether a tool changes anything in Bitbucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads only.
    Read,
    /// Writes something a person can undo or that adds (a comment, a review).
    Write,
    /// Writes something that cannot be taken back (a merge): exposed only when asked for.
    UnsafeWrite,
}

/// MCP tool annotations (hints for the client; defaults per the MCP schema are stated explicitly).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Annotations {
    /// The tool does not modify its environment.
    pub read_only: bool,
    /// The tool may perform destructive updates.
    pub destructive: bool,
    /// Calling it again with the same arguments has no additional effect.
    pub idempotent: bool,
    /// The tool reaches an open world (Bitbucket): true for every tool that reads Bitbucket.
    pub open_world: bool,
}

/// The context of one tool call.
#[derive(Debug)]
pub struct CallContext<'a> {
    /// The client, as it declared itself in `initialize`.
    pub client: &'a ClientProfile,
    /// What this server exposes.
    pub exposed: &'a Exposed,
    /// Wall-clock time of the call, epoch milliseconds.
    pub now_ms: u64,
    /// The Bitbucket user's slug, once a response has named it (`X-AUSERNAME`).
    pub bitbucket_user: Option<&'a str>,
    /// Bitbucket's base URL, for links the views build.
    pub base_url: Option<&'a str>,
    /// The avatars every session of the server shares.
    pub avatars: &'a crate::views::avatars::SharedAvatars,
}

/// Starts a tool call with validated arguments.
pub type StartFn = fn(&Map<String, Value>, &mut PlanContext, &CallContext<'_>) -> Step;

/// One tool bb has.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// The tool's name (snake_case).
    pub name: &'static str,
    /// A human title.
    pub title: &'static str,
    /// What the model reads to decide whether to call it.
    pub description: &'static str,
    /// The input schema; `show`'s is built from its offered kinds instead.
    pub input_schema: fn() -> Value,
    /// The annotations.
    pub annotations: Annotations,
    /// Whether it writes.
    pub access: Access,
    /// The part it plays.
    pub role: Role,
    /// Runs a call.
    pub start: StartFn,
}

/// The operator's choice of tools: `--tools`, `--exclude`, `--allow-writes`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExposureOptions {
    /// `--tools a,b`: only these (plus `show`'s companions); `None` = every tool.
    pub tools: Option<BTreeSet<String>>,
    /// `--exclude a,b`: never these.
    pub exclude: BTreeSet<String>,
    /// `--allow-writes`: expose unsafe writes too.
    pub allow_writes: bool,
}

/// Every tool bb has, in the order `tools/list` shows them.
#[derive(Debug, Clone)]
pub struct Catalogue {
    tools: Vec<ToolSpec>,
}

/// The tools a server exposes, with their `tools/list` entries rendered once.
#[derive(Debug)]
pub struct Exposed {
    tools: Vec<ToolSpec>,
    listed: Vec<Value>,
    show_kinds: Vec<(&'static str, &'static str)>,
}

impl Catalogue {
    /// A catalogue of these tools. Names must be unique.
    pub fn new(tools: Vec<ToolSpec>) -> Catalogue {
        Catalogue { tools }
    }

    /// bb's own tools: the pull request data tools ([`crate::tools`]). The views land with their issue.
    pub fn standard() -> Catalogue {
        let mut tools = crate::tools::all();
        tools.push(crate::views::spec());
        Catalogue::new(tools)
    }

    /// Every tool's name, in catalogue order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tools.iter().map(|t| t.name)
    }

    /// Applies the operator's options. Naming a tool the catalogue does not have is an error
    /// that lists the tools it has.
    pub fn expose(&self, options: &ExposureOptions) -> Result<Arc<Exposed>, String> {
        let known: BTreeSet<&str> = self.names().collect();
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
        let named = |name: &str| options.tools.as_ref().is_none_or(|t| t.contains(name));
        let excluded = |name: &str| options.exclude.contains(name);
        let named_explicitly = |name: &str| options.tools.as_ref().is_some_and(|t| t.contains(name));

        let data_exposed = |t: &ToolSpec| {
            named(t.name)
                && !excluded(t.name)
                && (t.access != Access::UnsafeWrite || options.allow_writes || named_explicitly(t.name))
        };
        let drawn: &[&str] = self
            .tools
            .iter()
            .find_map(|t| match t.role {
                Role::Show { kinds } => Some(kinds),
                _ => None,
            })
            .unwrap_or(&[]);
        let mut show_kinds = Vec::new();
        for t in &self.tools {
            if let Role::Data { view_kind: Some(kind) } = t.role
                && data_exposed(t)
                && drawn.contains(&kind)
            {
                show_kinds.push((kind, t.name));
            }
        }
        let show_exposed = self.tools.iter().any(|t| {
            matches!(t.role, Role::Show { .. }) && named(t.name) && !excluded(t.name) && !show_kinds.is_empty()
        });
        let tools: Vec<ToolSpec> = self
            .tools
            .iter()
            .filter(|t| match t.role {
                Role::Data { .. } => data_exposed(t),
                Role::Show { .. } => show_exposed,
                Role::ViewCompanion => show_exposed && !excluded(t.name),
            })
            .cloned()
            .collect();
        if !show_exposed {
            show_kinds.clear();
        }
        let mut exposed = Exposed { tools, listed: Vec::new(), show_kinds };
        exposed.listed = exposed.tools.iter().map(|t| exposed.render(t)).collect();
        Ok(Arc::new(exposed))
    }
}

impl Exposed {
    /// The exposed tools, in `tools/list` order.
    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    /// The exposed tool with this name.
    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The `tools/list` entries, rendered once.
    pub fn listed(&self) -> &[Value] {
        &self.listed
    }

    /// The `show` kinds offered, each with the data tool whose answer it shows.
    pub fn show_kinds(&self) -> &[(&'static str, &'static str)] {
        &self.show_kinds
    }

    /// The input schema a call to `tool` is checked against.
    pub fn input_schema(&self, tool: &ToolSpec) -> Value {
        match tool.role {
            Role::Show { .. } => self.show_schema(),
            _ => (tool.input_schema)(),
        }
    }

    /// The schema of a `show` call: `kind`, and the arguments of the kind's data tool, which the
    /// model already has from that tool's own schema (so they are not listed twice, at a cost in
    /// tokens on every `tools/list`). `show` checks them against that schema when it runs.
    fn show_schema(&self) -> Value {
        let kinds: Vec<&str> = self.show_kinds.iter().map(|(k, _)| *k).collect();
        let pairs: Vec<String> = self.show_kinds.iter().map(|(k, t)| format!("{k}: {t}")).collect();
        json!({"type": "object",
               "properties": {"kind": {"type": "string", "enum": kinds,
                   "description": format!("The view. Also pass the arguments of its tool ({}).", pairs.join(", "))}},
               "required": ["kind"]})
    }

    /// The data tool whose answer a `show` kind draws, when the kind is offered.
    pub fn tool_of_kind(&self, kind: &str) -> Option<&ToolSpec> {
        self.show_kinds.iter().find(|(k, _)| *k == kind).and_then(|(_, t)| self.get(t))
    }

    /// One `tools/list` entry.
    fn render(&self, t: &ToolSpec) -> Value {
        let a = t.annotations;
        let mut entry = Map::new();
        entry.insert("name".into(), Value::from(t.name));
        entry.insert("title".into(), Value::from(t.title));
        entry.insert("description".into(), Value::from(t.description));
        entry.insert("inputSchema".into(), self.input_schema(t));
        entry.insert(
            "annotations".into(),
            json!({"readOnlyHint": a.read_only, "destructiveHint": a.destructive,
                   "idempotentHint": a.idempotent, "openWorldHint": a.open_world}),
        );
        match t.role {
            Role::Show { .. } => {
                entry.insert("_meta".into(), json!({"ui": {"resourceUri": VIEW_URI}, "ui/resourceUri": VIEW_URI}));
            }
            Role::ViewCompanion => {
                entry.insert("_meta".into(), json!({"ui": {"visibility": ["app"]}}));
            }
            Role::Data { .. } => {}
        }
        Value::Object(entry)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use crate::testing::test_catalogue;

    fn exposed(tools: Option<&[&str]>, exclude: &[&str], allow_writes: bool) -> Vec<&'static str> {
        let options = ExposureOptions {
            tools: tools.map(|t| t.iter().map(|s| s.to_string()).collect()),
            exclude: exclude.iter().map(|s| s.to_string()).collect(),
            allow_writes,
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
        assert_eq!(e.show_kinds(), [("thing", "get_thing")]);
        let schema = &e.listed().iter().find(|t| t["name"] == "show").unwrap()["inputSchema"];
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
        assert!(!e.show_kinds().iter().any(|(k, _)| *k == "merge_form"));
        let e = test_catalogue().expose(&ExposureOptions { allow_writes: true, ..Default::default() }).unwrap();
        assert!(e.show_kinds().iter().any(|(k, _)| *k == "merge_form"));
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
        let e = test_catalogue().expose(&ExposureOptions { allow_writes: true, ..Default::default() }).unwrap();
        for t in e.listed() {
            let name = t["name"].as_str().unwrap();
            assert!(name.len() <= 128 && name.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)));
            assert!(!t["description"].as_str().unwrap().is_empty());
            assert_eq!(t["inputSchema"]["type"], "object");
            for key in ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] {
                assert!(t["annotations"][key].is_boolean(), "{name} {key}");
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
            let e = cat.expose(&ExposureOptions { allow_writes: true, ..Default::default() }).unwrap();
            for t in e.tools() {
                walk(&e.input_schema(t), t.name);
            }
        }
    }
}
