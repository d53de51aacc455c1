//! Whether a tool call's arguments fit the tool's input schema, and if not, what is wrong in
//! words the model can act on.
//!
//! bb's schemas use a small subset of JSON Schema, and this module checks exactly that subset:
//! `type` (object, string, integer, number, boolean, array), `properties`, `required`,
//! `additionalProperties: false`, `enum`, `minimum`, `maximum`, `minLength`, `maxLength`,
//! `items`, `minItems`, `maxItems`. A schema keyword outside the subset is a bug in bb, caught
//! by the catalogue's tests, not by a user.

use serde_json::{Map, Value};

/// The JSON Schema keywords this validator understands (the catalogue's tests hold every schema to them).
#[cfg(test)]
pub const KNOWN_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "items",
    "minItems",
    "maxItems",
    "default",
];

/// Why a call's arguments do not fit: the rule broken, with the argument's name as the sentence says it
/// (`` `pr_id` ``, `` `paths[0]` ``, "the arguments"). `Display` is the one sentence the model reads.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgError {
    /// Not of the schema's `type`.
    WrongType {
        /// The argument.
        name: String,
        /// The type the schema names.
        ty: String,
        /// What was given, described (never a long string whole).
        given: String,
    },
    /// Not one of the schema's `enum`.
    NotOneOf {
        /// The argument.
        name: String,
        /// The values allowed, as JSON.
        choices: Vec<String>,
        /// What was given, described.
        given: String,
    },
    /// An empty string where a value is needed.
    Empty {
        /// The argument.
        name: String,
    },
    /// Shorter than `minLength` (above 1).
    TooShort {
        /// The argument.
        name: String,
        /// The fewest characters.
        min: u64,
    },
    /// Longer than `maxLength`.
    TooLong {
        /// The argument.
        name: String,
        /// The most characters.
        max: u64,
        /// How many it has.
        chars: u64,
    },
    /// Below `minimum`.
    BelowMinimum {
        /// The argument.
        name: String,
        /// The least value.
        min: f64,
        /// The number given, as given.
        given: String,
    },
    /// Above `maximum`.
    AboveMaximum {
        /// The argument.
        name: String,
        /// The greatest value.
        max: f64,
        /// The number given, as given.
        given: String,
    },
    /// Fewer items than `minItems`.
    TooFewItems {
        /// The argument.
        name: String,
        /// The fewest items.
        min: u64,
    },
    /// More items than `maxItems`.
    TooManyItems {
        /// The argument.
        name: String,
        /// The most items.
        max: u64,
        /// How many it has.
        len: u64,
    },
    /// A `required` argument absent (or null).
    Required {
        /// Its path (`pr_id`, `show.kind`).
        key: String,
    },
    /// An argument the tool does not take (`additionalProperties: false`).
    Unknown {
        /// Its path.
        key: String,
        /// The arguments the tool takes, sorted.
        known: Vec<String>,
    },
    /// A place's name longer than any Bitbucket name ([`check_places`]).
    PlaceTooLong {
        /// The argument.
        key: &'static str,
        /// The most characters.
        max: usize,
    },
    /// A place that is `.` or `..`, or a path with such a step.
    DotStep {
        /// The argument.
        key: &'static str,
    },
    /// A ref or path with control characters.
    Control {
        /// The argument.
        key: &'static str,
    },
}

impl std::fmt::Display for ArgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArgError::WrongType { name, ty, given } => {
                let article = if ty.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
                write!(f, "{name} must be {article} {ty}, not {given}.")
            }
            ArgError::NotOneOf { name, choices, given } => {
                write!(f, "{name} must be one of {}, not {given}.", choices.join(", "))
            }
            ArgError::Empty { name } => write!(f, "{name} cannot be empty."),
            ArgError::TooShort { name, min } => write!(f, "{name} must have at least {min} characters."),
            ArgError::TooLong { name, max, chars } => {
                write!(f, "{name} must have at most {max} characters (it has {chars}).")
            }
            ArgError::BelowMinimum { name, min, given } => write!(f, "{name} must be at least {min}, not {given}."),
            ArgError::AboveMaximum { name, max, given } => write!(f, "{name} must be at most {max}, not {given}."),
            ArgError::TooFewItems { name, min } => write!(f, "{name} must have at least {min} items."),
            ArgError::TooManyItems { name, max, len } => {
                write!(f, "{name} must have at most {max} items (it has {len}).")
            }
            ArgError::Required { key } => write!(f, "`{key}` is required."),
            ArgError::Unknown { key, known } if known.is_empty() => {
                write!(f, "`{key}` is not an argument of this tool; this tool takes no arguments.")
            }
            ArgError::Unknown { key, known } => {
                write!(f, "`{key}` is not an argument of this tool; expected one of: {}.", known.join(", "))
            }
            ArgError::PlaceTooLong { key, max } => {
                write!(f, "`{key}` is longer than {max} characters: no Bitbucket name is.")
            }
            ArgError::DotStep { key } => {
                write!(f, "`{key}` cannot be `.` or `..` (or hold such a path step): Bitbucket names never are.")
            }
            ArgError::Control { key } => write!(f, "`{key}` holds control characters: no Bitbucket ref or path does."),
        }
    }
}

