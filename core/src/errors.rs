//! How a Bitbucket answer becomes either its body or one sentence the model can act on.
//!
//! Bitbucket's errors are `{"errors":[{"context", "message", "exceptionName", …extra}]}`; 401 means both
//! "not logged in" and "not permitted"; 404 carries NoSuch…Exception; 409 a stale version
//! (`currentVersion`), a vetoed merge (`vetoes`) or a duplicate pull request (`existingPullRequest`);
//! 429 comes with `Retry-After` (docs/reference/bitbucket-dc.md "Errors bb quotes", "Error answers by
//! status"). A refusal of the credentials (401, 403) quotes Bitbucket's own reason (an unlicensed user,
//! Basic authentication turned off: recorded from 8.x to 10.x) on one line, its hidden characters shown,
//! clipped, and any `Bearer …` or `Basic …` in it removed (the client already removed bb's own
//! credentials), then says what to do about the kind of credential the request carried ([`Credential`]),
//! never the credential itself.

use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::bitbucket::model::{PullRequest, Veto};
use crate::fetch::{Credential, FetchError, FetchErrorKind, FetchOutcome, FetchResponse};

/// What a request was about, so a 404 can name what does not exist.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    /// The project key.
    pub project: &'a str,
    /// The repository slug.
    pub repo: &'a str,
    /// The pull request's id; `None` for a request about the repository alone.
    pub pr: Option<u64>,
}

/// For a write: what it would have done and how to check, said when the outcome is unknown.
#[derive(Debug, Clone, Copy)]
pub struct Write<'a> {
    /// "the comment was added", "the pull request was merged".
    pub effect: &'a str,
    /// "look at list_pr_comments before adding it again".
    pub check: &'a str,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ErrorBody {
    errors: Vec<ErrorEntry>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ErrorEntry {
    message: Option<String>,
    exception_name: Option<String>,
    current_version: Option<u64>,
    existing_pull_request: Option<PullRequest>,
    /// The pull request as it is now, on a stale version's 409. [rec: sourcegraph/sourcegraph-public-snapshot
    /// enterprise/internal/batches/sources/testdata/sources/BitbucketServerSource_UpdateChangeset_outdated.yaml]
    pull_request: Option<PullRequest>,
    vetoes: Vec<Veto>,
    /// Reviewers an update could not add, each `{context: name, message}`. [assumed: the field's name]
    reviewer_errors: Vec<ReviewerError>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ReviewerError {
    message: Option<String>,
}

/// Why a Bitbucket answer is not the body a caller wanted: the cases callers tell apart, each with the one
/// sentence the model reads (made here, once: [`BitbucketError::said`], `Display`).
#[derive(Debug, Clone)]
pub enum BitbucketError {
    /// Bitbucket's 409 for a stale version (PullRequestOutOfDateException, CommentOutOfDateException): the write
    /// did not happen, and the thing changed since bb read its version.
    Stale {
        /// The pull request as it is now, from the 409's `pullRequest`; `None` for a comment, or when the
        /// answer did not carry it.
        now: Option<Box<PullRequest>>,
        /// Bitbucket's refusal as it wrote it.
        refusal: Refusal,
        /// The sentence.
        said: String,
    },
    /// Any other refusal Bitbucket itself wrote (`{"errors": [...]}`, a status below 500): nothing was done.
    Refused {
        /// Its status, exception name and message, for a tool that says more than the general sentence
        /// for one status (an existing tag, auto-merge turned off, a missing branch).
        refusal: Refusal,
        /// The sentence.
        said: String,
    },
    /// Anything else: Bitbucket not reached or held back, a server failure, an answer not Bitbucket's own (a
    /// write's outcome then unknown), or a body bb could not read.
    Failed(String),
}

impl BitbucketError {
    /// The sentence the model reads.
    pub fn said(&self) -> &str {
        match self {
            BitbucketError::Stale { said, .. }
            | BitbucketError::Refused { said, .. }
            | BitbucketError::Failed(said) => said,
        }
    }

    /// Bitbucket's own refusal, when it wrote one (a stale version's included).
    pub fn refusal(&self) -> Option<&Refusal> {
        match self {
            BitbucketError::Stale { refusal, .. } | BitbucketError::Refused { refusal, .. } => Some(refusal),
            BitbucketError::Failed(_) => None,
        }
    }

    /// Bitbucket's own words for a refusal the person should read as Bitbucket would say it (a missing path, a
    /// branch that does not exist, a request it refused), as a sentence; `None` when it gave none, or when bb's
    /// words serve the person better (credentials, rate limits, a server failure).
    pub fn bitbucket_said(&self) -> Option<String> {
        self.refusal()
            .filter(|r| matches!(r.status, 400 | 404 | 409) && !r.message.trim().is_empty())
            .map(|r| sentence(r.message.trim()))
    }
}

impl std::fmt::Display for BitbucketError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.said())
    }
}

