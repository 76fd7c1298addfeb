//! The authentication reviews: SelfSubjectReview (the caller as the hub authenticated it) and
//! TokenReview (whom a token authenticates, for which audiences).

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{json, Value};

use super::Review;
use crate::access::Authenticated;
use crate::auth::UserInfo;
use crate::error::{ApiError, Result};

/// The SelfSubjectReview answer: the caller's `userInfo`, stamped now as kube-apiserver does.
pub(super) fn self_subject(review: Review, caller: &UserInfo, now: DateTime<Utc>) -> Value {
    json!({
        "kind": review.kind(),
        "apiVersion": review.api_version(),
        "metadata": {"creationTimestamp": now.to_rfc3339_opts(SecondsFormat::Secs, true)},
        "status": {"userInfo": caller},
    })
}

/// A TokenReview's `spec.token` (required: 400 as in Kubernetes) and `spec.audiences`.
pub(super) fn token_spec(body: &Value) -> Result<(String, Vec<String>)> {
    let spec = body.get("spec").unwrap_or(&Value::Null);
    let token = spec.get("token").and_then(Value::as_str).unwrap_or("");
    if token.is_empty() {
        return Err(ApiError::bad_request(
            "token is required for TokenReview in authentication",
        ));
    }
    let audiences = match spec.get("audiences") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|a| a.as_str().map(String::from))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| ApiError::bad_request("spec.audiences must be a list of strings"))?,
        Some(_) => {
            return Err(ApiError::bad_request(
                "spec.audiences must be a list of strings",
            ))
        }
    };
    Ok((token.to_string(), audiences))
}

/// `TokenReviewStatus`: the user and audiences of a token that authenticates, or the error.
pub(super) fn token_status(
    outcome: std::result::Result<(Authenticated, Vec<String>), String>,
) -> Value {
    match outcome {
        Ok((who, audiences)) => json!({
            "authenticated": true,
            "user": who.user,
            "audiences": audiences,
        }),
        Err(error) => json!({"user": {}, "error": error}),
    }
}
