//! The control API under `/_stack/...` (a path Bitbucket never uses): faults, latency, request counts, reset,
//! and changes made as another user (builds, comments, pushes). JSON in and out, no authentication.
//!
//! `GET /_stack/requests` also reports `inFlight` (Bitbucket requests being served now) and `maxInFlight` (the most
//! served at once since the counters were reset), so a client's concurrency bound can be checked without timing.
//!
//! This module reads the requests and answers them; what they set, and what it does to each Bitbucket request, is
//! `admission`'s [`Control`], which the world holds.

use crate::admission::{Control, Fault, FaultKind};
use crate::api::{builds, comments, pull_requests};
use crate::errors;
use crate::exchange::{Request, Response};
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
                &json!({ "total": total, "requests": c.requests, "inFlight": c.in_flight, "maxInFlight": c.max_in_flight }),
            )
        }
        ("DELETE", ["requests"]) | ("POST", ["requests", "reset"]) => {
            world.control.requests.clear();
            world.control.max_in_flight = world.control.in_flight;
            let in_flight = world.control.in_flight;
            Response::json(200, &json!({ "total": 0, "requests": {}, "inFlight": in_flight, "maxInFlight": in_flight }))
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::{Admission, echo_response};
    use std::time::Duration;

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
}
