//! Which Bitbucket answers: its version, for a tool whose endpoint only newer servers have.
//!
//! Request: `GET /rest/api/latest/application-properties` → `{version, buildNumber, buildDate, displayName}`,
//! public (no permission needed). [reference "Projects, repositories, branches, commits, tags, users": spec]

use serde::Deserialize;

use crate::errors::{self, BitbucketError, Subject};
use crate::fetch::{FetchOutcome, FetchRequest};

/// The server's application properties.
pub fn request() -> FetchRequest {
    FetchRequest::get("/rest/api/latest/application-properties".to_owned(), vec![])
}

/// A server version as Bitbucket writes it (`9.4.0`), with its major and minor numbers read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// As written.
    pub text: String,
    /// Major and minor, when the text starts with them.
    pub major_minor: Option<(u32, u32)>,
}

impl Version {
    /// Whether it is at least `major.minor`; `None` when the version could not be read.
    pub fn at_least(&self, major: u32, minor: u32) -> Option<bool> {
        self.major_minor.map(|v| v >= (major, minor))
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Properties {
    version: Option<String>,
}

/// The version, or the sentence that says why it could not be read.
pub fn version(outcome: &FetchOutcome, about: Subject<'_>) -> Result<Version, BitbucketError> {
    let text = errors::json::<Properties>(outcome, about, None)?.version.unwrap_or_default();
    let mut parts = text.split('.').map(|p| p.parse::<u32>().ok());
    let major_minor = match (parts.next().flatten(), parts.next().flatten()) {
        (Some(a), Some(b)) => Some((a, b)),
        _ => None,
    };
    Ok(Version { text, major_minor })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const ABOUT: Subject<'static> = Subject { project: "BB", repo: "api", pr: None };

    #[test]
    fn major_and_minor_are_read_and_compared() {
        let v = version(&FetchOutcome::response(200, r#"{"version":"8.14.2"}"#), ABOUT).unwrap();
        assert_eq!(v.major_minor, Some((8, 14)));
        assert_eq!(v.at_least(8, 15), Some(false));
        assert_eq!(v.at_least(8, 14), Some(true));
        let v = version(&FetchOutcome::response(200, r#"{"version":"10.0.0-rc1"}"#), ABOUT).unwrap();
        assert_eq!(v.at_least(8, 15), Some(true));
        let v = version(&FetchOutcome::response(200, r#"{}"#), ABOUT).unwrap();
        assert_eq!(v.at_least(8, 15), None);
    }
}
