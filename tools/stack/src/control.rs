//! The control API under `/_stack/...` (a path Bitbucket never uses): faults, latency, rate limiting, request counts
//! and log, reset, changes made as another user (builds, comments, pushes), and the version the server plays. JSON
//! in and out, no authentication; `/_stack` requests are never counted, logged, delayed, faulted or rate limited.
//!
//! - `GET /_stack`: the base URL, the users with their tokens and passwords, the logical clock.
//! - `POST /_stack/reset`: data back to the seed; faults, latency, the rate limit (off, buckets emptied), the
//!   counters and the request log cleared. The latency goes back to the baseline the stack started with:
//!   `STACK_LATENCY_MS` in the binary's environment (`StackConfig::latency_ms`), held as prefix `/`, or none.
//! - `GET /_stack/requests`: `{total, requests: {"METHOD /path": n}, inFlight, maxInFlight, rateLimited}`.
//!   `inFlight` is the Bitbucket requests being served now and `maxInFlight` the most served at once since the
//!   counters were reset, so a client's concurrency bound can be checked without timing; `rateLimited` is how many
//!   requests the rate limit refused. `DELETE /_stack/requests` (or `POST /_stack/requests/reset`) resets them.
//! - `GET|POST|DELETE /_stack/faults`: the queued faults; `POST` queues one (`{kind: status|echo|hang|truncate,
//!   status, retryAfter, count, pathPrefix}`), `DELETE` clears them.
//! - `GET|PUT|POST|DELETE /_stack/latency`: added latency by path prefix (`{pathPrefix, millis}`, `/` when left
//!   out; 0 removes one). It starts as `STACK_LATENCY_MS` at prefix `/` when that is set; `DELETE` clears it too
//!   (until the next reset).
//! - `GET|POST|PUT|DELETE /_stack/rate-limit`: Bitbucket Data Center's rate limit ([`crate::rate_limit`]), off by
//!   default. `POST {"capacity": 60, "refill": 5}` turns it on: every user (the one the credentials name) gets a full
//!   bucket of `capacity` tokens, each request takes one, `refill` tokens (per second, may be fractional) come back
//!   until it is full, and a request finding it empty gets 429 with `Retry-After`. A value left out is the admin
//!   page's default (60, 5); posting again fills every bucket. `POST {"enabled": false}` or `DELETE` turns it off.
//!   Requests without credentials, or with wrong ones, are not limited. Answers `{enabled, capacity, refill}`.
//! - `GET /_stack/log`: `{"requests": [{method, path, query, user, startMs, endMs, status}, ...]}`, every Bitbucket
//!   request since the last reset (the last 10,000), in the order they arrived ([`crate::request_log`]). `path` is
//!   without the context path and `query` the query string as sent (`""` for none); `user` the slug the credentials
//!   name, or null. `startMs` (when it arrived, before any added latency and before the world's lock) and `endMs`
//!   (when its answer was made, after the latency) are milliseconds, to the microsecond, on a monotonic clock since
//!   the last reset or the start; a request never answered (a hang) has `endMs` and `status` null.
//! - `POST /_stack/builds`, `/_stack/comments`, `/_stack/push`: a build status, a comment as another user (with
//!   `"state": "PENDING"`, their draft), a push that rescopes a pull request (its commit keeps the files as they
//!   were).
//! - `GET|POST|PUT /_stack/search`: whether code search answers (`{"enabled": true}`, the default unless the stack
//!   started with `--no-search`) or answers as a server without a search index does (`{"enabled": false}`: 503).
//! - `GET|POST|PUT /_stack/insights`: whether Code Insights answers (`{"enabled": true}`, the default) or every
//!   `/rest/insights` path answers 404, as a server before 5.15 does (`{"enabled": false}`).
//!   Reset goes back to the start's setting. Answers `{enabled}`.
//! - `GET|PUT|POST /_stack/application`: what `application-properties` answers, and so which Bitbucket the stack
//!   plays: `PUT {"version": "7.6.0"}` makes it a 7.6 server (no drafts: `…/review` is 404 and `state: PENDING`
//!   publishes; before 7.0, tasks hang on comments; before 8.15, no auto-merge). `buildNumber` follows the version
//!   (`7.6.0` → `7006000`) unless given; `displayName` and `buildDate` may be given too. Reset goes back to the
//!   seed's. Answers the application properties.
//!
//! - `GET /_stack/oauth`: the OAuth 2.0 provider's links, grants (`{user, clientId, scope, revoked}`) and counts
//!   (`tokenRequests`, `refreshes`). `POST /_stack/oauth/links` `{clientId, clientSecret, redirectUri}` creates an
//!   incoming link as an administrator does; `POST /_stack/oauth/revoke` `{user}` is the person revoking every
//!   application in their profile (access and refresh tokens die); `POST /_stack/oauth/expire` `{user}` ends their
//!   access tokens as their hour would (refresh tokens still work). Reset clears all of it.
//!
//! This module reads the requests and answers them; what they set, and what it does to each Bitbucket request, is
//! `admission`'s [`Control`], which the world holds.

