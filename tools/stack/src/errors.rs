//! Bitbucket's error responses: `{"errors":[{"context", "message", "exceptionName", ...extra}]}`.
//!
//! Source: reference "Conventions" [rec]: errors carry `context` (null or a field), `message` and `exceptionName`;
//! 401 is used both for "not logged in" and "not permitted" (AuthorisationException); 404 NoSuch…Exception;
//! 409 for stale versions, vetoed merges and duplicate pull requests, each with its extra fields.

use crate::exchange::Response;
use serde_json::{Value, json};

/// Exception names Bitbucket uses, by the situation they name.
pub mod exception {
    /// Credentials were given but are wrong.
    pub const BAD_CREDENTIALS: &str = "com.atlassian.bitbucket.auth.IncorrectPasswordAuthenticationException";
    /// Not logged in, or not permitted.
    pub const NOT_PERMITTED: &str = "com.atlassian.bitbucket.AuthorisationException";
    /// A project that does not exist.
    pub const NO_SUCH_PROJECT: &str = "com.atlassian.bitbucket.project.NoSuchProjectException";
    /// A repository that does not exist.
    pub const NO_SUCH_REPOSITORY: &str = "com.atlassian.bitbucket.repository.NoSuchRepositoryException";
    /// A pull request that does not exist.
    pub const NO_SUCH_PULL_REQUEST: &str = "com.atlassian.bitbucket.pull.NoSuchPullRequestException";
    /// A comment that does not exist.
    pub const NO_SUCH_COMMENT: &str = "com.atlassian.bitbucket.comment.NoSuchCommentException";
    /// A commit that does not exist.
    pub const NO_SUCH_COMMIT: &str = "com.atlassian.bitbucket.commit.NoSuchCommitException";
    /// A branch or tag that does not exist.
    pub const NO_SUCH_REF: &str = "com.atlassian.bitbucket.repository.NoSuchBranchException";
    /// A user that does not exist.
    pub const NO_SUCH_USER: &str = "com.atlassian.bitbucket.user.NoSuchUserException";
    /// A path a revision does not hold (browse, raw, files). [assumed: the name, after Bitbucket's content API]
    pub const NO_SUCH_PATH: &str = "com.atlassian.bitbucket.content.NoSuchPathException";
    /// Code search without a search server. [assumed]
    pub const SEARCH_UNAVAILABLE: &str = "com.atlassian.bitbucket.search.SearchUnavailableException";
    /// A code search query that cannot be run. [assumed]
    pub const INVALID_SEARCH_QUERY: &str = "com.atlassian.bitbucket.search.InvalidSearchQueryException";
    /// A path that names no resource.
    pub const NO_SUCH_RESOURCE: &str = "com.sun.jersey.api.NotFoundException";
    /// A stale pull request version.
    pub const PR_OUT_OF_DATE: &str = "com.atlassian.bitbucket.pull.PullRequestOutOfDateException";
    /// A stale comment version.
    pub const COMMENT_OUT_OF_DATE: &str = "com.atlassian.bitbucket.comment.CommentOutOfDateException";
    /// A merge stopped by a merge check.
    pub const MERGE_VETOED: &str = "com.atlassian.bitbucket.pull.PullRequestMergeVetoedException";
    /// An open pull request already exists for the branch pair.
    pub const DUPLICATE_PR: &str = "com.atlassian.bitbucket.pull.DuplicatePullRequestException";
    /// An operation the pull request's state does not allow.
    pub const ILLEGAL_PR_STATE: &str = "com.atlassian.bitbucket.pull.IllegalPullRequestStateException";
    /// The author tried to review their own pull request. [assumed: the name; the 400 is [spec]]
    pub const INVALID_PARTICIPANT: &str = "com.atlassian.bitbucket.pull.InvalidPullRequestParticipantException";
    /// A request body that fails validation.
    pub const VALIDATION: &str = "com.atlassian.bitbucket.validation.ArgumentValidationException";
    /// A tag name already in use.
    pub const DUPLICATE_TAG: &str = "com.atlassian.bitbucket.repository.DuplicateTagException";
}

/// An error response with one error and no extra fields.
pub fn error(status: u16, exception: Option<&str>, message: &str) -> Response {
    error_with(status, exception, None, message, Value::Null)
}

/// An error response with one error whose `context` names a field.
pub fn field_error(field: &str, message: &str) -> Response {
    error_with(400, Some(exception::VALIDATION), Some(field), message, Value::Null)
}

/// An error response with one error carrying `extra` fields (an object) beside the usual three.
pub fn error_with(
    status: u16,
    exception: Option<&str>,
    context: Option<&str>,
    message: &str,
    extra: Value,
) -> Response {
    let mut one = json!({ "context": context, "message": message, "exceptionName": exception });
    if let (Some(obj), Value::Object(more)) = (one.as_object_mut(), extra) {
        obj.extend(more);
    }
    Response::json(status, &json!({ "errors": [one] }))
}

/// 404 for a path the stack does not serve.
pub fn no_such_resource(path: &str) -> Response {
    error(404, Some(exception::NO_SUCH_RESOURCE), &format!("No resource is served at {path}."))
}

/// 400 for a body that is not what the endpoint takes.
pub fn bad_request(message: &str) -> Response {
    error(400, Some(exception::VALIDATION), message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_carries_context_message_exception_name_and_extras() {
        let r = error_with(409, Some(exception::PR_OUT_OF_DATE), None, "stale", json!({"currentVersion": 3}));
        assert_eq!(r.status, 409);
        let e = &r.body_json()["errors"][0];
        assert_eq!(e["context"], Value::Null);
        assert_eq!(e["message"], "stale");
        assert_eq!(e["exceptionName"], exception::PR_OUT_OF_DATE);
        assert_eq!(e["currentVersion"], 3);
    }
}
