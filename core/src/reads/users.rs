//! People: one person by slug, and the user search a name box asks as the person types. A person's
//! avatar is [`super::avatars`]'s.
//!
//! Requests: `GET /rest/api/latest/users/{userSlug}` → `{name, slug, displayName, emailAddress, type}`, and
//! `GET /rest/api/latest/users?filter&limit` → a page of the users whose username, name or e-mail address
//! contains `filter`. [reference "Projects, repositories, branches, commits, tags, users": spec]

use crate::bitbucket::segment;
use crate::fetch::FetchRequest;

/// The person whose slug is `slug`.
pub fn request(slug: &str) -> FetchRequest {
    FetchRequest::get(format!("/rest/api/latest/users/{}", segment(slug)), vec![])
}

/// The first `limit` people `text` names (a part of a username, name or e-mail address).
pub fn search_request(text: &str, limit: u64) -> FetchRequest {
    FetchRequest::get(
        "/rest/api/latest/users",
        vec![("filter".into(), text.to_owned()), ("limit".into(), limit.to_string())],
    )
}
