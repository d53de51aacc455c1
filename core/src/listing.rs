//! `tools/list` in pages: which tools a page holds, and the cursor that names the next one.

use serde_json::{Map, Value};

use crate::tool::Exposed;

/// The page of `tools/list` that starts at `start`, for a client that renders views (`apps`) or not
/// ([`Exposed::listed_for`]).
pub(crate) fn tools_page(exposed: &Exposed, page_size: usize, start: usize, apps: bool) -> Value {
    let listed = exposed.listed_for(apps);
    let end = (start + page_size.max(1)).min(listed.len());
    let mut result = Map::new();
    result.insert("tools".into(), Value::Array(listed[start.min(end)..end].to_vec()));
    if end < listed.len() {
        result.insert("nextCursor".into(), Value::String(format!("{CURSOR}{end}")));
    }
    Value::Object(result)
}

/// What a `tools/list` cursor starts with; the rest is the offset of the page's first tool.
const CURSOR: &str = "tools:";

/// The offset a cursor bb gave out names.
fn decode_cursor(cursor: &str) -> Option<usize> {
    cursor.strip_prefix(CURSOR)?.parse().ok()
}

/// The page `params` ask for: the first without a cursor, else the one the cursor names.
pub(crate) fn page_for(exposed: &Exposed, page_size: usize, params: &Value, apps: bool) -> Result<Value, String> {
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(c)) => decode_cursor(c)
            .filter(|&n| n < exposed.tools().iter().filter(|t| apps || !t.role.app_only()).count())
            .ok_or_else(|| "Invalid params: the cursor is not one bb gave out.".to_string())?,
        Some(_) => return Err("Invalid params: `cursor` must be a string.".into()),
    };
    Ok(tools_page(exposed, page_size, start, apps))
}