impl From<BitbucketError> for String {
    fn from(e: BitbucketError) -> String {
        match e {
            BitbucketError::Stale { said, .. }
            | BitbucketError::Refused { said, .. }
            | BitbucketError::Failed(said) => said,
        }
    }
}

/// What a 409's first error says of a stale version: `Some(the pull request as it is now, if carried)` when it
/// is one.
fn stale(r: &FetchResponse) -> Option<Option<Box<PullRequest>>> {
    if r.status != 409 {
        return None;
    }
    let parsed: ErrorBody = serde_json::from_slice(&r.body).ok()?;
    let first = parsed.errors.into_iter().next()?;
    first
        .exception_name
        .as_deref()
        .is_some_and(|e| e.ends_with("OutOfDateException"))
        .then(|| first.pull_request.map(Box::new))
}

/// Bitbucket's own refusal of a request: its status, exception name and message (clipped).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refusal {
    /// The HTTP status.
    pub status: u16,
    /// `exceptionName`, or empty.
    pub exception: String,
    /// `message`, at most [`QUOTE_CHARS`] characters, or empty.
    pub message: String,
}

/// `Some` when the outcome is an error answer Bitbucket itself wrote (`{"errors": [...]}`, a status below 500).
/// A caller that reads the body gets it in [`BitbucketError::refusal`]; this is for a predicate on an outcome
/// whose body nobody reads (`reads::review::absent`).
pub(crate) fn refusal(outcome: &FetchOutcome) -> Option<Refusal> {
    let FetchOutcome::Response(r) = outcome else { return None };
    if (200..300).contains(&r.status) || r.status >= 500 {
        return None;
    }
    let parsed: ErrorBody = serde_json::from_slice(&r.body).ok()?;
    let first = parsed.errors.into_iter().next()?;
    Some(Refusal {
        status: r.status,
        exception: first.exception_name.unwrap_or_default(),
        message: first.message.as_deref().map(clip).unwrap_or_default(),
    })
}

/// The longest stretch of Bitbucket's own words an error sentence quotes.
const QUOTE_CHARS: usize = 300;

/// The body of a 2xx answer, or why not.
pub fn body<'o>(
    outcome: &'o FetchOutcome,
    about: Subject<'_>,
    write: Option<Write<'_>>,
) -> Result<&'o [u8], BitbucketError> {
    match outcome {
        FetchOutcome::Response(r) if (200..300).contains(&r.status) => Ok(&r.body),
        FetchOutcome::Response(r) => Err(match refusal(outcome) {
            // Bitbucket's own refusal (below 500, its `{"errors": …}`): the write did not happen.
            Some(refusal) => {
                let said = status_sentence(r, about);
                match stale(r) {
                    Some(now) => BitbucketError::Stale { now, refusal, said },
                    None => BitbucketError::Refused { refusal, said },
                }
            }
            None => BitbucketError::Failed(match write {
                // Only Bitbucket's own refusal says a write did not happen: a gateway's 502 or 504, a proxy's
                // page or a server error may come after Bitbucket acted.
                Some(w) if r.status >= 500 || !is_bitbucket_error(&r.body) => format!(
                    "Bitbucket's answer (HTTP {}) does not say whether {}: the outcome is unknown; {} — bb did not retry.",
                    r.status, w.effect, w.check
                ),
                _ => status_sentence(r, about),
            }),
        }),
        FetchOutcome::Failed(e) => Err(BitbucketError::Failed(failed(e, write))),
    }
}

