//! The kinds of `show` are one table, `bb_core::testing::views::KINDS`; the catalogue, `show`'s schema, the
//! page's kind registry and the view-data contract follow from it. These tests hold each of them to it.
#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

use std::collections::BTreeSet;

use bb_core::Role;
use bb_core::testing::views::KINDS;
use bb_core::{Catalogue, ExposureOptions};
use serde_json::{Value, json};

/// The contract between the core and the page.
const VIEW_DATA: &str = include_str!("../../assets/VIEW_DATA.md");

fn everything() -> std::sync::Arc<bb_core::Exposed> {
    Catalogue::standard().expose(&ExposureOptions::everything()).unwrap()
}

/// The kinds a script registers with `registerKind("name", …)`, in order.
fn registered(script: &str) -> Vec<&str> {
    script
        .match_indices("registerKind(\"")
        .filter_map(|(at, call)| {
            let rest = &script[at + call.len()..];
            rest.find('"').map(|end| &rest[..end])
        })
        .collect()
}

#[test]
fn the_table_names_each_kind_once() {
    let names: BTreeSet<&str> = KINDS.iter().map(|k| k.name).collect();
    assert_eq!(names.len(), KINDS.len(), "a kind is listed twice in views::KINDS");
}

#[test]
fn every_kind_shows_the_answer_of_a_data_tool_of_the_standard_catalogue() {
    let exposed = everything();
    for kind in KINDS {
        let tool = exposed.get(kind.tool).unwrap_or_else(|| panic!("kind {}: no tool {}", kind.name, kind.tool));
        assert!(matches!(tool.role, Role::Data(_)), "kind {}: {} is not a data tool", kind.name, kind.tool);
    }
}

#[test]
fn every_kind_is_drawn_by_a_page_script_that_registers_exactly_that_kind() {
    for kind in KINDS {
        let script = bb_assets::SCRIPTS
            .iter()
            .find(|(file, _)| *file == kind.page)
            .unwrap_or_else(|| panic!("kind {}: {} is not one of the page's scripts", kind.name, kind.page))
            .1;
        assert_eq!(registered(script), [kind.name], "kind {}: what {} registers", kind.name, kind.page);
    }
}

#[test]
fn the_page_registers_no_kind_the_table_does_not_have() {
    let table: BTreeSet<&str> = KINDS.iter().map(|k| k.name).collect();
    for (file, script) in bb_assets::SCRIPTS {
        for name in registered(script) {
            assert!(table.contains(name), "{file} registers {name}, which views::KINDS does not list");
        }
    }
}

#[test]
fn the_view_data_contract_documents_every_kind() {
    let kinds_line = VIEW_DATA
        .lines()
        .find(|l| l.trim_start().starts_with("\"kind\":"))
        .expect("VIEW_DATA.md has a line for `kind`");
    for kind in KINDS {
        let quoted = format!("\"{}\"", kind.name);
        assert!(
            kinds_line.contains(&quoted) || VIEW_DATA.contains(&format!("\"kind\": {quoted}")),
            "assets/VIEW_DATA.md does not document the kind {}",
            kind.name
        );
        assert!(
            VIEW_DATA.contains(&format!("// kind {quoted}")),
            "assets/VIEW_DATA.md has no section `// kind {quoted}` for what the kind carries"
        );
    }
}

#[test]
fn show_offers_exactly_the_kinds_of_the_table() {
    let exposed = everything();
    let listed = exposed.listed();
    let show = listed.iter().find(|t| t["name"] == "show").expect("show is listed");
    let names: Vec<&str> = KINDS.iter().map(|k| k.name).collect();
    assert_eq!(show["inputSchema"]["properties"]["kind"]["enum"], json!(names));
    let offered: Vec<&str> = exposed.kinds().iter().map(|k| k.name).collect();
    assert_eq!(offered, names);
    assert!(show["inputSchema"]["required"].as_array().is_some_and(|r| r.contains(&Value::from("kind"))));
}
