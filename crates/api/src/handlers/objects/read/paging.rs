//! Continue tokens of paged lists, and what a page asks of history that is gone.
//!
//! A token holds the snapshot revision of the list and the last key served, so every page of
//! one list is read at the same revision. Once the store has compacted that revision the page
//! cannot be consistent any more: as kube-apiserver, the answer is 410 Expired carrying, in the
//! Status's `metadata.continue`, a token that goes on from the same key at the latest
//! revision (`rv: -1`), so a client that accepts an inconsistent list can finish it.

use axum::body::Body;
use base64::Engine;
use http::Response;
use serde_json::json;

use crate::error::{ApiError, Result};
use crate::handlers::response;

/// The revision of a token that continues at the latest revision (kube-apiserver's `-1`).
pub(super) const LATEST: i64 = -1;

/// kube-apiserver's message for a list at a revision that was compacted.
const LIST_EXPIRED: &str = "The resourceVersion for the provided list is too old.";

/// kube-apiserver's message for a continue token whose revision was compacted.
const INCONSISTENT_CONTINUE: &str = "The provided continue parameter is too old to display a \
    consistent list result. You can start a new list without the continue parameter, or use \
    the continue token in this response to retrieve the remainder of the results. Continuing \
    with the provided token results in an inconsistent list - objects that were created, \
    modified, or deleted between the time the first chunk was returned and now may show up in \
    the list.";

#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct ContinueToken {
    pub v: String,
    pub rv: i64,
    pub start: String,
}

pub(super) fn encode_continue(rv: i64, start: &str) -> String {
    let t = ContinueToken {
        v: "meta.k8s.io/v1".into(),
        rv,
        start: start.into(),
    };
    // URL-safe and unpadded like kube-apiserver's, so the token goes into a query string as is.
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(serde_json::to_vec(&t).unwrap_or_default())
}

/// Read a token, worded as kube-apiserver's 400s for a bad one.
pub(super) fn decode_continue(s: &str) -> Result<ContinueToken> {
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    let invalid = |why: &str| ApiError::bad_request(format!("invalid continue token: {why}"));
    // Tokens from before the switch to URL-safe encoding are standard base64.
    let bytes = URL_SAFE_NO_PAD
        .decode(s)
        .or_else(|_| STANDARD.decode(s))
        .map_err(|e| invalid(&format!("continue key is not valid: {e}")))?;
    let t: ContinueToken = serde_json::from_slice(&bytes)
        .map_err(|e| invalid(&format!("continue key is not valid: {e}")))?;
    if t.v != "meta.k8s.io/v1" {
        return Err(invalid(&format!(
            "continue key is not valid: server does not recognize this encoded version {}",
            t.v
        )));
    }
    if t.rv == 0 {
        return Err(invalid(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        ));
    }
    if t.start.is_empty() {
        return Err(invalid(
            "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)",
        ));
    }
    Ok(t)
}

/// A page asked of a revision the store compacted: `e` as kube-apiserver words it. `start`:
/// the key a continue token went on from (then the answer carries the inconsistent token).
pub(super) fn expired(e: ApiError, start: Option<&str>) -> Result<Response<Body>> {
    if e.code != 410 {
        return Err(e);
    }
    let Some(start) = start else {
        return Err(ApiError::gone(LIST_EXPIRED));
    };
    let mut status = ApiError::gone(INCONSISTENT_CONTINUE).to_status();
    status["metadata"] = json!({"continue": encode_continue(LATEST, start)});
    Ok(response::json(410, &status))
}
