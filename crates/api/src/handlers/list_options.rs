//! `ListOptions` as kube-apiserver 1.32 reads them for LIST and WATCH, before any data is read:
//! the watch-list defaults (WatchList is on by default there), the checks that answer 422
//! `ListOptions.meta.k8s.io "" is invalid`, and the media type a watch-list may be served in
//! (never a Table: 406 when the client accepts nothing else).
//!
//! A watch-list (`watch=true&sendInitialEvents=true&allowWatchBookmarks=true`) streams the
//! state as ADDED events, then a BOOKMARK annotated `k8s.io/initial-events-end`, then changes;
//! client-go's WatchListClient builds informers on it instead of a LIST.

use crate::error::{ApiError, Result};
use crate::request::{negotiate, Query, Want};

/// The `resourceVersionMatch` value a watch-list needs, and the one a LIST may use for "at
/// least this fresh".
pub(crate) const NOT_OLDER_THAN: &str = "NotOlderThan";
/// The `resourceVersionMatch` value for a LIST at exactly one revision.
pub(crate) const EXACT: &str = "Exact";

/// Default and check `q` as kube-apiserver does for a LIST or WATCH request, then pick what
/// the answer is made of from `accept`. `custom`: the resource is a custom resource (served
/// without protobuf, which the 406 message lists).
pub(crate) fn prepare(q: &mut Query, accept: Option<&str>, custom: bool) -> Result<Want> {
    set_defaults(q);
    validate(q)?;
    if !is_watch_list(q) {
        return Ok(negotiate(accept));
    }
    without_table(accept, custom)
}

/// What an answer that has no Table form (a watch-list; a resource that is only created, as
/// the reviews) is made of: the first alternative of `accept` that is not a Table, or 406 with
/// the media types kube-apiserver lists when there is none.
pub(crate) fn without_table(accept: Option<&str>, custom: bool) -> Result<Want> {
    first_but_table(accept).ok_or_else(|| {
        let mut types = vec!["application/json", "application/yaml"];
        if !custom {
            types.push("application/vnd.kubernetes.protobuf");
        }
        ApiError::not_acceptable(format!(
            "only the following media types are accepted: {}",
            types.join(", ")
        ))
    })
}

/// A watch from "now" (`resourceVersion` unset or `"0"`) that says nothing of initial events
/// is a watch-list: it gets the initial state (as it always did) and, with bookmarks allowed,
/// the bookmark that ends it.
fn set_defaults(q: &mut Query) {
    if !q.watch || q.send_initial_events.is_some() || q.resource_version_match.is_some() {
        return;
    }
    if matches!(q.resource_version.as_deref(), None | Some("0")) {
        q.send_initial_events = Some(true);
        q.resource_version_match = Some(NOT_OLDER_THAN.into());
    }
}

/// Does this request stream its initial state ended by a bookmark?
pub(crate) fn is_watch_list(q: &Query) -> bool {
    q.watch && q.send_initial_events == Some(true) && q.allow_bookmarks
}

/// kube-apiserver's `ValidateListOptions`: each problem as a field cause, all in one 422.
fn validate(q: &Query) -> Result<()> {
    let forbidden = |field: &str, why: &str| (field.to_string(), format!("Forbidden: {why}"));
    let unsupported = |v: &str, supported: &str| {
        (
            "resourceVersionMatch".to_string(),
            format!("Unsupported value: \"{v}\": supported values: {supported}"),
        )
    };
    let rvm = q.resource_version_match.as_deref();
    let mut causes = Vec::new();
    if q.watch {
        if q.send_initial_events.is_some() && rvm != Some(NOT_OLDER_THAN) {
            causes.push(forbidden(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if let Some(m) = rvm {
            if q.send_initial_events.is_none() {
                causes.push(forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ));
            }
            if m != NOT_OLDER_THAN {
                causes.push(unsupported(m, "\"NotOlderThan\""));
            }
            if q.continue_token.is_some() {
                causes.push(forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
        }
    } else {
        if let Some(m) = rvm {
            if q.resource_version.is_none() {
                causes.push(forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            if q.continue_token.is_some() {
                causes.push(forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
            if m != EXACT && m != NOT_OLDER_THAN {
                causes.push(unsupported(m, "\"Exact\", \"NotOlderThan\", \"\""));
            }
            if m == EXACT && q.resource_version.as_deref() == Some("0") {
                causes.push(forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        if q.send_initial_events.is_some() {
            causes.push(forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for list",
            ));
        }
    }
    if causes.is_empty() {
        return Ok(());
    }
    let mut e = ApiError::invalid("ListOptions", "", "meta.k8s.io", causes);
    // kube-apiserver names the kind with its group here: `ListOptions.meta.k8s.io "" is invalid`.
    e.message = e
        .message
        .replacen("ListOptions", "ListOptions.meta.k8s.io", 1);
    Err(e)
}

/// The first alternative of `accept` the hub serves that is not a Table; `None` when there is
/// none.
fn first_but_table(accept: Option<&str>) -> Option<Want> {
    let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
        return Some(Want::Object);
    };
    accept
        .split(',')
        .map(str::trim)
        .filter(|alt| !alt.contains("as=Table"))
        .find_map(|alt| {
            let (mime, _) = alt.split_once(';').unwrap_or((alt, ""));
            let servable = matches!(
                mime.trim(),
                "application/json"
                    | "application/yaml"
                    | "application/vnd.kubernetes.protobuf"
                    | "application/*"
                    | "*/*"
            );
            servable.then(|| negotiate(Some(alt)))
        })
}

#[cfg(test)]
mod tests;