use crate::admission::{Control, Fault, FaultKind};
use crate::api::{builds, comments, pull_requests};
use crate::errors;
use crate::exchange::{Request, Response};
use crate::rate_limit::{self, RateLimit};
use crate::world::World;
use serde_json::{Value, json};

/// Serves a `/_stack/...` request; `rest` is the path after `/_stack`.
pub fn handle(world: &mut World, req: &Request, rest: &[&str]) -> Response {
    let body = match req.json() {
        Ok(b) => b,
        Err(e) => return errors::bad_request(&e),
    };
    match (req.method.as_str(), rest) {
        ("GET", []) => info(world),
        ("POST", ["reset"]) => match world.reset() {
            Ok(()) => Response::json(200, &json!({ "reset": true })),
            Err(e) => errors::error(500, None, &e),
        },
        ("GET", ["requests"]) => {
            let total: u64 = world.control.requests.values().sum();
            let c = &world.control;
            Response::json(
                200,
                &json!({
                    "total": total,
                    "requests": c.requests,
                    "inFlight": c.in_flight,
                    "maxInFlight": c.max_in_flight,
                    "rateLimited": c.rate_limited,
                }),
            )
        }
        ("DELETE", ["requests"]) | ("POST", ["requests", "reset"]) => {
            world.control.requests.clear();
            world.control.max_in_flight = world.control.in_flight;
            world.control.rate_limited = 0;
            let in_flight = world.control.in_flight;
            Response::json(
                200,
                &json!({ "total": 0, "requests": {}, "inFlight": in_flight, "maxInFlight": in_flight, "rateLimited": 0 }),
            )
        }
        ("GET", ["rate-limit"]) => rate_limit_json(&world.control),
        ("POST" | "PUT", ["rate-limit"]) => set_rate_limit(&mut world.control, &body),
        ("DELETE", ["rate-limit"]) => {
            world.control.rate_limiter.set(None);
            rate_limit_json(&world.control)
        }
        ("GET", ["log"]) => Response::json(200, &world.control.log.json()),
        ("GET", ["faults"]) => faults_json(&world.control),
        ("POST", ["faults"]) => add_fault(&mut world.control, &body),
        ("DELETE", ["faults"]) => {
            world.control.faults.clear();
            faults_json(&world.control)
        }
        ("GET", ["latency"]) => Response::json(200, &json!({ "latency": world.control.latency })),
        ("PUT" | "POST", ["latency"]) => set_latency(&mut world.control, &body),
        ("DELETE", ["latency"]) => {
            world.control.latency.clear();
            Response::json(200, &json!({ "latency": {} }))
        }
        ("GET", ["search"]) => Response::json(200, &json!({ "enabled": !world.model.search_off })),
        ("POST" | "PUT", ["search"]) => match body.get("enabled") {
            Some(Value::Bool(on)) => {
                world.model.search_off = !on;
                Response::json(200, &json!({ "enabled": on }))
            }
            _ => errors::field_error("enabled", "enabled must be true or false"),
        },
        ("GET", ["oauth"]) => Response::json(200, &world.model.oauth.json()),
        ("POST", ["oauth", "links"]) => add_link(world, &body),
        ("POST", ["oauth", "revoke"]) => match body.get("user").and_then(Value::as_str) {
            Some(user) => Response::json(200, &json!({ "revoked": world.model.oauth.revoke(user) })),
            None => errors::field_error("user", "user must name the person who revokes"),
        },
        ("POST", ["oauth", "expire"]) => match body.get("user").and_then(Value::as_str) {
            Some(user) => Response::json(200, &json!({ "expired": world.model.oauth.expire(user) })),
            None => errors::field_error("user", "user must name the person whose access tokens expire"),
        },
        ("GET", ["insights"]) => Response::json(200, &json!({ "enabled": !world.model.insights_off })),
        ("POST" | "PUT", ["insights"]) => match body.get("enabled") {
            Some(Value::Bool(on)) => {
                world.model.insights_off = !on;
                Response::json(200, &json!({ "enabled": on }))
            }
            _ => errors::field_error("enabled", "enabled must be true or false"),
        },
        ("GET", ["application"]) => Response::json(200, &world.model.application),
        ("PUT" | "POST", ["application"]) => set_application(&mut world.model.application, &body),
        ("POST", ["builds"]) => builds::control_set_build(&mut world.model, &body),
        ("POST", ["comments"]) => {
            let view = world.view(None);
            comments::control_add_comment(&mut world.model, &view, &body)
        }
        ("POST", ["push"]) => {
            let view = world.view(None);
            pull_requests::control_push(&mut world.model, &view, &body)
        }
        _ => errors::no_such_resource(&req.path),
    }
}

