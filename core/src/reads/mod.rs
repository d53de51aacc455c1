//! Each Bitbucket read written once and typed, for the data tools and the views alike: a tool's text
//! and a view's data are two renderings of the same reads. A reader builds its requests, names them
//! with a read type of its own, and keeps what the answers said (a sentence where a read failed);
//! the plan that uses it wraps those names in its own and decides what a failure means for its answer.
//!
//! | read | requests | used by |
//! |---|---|---|
//! | [`pull_request`] | the pull request; its merge check; a page of its activity; a page of its commits; one comment | every pull request tool, the card, the diff view (and the Bitbucket addresses the views link to) |
//! | [`pull_requests`] | a page of a repository's pull requests, the dashboard or the inbox (with its count); the build totals of the listed commits; the default reviewers of a branch pair | list_pull_requests, the list view; create_pull_request, the form and its suggestions |
//! | [`diff`] | a page of a pull request's changed files; one file's diff with its comments | get_pull_request_diff, the diff view (and the decoding of compare_refs' and the compare view's answers) |
//! | [`compare`] | what one ref has that another lacks: commits, changed files, one file's diff | compare_refs, the compare view, the form's commits and files (and resolve_ref's "no such ref") |
//! | [`builds`] | the pull request page's build listing (paged), or the source commit's legacy listing and totals | get_pull_request, get_build_status, list_required_builds, the card |
//! | [`conditions`] | every page of required-build conditions, then the branching model when a matcher needs it; one page of them | get_build_status, list_required_builds, the card |
//! | [`refs`] | a page of branches or of tags; a page of a branch's or a range's commits; one commit; the files a commit changed and one file's diff in it; the commit a ref names | list_branches, list_tags, resolve_ref, list_commits, get_commit, the form's branch suggestions (and the decoding of commits for list_pr_commits and compare_refs, of a tag for create_tag) |
//! | [`files`] | a window of a file's lines or a folder's entries; every path under a folder; the blame of a range of lines; a file's bytes to a cap (a picture) | get_file, list_files, blame_file, the file view, the diff view's "Show more" and changed pictures, the form's code owners (`.bitbucket/CODEOWNERS`) |
//! | [`insights`] | every page of a commit's Code Insights reports; the commit's annotations, filtered | get_code_insights, get_pull_request, the card, the diff view |
//! | [`search`] | a page of code search results | search_code |
//! | [`repository`] | the repository (its id, clone addresses); its default branch; the search across projects | search_repositories, get_repository_clone_info, create_pull_request, the form and its suggestions |
//! | [`users`] | one person by slug; the user search | the form and its suggestions |
//! | [`avatars`] | each person's avatar not yet cached, as a `data:` URL | the card, the list view, the diff and compare views, the form |
//! | [`review`] | the calling person's pending review: their drafts (7.7+) | list_pr_comments (drafts), submit_pr_review, discard_pr_review, the card and the diff view (the review bar) |
//! | [`server`] | the server's version | enable_auto_merge, disable_auto_merge, add_pr_comment (a draft), submit_pr_review |
//!
//! Every write is [`crate::writes`]'s. The one request here that is not a GET, the build totals of many commits,
//! is a read that carries its list in a POST body.
//!
//! A single read's answer is decoded by [`crate::errors::json`], which turns a failure into
//! the one sentence the model or the view gets.

pub mod avatars;
pub mod builds;
pub mod compare;
pub mod conditions;
pub mod diff;
pub mod files;
pub mod insights;
pub mod pull_request;
pub mod pull_requests;
pub mod refs;
pub mod repository;
pub mod review;
pub mod search;
pub mod server;
pub mod users;

/// A page's query: `start` (left out when `None`, as a first page Bitbucket's own pages ask for) and `limit`.
fn page(start: Option<u64>, limit: u64) -> Vec<(String, String)> {
    let mut query: Vec<(String, String)> = start.map(|s| ("start".into(), s.to_string())).into_iter().collect();
    query.push(("limit".into(), limit.to_string()));
    query
}