/// The sentence for a request whose answer never came.
fn failed(e: &FetchError, write: Option<Write<'_>>) -> String {
    let what = match e.kind {
        // The shell's detail is already the one sentence that says what to set.
        FetchErrorKind::NotConfigured => return sentence(&clip(&e.detail)),
        FetchErrorKind::Unreachable => "could not be reached",
        FetchErrorKind::Tls => "could not be reached securely (TLS)",
        FetchErrorKind::Timeout => "did not answer in time",
        FetchErrorKind::BrokenResponse => "sent a broken answer",
        // Only a refresh is deferred, and a refresh answers "unchanged" before reading this;
        // said plainly for any other reader.
        FetchErrorKind::Deferred { after_ms } => {
            return format!(
                "Bitbucket was not asked: bb held this read back to keep within the Bitbucket user's rate limit; try again in {} s.",
                after_ms.div_ceil(1000).max(1)
            );
        }
    };
    match write {
        Some(w) if e.may_have_arrived => format!(
            "Bitbucket {what} after the request was sent ({}), so bb cannot tell whether {}; {} — bb did not retry.",
            clip(&e.detail),
            w.effect,
            w.check
        ),
        // A TLS failure is a setting to fix (the detail says which), not a moment to wait out.
        _ if e.kind == FetchErrorKind::Tls => format!("Bitbucket {what}: {}", sentence(&clip(&e.detail))),
        _ => format!("Bitbucket {what} ({}); try again later.", clip(&e.detail)),
    }
}

/// The body of a 2xx answer parsed as `T`, or why not.
pub fn json<T: DeserializeOwned>(
    outcome: &FetchOutcome,
    about: Subject<'_>,
    write: Option<Write<'_>>,
) -> Result<T, BitbucketError> {
    let bytes = body(outcome, about, write)?;
    serde_json::from_slice(bytes)
        .map_err(|e| BitbucketError::Failed(format!("Bitbucket's answer could not be read ({e}).")))
}

fn status_sentence(r: &FetchResponse, about: Subject<'_>) -> String {
    let (status, retry_after_s) = (r.status, r.retry_after_s);
    let parsed: ErrorBody = serde_json::from_slice(&r.body).unwrap_or_default();
    let first = parsed.errors.into_iter().next().unwrap_or_default();
    let exception = first.exception_name.as_deref().unwrap_or("");
    let message = first.message.as_deref().map(clip).unwrap_or_default();
    let repo = format!("{}/{}", about.project, about.repo);
    match status {
        401 | 403 => refused_credentials(status, first.message.as_deref().unwrap_or(""), r.credential),
        404 if exception.ends_with("NoSuchProjectException") => {
            format!("Project {} does not exist (or this user cannot see it).", about.project)
        }
        404 if exception.ends_with("NoSuchRepositoryException") => {
            format!("Repository {repo} does not exist (or this user cannot see it).")
        }
        404 if exception.ends_with("NoSuchPullRequestException") => match about.pr {
            Some(id) => format!("Pull request #{id} does not exist in {repo}."),
            None => format!("That pull request does not exist in {repo}."),
        },
        404 if exception.ends_with("NoSuchCommentException") => match about.pr {
            Some(id) => format!("That comment does not exist on pull request #{id} in {repo} (or it was deleted)."),
            None => format!("That comment does not exist in {repo} (or it was deleted)."),
        },
        404 => format!("Bitbucket found nothing there (404): {}", or_status(&message, status)),
        409 if exception.ends_with("PullRequestOutOfDateException") => match first.current_version {
            Some(v) => format!(
                "The pull request changed since the version given; its current version is {v}: read it again (get_pull_request) and retry with version {v} if it is still what you mean."
            ),
            None => format!("The pull request changed since the version given: {}", or_status(&message, status)),
        },
        409 if exception.ends_with("DuplicatePullRequestException") => {
            match first.existing_pull_request.and_then(|p| p.id) {
                Some(id) if !message.is_empty() => format!(
                    "A pull request for these branches is already open: #{id} in {repo} (Bitbucket: \"{message}\"); use it (get_pull_request pr_id={id}) instead of creating another."
                ),
                Some(id) => format!(
                    "A pull request for these branches is already open: #{id} in {repo}; use it (get_pull_request pr_id={id}) instead of creating another."
                ),
                None => format!("A pull request for these branches is already open: {}", or_status(&message, status)),
            }
        }
        409 if exception.ends_with("MergeVetoedException") || !first.vetoes.is_empty() => {
            let vetoes: Vec<String> = first
                .vetoes
                .iter()
                .map(|v| {
                    let s = v.summary_message.as_deref().unwrap_or("");
                    match v.detailed_message.as_deref() {
                        Some(d) if !d.is_empty() && d != s => format!("{s}: {d}"),
                        _ => s.to_owned(),
                    }
                })
                .map(|v| clip(&v))
                .collect();
            if vetoes.is_empty() {
                format!("Bitbucket vetoed the merge: {}", or_status(&message, status))
            } else {
                format!("Bitbucket vetoed the merge: {}", vetoes.join("; "))
            }
        }
        409 if !first.reviewer_errors.is_empty() => {
            let each: Vec<String> =
                first.reviewer_errors.iter().filter_map(|e| e.message.as_deref()).map(clip).collect();
            format!("Bitbucket refused the reviewers, so nothing was changed: {}", sentence(&each.join("; ")))
        }
        409 => format!("Bitbucket refused: {}", or_status(&message, status)),
        400 => format!("Bitbucket refused the request: {}", or_status(&message, status)),
        413 | 414 | 431 => format!(
            "Bitbucket (or a proxy before it) refused the request as too large (HTTP {status}): {} Shorten the arguments.",
            sentence(&or_status(&message, status))
        ),
        429 => match retry_after_s {
            Some(1) => "Bitbucket is rate limiting bb; try again in 1 second.".to_owned(),
            Some(s) => format!("Bitbucket is rate limiting bb; try again in {s} seconds."),
            None => "Bitbucket is rate limiting bb; try again shortly.".to_owned(),
        },
        500..=599 => format!(
            "Bitbucket failed (HTTP {status}): {}; try again later.",
            or_status(&message, status).trim_end_matches('.')
        ),
        _ => format!("Bitbucket answered HTTP {status}: {}", or_status(&message, status)),
    }
}