/// `{"version": "M.m.p", buildNumber?, buildDate?, displayName?}`: the version must be two or three numbers.
fn set_application(application: &mut Value, body: &Value) -> Response {
    let Some(version) = body.get("version").and_then(Value::as_str).map(str::trim) else {
        return errors::field_error("version", "version (such as \"7.6.0\") is required");
    };
    let parts: Vec<Option<u32>> = version.split('.').map(|p| p.parse().ok()).collect();
    if !(2..=3).contains(&parts.len()) || parts.iter().any(Option::is_none) {
        return errors::field_error("version", &format!("version must be numbers such as 7.6.0, not {version}"));
    }
    let n = |i: usize| parts.get(i).copied().flatten().unwrap_or(0);
    let mut next = application.clone();
    if !next.is_object() {
        next = json!({});
    }
    next["version"] = json!(version);
    next["buildNumber"] = json!(format!("{}{:03}{:03}", n(0), n(1), n(2)));
    for field in ["buildNumber", "buildDate", "displayName"] {
        match body.get(field) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => next[field] = json!(s),
            Some(_) => return errors::field_error(field, &format!("{field} must be text")),
        }
    }
    *application = next;
    Response::json(200, application)
}

fn info(world: &World) -> Response {
    let users: Vec<Value> = world
        .model
        .users
        .values()
        .map(|u| json!({ "slug": u.slug, "token": u.token, "password": u.password, "type": if u.service { "SERVICE" } else { "NORMAL" } }))
        .collect();
    Response::json(
        200,
        &json!({
            "baseUrl": world.base_url,
            "defaultUser": world.model.default_user,
            "token": world.default_token(),
            "users": users,
            "clock": world.model.clock,
        }),
    )
}

fn faults_json(c: &Control) -> Response {
    let list: Vec<Value> = c
        .faults
        .iter()
        .map(|f| {
            let (kind, status, retry) = match &f.kind {
                FaultKind::Status { status, retry_after } => ("status", Some(*status), *retry_after),
                FaultKind::Hang => ("hang", None, None),
                FaultKind::Truncate => ("truncate", None, None),
                FaultKind::Echo { status } => ("echo", Some(*status), None),
            };
            json!({ "kind": kind, "status": status, "retryAfter": retry, "count": f.remaining, "pathPrefix": f.path_prefix })
        })
        .collect();
    Response::json(200, &json!({ "faults": list }))
}

fn add_fault(c: &mut Control, body: &Value) -> Response {
    let count = body.get("count").and_then(Value::as_u64).unwrap_or(1).min(u64::from(u32::MAX)) as u32;
    let path_prefix = body.get("pathPrefix").and_then(Value::as_str).map(str::to_string);
    let kind = match body.get("kind").and_then(Value::as_str).unwrap_or("status") {
        "hang" => FaultKind::Hang,
        "truncate" => FaultKind::Truncate,
        "echo" => {
            let status = body.get("status").and_then(Value::as_u64).unwrap_or(500);
            if !(400..=599).contains(&status) {
                return errors::field_error("status", "status must be between 400 and 599");
            }
            FaultKind::Echo { status: status as u16 }
        }
        "status" => {
            let status = body.get("status").and_then(Value::as_u64).unwrap_or(500);
            if !(400..=599).contains(&status) {
                return errors::field_error("status", "status must be between 400 and 599");
            }
            let retry_after = body.get("retryAfter").and_then(Value::as_u64);
            FaultKind::Status { status: status as u16, retry_after }
        }
        other => {
            return errors::field_error("kind", &format!("kind must be status, echo, hang or truncate, not {other}"));
        }
    };
    if count == 0 {
        return errors::field_error("count", "count must be at least 1");
    }
    c.faults.push(Fault { remaining: count, path_prefix, kind });
    let mut r = faults_json(c);
    r.status = 201;
    r
}

