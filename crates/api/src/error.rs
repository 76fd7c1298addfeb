//! The one place where failures become Kubernetes `Status` objects.
//!
//! Every handler returns [`ApiError`]; [`ApiError::to_status`] maps it to the HTTP code, `reason`
//! and `details` that clients (kubectl, client-go, kube-rs) switch on, e.g. `IsNotFound`,
//! `IsConflict`, `IsAlreadyExists`, `IsGone`.

use serde_json::{json, Value};

/// A failed API request, ready to be rendered as a `Status`.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// `StatusReason` (e.g. `NotFound`, `Conflict`, `Invalid`).
    pub reason: &'static str,
    /// A sentence a person can act on.
    pub message: String,
    /// `details` of the Status (name, group, kind, causes), if any.
    pub details: Option<Value>,
}

/// Result of API-layer operations.
pub type Result<T, E = ApiError> = std::result::Result<T, E>;

/// What a request was about, for `details` and messages (`deployments.apps "web" not found`).
#[derive(Debug, Clone, Default)]
pub struct Target<'a> {
    /// API group ("" for core).
    pub group: &'a str,
    /// Plural resource name.
    pub resource: &'a str,
    /// Object name, if any.
    pub name: &'a str,
}

impl Target<'_> {
    fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.resource.to_string()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }

    fn details(&self) -> Value {
        json!({"name": self.name, "group": self.group, "kind": self.resource})
    }
}

impl ApiError {
    /// An error with no details.
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 401 Unauthorized.
    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    /// 403 Forbidden with the RBAC explanation.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(403, "Forbidden", message)
    }

    /// 404 for a path that names no known resource.
    pub fn unknown_path(path: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("the server could not find the requested resource (path {path})"),
        )
    }

    /// 404 for an object.
    pub fn not_found(t: Target<'_>) -> Self {
        ApiError {
            code: 404,
            reason: "NotFound",
            message: format!("{} \"{}\" not found", t.qualified(), t.name),
            details: Some(t.details()),
        }
    }

    /// 409 AlreadyExists.
    pub fn already_exists(t: Target<'_>) -> Self {
        ApiError {
            code: 409,
            reason: "AlreadyExists",
            message: format!("{} \"{}\" already exists", t.qualified(), t.name),
            details: Some(t.details()),
        }
    }

    /// 409 Conflict from a stale resourceVersion (the message client-go and kubectl print).
    pub fn conflict(t: Target<'_>, why: &str) -> Self {
        ApiError {
            code: 409,
            reason: "Conflict",
            message: format!(
                "Operation cannot be fulfilled on {} \"{}\": {why}",
                t.qualified(),
                t.name
            ),
            details: Some(t.details()),
        }
    }

    /// 410 Expired / Gone.
    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 422 Invalid with field causes: each `(field, message)` pair becomes a cause.
    pub fn invalid(kind: &str, name: &str, group: &str, causes: Vec<(String, String)>) -> Self {
        let summary: Vec<String> = causes.iter().map(|(f, m)| format!("{f}: {m}")).collect();
        let message = if summary.len() == 1 {
            format!("{kind} \"{name}\" is invalid: {}", summary[0])
        } else {
            format!("{kind} \"{name}\" is invalid: [{}]", summary.join(", "))
        };
        let causes: Vec<Value> = causes
            .into_iter()
            .map(|(field, message)| json!({"reason": cause_reason(&message), "message": message, "field": field}))
            .collect();
        ApiError {
            code: 422,
            reason: "Invalid",
            message,
            details: Some(json!({"name": name, "group": group, "kind": kind, "causes": causes})),
        }
    }

    /// 422 Invalid for `obj` of kind `res` (its name read from the object).
    pub fn invalid_object(
        res: &crate::registry::ResourceInfo,
        obj: &Value,
        causes: Vec<(String, String)>,
    ) -> Self {
        let name = obj
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        ApiError::invalid(&res.kind, name, &res.group, causes)
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(405, "MethodNotAllowed", message)
    }

    /// 406 NotAcceptable.
    pub fn not_acceptable(message: impl Into<String>) -> Self {
        Self::new(406, "NotAcceptable", message)
    }

    /// 413 RequestEntityTooLarge.
    pub fn too_large(message: impl Into<String>) -> Self {
        Self::new(413, "RequestEntityTooLarge", message)
    }

    /// 415 UnsupportedMediaType.
    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self::new(415, "UnsupportedMediaType", message)
    }

    /// 500 InternalError; the cause is logged by the caller, the message stays generic-but-useful.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "InternalError", message)
    }

    /// 504 Timeout.
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(504, "Timeout", message)
    }

    /// A TokenRequest for the service account `name` that the token authority refused: its
    /// field error (`spec.expirationSeconds: Invalid value: …`) as a 422 `Invalid`; a failure of
    /// the random source or of signing as a 500.
    pub fn token_request(name: &str, e: crate::auth::TokenError) -> Self {
        match e {
            crate::auth::TokenError::InvalidRequest(text) => {
                let (field, message) = text.split_once(": ").unwrap_or(("spec", text.as_str()));
                Self::invalid(
                    "TokenRequest",
                    name,
                    "authentication.k8s.io",
                    vec![(field.to_string(), message.to_string())],
                )
            }
            other => {
                tracing::error!(error = %other, "issuing a service account token failed");
                Self::internal(format!("issuing the service account token failed: {other}"))
            }
        }
    }

    /// The `Status` object for this error.
    pub fn to_status(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        s
    }
}