/// Checks `args` (the call's `arguments`, absent = `{}`) against `schema`.
/// The error names the argument and says what was expected.
pub fn validate(args: Option<&Value>, schema: &Value) -> Result<(), ArgError> {
    let empty = Value::Object(Map::new());
    let args = match args {
        None | Some(Value::Null) => &empty,
        Some(v) => v,
    };
    check(args, schema, "")
}

/// Arguments that name a place in Bitbucket (a project, a repository, a branch, a commit, a file) and
/// become segments of a request's path: each is refused when it is `.` or `..` (or, for a file path,
/// holds such a component; a project or a repository, when empty) — Bitbucket's keys, slugs and paths never are, and a proxy that normalises
/// dot segments would send the request, with its credentials, to another endpoint — or when it is
/// longer than any such name can be. Every other name a call carries (a user, each reviewer, a tag's or
/// a build's name, a filter) is bounded too, so that no name of a megabyte is sent or quoted back.
pub fn check_places(args: &Map<String, Value>) -> Result<(), ArgError> {
    /// Longest project key or repository slug accepted. [assumed: Bitbucket's own limits are 128 for a
    /// key and a slug; 256 leaves room and still stops a 100,000-character key before it is sent]
    const NAME: usize = 256;
    /// Longest branch, ref, commit, user or file path accepted (git's refs and paths stay far below).
    const PATH: usize = 4096;
    let too_long = |key, max| ArgError::PlaceTooLong { key, max };
    let dots = |key| ArgError::DotStep { key };
    for (key, max) in [("project", NAME), ("repo", NAME), ("project_key", NAME)] {
        if let Some(v) = string(args, key) {
            if v.chars().count() > max {
                return Err(too_long(key, max));
            }
            if v == "." || v == ".." {
                return Err(dots(key));
            }
            // Checked here rather than by a `minLength` in every tool's schema, which the model would read
            // in each tool definition to learn what it already knows.
            if v.is_empty() {
                return Err(ArgError::Empty { name: format!("`{key}`") });
            }
        }
    }
    let control = |key| ArgError::Control { key };
    // A person's name: a user, a reviewer (each of a list). [assumed: Bitbucket's user names are at most 255]
    for key in ["user", "reviewers", "add_reviewers", "remove_reviewers"] {
        let one = string(args, key).into_iter();
        let listed = args.get(key).and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str);
        for v in one.chain(listed) {
            if v.chars().count() > NAME {
                return Err(too_long(key, NAME));
            }
            if v.chars().any(char::is_control) {
                return Err(control(key));
            }
        }
    }
    // Names bb looks for or gives rather than goes to (a tag's or a build's name, a build's key and
    // page, a filter): bounded only, as a search for `.` is a search.
    for key in ["name", "key", "filter", "url"] {
        if string(args, key).is_some_and(|v| v.chars().count() > PATH) {
            return Err(too_long(key, PATH));
        }
    }
    for key in ["from_ref", "to_ref", "source_branch", "target_branch", "commit_id", "at", "since", "until", "commit"] {
        if let Some(v) = string(args, key) {
            if v.chars().count() > PATH {
                return Err(too_long(key, PATH));
            }
            if v == "." || v == ".." {
                return Err(dots(key));
            }
            if v.chars().any(char::is_control) {
                return Err(control(key));
            }
        }
    }
    let paths = args.get("paths").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str);
    for p in paths.chain(string(args, "path")) {
        if p.chars().count() > PATH {
            return Err(too_long("paths", PATH));
        }
        if p.split('/').any(|c| c == "." || c == "..") {
            return Err(dots("paths"));
        }
        if p.chars().any(char::is_control) {
            return Err(control("path"));
        }
    }
    Ok(())
}

/// A string argument, once [`validate`] has checked its type.
pub fn string<'a>(args: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// A non-negative integer argument.
pub fn number(args: &Map<String, Value>, key: &str) -> Option<u64> {
    args.get(key).and_then(Value::as_u64)
}

/// A boolean argument.
pub fn flag(args: &Map<String, Value>, key: &str) -> Option<bool> {
    args.get(key).and_then(Value::as_bool)
}

/// `project` and `repo`, which the schemas of repository tools require.
pub fn repository(args: &Map<String, Value>) -> (String, String) {
    (string(args, "project").unwrap_or("").to_owned(), string(args, "repo").unwrap_or("").to_owned())
}

