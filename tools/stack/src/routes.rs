//! Which handler serves a path: authentication first, then the endpoint table.
//!
//! Paths follow the reference; `1.0` and `latest` are the same API version, as on a real server.

use crate::api::{
    self, Cx, activities, auto_merge, builds, comments, diffs, drafts, files, insights, projects, pull_requests,
    required_builds, review, search, suggestions, users,
};
use crate::auth::{self, Caller};
use crate::errors;
use crate::exchange::{Request, Response};
use crate::world::World;

/// Serves one Bitbucket request (`path` already without the context path); no faults or latency here.
pub fn serve(world: &mut World, req: &Request) -> Response {
    let segs_owned = req.segments();
    let mut segs: Vec<&str> = segs_owned.iter().map(String::as_str).collect();
    if segs.first() == Some(&"rest") && segs.get(2) == Some(&"1.0") {
        segs[2] = "latest";
    }
    let caller = match auth::caller(&world.model, req) {
        Ok(c) => c,
        Err(r) => return r,
    };
    let mut view = world.view(api::avatar_size(req));
    let me = match caller {
        Caller::User(slug) => slug,
        Caller::Anonymous => {
            return match (req.method.as_str(), segs.as_slice()) {
                // The server version is public.
                ("GET", ["rest", "api", "latest", "application-properties"]) => projects::application(&world.model),
                // An anonymous avatar request gets the default image. [reference "Avatars": seed]
                ("GET", ["users", _, "avatar.png"]) => users::default_avatar(req),
                _ => auth::not_logged_in(),
            };
        }
    };
    view.viewer = Some(me.clone());
    let mut cx = Cx { m: &mut world.model, v: view, me: me.clone() };
    let reply = dispatch(&mut cx, req, &segs);
    let mut response = reply.unwrap_or_else(|e| e);
    // The current user's slug rides on every authenticated response. [rec in third-party clients; assumed for 9.x]
    response.headers.push(("X-AUSERNAME".into(), me));
    response
}

fn dispatch(cx: &mut Cx, req: &Request, segs: &[&str]) -> api::Reply {
    let m = req.method.as_str();
    match (m, segs) {
        ("GET", ["users", slug, "avatar.png"]) => users::avatar(cx, req, slug),
        ("GET", ["rest", "api", "latest", "application-properties"]) => Ok(projects::application(cx.m)),
        ("GET", ["rest", "api", "latest", "users"]) => users::list(cx, req),
        ("GET", ["rest", "api", "latest", "users", slug]) => users::one(cx, slug),
        ("GET", ["rest", "api", "latest", "projects"]) => projects::list_projects(cx, req),
        ("GET", ["rest", "api", "latest", "projects", key]) => projects::one_project(cx, key),
        ("GET", ["rest", "api", "latest", "repos"]) => projects::search_repos(cx, req),
        ("GET", ["rest", "api", "latest", "dashboard", "pull-requests"]) => pull_requests::dashboard(cx, req),
        ("GET", ["rest", "api", "latest", "inbox", "pull-requests"]) => pull_requests::inbox(cx, req),
        ("GET", ["rest", "api", "latest", "inbox", "pull-requests", "count"]) => pull_requests::inbox_count(cx, req),
        (_, ["rest", "api", "latest", "projects", key, "repos", rest @ ..]) => repo_scoped(cx, req, key, rest),
        ("POST", ["rest", "search", "latest", "search"]) => search::search(cx, req),
        ("GET", ["rest", "build-status", "latest", "commits", "stats", commit]) => builds::stats(cx, commit),
        ("POST", ["rest", "build-status", "latest", "commits", "stats"]) => builds::stats_of_many(cx, req),
        ("GET", ["rest", "build-status", "latest", "commits", commit]) => builds::legacy(cx, req, commit),
        ("POST", ["rest", "build-status", "latest", "commits", commit]) => builds::post(cx, req, None, commit),
        ("GET", ["rest", "ui", "latest", "projects", key, "repos", slug, "pull-requests", id, "builds"]) => {
            builds::pull_request_builds(cx, req, key, slug, id)
        }
        (
            "GET" | "PUT" | "POST",
            ["rest", "insights", "latest", "projects", key, "repos", slug, "commits", commit, rest @ ..],
        ) => insights_scoped(cx, req, key, slug, commit, rest),
        ("GET", ["rest", "required-builds", "latest", "projects", key, "repos", slug, "conditions"]) => {
            required_builds::conditions(cx, req, key, slug)
        }
        ("GET", ["rest", "branch-utils", "latest", "projects", key, "repos", slug, "branchmodel"]) => {
            required_builds::branch_model(cx, key, slug)
        }
        ("GET", ["rest", "default-reviewers", "latest", "projects", key, "repos", slug, "reviewers"]) => {
            required_builds::default_reviewers(cx, req, key, slug)
        }
        ("GET", ["rest", "default-reviewers", "latest", "projects", key, "repos", slug, "conditions"]) => {
            required_builds::default_reviewer_conditions(cx, key, slug)
        }
        _ => Err(errors::no_such_resource(&req.path)),
    }
}

fn insights_scoped(cx: &mut Cx, req: &Request, key: &str, slug: &str, commit: &str, rest: &[&str]) -> api::Reply {
    match (req.method.as_str(), rest) {
        ("GET", ["reports"]) => insights::reports(cx, req, key, slug, commit),
        ("GET", ["reports", report]) => insights::report(cx, key, slug, commit, report),
        ("PUT", ["reports", report]) => insights::put_report(cx, req, key, slug, commit, report),
        ("GET", ["reports", report, "annotations"]) => insights::report_annotations(cx, key, slug, commit, report),
        ("POST", ["reports", report, "annotations"]) => insights::post_annotations(cx, req, key, slug, commit, report),
        ("GET", ["annotations"]) => insights::commit_annotations(cx, req, key, slug, commit),
        _ => Err(errors::no_such_resource(&req.path)),
    }
}