/// Bitbucket's refusal of a request's credentials (401, 403): its own reason, quoted ([`quote`]), and
/// what to do about the credential the request carried.
fn refused_credentials(status: u16, message: &str, credential: Credential) -> String {
    let quoted = quote(message);
    let head = if quoted.is_empty() {
        format!("Bitbucket refused the request (HTTP {status}) without a reason.")
    } else {
        format!("Bitbucket refused the request (HTTP {status}): \"{quoted}\"")
    };
    let said = message.to_lowercase();
    let hint = if said.contains("basic authentication")
        && said.contains("disabled")
        && credential == Credential::Password
    {
        "This Bitbucket takes no password over its REST API, and bb signs in with BITBUCKET_USER and BITBUCKET_PASSWORD: \
         create an HTTP access token for that user (Bitbucket: Manage account › HTTP access tokens) and give it to bb as \
         BITBUCKET_TOKEN instead of BITBUCKET_PASSWORD."
            .to_owned()
    } else if said.contains("licensed") || said.contains("licence") || said.contains("license") {
        let who = match credential {
            Credential::Token => "the user of bb's HTTP access token (BITBUCKET_TOKEN)",
            Credential::Password => "BITBUCKET_USER",
            Credential::PersonalToken => "the user of the token your client gives bb",
            Credential::Login => "your Bitbucket user",
            Credential::Anonymous | Credential::Unknown => "the user bb acts as",
        };
        format!(
            "The credentials are not at fault: {who} may not use Bitbucket until a Bitbucket administrator gives it a licence (a licensed group)."
        )
    } else {
        match credential {
            Credential::Token => "Check bb's HTTP access token (BITBUCKET_TOKEN): still valid (not expired or revoked), with the permission this needs, and its user allowed to see this repository.",
            Credential::Password => "Check BITBUCKET_USER and BITBUCKET_PASSWORD (or give bb an HTTP access token as BITBUCKET_TOKEN instead), and that the user may see this repository.",
            Credential::Anonymous => "bb sends no credentials (none of BITBUCKET_TOKEN, BITBUCKET_USER and BITBUCKET_PASSWORD is set), and Bitbucket does not show this to anonymous users: give bb an HTTP access token as BITBUCKET_TOKEN.",
            Credential::PersonalToken => "Check the Bitbucket token your client gives bb: still valid, with the permission this needs, and its user allowed to see this repository.",
            Credential::Login => "Your Bitbucket user may lack access to this repository; if every request is refused, log in to bb again.",
            Credential::Unknown => {
                "The credentials bb uses were refused or lack permission: check them and the user's access to the repository."
            }
        }
        .to_owned()
    };
    format!("{head} {hint}")
}

