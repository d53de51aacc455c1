//! The registry: every tool and view kind bb has, and which of them a server exposes. It imports the
//! tools and the views; none of them imports it.
//!
//! [`Catalogue::expose`] applies the operator's `--tools`, `--exclude` and `--allow-writes` with the
//! rules of the views decision record (ADR-101):
//!
//! - a data tool is exposed when `--tools` is absent or names it, and `--exclude` does not;
//!   an unsafe write (merge) additionally needs `--allow-writes` or to be named in `--tools`;
//! - `show` is exposed when `--tools` is absent or names it, `--exclude` does not, and at least
//!   one of its kinds is offered; a kind is offered only while the data tool whose answer it
//!   shows is exposed;
//! - the view companions (`refresh_view`, `suggest_form_values`) go with `show` whatever
//!   `--tools` names, and are withheld only by `--exclude`; a companion of one kind (the form's
//!   suggestions) goes only where that kind is offered.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::tool::{Access, Exposed, KindSpec, Role, ToolSpec};

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

/// Every tool bb has, in the order `tools/list` shows them, and the kinds of `show`.
#[derive(Debug, Clone)]
pub struct Catalogue {
    tools: Vec<ToolSpec>,
    kinds: Vec<KindSpec>,
}

impl Catalogue {
    /// A catalogue of these tools and view kinds. Names must be unique.
    pub fn new(tools: Vec<ToolSpec>, kinds: Vec<KindSpec>) -> Catalogue {
        Catalogue { tools, kinds }
    }

    /// bb's own tools: the pull request data tools, `show` and the kinds of [`crate::views::KINDS`].
    pub fn standard() -> Catalogue {
        let mut tools = crate::tools::all();
        tools.push(crate::views::SHOW);
        tools.push(crate::views::refresh::REFRESH_VIEW);
        tools.push(crate::views::suggest::SUGGEST_FORM_VALUES);
        Catalogue::new(tools, crate::views::KINDS.to_vec())
    }

    /// Every tool's name, in catalogue order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tools.iter().map(|t| t.name)
    }

    /// Applies the operator's options. Naming a tool the catalogue does not have is an error
    /// that lists the tools it has.
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
        let named = |name: &str| options.tools.as_ref().is_none_or(|t| t.contains(name));
        let excluded = |name: &str| options.exclude.contains(name);
        let named_explicitly = |name: &str| options.tools.as_ref().is_some_and(|t| t.contains(name));

        let data_exposed = |t: &ToolSpec| {
            t.role == Role::Data
                && named(t.name)
                && !excluded(t.name)
                && (t.access != Access::UnsafeWrite || options.allow_writes || named_explicitly(t.name))
        };
        let mut kinds: Vec<KindSpec> = self
            .kinds
            .iter()
            .filter(|k| self.tools.iter().any(|t| t.name == k.tool && data_exposed(t)))
            .copied()
            .collect();
        let show_exposed =
            !kinds.is_empty() && self.tools.iter().any(|t| t.role == Role::Show && named(t.name) && !excluded(t.name));
        let tools: Vec<ToolSpec> = self
            .tools
            .iter()
            .filter(|t| match t.role {
                Role::Data => data_exposed(t),
                Role::Show => show_exposed,
                Role::ViewCompanion { kind } => {
                    show_exposed && !excluded(t.name) && kind.is_none_or(|k| kinds.iter().any(|o| o.name == k))
                }
            })
            .copied()
            .collect();
        if !show_exposed {
            kinds.clear();
        }
        Ok(Arc::new(Exposed::new(tools, kinds)))
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
        let e = test_catalogue().expose(&ExposureOptions { allow_writes: true, ..Default::default() }).unwrap();
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
        let e = test_catalogue().expose(&ExposureOptions { allow_writes: true, ..Default::default() }).unwrap();
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
            let e = cat.expose(&ExposureOptions { allow_writes: true, ..Default::default() }).unwrap();
            for t in e.tools() {
                walk(&e.input_schema(t), t.name);
            }
        }
    }
}
