//! Query parameters of API requests (`ListOptions`, `CreateOptions`, `PatchOptions`, `DeleteOptions`).

use crate::error::{ApiError, Result};

/// `fieldValidation` levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    /// Unknown or duplicate fields fail the request.
    Strict,
    /// Unknown fields are dropped and reported as warnings (the default).
    #[default]
    Warn,
    /// Unknown fields are dropped silently.
    Ignore,
}

/// All the query parameters the hub understands, parsed once.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// `labelSelector`.
    pub label_selector: Option<String>,
    /// `fieldSelector`.
    pub field_selector: Option<String>,
    /// `limit` (0 = unlimited).
    pub limit: Option<usize>,
    /// `continue` token.
    pub continue_token: Option<String>,
    /// `resourceVersion`.
    pub resource_version: Option<String>,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<String>,
    /// `watch=true`.
    pub watch: bool,
    /// `allowWatchBookmarks`.
    pub allow_bookmarks: bool,
    /// `timeoutSeconds`.
    pub timeout_seconds: Option<u64>,
    /// `sendInitialEvents`.
    pub send_initial_events: Option<bool>,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `fieldManager`.
    pub field_manager: Option<String>,
    /// `fieldValidation`.
    pub field_validation: FieldValidation,
    /// `force` (server-side apply).
    pub force: bool,
    /// `propagationPolicy`.
    pub propagation_policy: Option<String>,
    /// `gracePeriodSeconds`.
    pub grace_period_seconds: Option<i64>,
    /// `orphanDependents` (deprecated form of propagationPolicy=Orphan).
    pub orphan_dependents: Option<bool>,
    /// `includeObject` for Table output (None, Metadata, Object).
    pub include_object: Option<String>,
}

fn parse_bool(name: &str, v: &str) -> Result<bool> {
    match v {
        "true" | "1" | "True" => Ok(true),
        "false" | "0" | "False" | "" => Ok(false),
        _ => Err(ApiError::bad_request(format!(
            "invalid value {v:?} for {name}: want true or false"
        ))),
    }
}

impl Query {
    /// Parse a raw query string.
    pub fn parse(raw: Option<&str>) -> Result<Query> {
        let mut q = Query::default();
        let Some(raw) = raw else { return Ok(q) };
        for (k, v) in form_urlencoded::parse(raw.as_bytes()) {
            let v = v.into_owned();
            match k.as_ref() {
                "labelSelector" if !v.is_empty() => q.label_selector = Some(v),
                "fieldSelector" if !v.is_empty() => q.field_selector = Some(v),
                "limit" => {
                    let n: i64 = v.parse().map_err(|_| {
                        ApiError::bad_request(format!(
                            "invalid limit {v:?}: want a non-negative integer"
                        ))
                    })?;
                    q.limit = (n > 0).then_some(n as usize);
                }
                "continue" if !v.is_empty() => q.continue_token = Some(v),
                "resourceVersion" if !v.is_empty() => q.resource_version = Some(v),
                "resourceVersionMatch" if !v.is_empty() => q.resource_version_match = Some(v),
                "watch" => q.watch = parse_bool("watch", &v)?,
                "allowWatchBookmarks" => q.allow_bookmarks = parse_bool("allowWatchBookmarks", &v)?,
                "timeoutSeconds" => {
                    q.timeout_seconds = Some(v.parse().map_err(|_| {
                        ApiError::bad_request(format!("invalid timeoutSeconds {v:?}"))
                    })?)
                }
                "sendInitialEvents" => {
                    q.send_initial_events = Some(parse_bool("sendInitialEvents", &v)?)
                }
                "dryRun" => match v.as_str() {
                    "All" => q.dry_run = true,
                    "" => {}
                    other => {
                        return Err(ApiError::bad_request(format!(
                            "invalid dryRun value {other:?}: the only supported value is \"All\""
                        )))
                    }
                },
                "fieldManager" if !v.is_empty() => {
                    if v.len() > 128 {
                        return Err(ApiError::bad_request(
                            "fieldManager is too long: at most 128 characters",
                        ));
                    }
                    q.field_manager = Some(v)
                }
                "fieldValidation" => {
                    q.field_validation = match v.as_str() {
                        "Strict" => FieldValidation::Strict,
                        "Warn" | "" => FieldValidation::Warn,
                        "Ignore" => FieldValidation::Ignore,
                        other => {
                            return Err(ApiError::bad_request(format!(
                                "invalid fieldValidation {other:?}: want Strict, Warn or Ignore"
                            )))
                        }
                    }
                }
                "force" => q.force = parse_bool("force", &v)?,
                "propagationPolicy" if !v.is_empty() => q.propagation_policy = Some(v),
                "gracePeriodSeconds" => q.grace_period_seconds = v.parse().ok(),
                "orphanDependents" => {
                    q.orphan_dependents = Some(parse_bool("orphanDependents", &v)?)
                }
                "includeObject" if !v.is_empty() => q.include_object = Some(v),
                _ => {}
            }
        }
        Ok(q)
    }
}

#[cfg(test)]
mod tests;