/// Bitbucket's words as a sentence quotes them: on one line, any credential after `Bearer` or `Basic`
/// removed, hidden characters shown ([`crate::text::visible`]), at most [`QUOTE_CHARS`] characters.
fn quote(message: &str) -> String {
    let mut words: Vec<&str> = message.split_whitespace().collect();
    for i in 1..words.len() {
        let scheme = words[i - 1].eq_ignore_ascii_case("bearer") || words[i - 1].eq_ignore_ascii_case("basic");
        if scheme && looks_like_a_credential(words[i]) {
            words[i] = CREDENTIAL_REMOVED;
        }
    }
    clip(&crate::text::visible(&words.join(" ")))
}

/// Whether a word after `Bearer` or `Basic` is a token or base64 rather than a word ("Basic
/// Authentication"): at least 8 characters of a token's alphabet, with a digit, a sign or a capital
/// past the first character.
fn looks_like_a_credential(word: &str) -> bool {
    let word = word.trim_end_matches(['.', ',', ';', ')', '"', '\'']);
    let alphabet = |c: char| c.is_ascii_alphanumeric() || "+/=._~-".contains(c);
    word.len() >= 8 && word.chars().all(alphabet) && word.chars().skip(1).any(|c| !c.is_ascii_lowercase())
}

/// What a quote says in place of a credential (the words the drive's scrubbing writes).
const CREDENTIAL_REMOVED: &str = "[credential removed]";

/// Whether a body is Bitbucket's own error answer (`{"errors": [...]}` with at least one error).
fn is_bitbucket_error(body: &[u8]) -> bool {
    serde_json::from_slice::<ErrorBody>(body).is_ok_and(|b| !b.errors.is_empty())
}

/// `s` as a sentence: capitalised, ending with a full stop. A sentence that starts with bb's name keeps
/// it lower-case: bb is always "bb".
fn sentence(s: &str) -> String {
    let names_bb = s.strip_prefix("bb").is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric()));
    let mut out: String = if names_bb {
        s.to_owned()
    } else {
        s.chars().take(1).flat_map(char::to_uppercase).chain(s.chars().skip(1)).collect()
    };
    if !out.ends_with(['.', '!', '?']) {
        out.push('.');
    }
    out
}

fn or_status(message: &str, status: u16) -> String {
    if message.is_empty() { format!("HTTP {status} without a message.") } else { message.to_owned() }
}