fn set_latency(c: &mut Control, body: &Value) -> Response {
    let prefix = body.get("pathPrefix").and_then(Value::as_str).unwrap_or("/").to_string();
    let Some(ms) = body.get("millis").and_then(Value::as_u64) else {
        return errors::field_error("millis", "millis (a number of milliseconds) is required");
    };
    if ms == 0 {
        c.latency.remove(&prefix);
    } else {
        c.latency.insert(prefix, ms);
    }
    Response::json(200, &json!({ "latency": c.latency }))
}

fn rate_limit_json(c: &Control) -> Response {
    let limit = c.rate_limiter.limit;
    Response::json(
        200,
        &json!({
            "enabled": limit.is_some(),
            "capacity": limit.map(|l| l.capacity),
            "refill": limit.map(|l| l.refill),
        }),
    )
}

/// `{"capacity": n, "refill": x}` (either left out: the admin page's default) turns the rate limit on with every
/// bucket full; `{"enabled": false}` turns it off.
fn set_rate_limit(c: &mut Control, body: &Value) -> Response {
    if !(body.is_object() || body.is_null()) {
        return errors::bad_request("The body must be an object such as {\"capacity\": 60, \"refill\": 5}.");
    }
    let enabled = match body.get("enabled") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => return errors::field_error("enabled", "enabled must be true or false"),
    };
    if !enabled {
        c.rate_limiter.set(None);
        return rate_limit_json(c);
    }
    let capacity = match body.get("capacity") {
        None | Some(Value::Null) => rate_limit::DEFAULT_CAPACITY,
        Some(v) => match v.as_u64() {
            Some(n) => n,
            None => return errors::field_error("capacity", "capacity must be a whole number of tokens, at least 1"),
        },
    };
    let refill = match body.get("refill") {
        None | Some(Value::Null) => rate_limit::DEFAULT_REFILL,
        Some(v) => match v.as_f64() {
            Some(x) => x,
            None => return errors::field_error("refill", "refill must be a number of tokens per second above 0"),
        },
    };
    match RateLimit::new(capacity, refill) {
        Ok(limit) => {
            c.rate_limiter.set(Some(limit));
            rate_limit_json(c)
        }
        Err(e) => errors::field_error(if capacity == 0 { "capacity" } else { "refill" }, &e),
    }
}