/// `project`, `repo` and `pr_id`, which the schemas of pull request tools require.
pub fn pull_request(args: &Map<String, Value>) -> (String, String, u64) {
    (
        string(args, "project").unwrap_or("").to_owned(),
        string(args, "repo").unwrap_or("").to_owned(),
        number(args, "pr_id").unwrap_or(0),
    )
}

/// The `start` and `limit` query parameters of a page.
pub fn paging(start: u64, limit: u64) -> [(String, String); 2] {
    [("start".into(), start.to_string()), ("limit".into(), limit.to_string())]
}

fn check(value: &Value, schema: &Value, at: &str) -> Result<(), ArgError> {
    let name = if at.is_empty() { "the arguments".to_owned() } else { format!("`{at}`") };
    if let Some(ty) = schema.get("type").and_then(Value::as_str) {
        let fits = match ty {
            "object" => value.is_object(),
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "array" => value.is_array(),
            _ => true,
        };
        if !fits {
            return Err(ArgError::WrongType { name, ty: ty.to_owned(), given: describe(value) });
        }
    }
    if let Some(choices) = schema.get("enum").and_then(Value::as_array)
        && !choices.contains(value)
    {
        let choices = choices.iter().map(Value::to_string).collect();
        return Err(ArgError::NotOneOf { name, choices, given: describe(value) });
    }
    match value {
        Value::Object(map) => check_object(map, schema, at),
        Value::String(s) => {
            let chars = s.chars().count() as u64;
            // No string argument is meaningfully empty but a description (emptied on purpose), a search text (a
            // view's cleared field) or one whose schema says `minLength: 0` (a folder path: the root): the rest
            // are refused as if they said `minLength: 1`, which the model then need not read in every tool
            // definition.
            let last = at.rsplit('.').next().unwrap_or(at);
            let min = schema
                .get("minLength")
                .and_then(Value::as_u64)
                .unwrap_or(u64::from(!matches!(last, "description" | "text")));
            if chars < min {
                return Err(if min == 1 { ArgError::Empty { name } } else { ArgError::TooShort { name, min } });
            }
            if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
                && chars > max
            {
                return Err(ArgError::TooLong { name, max, chars });
            }
            Ok(())
        }
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
                && x < min
            {
                return Err(ArgError::BelowMinimum { name, min, given: n.to_string() });
            }
            if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
                && x > max
            {
                return Err(ArgError::AboveMaximum { name, max, given: n.to_string() });
            }
            Ok(())
        }
        Value::Array(items) => {
            let len = items.len() as u64;
            if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
                && len < min
            {
                return Err(ArgError::TooFewItems { name, min });
            }
            if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
                && len > max
            {
                return Err(ArgError::TooManyItems { name, max, len });
            }
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(item, item_schema, &format!("{}[{i}]", if at.is_empty() { "arguments" } else { at }))?;
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn check_object(map: &Map<String, Value>, schema: &Value, at: &str) -> Result<(), ArgError> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let join = |key: &str| if at.is_empty() { key.to_owned() } else { format!("{at}.{key}") };
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for key in required.iter().filter_map(Value::as_str) {
            if map.get(key).is_none_or(Value::is_null) {
                return Err(ArgError::Required { key: join(key) });
            }
        }
    }
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (key, value) in map {
        match properties.and_then(|p| p.get(key)) {
            // An explicit null means "not given", as most clients send for an optional argument.
            Some(_) if value.is_null() => {}
            Some(sub) => check(value, sub, &join(key))?,
            None if closed => {
                let mut known: Vec<String> = properties.map(|p| p.keys().cloned().collect()).unwrap_or_default();
                known.sort_unstable();
                return Err(ArgError::Unknown { key: join(key), known });
            }
            None => {}
        }
    }
    Ok(())
}

