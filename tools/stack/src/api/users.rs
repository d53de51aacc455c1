//! Users: search, one user, and avatars.
//!
//! Source: reference "Projects, repositories, …, users" [spec] and "Avatars": `GET /users/{slug}/avatar.png?s=48`
//! with the API's credentials; an anonymous request gets the default image (seed).

use super::{ReadCx, Reply};
use crate::avatar_png;
use crate::errors::{self, exception};
use crate::exchange::{Request, Response};
use crate::paging::page_of;
use crate::render;

/// `GET /rest/api/latest/users?filter=` — users whose slug, name or e-mail contains `filter` (any letter case).
pub fn list(cx: &ReadCx, req: &Request) -> Reply {
    let f = req.param("filter").unwrap_or("").to_lowercase();
    let all =
        cx.m.users
            .values()
            .filter(|u| [&u.slug, &u.display_name, &u.email].iter().any(|s| s.to_lowercase().contains(&f)))
            .map(|u| render::user(&cx.v, u))
            .collect();
    Ok(Response::json(200, &page_of(req, all)))
}

/// `GET /rest/api/latest/users/{slug}`.
pub fn one(cx: &ReadCx, slug: &str) -> Reply {
    let u = cx
        .m
        .user(slug)
        .ok_or_else(|| errors::error(404, Some(exception::NO_SUCH_USER), &format!("User {slug} does not exist.")))?;
    Ok(Response::json(200, &render::user(&cx.v, u)))
}

fn size(req: &Request) -> u32 {
    req.param("s").and_then(|s| s.parse().ok()).unwrap_or(48)
}

/// `GET /users/{slug}/avatar.png?s=N` — the user's colour square.
pub fn avatar(cx: &ReadCx, req: &Request, slug: &str) -> Reply {
    let u = cx
        .m
        .user(slug)
        .ok_or_else(|| errors::error(404, Some(exception::NO_SUCH_USER), &format!("User {slug} does not exist.")))?;
    Ok(Response::bytes(200, "image/png", avatar_png::solid_square(u.colour, size(req)))
        .with_header("Cache-Control", "max-age=3600"))
}

/// The default (grey) avatar that anonymous requests get.
pub fn default_avatar(req: &Request) -> Response {
    Response::bytes(200, "image/png", avatar_png::solid_square([0xc1, 0xc7, 0xd0], size(req)))
}