fn repo_scoped(cx: &mut Cx, req: &Request, key: &str, rest: &[&str]) -> api::Reply {
    let m = req.method.as_str();
    match (m, rest) {
        ("GET", []) => projects::list_repos(cx, req, key),
        ("GET", [slug]) => projects::one_repo(cx, key, slug),
        ("GET", [slug, "branches"]) => projects::branches(cx, req, key, slug),
        ("GET", [slug, "default-branch"] | [slug, "branches", "default"]) => projects::default_branch(cx, key, slug),
        ("GET", [slug, "commits"]) => projects::commits(cx, req, key, slug),
        ("GET", [slug, "commits", id]) => projects::one_commit(cx, key, slug, id),
        ("GET", [slug, "commits", id, "changes"]) => diffs::commit_changes(cx, req, key, slug, id),
        ("GET", [slug, "commits", id, "diff", path @ ..]) => diffs::commit_diff(cx, req, key, slug, id, path),
        ("GET", [slug, "browse", path @ ..]) => files::browse(cx, req, key, slug, path),
        ("GET", [slug, "raw", path @ ..]) => files::raw(cx, req, key, slug, path),
        ("GET", [slug, "files", path @ ..]) => files::files(cx, req, key, slug, path),
        ("GET", [slug, "commits", id, "builds"]) => builds::repo_build(cx, req, key, slug, id),
        ("POST", [slug, "commits", id, "builds"]) => builds::post(cx, req, Some((key, slug)), id),
        ("GET", [slug, "compare", "commits"]) => projects::compare_commits(cx, req, key, slug),
        ("GET", [slug, "compare", "changes"]) => diffs::compare_changes(cx, req, key, slug),
        ("GET", [slug, "compare", "diff", path @ ..]) => diffs::compare_diff(cx, req, key, slug, path),
        ("GET", [slug, "tags"]) => projects::tags(cx, req, key, slug),
        ("POST", [slug, "tags"]) => projects::create_tag(cx, req, key, slug),
        ("GET", [slug, "tags", name @ ..]) if !name.is_empty() => projects::one_tag(cx, key, slug, &name.join("/")),
        ("GET", [slug, "pull-requests"]) => pull_requests::list(cx, req, key, slug),
        ("POST", [slug, "pull-requests"]) => pull_requests::create(cx, req, key, slug),
        ("GET", [slug, "pull-requests", id]) => pull_requests::one(cx, key, slug, id),
        ("PUT", [slug, "pull-requests", id]) => pull_requests::update(cx, req, key, slug, id),
        ("GET", [slug, "pull-requests", id, "merge"]) => pull_requests::merge_check(cx, key, slug, id),
        ("POST", [slug, "pull-requests", id, "merge"]) => pull_requests::merge(cx, req, key, slug, id),
        ("POST", [slug, "pull-requests", id, "decline"]) => pull_requests::decline(cx, req, key, slug, id),
        ("GET", [slug, "pull-requests", id, "auto-merge"]) => auto_merge::get(cx, req, key, slug, id),
        ("POST", [slug, "pull-requests", id, "auto-merge"]) => auto_merge::try_now(cx, req, key, slug, id),
        ("DELETE", [slug, "pull-requests", id, "auto-merge"]) => auto_merge::cancel(cx, req, key, slug, id),
        ("GET", [slug, "settings", "auto-merge"]) => auto_merge::settings(cx, req, key, slug),
        ("PUT", [slug, "settings", "auto-merge"]) => auto_merge::set_settings(cx, req, key, slug),
        ("POST", [slug, "pull-requests", id, "reopen"]) => pull_requests::reopen(cx, req, key, slug, id),
        ("GET", [slug, "pull-requests", id, "activities"]) => activities::list(cx, req, key, slug, id),
        ("GET", [slug, "pull-requests", id, "changes"]) => diffs::changes(cx, req, key, slug, id),
        ("GET", [slug, "pull-requests", id, "diff", path @ ..]) => diffs::diff(cx, req, key, slug, id, path),
        ("GET", [slug, "pull-requests", id, "commits"]) => pull_requests::commits(cx, req, key, slug, id),
        ("GET", [slug, "pull-requests", id, "participants"]) => review::list(cx, req, key, slug, id),
        ("PUT", [slug, "pull-requests", id, "participants", user]) => review::set_status(cx, req, key, slug, id, user),
        ("GET", [slug, "pull-requests", id, "comments"]) => comments::list(cx, req, key, slug, id),
        ("POST", [slug, "pull-requests", id, "comments"]) => comments::create(cx, req, key, slug, id),
        ("GET", [slug, "pull-requests", id, "comments", cid]) => comments::one(cx, key, slug, id, cid),
        ("PUT", [slug, "pull-requests", id, "comments", cid]) => comments::update(cx, req, key, slug, id, cid),
        ("DELETE", [slug, "pull-requests", id, "comments", cid]) => comments::delete(cx, req, key, slug, id, cid),
        ("POST", [slug, "pull-requests", id, "comments", cid, "apply-suggestion"]) => {
            suggestions::apply(cx, req, key, slug, id, cid)
        }
        ("GET", [slug, "pull-requests", id, "review"]) => drafts::get(cx, req, key, slug, id),
        ("PUT", [slug, "pull-requests", id, "review"]) => drafts::finish(cx, req, key, slug, id),
        ("DELETE", [slug, "pull-requests", id, "review"]) => drafts::discard(cx, req, key, slug, id),
        _ => Err(errors::no_such_resource(&req.path)),
    }
}
