//! Which handler serves a path: authentication first, then the endpoint table.
//!
//! Paths follow the reference; `1.0` and `latest` are the same API version, as on a real server.

use crate::api::{
    self, Cx, ReadCx, activities, auto_merge, builds, comments, diffs, drafts, files, insights, projects,
    pull_requests, required_builds, review, search, suggestions, users,
};
use crate::auth::{self, Caller};
use crate::errors;
use crate::exchange::{Request, Response};
use crate::oauth;
use crate::world::World;

/// Serves one Bitbucket request (`path` already without the context path); no faults or latency here.
pub fn serve(world: &mut World, req: &Request) -> Response {
    match serve_read(world, req) {
        Some(response) => response,
        None => serve_write(world, req),
    }
}

/// Serves a request that only reads the world (every GET, and the POSTs that only ask: code search, build
/// statistics), or an unauthenticated one; `None` for a request that may change the world ([`serve_write`]).
pub fn serve_read(world: &World, req: &Request) -> Option<Response> {
    let segs_owned = req.segments();
    let segs = api_segments(&segs_owned);
    if oauth::is_provider_path(&segs) {
        // The provider's answers change its state: they are served as writes.
        return None;
    }
    let caller = match auth::caller(&world.model, req) {
        Ok(c) => c,
        Err(r) => return Some(r),
    };
    let mut view = world.view(api::avatar_size(req));
    let me = match caller {
        Caller::User(slug) => slug,
        Caller::Anonymous => {
            return Some(match (req.method.as_str(), segs.as_slice()) {
                // The server version is public.
                ("GET", ["rest", "api", "latest", "application-properties"]) => projects::application(&world.model),
                // An anonymous avatar request gets the default image. [reference "Avatars": seed]
                ("GET", ["users", _, "avatar.png"]) => users::default_avatar(req),
                _ => auth::not_logged_in(),
            });
        }
    };
    view.viewer = Some(me.clone());
    let cx = ReadCx { m: &world.model, v: view, me: me.clone() };
    let reply = match dispatch_read(&cx, req, &segs) {
        Some(reply) => reply,
        // A GET no read serves is no resource; another method may be a write.
        None if req.method == "GET" => Err(errors::no_such_resource(&req.path)),
        None => return None,
    };
    Some(signed(reply, me))
}

/// Serves a request that may change the world: the caller authenticated, then the table of writes.
pub fn serve_write(world: &mut World, req: &Request) -> Response {
    let segs_owned = req.segments();
    let segs = api_segments(&segs_owned);
    if oauth::is_provider_path(&segs) {
        let context_path = world.context_path.clone();
        return oauth::serve(&mut world.model, req, &segs, &context_path);
    }
    let me = match auth::caller(&world.model, req) {
        Ok(Caller::User(slug)) => slug,
        Ok(Caller::Anonymous) => return auth::not_logged_in(),
        Err(r) => return r,
    };
    let mut view = world.view(api::avatar_size(req));
    view.viewer = Some(me.clone());
    let mut cx = Cx { m: &mut world.model, v: view, me: me.clone() };
    let reply = dispatch_write(&mut cx, req, &segs);
    signed(reply, me)
}

/// The path's segments, with API version `1.0` read as `latest`.
fn api_segments(owned: &[String]) -> Vec<&str> {
    let mut segs: Vec<&str> = owned.iter().map(String::as_str).collect();
    if segs.first() == Some(&"rest") && segs.get(2) == Some(&"1.0") {
        segs[2] = "latest";
    }
    segs
}

/// The answer, with the current user's slug, which rides on every authenticated response. [rec in third-party
/// clients; assumed for 9.x]
fn signed(reply: api::Reply, me: String) -> Response {
    let mut response = reply.unwrap_or_else(|e| e);
    response.headers.push(("X-AUSERNAME".into(), me));
    response
}

