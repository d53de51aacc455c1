//! People in a view: who they are and their avatars as `data:` URLs that bb fetched with its own
//! credentials (ADR-101: the view's frame cannot reach Bitbucket, and Bitbucket answers an anonymous
//! avatar request with its default image).
//!
//! Avatars come from `GET /users/{slug}/avatar.png?s=64` (reference "Avatars"), are kept only when
//! they are a small PNG, JPEG, GIF or WebP image, and are cached for the server's life, size-capped:
//! a person is fetched once, however many views show them (the cache is
//! [`crate::avatar_cache`]). Someone without an avatar is drawn with
//! initials.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::avatar_cache::{AvatarCache, Known};
use crate::bitbucket::model::User;
use crate::bitbucket::segment;
use crate::fetch::{FetchOutcome, FetchRequest};
use crate::plan::Fetches;

/// The pixel size asked for: enough for a 32-pixel circle on a 2× screen.
pub const AVATAR_PIXELS: u32 = 64;
/// The largest avatar kept, in bytes; a bigger image is drawn as initials.
pub const MAX_AVATAR_BYTES: usize = 48 * 1024;
/// The most avatars one view fetches; the others are drawn as initials.
pub const MAX_FETCHES_PER_VIEW: usize = 40;

/// The request for `slug`'s avatar.
pub fn request(slug: &str) -> FetchRequest {
    FetchRequest::get(format!("/users/{}/avatar.png", segment(slug)), vec![("s".into(), AVATAR_PIXELS.to_string())])
}

/// The avatar a fetch found, as a `data:` URL, or `None` (none, not an image, too big, failed); and
/// whether that may change on its own soon (a failure: a 5xx, 429, a timeout, no connection), in which
/// case it is kept only for [`crate::avatar_cache::FAILURE_TTL_MS`].
pub fn from_outcome(outcome: &FetchOutcome) -> (Option<String>, bool) {
    match outcome {
        FetchOutcome::Response(r) if r.status == 200 => (data_url(&r.body), false),
        // 401/403/404: this user has no avatar bb may show, until the server says otherwise.
        FetchOutcome::Response(r) if (400..500).contains(&r.status) && r.status != 429 => (None, false),
        _ => (None, true),
    }
}

/// A `data:` URL for image bytes, when they are a PNG, JPEG, GIF or WebP image no larger than the cap.
/// The type is read from the bytes, never from what the server claimed.
pub fn data_url(bytes: &[u8]) -> Option<String> {
    if bytes.is_empty() || bytes.len() > MAX_AVATAR_BYTES {
        return None;
    }
    let mime = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        "image/png"
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        "image/jpeg"
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        "image/gif"
    } else if bytes.len() > 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        "image/webp"
    } else {
        return None;
    };
    Some(format!("data:{mime};base64,{}", crate::encoding::base64(bytes)))
}

/// Initials for someone without an avatar: the first letters of the first and last words of
/// their name, upper-cased ("Alice Example" → "AE").
pub fn initials(name: &str) -> String {
    let words: Vec<&str> =
        name.split_whitespace().filter(|w| w.chars().next().is_some_and(char::is_alphanumeric)).collect();
    let first = |w: &str| w.chars().next().map(|c| c.to_uppercase().collect::<String>()).unwrap_or_default();
    match words.as_slice() {
        [] => "?".into(),
        [one] => first(one),
        [a, .., z] => format!("{}{}", first(a), first(z)),
    }
}

/// The people a view mentions, gathered as it is built.
#[derive(Debug, Default)]
pub struct People {
    known: BTreeMap<String, User>,
}

impl People {
    /// Notes `user` and returns their slug (the key the view uses).
    pub fn note(&mut self, user: &User) -> String {
        let slug = user.handle().to_owned();
        self.known.entry(slug.clone()).or_insert_with(|| user.clone());
        slug
    }

    /// Notes everyone `other` noted (a part of a view drawn apart, then kept).
    pub fn merge(&mut self, other: People) {
        for (slug, user) in other.known {
            self.known.entry(slug).or_insert(user);
        }
    }