/// `POST /_stack/oauth/links`: an incoming application link, as an administrator creates one.
fn add_link(world: &mut World, body: &Value) -> Response {
    let field = |k: &str| body.get(k).and_then(Value::as_str).map(str::to_owned);
    let (Some(id), Some(secret), Some(redirect_uri)) = (field("clientId"), field("clientSecret"), field("redirectUri"))
    else {
        return errors::bad_request("clientId, clientSecret and redirectUri are required");
    };
    world.model.oauth.links.insert(id.clone(), crate::grants::Link { secret, redirect_uri });
    Response::json(200, &json!({ "clientId": id }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::admission::{Admission, echo_response};
    use std::time::{Duration, Instant};

    #[test]
    fn a_fault_hits_only_matching_paths_and_only_count_times() {
        let mut c = Control::default();
        let f = add_fault(&mut c, &json!({ "status": 503, "count": 2, "pathPrefix": "/rest/api" }));
        assert_eq!(f.status, 201);
        assert_eq!(c.admit("GET", "/users/a/avatar.png").1, Admission::Serve);
        assert!(matches!(c.admit("GET", "/rest/api/latest/projects").1, Admission::Respond(r) if r.status == 503));
        assert!(matches!(c.admit("GET", "/rest/api/latest/projects").1, Admission::Respond(_)));
        assert_eq!(c.admit("GET", "/rest/api/latest/projects").1, Admission::Serve);
        assert_eq!(c.requests["GET /rest/api/latest/projects"], 3);
    }

    #[test]
    fn rate_limiting_says_when_to_retry() {
        let mut c = Control::default();
        add_fault(&mut c, &json!({ "status": 429, "retryAfter": 7 }));
        let (_, Admission::Respond(r)) = c.admit("GET", "/x") else { unreachable!("a fault was queued") };
        assert_eq!(r.status, 429);
        assert!(r.headers.contains(&("Retry-After".into(), "7".into())));
    }

    #[test]
    fn an_echo_fault_repeats_the_authorization_header_in_its_error() {
        let mut c = Control::default();
        add_fault(&mut c, &json!({ "kind": "echo", "status": 401 }));
        assert_eq!(c.admit("GET", "/x").1, Admission::Echo(401));
        let r = echo_response(401, Some("Bearer t0ken"));
        assert_eq!(r.status, 401);
        assert!(String::from_utf8_lossy(&r.body).contains("Bearer t0ken"));
    }

    #[test]
    fn the_longest_latency_prefix_applies() {
        let mut c = Control::default();
        set_latency(&mut c, &json!({ "pathPrefix": "/rest", "millis": 10 }));
        set_latency(&mut c, &json!({ "pathPrefix": "/rest/api", "millis": 30 }));
        assert_eq!(c.admit("GET", "/rest/api/x").0, Some(Duration::from_millis(30)));
        assert_eq!(c.admit("GET", "/rest/ui/x").0, Some(Duration::from_millis(10)));
        assert_eq!(c.admit("GET", "/users/x").0, None);
    }

    #[test]
    fn a_baseline_latency_applies_to_every_path_and_a_reset_keeps_it() {
        let mut world = World::from_default_seed().unwrap();
        world.base_latency_ms = 100;
        world.control = world.fresh_control();
        assert_eq!(world.control.admit("GET", "/rest/api/x").0, Some(Duration::from_millis(100)));
        set_latency(&mut world.control, &json!({ "pathPrefix": "/rest/api", "millis": 30 }));
        assert_eq!(world.control.admit("GET", "/rest/api/x").0, Some(Duration::from_millis(30)));
        world.reset().unwrap();
        assert_eq!(world.control.latency, [("/".to_string(), 100)].into());
        assert_eq!(world.control.admit("GET", "/plugins/x").0, Some(Duration::from_millis(100)));
        world.base_latency_ms = 0;
        world.reset().unwrap();
        assert_eq!(world.control.admit("GET", "/rest/api/x").0, None);
    }

    #[test]
    fn the_rate_limit_refuses_a_user_with_an_empty_bucket_before_any_fault_and_counts_it() {
        let mut c = Control::default();
        let on = set_rate_limit(&mut c, &json!({ "capacity": 2, "refill": 0.5 }));
        assert_eq!(on.body_json(), json!({ "enabled": true, "capacity": 2, "refill": 0.5 }));
        let now = Instant::now();
        assert_eq!(c.admit_as("GET", "/x", Some("alice"), now).1, Admission::Serve);
        assert_eq!(c.admit_as("GET", "/x", Some("alice"), now).1, Admission::Serve);
        add_fault(&mut c, &json!({ "status": 503 }));
        let (_, Admission::Respond(r)) = c.admit_as("GET", "/x", Some("alice"), now) else {
            unreachable!("the bucket is empty")
        };
        assert_eq!(r.status, 429);
        assert!(r.headers.contains(&("Retry-After".into(), "2".into())));
        assert_eq!(r.body_json()["errors"][0]["message"], "You have been rate limited. Try again later.");
        assert_eq!(c.rate_limited, 1);
        assert_eq!(c.faults.len(), 1, "the refused request took no fault");
        let (_, Admission::Respond(r)) = c.admit_as("GET", "/x", None, now) else { unreachable!("the fault") };
        assert_eq!(r.status, 503, "an anonymous request is not limited and meets the fault");
        assert_eq!(c.admit_as("GET", "/x", Some("alice"), now + Duration::from_secs(2)).1, Admission::Serve);
        assert_eq!(c.requests["GET /x"], 5, "refused requests are counted too");
    }

    #[test]
    fn the_rate_limit_takes_defaults_turns_off_and_refuses_nonsense() {
        let mut c = Control::default();
        assert_eq!(set_rate_limit(&mut c, &Value::Null).body_json()["capacity"], 60);
        assert_eq!(set_rate_limit(&mut c, &json!({ "capacity": 10 })).body_json()["refill"], 5.0);
        assert_eq!(c.rate_limiter.limit.map(|l| l.capacity), Some(10));
        let off = set_rate_limit(&mut c, &json!({ "enabled": false }));
        assert_eq!(off.body_json(), json!({ "enabled": false, "capacity": null, "refill": null }));
        assert!(c.rate_limiter.limit.is_none());
        for bad in [
            json!({ "capacity": 0 }),
            json!({ "capacity": 1.5 }),
            json!({ "capacity": -1 }),
            json!({ "refill": 0 }),
            json!({ "refill": "fast" }),
            json!({ "enabled": "no" }),
            json!([1]),
        ] {
            assert_eq!(set_rate_limit(&mut c, &bad).status, 400, "{bad}");
        }
        assert!(c.rate_limiter.limit.is_none(), "a refused setting changes nothing");
    }
}