/// A short description of a value for an error message, never echoing a long string whole.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if s.chars().count() <= 40 => format!("the string {}", Value::String(s.clone())),
        Value::String(s) => format!("a string of {} characters", s.chars().count()),
        Value::Array(a) => format!("an array of {} items", a.len()),
        Value::Object(_) => "an object".into(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "project": {"type": "string", "minLength": 1},
                "pr_id": {"type": "integer", "minimum": 1},
                "state": {"type": "string", "enum": ["OPEN", "MERGED"]},
                "paths": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                "draft": {"type": "boolean"}
            },
            "required": ["project", "pr_id"],
            "additionalProperties": false
        })
    }

    fn err(args: Value) -> String {
        match validate(Some(&args), &schema()) {
            Err(e) => e.to_string(),
            Ok(()) => String::from("<accepted>"),
        }
    }

    #[test]
    fn fitting_arguments_are_accepted() {
        assert_eq!(validate(Some(&json!({"project": "P", "pr_id": 3, "paths": ["a"]})), &schema()), Ok(()));
    }

    #[test]
    fn a_missing_required_argument_is_named() {
        assert_eq!(err(json!({"project": "P"})), "`pr_id` is required.");
        assert_eq!(err(json!({"project": "P", "pr_id": null})), "`pr_id` is required.");
    }

    #[test]
    fn a_wrong_type_says_what_was_expected_and_what_came() {
        assert_eq!(err(json!({"project": "P", "pr_id": "12"})), "`pr_id` must be an integer, not the string \"12\".");
        assert_eq!(err(json!({"project": "P", "pr_id": 1.5})), "`pr_id` must be an integer, not 1.5.");
    }

    #[test]
    fn an_unknown_argument_lists_the_known_ones() {
        assert_eq!(
            err(json!({"project": "P", "pr_id": 1, "prId": 1})),
            "`prId` is not an argument of this tool; expected one of: draft, paths, pr_id, project, state."
        );
    }

    #[test]
    fn enums_bounds_and_lengths_are_checked() {
        assert!(err(json!({"project": "P", "pr_id": 1, "state": "open"})).contains("must be one of"));
        assert!(err(json!({"project": "P", "pr_id": 0})).contains("at least 1"));
        assert!(err(json!({"project": "", "pr_id": 1})).contains("cannot be empty"));
        assert!(err(json!({"project": "P", "pr_id": 1, "paths": ["a", "b", "c"]})).contains("at most 2 items"));
        assert!(err(json!({"project": "P", "pr_id": 1, "paths": [1]})).contains("`paths[0]` must be a string"));
    }

    #[test]
    fn arguments_that_are_not_an_object_are_refused() {
        assert_eq!(err(json!([1])), "the arguments must be an object, not an array of 1 items.");
    }

    #[test]
    fn absent_arguments_count_as_an_empty_object() {
        let open = json!({"type": "object", "properties": {}});
        assert_eq!(validate(None, &open), Ok(()));
        assert_eq!(validate(Some(&Value::Null), &open), Ok(()));
    }

    #[test]
    fn a_long_string_is_described_not_echoed() {
        let long = "x".repeat(10_000);
        let e = err(json!({"project": "P", "pr_id": long}));
        assert!(e.len() < 100, "{e}");
    }

    #[test]
    fn a_dot_segment_is_refused_wherever_it_would_become_part_of_a_path() {
        let refused = |v: Value| check_places(v.as_object().unwrap()).unwrap_err().to_string();
        assert!(refused(json!({"project": "..", "repo": "api"})).starts_with("`project` cannot be `.` or `..`"));
        assert!(refused(json!({"project": "BB", "repo": "."})).starts_with("`repo` cannot be"));
        assert!(refused(json!({"paths": ["src/ok.rs", "../../rest/api/latest/admin/users"]})).starts_with("`paths`"));
        assert!(refused(json!({"from_ref": ".."})).starts_with("`from_ref`"));
        assert!(
            check_places(json!({"project": "BB", "repo": "a..b", "paths": ["src/.hidden/x..y"]}).as_object().unwrap())
                .is_ok()
        );
    }

    #[test]
    fn an_absurdly_long_name_is_refused_before_it_is_sent() {
        let long = "K".repeat(100_000);
        let e = check_places(json!({"project": long, "repo": "api"}).as_object().unwrap()).unwrap_err();
        assert_eq!(e.to_string(), "`project` is longer than 256 characters: no Bitbucket name is.");
    }

    #[test]
    fn every_name_a_call_carries_is_bounded_as_project_and_repository_are() {
        let long = "n".repeat(100_000);
        let refused = |v: Value| check_places(v.as_object().unwrap()).unwrap_err().to_string();
        for key in ["user", "reviewers", "add_reviewers", "remove_reviewers"] {
            let one = if key == "user" { json!(long) } else { json!(["bob", long]) };
            assert_eq!(
                refused(json!({ key: one })),
                format!("`{key}` is longer than 256 characters: no Bitbucket name is.")
            );
        }
        for key in ["name", "key", "filter", "url", "until"] {
            assert!(refused(json!({ key: long })).starts_with(&format!("`{key}` is longer than 4096")), "{key}");
        }
        assert!(check_places(json!({"filter": ".", "add_reviewers": ["bob", "carol"]}).as_object().unwrap()).is_ok());
    }

    #[test]
    fn an_empty_project_or_repository_is_refused_before_it_is_sent() {
        let refused = |v: Value| check_places(v.as_object().unwrap()).unwrap_err().to_string();
        assert_eq!(refused(json!({"project": "", "repo": "api"})), "`project` cannot be empty.");
        assert_eq!(refused(json!({"project": "BB", "repo": ""})), "`repo` cannot be empty.");
        assert!(check_places(json!({"name": ""}).as_object().unwrap()).is_ok(), "a search by no name is not a place");
    }
}
