//! Builds written for the model: a commit's totals, and where a pull request's required builds stand. For
//! `get_pull_request`, `get_build_status` and `list_required_builds`.

use std::collections::BTreeSet;

use super::{build_state, one_line};
use crate::bitbucket::model::BuildStats;
use crate::requirements::{self, KeyStatus};

/// One line for a commit's build totals (all builds of the commit, whatever branch they ran for),
/// introduced by `lead`.
pub fn stats_line(s: &BuildStats, lead: &str) -> String {
    let mut parts = Vec::new();
    for (count, word) in [
        (s.successful, "successful"),
        (s.failed, "failed"),
        (s.in_progress, "in progress"),
        (s.cancelled, "cancelled"),
        (s.unknown, "unknown"),
    ] {
        if let Some(c) = count.filter(|c| *c > 0) {
            parts.push(format!("{c} {word}"));
        }
    }
    if parts.is_empty() { "Builds of the source commit: none.".into() } else { format!("{lead}: {}", parts.join(", ")) }
}

/// The lines that say, for a pull request into `target`, where each required build stands: from the required
/// keys' states, or why bb cannot tell (as [`crate::reads::conditions::evaluate`] answers).
pub fn required_lines(target: &str, evaluated: Result<(BTreeSet<String>, Vec<KeyStatus>), String>) -> Vec<String> {
    let into = target.strip_prefix("refs/heads/").unwrap_or(target);
    match evaluated {
        Ok((_, statuses)) if statuses.is_empty() => vec![format!("Required builds (into {}): none.", one_line(into))],
        Ok((_, statuses)) => {
            let parts: Vec<String> = statuses
                .iter()
                .map(|s| {
                    let state = match s.state.as_str() {
                        "MISSING" => "missing (no build yet: the merge check blocks on it)".to_owned(),
                        other => build_state(Some(other)).to_owned(),
                    };
                    format!("{} {state}", one_line(&s.key))
                })
                .collect();
            vec![format!(
                "Required builds (into {}): {} — {}.",
                one_line(into),
                requirements::summary(&statuses),
                parts.join("; ")
            )]
        }
        Err(why) => vec![format!("Required builds: bb cannot tell as Bitbucket's merge check would ({why}).")],
    }
}
