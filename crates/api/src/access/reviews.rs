//! Access reviews: the create-only resources that ask the hub's own authenticator and
//! authorizer a question and answer it in the object's `status`, storing nothing.
//!
//! - `authorization.k8s.io/v1`: SelfSubjectAccessReview (may I?), SubjectAccessReview (may
//!   they?), LocalSubjectAccessReview (may they, in this namespace?) and SelfSubjectRulesReview
//!   (what may I do in a namespace?). `kubectl auth can-i` and `can-i --list` send these.
//! - `authentication.k8s.io/v1`: SelfSubjectReview (who am I? — `kubectl auth whoami`) and
//!   TokenReview (who does this token authenticate?).
//!
//! The answers come from the very code that judges requests ([`Access::authenticate_token`],
//! the RBAC policy snapshot), so a review never disagrees with what a request would meet.
//! Who may create these is ordinary RBAC: `system:basic-user` grants the self reviews to every
//! authenticated user, `system:auth-delegator` the others (bind it to who needs them).

mod identity;
mod subject;

use chrono::Utc;
use serde_json::Value;

use super::Access;
use crate::auth::{authorize, Attributes, Decision, UserInfo};
use crate::cache::Cache;
use crate::error::{ApiError, Result};

/// Which review a request creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Review {
    /// `selfsubjectaccessreviews.authorization.k8s.io`.
    SelfSubjectAccess,
    /// `subjectaccessreviews.authorization.k8s.io`.
    SubjectAccess,
    /// `localsubjectaccessreviews.authorization.k8s.io` (namespaced).
    LocalSubjectAccess,
    /// `selfsubjectrulesreviews.authorization.k8s.io`.
    SelfSubjectRules,
    /// `selfsubjectreviews.authentication.k8s.io`.
    SelfSubject,
    /// `tokenreviews.authentication.k8s.io`.
    Token,
}

/// `authorization.k8s.io`.
pub(crate) const AUTHORIZATION: &str = "authorization.k8s.io";
/// `authentication.k8s.io`.
pub(crate) const AUTHENTICATION: &str = "authentication.k8s.io";

// === impl Review ===

impl Review {
    /// Every review, for the registry.
    pub(crate) const ALL: [Review; 6] = [
        Review::SelfSubjectAccess,
        Review::SubjectAccess,
        Review::LocalSubjectAccess,
        Review::SelfSubjectRules,
        Review::SelfSubject,
        Review::Token,
    ];

    /// The review served at `group`/`plural`, if that is one.
    pub(crate) fn of(group: &str, plural: &str) -> Option<Review> {
        Review::ALL
            .into_iter()
            .find(|r| r.group() == group && r.plural() == plural)
    }

    /// The API group.
    pub(crate) fn group(self) -> &'static str {
        match self {
            Review::SelfSubject | Review::Token => AUTHENTICATION,
            _ => AUTHORIZATION,
        }
    }

    /// The kind.
    pub(crate) fn kind(self) -> &'static str {
        match self {
            Review::SelfSubjectAccess => "SelfSubjectAccessReview",
            Review::SubjectAccess => "SubjectAccessReview",
            Review::LocalSubjectAccess => "LocalSubjectAccessReview",
            Review::SelfSubjectRules => "SelfSubjectRulesReview",
            Review::SelfSubject => "SelfSubjectReview",
            Review::Token => "TokenReview",
        }
    }

    /// The resource (plural).
    pub(crate) fn plural(self) -> &'static str {
        match self {
            Review::SelfSubjectAccess => "selfsubjectaccessreviews",
            Review::SubjectAccess => "subjectaccessreviews",
            Review::LocalSubjectAccess => "localsubjectaccessreviews",
            Review::SelfSubjectRules => "selfsubjectrulesreviews",
            Review::SelfSubject => "selfsubjectreviews",
            Review::Token => "tokenreviews",
        }
    }

    /// `group/v1`.
    pub(crate) fn api_version(self) -> String {
        format!("{}/v1", self.group())
    }

    /// 422 with kube's causes, naming this kind.
    fn invalid(self, causes: Vec<(String, String)>) -> ApiError {
        ApiError::invalid(self.kind(), "", self.group(), causes)
    }
}

// === impl Access ===

impl Access {
    /// The authorizer's decision for `attrs`, as a request with them would meet it.
    pub(crate) fn decide(&self, cache: &Cache, attrs: &Attributes) -> Decision {
        authorize(attrs, &*self.policy.snapshot(cache))
    }

    /// Answer `review`, created by `caller` (in `namespace`, for a namespaced review) with
    /// `body`: the review as sent, with its `status` filled in.
    pub(crate) async fn review(
        &self,
        cache: &Cache,
        review: Review,
        caller: &UserInfo,
        namespace: Option<&str>,
        mut body: Value,
    ) -> Result<Value> {
        if !body.is_object() {
            return Err(ApiError::bad_request(
                "the request body must be a JSON object",
            ));
        }
        body["kind"] = Value::from(review.kind());
        body["apiVersion"] = Value::from(review.api_version());
        match review {
            Review::SelfSubjectAccess | Review::SubjectAccess | Review::LocalSubjectAccess => {
                let attrs = subject::attributes(review, &mut body, caller, namespace)?;
                body["status"] = subject::status(&self.decide(cache, &attrs));
                Ok(body)
            }
            Review::SelfSubjectRules => {
                let ns = subject::rules_namespace(&body)?;
                let policy = self.policy.snapshot(cache);
                let (rules, errors) = crate::auth::rbac::rules_for(caller, &ns, &*policy);
                Ok(subject::rules_review(review, &ns, &rules, &errors))
            }
            Review::SelfSubject => Ok(identity::self_subject(review, caller, Utc::now())),
            Review::Token => {
                let (token, audiences) = identity::token_spec(&body)?;
                let outcome = self.authenticate_token(cache, &token, &audiences).await;
                body["status"] = identity::token_status(outcome);
                Ok(body)
            }
        }
    }
}

#[cfg(test)]
mod tests;