/// At most [`QUOTE_CHARS`] characters of Bitbucket's words, with a marker when cut.
fn clip(s: &str) -> String {
    match s.char_indices().nth(QUOTE_CHARS) {
        Some((i, _)) => format!("{}… [cut]", &s[..i]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const ABOUT: Subject<'static> = Subject { project: "BB", repo: "api", pr: Some(7) };

    fn err(status: u16, body: &str) -> String {
        body_of(FetchOutcome::response(status, body.as_bytes().to_vec()))
    }

    fn body_of(o: FetchOutcome) -> String {
        match super::body(&o, ABOUT, Some(Write { effect: "the comment was added", check: "check it" })) {
            Ok(_) => String::new(),
            Err(e) => e.into(),
        }
    }

    /// The sentence for Bitbucket's refusal `body` with `status`, of a request that carried `credential`.
    fn refused_with(status: u16, body: &str, credential: Credential) -> String {
        let FetchOutcome::Response(r) = FetchOutcome::response(status, body) else { unreachable!() };
        let o = FetchOutcome::Response(FetchResponse { credential, ..r });
        super::body(&o, ABOUT, None).unwrap_err().to_string()
    }

    const UNLICENSED: &str = r#"{"errors":[{"context":null,"message":"You are not currently licensed to use Bitbucket. Please contact your administrator.","exceptionName":"com.atlassian.bitbucket.AuthorisationException"}]}"#;
    const NO_BASIC: &str = r#"{"errors":[{"context":null,"message":"Basic Authentication has been disabled on this instance.","exceptionName":"com.atlassian.bitbucket.auth.IncorrectPasswordAuthenticationException"}]}"#;

    #[test]
    fn a_refusal_of_the_credentials_quotes_bitbucket_s_reason() {
        for credential in [Credential::Token, Credential::Password, Credential::PersonalToken, Credential::Login] {
            let e = refused_with(401, UNLICENSED, credential);
            assert!(
                e.contains("\"You are not currently licensed to use Bitbucket. Please contact your administrator.\""),
                "{e}"
            );
            assert!(!e.contains("check bb's token"), "a licence is no token's fault: {e}");
            assert!(e.contains("administrator"), "{e}");
        }
    }

    #[test]
    fn a_password_refused_by_an_instance_without_basic_authentication_is_told_to_use_an_http_access_token() {
        let e = refused_with(403, NO_BASIC, Credential::Password);
        assert!(e.contains("\"Basic Authentication has been disabled on this instance.\""), "{e}");
        assert!(
            e.contains("BITBUCKET_PASSWORD") && e.contains("HTTP access token") && e.contains("BITBUCKET_TOKEN"),
            "{e}"
        );
        assert!(!e.contains("check bb's token"), "{e}");
    }

    #[test]
    fn the_hint_fits_the_credential_bb_sent() {
        let body = r#"{"errors":[{"message":"Authentication failed. Please check your credentials and try again."}]}"#;
        let hint = |c| refused_with(401, body, c);
        assert!(hint(Credential::Token).contains("BITBUCKET_TOKEN"), "{}", hint(Credential::Token));
        assert!(!hint(Credential::Token).contains("BITBUCKET_PASSWORD"));
        assert!(
            hint(Credential::Password).contains("BITBUCKET_USER and BITBUCKET_PASSWORD"),
            "{}",
            hint(Credential::Password)
        );
        assert!(hint(Credential::Anonymous).contains("no credentials"), "{}", hint(Credential::Anonymous));
        assert!(hint(Credential::PersonalToken).contains("your client"), "{}", hint(Credential::PersonalToken));
        assert!(hint(Credential::Login).contains("log in"), "{}", hint(Credential::Login));
        for c in [
            Credential::Token,
            Credential::Password,
            Credential::Anonymous,
            Credential::PersonalToken,
            Credential::Login,
        ] {
            assert!(
                hint(c).starts_with("Bitbucket refused the request (HTTP 401): \"Authentication failed."),
                "{}",
                hint(c)
            );
        }
    }

    #[test]
    fn bitbucket_s_reason_is_quoted_on_one_line_with_hidden_characters_shown_credentials_left_out_and_clipped() {
        let long = "x".repeat(1000);
        let body = format!(
            r#"{{"errors":[{{"message":"Refused\u202e for Bearer abc.DEF-123 and Basic dXNlcjpwYXNz\nsee {long}"}}]}}"#
        );
        let e = refused_with(401, &body, Credential::Token);
        assert!(
            e.contains("Refused⟨U+202E⟩ for Bearer [credential removed] and Basic [credential removed] see"),
            "{e}"
        );
        assert!(!e.contains("abc.DEF") && !e.contains("dXNlcjpwYXNz") && !e.contains('\n'), "{e}");
        assert!(e.contains("… [cut]") && e.chars().count() < 700, "{e}");
        let e = refused_with(401, r#"{"errors":[{"message":""}]}"#, Credential::Token);
        assert!(e.starts_with("Bitbucket refused the request (HTTP 401) without a reason. Check"), "{e}");
    }

    #[test]
    fn a_stale_version_names_the_current_one() {
        let e = err(
            409,
            r#"{"errors":[{"exceptionName":"com.atlassian.bitbucket.pull.PullRequestOutOfDateException","currentVersion":4,"expectedVersion":2}]}"#,
        );
        assert!(e.contains("current version is 4"), "{e}");
    }

    #[test]
    fn a_stale_version_is_its_own_case_and_carries_the_pull_request_as_it_is_now() {
        let o = FetchOutcome::response(
            409,
            r#"{"errors":[{"message":"changed","exceptionName":"x.CommentOutOfDateException","pullRequest":{"id":7,"version":5}}]}"#,
        );
        let e = super::body(&o, ABOUT, Some(Write { effect: "it was done", check: "check it" })).unwrap_err();
        let BitbucketError::Stale { now, refusal, said } = e else { unreachable!("{e:?}") };
        assert_eq!(now.and_then(|p| p.version), Some(5));
        assert_eq!((refusal.status, refusal.message.as_str()), (409, "changed"));
        assert_eq!(said, "Bitbucket refused: changed");
    }

    #[test]
    fn only_bitbucket_s_own_refusal_is_refused() {
        let (refused, page) = (
            FetchOutcome::response(403, r#"{"errors":[{"message":"off"}]}"#),
            FetchOutcome::response(404, "<html>not found</html>"),
        );
        let refused = super::body(&refused, ABOUT, None);
        assert!(matches!(&refused, Err(BitbucketError::Refused { refusal, .. }) if refusal.status == 403));
        let page = super::body(&page, ABOUT, None);
        assert!(matches!(&page, Err(e @ BitbucketError::Failed(_)) if e.refusal().is_none()));
    }

    #[test]
    fn a_lost_write_says_it_may_have_happened() {
        let o = FetchOutcome::Failed(FetchError {
            kind: FetchErrorKind::Timeout,
            detail: "read timed out".into(),
            may_have_arrived: true,
        });
        let e = body_of(o);
        assert!(e.contains("cannot tell whether the comment was added"), "{e}");
    }

    #[test]
    fn a_long_message_is_cut_with_a_marker() {
        let long = "x".repeat(1000);
        let o = FetchOutcome::response(500, format!(r#"{{"errors":[{{"message":"{long}"}}]}}"#));
        let e = super::body(&o, ABOUT, None).unwrap_err().to_string();
        assert!(e.contains("… [cut]") && e.len() < 450, "{}", e.len());
    }

    #[test]
    fn a_write_answered_by_a_gateway_has_an_unknown_outcome() {
        for (status, body) in
            [(504, "<html>Gateway Timeout</html>"), (502, ""), (500, r#"{"errors":[{"message":"boom"}]}"#)]
        {
            let e = err(status, body);
            assert!(e.contains("does not say whether the comment was added: the outcome is unknown; check it"), "{e}");
            assert!(!e.contains("try again later"), "{e}");
        }
    }

    #[test]
    fn a_write_bitbucket_refused_says_so() {
        let e = err(400, r#"{"errors":[{"message":"Text is required"}]}"#);
        assert_eq!(e, "Bitbucket refused the request: Text is required");
        let e = err(404, "<html>not found</html>");
        assert!(e.contains("outcome is unknown"), "a 404 not from Bitbucket does not prove anything: {e}");
    }

    #[test]
    fn a_read_too_long_for_a_proxy_says_what_came_back() {
        let e = super::body(&FetchOutcome::response(414, "URI Too Long"), ABOUT, None).unwrap_err().to_string();
        assert!(e.starts_with("Bitbucket (or a proxy before it) refused the request as too large (HTTP 414)"), "{e}");
    }

    #[test]
    fn an_unconfigured_server_is_one_sentence() {
        let o = FetchOutcome::failed(
            FetchErrorKind::NotConfigured,
            "no Bitbucket server is configured: set BITBUCKET_URL and BITBUCKET_TOKEN.",
        );
        assert_eq!(body_of(o), "No Bitbucket server is configured: set BITBUCKET_URL and BITBUCKET_TOKEN.");
    }

    #[test]
    fn a_sentence_that_starts_with_bb_keeps_it_lower_case() {
        let o = FetchOutcome::failed(FetchErrorKind::NotConfigured, "bb is restarting, so nothing was written");
        assert_eq!(body_of(o), "bb is restarting, so nothing was written.");
        let o = FetchOutcome::failed(FetchErrorKind::NotConfigured, "bbq is not bb");
        assert_eq!(body_of(o), "Bbq is not bb.");
    }

    #[test]
    fn a_tls_failure_says_what_to_set_not_to_try_again() {
        let o = FetchOutcome::failed(
            FetchErrorKind::Tls,
            "the certificate is not trusted: set BB_CA_FILE to that CA's certificate (PEM)",
        );
        let e = super::body(&o, ABOUT, None).unwrap_err().to_string();
        assert_eq!(
            e,
            "Bitbucket could not be reached securely (TLS): The certificate is not trusted: set BB_CA_FILE to that CA's certificate (PEM)."
        );
    }

    #[test]
    fn one_second_is_singular() {
        let o = FetchOutcome::Response(crate::fetch::FetchResponse {
            status: 429,
            body: vec![],
            retry_after_s: Some(1),
            user: None,
            decoded: None,
            credential: Default::default(),
        });
        assert_eq!(
            super::body(&o, ABOUT, None).unwrap_err().said(),
            "Bitbucket is rate limiting bb; try again in 1 second."
        );
    }
}