/// The reads, or `None` when no read serves the method and path.
fn dispatch_read(cx: &ReadCx, req: &Request, segs: &[&str]) -> Option<api::Reply> {
    let m = req.method.as_str();
    Some(match (m, segs) {
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
        ("GET", ["rest", "api", "latest", "projects", key, "repos", rest @ ..]) => repo_read(cx, req, key, rest)?,
        // A search and build statistics are POSTs that only ask.
        ("POST", ["rest", "search", "latest", "search"]) => search::search(cx, req),
        ("GET", ["rest", "build-status", "latest", "commits", "stats", commit]) => builds::stats(cx, commit),
        ("POST", ["rest", "build-status", "latest", "commits", "stats"]) => builds::stats_of_many(cx, req),
        ("GET", ["rest", "build-status", "latest", "commits", commit]) => builds::legacy(cx, req, commit),
        ("GET", ["rest", "ui", "latest", "projects", key, "repos", slug, "pull-requests", id, "builds"]) => {
            builds::pull_request_builds(cx, req, key, slug, id)
        }
        ("GET", ["rest", "insights", "latest", "projects", key, "repos", slug, "commits", commit, rest @ ..]) => {
            insights_read(cx, req, key, slug, commit, rest)
        }
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
        _ => return None,
    })
}

/// The writes (every path a method other than GET may change).
fn dispatch_write(cx: &mut Cx, req: &Request, segs: &[&str]) -> api::Reply {
    let m = req.method.as_str();
    match (m, segs) {
        (_, ["rest", "api", "latest", "projects", key, "repos", rest @ ..]) => repo_write(cx, req, key, rest),
        ("POST", ["rest", "build-status", "latest", "commits", commit]) => builds::post(cx, req, None, commit),
        (
            "PUT" | "POST",
            ["rest", "insights", "latest", "projects", key, "repos", slug, "commits", commit, rest @ ..],
        ) => insights_write(cx, req, key, slug, commit, rest),
        _ => Err(errors::no_such_resource(&req.path)),
    }
}

fn insights_read(cx: &ReadCx, req: &Request, key: &str, slug: &str, commit: &str, rest: &[&str]) -> api::Reply {
    match rest {
        ["reports"] => insights::reports(cx, req, key, slug, commit),
        ["reports", report] => insights::report(cx, key, slug, commit, report),
        ["reports", report, "annotations"] => insights::report_annotations(cx, key, slug, commit, report),
        ["annotations"] => insights::commit_annotations(cx, req, key, slug, commit),
        _ => Err(errors::no_such_resource(&req.path)),
    }
}

fn insights_write(cx: &mut Cx, req: &Request, key: &str, slug: &str, commit: &str, rest: &[&str]) -> api::Reply {
    match (req.method.as_str(), rest) {
        ("PUT", ["reports", report]) => insights::put_report(cx, req, key, slug, commit, report),
        ("POST", ["reports", report, "annotations"]) => insights::post_annotations(cx, req, key, slug, commit, report),
        _ => Err(errors::no_such_resource(&req.path)),
    }
}

