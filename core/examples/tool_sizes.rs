//! Prints each tool definition's size in `tools/list` (with `--allow-writes`), smallest first; with a tool's
//! name, that definition; with `--json`, the whole list.
#![allow(clippy::unwrap_used)]

use bb_core::{Catalogue, ExposureOptions};

fn main() {
    let e = Catalogue::standard().expose(&ExposureOptions::everything()).unwrap();
    let arg = std::env::args().nth(1);
    if arg.as_deref() == Some("--json") {
        println!("{}", serde_json::Value::Array(e.listed().to_vec()));
        return;
    }
    let mut v: Vec<(usize, String)> =
        e.listed().iter().map(|t| (t.to_string().len(), t["name"].as_str().unwrap_or("").to_owned())).collect();
    v.sort();
    for (n, name) in v {
        println!("{n:6} {name}");
    }
    if let Some(t) = arg.and_then(|a| e.listed().iter().find(|x| x["name"] == a.as_str()).cloned()) {
        println!("{}", serde_json::to_string_pretty(&t).unwrap_or_default());
    }
}