/// The `CauseType` of a field error, from the way its message starts (a field error's message
/// begins with its type, as `field.Error.ErrorBody` writes it: `Too long: …`).
fn cause_reason(message: &str) -> &'static str {
    const TYPES: &[(&str, &str)] = &[
        ("Not found", "FieldValueNotFound"),
        ("Required value", "FieldValueRequired"),
        ("Duplicate value", "FieldValueDuplicate"),
        ("Invalid value", "FieldValueInvalid"),
        ("Unsupported value", "FieldValueNotSupported"),
        ("Forbidden", "FieldValueForbidden"),
        ("Too long", "FieldValueTooLong"),
        ("Too many", "FieldValueTooMany"),
        ("Internal error", "InternalError"),
    ];
    TYPES
        .iter()
        .find(|(prefix, _)| message.starts_with(prefix))
        .map_or("FieldValueInvalid", |(_, reason)| reason)
}

impl From<flotilla_store::Error> for ApiError {
    fn from(e: flotilla_store::Error) -> Self {
        use flotilla_store::Error as E;
        match &e {
            E::Compacted {
                requested,
                compacted,
            } => ApiError::gone(format!(
                "The resourceVersion for the provided request ({requested}) is too old: history \
                 before {compacted} has been compacted; list again to get a fresh resourceVersion"
            )),
            E::FutureRevision { requested, current } => ApiError::new(
                504,
                "Timeout",
                format!("Too large resource version: {requested}, current: {current}"),
            ),
            // 507 as WebDAV defines it (no Kubernetes reason fits; etcd's "database space
            // exceeded" reaches kube-apiserver's clients as a 500).
            E::StorageFull { .. } => {
                tracing::error!(error = %e, "storage full");
                ApiError::new(507, "InsufficientStorage", e.to_string())
            }
            _ => {
                tracing::error!(error = %e, "storage failure");
                ApiError::internal(format!("storage error: {e}"))
            }
        }
    }
}

/// A successful `Status` (e.g. the answer to deletecollection or to a delete of a kind that
/// returns Status).
pub fn success_status(details: Option<Value>) -> Value {
    let mut s = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"});
    if let Some(d) = details {
        s["details"] = d;
    }
    s
}

#[cfg(test)]
mod tests;
