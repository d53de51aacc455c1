//! The server's `instructions`: what the model is told about bb once, at initialize.
//!
//! The guidance about `show` follows the views decision record (ADR-101): the other tools
//! answer the model; `show` is for the person, once an answer is ready, for someone who is there
//! to see it, never for an agent working on its own; a diff only for what the person cannot
//! open in their own editor. It is given only while `show` is exposed.

use crate::tool::{Access, Exposed};

/// The instructions for a server exposing `exposed`.
pub fn for_exposed(exposed: &Exposed) -> String {
    let mut text = String::from(
        "bb reads and acts on Bitbucket Data Center: pull requests, their diffs, comments, tasks and builds. \
         Its tools answer in short lines; a list says how many it shows and whether more exist, and a cut \
         says how to get the rest. A failed call says what went wrong in one sentence: act on it rather than retry blindly.",
    );
    if exposed.is_read_only() {
        text.push_str(
            " This bb is read-only: it changes nothing in Bitbucket (no comments, reviews, merges or builds), so \
             offer to explain what the person could do in Bitbucket instead.",
        );
    }
    if exposed.get("get_file").is_some() {
        text.push_str(
            " To review with the code in hand, read around a change with get_file (a window of lines at a ref), \
             find callers with search_code, and ask get_pull_request_diff with since=last_review for what changed \
             since the person last reviewed.",
        );
    }
    if exposed.get("submit_pr_review").is_some() && exposed.get("add_pr_comment").is_some() {
        text.push_str(
            " When you review a pull request for the person, draft: add your comments with pending: true (only they \
             see them), then let them publish — in the diff view's Finish review, or by asking you to call \
             submit_pr_review. Never publish a review on the person's behalf unless they asked you to.",
        );
    }
    if exposed.get("show").is_some() {
        text.push_str(
            "\n\nThe other tools answer you; `show` is for the person. Call `show` once your answer is ready, \
             for a person who is there to see it, never while working on your own. Show a diff only for what the \
             person cannot open in their own editor. If the person sees no view, answer in words.",
        );
        if exposed.kind("pull_request_form").is_some() {
            text.push_str(
                " Create a pull request the person asks for directly; show the pull_request_form only when they \
                 want a say first (particular about its description or reviewers, or asking to see the draft).",
            );
        }
    }
    if exposed.get("enable_toolset").is_some() {
        let groups: Vec<String> =
            exposed.offerable().groups().map(|g| format!("{} ({})", g.name(), g.about())).collect();
        text.push_str(&format!(
            "\n\nSome of bb's tools are off until a task needs them: enable_toolset turns on {} for this conversation.",
            groups.join("; ")
        ));
    }
    if exposed.tools().iter().any(|t| t.access != Access::Read) {
        text.push_str(
            "\n\nTools that write change Bitbucket for everyone: call them only when the person asked for the change.",
        );
    }
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use crate::catalogue::ExposureOptions;
    use crate::testing::test_catalogue;

    #[test]
    fn show_guidance_is_given_only_while_show_is_exposed() {
        let with = test_catalogue().expose(&ExposureOptions::default()).unwrap();
        assert!(for_exposed(&with).contains("`show` is for the person"));
        let without = test_catalogue()
            .expose(&ExposureOptions { exclude: ["show".to_string()].into(), ..Default::default() })
            .unwrap();
        assert!(!for_exposed(&without).contains("`show`"));
    }
}