fn repo_read(cx: &ReadCx, req: &Request, key: &str, rest: &[&str]) -> Option<api::Reply> {
    Some(match rest {
        [] => projects::list_repos(cx, req, key),
        [slug] => projects::one_repo(cx, key, slug),
        [slug, "branches"] => projects::branches(cx, req, key, slug),
        [slug, "default-branch"] | [slug, "branches", "default"] => projects::default_branch(cx, key, slug),
        [slug, "settings", "pull-requests"] => projects::pull_request_settings(cx, key, slug),
        [slug, "commits"] => projects::commits(cx, req, key, slug),
        [slug, "commits", id] => projects::one_commit(cx, key, slug, id),
        [slug, "commits", id, "changes"] => diffs::commit_changes(cx, req, key, slug, id),
        [slug, "commits", id, "diff", path @ ..] => diffs::commit_diff(cx, req, key, slug, id, path),
        [slug, "browse", path @ ..] => files::browse(cx, req, key, slug, path),
        [slug, "raw", path @ ..] => files::raw(cx, req, key, slug, path),
        [slug, "files", path @ ..] => files::files(cx, req, key, slug, path),
        [slug, "commits", id, "builds"] => builds::repo_build(cx, req, key, slug, id),
        [slug, "compare", "commits"] => projects::compare_commits(cx, req, key, slug),
        [slug, "compare", "changes"] => diffs::compare_changes(cx, req, key, slug),
        [slug, "compare", "diff", path @ ..] => diffs::compare_diff(cx, req, key, slug, path),
        [slug, "tags"] => projects::tags(cx, req, key, slug),
        [slug, "tags", name @ ..] if !name.is_empty() => projects::one_tag(cx, key, slug, &name.join("/")),
        [slug, "pull-requests"] => pull_requests::list(cx, req, key, slug),
        [slug, "pull-requests", patch] if patch.ends_with(".patch") => {
            diffs::patch(cx, req, key, slug, patch.trim_end_matches(".patch"))
        }
        [slug, "pull-requests", id] => pull_requests::one(cx, key, slug, id),
        [slug, "pull-requests", id, "merge"] => pull_requests::merge_check(cx, key, slug, id),
        [slug, "pull-requests", id, "auto-merge"] => auto_merge::get(cx, req, key, slug, id),
        [slug, "settings", "auto-merge"] => auto_merge::settings(cx, req, key, slug),
        [slug, "pull-requests", id, "activities"] => activities::list(cx, req, key, slug, id),
        [slug, "pull-requests", id, "changes"] => diffs::changes(cx, req, key, slug, id),
        [slug, "pull-requests", id, "diff", path @ ..] => diffs::diff(cx, req, key, slug, id, path),
        [slug, "pull-requests", id, "commits"] => pull_requests::commits(cx, req, key, slug, id),
        [slug, "pull-requests", id, "participants"] => review::list(cx, req, key, slug, id),
        [slug, "pull-requests", id, "comments"] => comments::list(cx, req, key, slug, id),
        [slug, "pull-requests", id, "comments", cid] => comments::one(cx, key, slug, id, cid),
        [slug, "pull-requests", id, "review"] => drafts::get(cx, req, key, slug, id),
        _ => return None,
    })
}

fn repo_write(cx: &mut Cx, req: &Request, key: &str, rest: &[&str]) -> api::Reply {
    let m = req.method.as_str();
    match (m, rest) {
        ("POST", [slug, "commits", id, "builds"]) => builds::post(cx, req, Some((key, slug)), id),
        ("POST", [slug, "tags"]) => projects::create_tag(cx, req, key, slug),
        ("POST", [slug, "pull-requests"]) => pull_requests::create(cx, req, key, slug),
        ("PUT", [slug, "pull-requests", id]) => pull_requests::update(cx, req, key, slug, id),
        ("POST", [slug, "pull-requests", id, "merge"]) => pull_requests::merge(cx, req, key, slug, id),
        ("POST", [slug, "pull-requests", id, "decline"]) => pull_requests::decline(cx, req, key, slug, id),
        ("POST", [slug, "pull-requests", id, "auto-merge"]) => auto_merge::try_now(cx, req, key, slug, id),
        ("DELETE", [slug, "pull-requests", id, "auto-merge"]) => auto_merge::cancel(cx, req, key, slug, id),
        ("PUT", [slug, "settings", "auto-merge"]) => auto_merge::set_settings(cx, req, key, slug),
        ("POST", [slug, "pull-requests", id, "reopen"]) => pull_requests::reopen(cx, req, key, slug, id),
        ("PUT", [slug, "pull-requests", id, "participants", user]) => review::set_status(cx, req, key, slug, id, user),
        ("POST", [slug, "pull-requests", id, "comments"]) => comments::create(cx, req, key, slug, id),
        ("PUT", [slug, "pull-requests", id, "comments", cid]) => comments::update(cx, req, key, slug, id, cid),
        ("DELETE", [slug, "pull-requests", id, "comments", cid]) => comments::delete(cx, req, key, slug, id, cid),
        ("POST", [slug, "pull-requests", id, "comments", cid, "apply-suggestion"]) => {
            suggestions::apply(cx, req, key, slug, id, cid)
        }
        ("PUT", [slug, "pull-requests", id, "review"]) => drafts::finish(cx, req, key, slug, id),
        ("DELETE", [slug, "pull-requests", id, "review"]) => drafts::discard(cx, req, key, slug, id),
        _ => Err(errors::no_such_resource(&req.path)),
    }
}