    /// The slugs whose avatars are not cached yet, at most [`MAX_FETCHES_PER_VIEW`].
    pub fn to_fetch(&self, cache: &AvatarCache, now_ms: u64) -> Vec<String> {
        let missing = |s: &&String| *s != "?" && cache.get(s, now_ms) == Known::Nothing;
        self.known.keys().filter(missing).take(MAX_FETCHES_PER_VIEW).cloned().collect()
    }

    /// The view's `users` object.
    pub fn to_value(&self, cache: &AvatarCache, now_ms: u64, base_url: Option<&str>) -> Value {
        let mut users = Map::new();
        for (slug, user) in &self.known {
            let name = user.display_name.clone().filter(|n| !n.trim().is_empty()).unwrap_or_else(|| slug.clone());
            users.insert(
                slug.clone(),
                json!({
                    "name": name,
                    "avatar": cache.get(slug, now_ms).image(),
                    "initials": initials(&name),
                    "service": user.kind.as_deref() == Some("SERVICE"),
                    "url": base_url.map(|b| crate::reads::pull_request::profile_url(b, slug)),
                }),
            );
        }
        Value::Object(users)
    }
}

/// A view's avatar reads: the people it names as soon as it knows them (the pull request's author
/// and reviewers when the pull request is read), and the rest once everything else is read. A plan
/// files them under its own read name around [`Avatar`].
#[derive(Debug, Default)]
pub struct AvatarStage {
    fetching: Vec<String>,
    asked: bool,
}

/// Names one avatar read of a stage: the index of the person in the stage's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Avatar(usize);

impl AvatarStage {
    /// Takes an avatar's outcome into the cache.
    pub fn on<R>(&mut self, read: Avatar, outcome: &FetchOutcome, f: &mut Fetches<'_, '_, R>) {
        if let Some(slug) = self.fetching.get(read.0) {
            let (avatar, may_pass) = from_outcome(outcome);
            let until = may_pass.then(|| f.now_ms() + crate::avatar_cache::FAILURE_TTL_MS);
            f.avatars().put(slug, avatar, until);
        }
    }

    /// Asks now for the avatars of `people` not cached and not asked for yet (at most
    /// [`MAX_FETCHES_PER_VIEW`] for the whole view), each filed as `wrap(Avatar)`: a read whose input
    /// is known goes out at once, beside the reads still under way.
    pub fn early<R>(&mut self, people: &People, f: &mut Fetches<'_, '_, R>, wrap: fn(Avatar) -> R) {
        let now = f.now_ms();
        let room = MAX_FETCHES_PER_VIEW.saturating_sub(self.fetching.len());
        let new: Vec<String> =
            people.to_fetch(&f.avatars(), now).into_iter().filter(|s| !self.fetching.contains(s)).take(room).collect();
        for slug in new {
            f.fetch(wrap(Avatar(self.fetching.len())), request(&slug));
            self.fetching.push(slug);
        }
    }

    /// Once everything else is read: asks, the first time, for the avatars of `people` not cached
    /// and not asked for yet. `true` while the view must wait for them.
    pub fn ask<R>(&mut self, people: &People, f: &mut Fetches<'_, '_, R>, wrap: fn(Avatar) -> R) -> bool {
        if !self.asked {
            self.asked = true;
            self.early(people, f, wrap);
        }
        f.waiting() > 0
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    #[test]
    fn only_small_real_images_become_data_urls() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        assert!(data_url(png).unwrap().starts_with("data:image/png;base64,iVBORw0KGgo"));
        assert!(data_url(&[0xff, 0xd8, 0xff, 0xe0]).unwrap().starts_with("data:image/jpeg;base64,"));
        assert_eq!(data_url(b"<svg onload=alert(1)>"), None, "SVG (which can hold script) is refused");
        assert_eq!(data_url(b"<html>"), None);
        assert_eq!(data_url(&[png.as_slice(), &vec![0; MAX_AVATAR_BYTES]].concat()), None, "too big");
    }

    #[test]
    fn initials_take_the_first_and_last_words() {
        assert_eq!(initials("Alice Example"), "AE");
        assert_eq!(initials("bob"), "B");
        assert_eq!(initials("Carol de la Cruz"), "CC");
        assert_eq!(initials("  "), "?");
        assert_eq!(initials("élise <b>x</b>"), "É", "words that do not start with a letter or digit are skipped");
    }
}
