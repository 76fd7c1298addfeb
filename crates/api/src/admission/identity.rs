//! A write addresses the object of its URL: a body (or a patch's result) naming another object
//! or another namespace is refused, as kube-apiserver refuses it, instead of being quietly put
//! back or — worse — written where the body says after being authorized where the URL says.

use serde_json::Value;

use crate::error::{ApiError, Result};
use crate::meta::meta_str;
use crate::registry::ResourceInfo;
use crate::request::RequestInfo;

/// kube-apiserver's words when a body's namespace is not the URL's.
pub(crate) const NAMESPACE_MISMATCH: &str =
    "the namespace of the provided object does not match the namespace sent on the request";

/// The namespace `obj` names, if any, must be the URL's (namespaced kinds; a cluster-scoped
/// object's namespace is ignored and cleared, as there); its name, if any, must be the one the
/// URL names (`checkName`). Absent or empty fields are filled in from the URL by the writers.
pub(crate) fn check(res: &ResourceInfo, info: &RequestInfo, obj: &Value) -> Result<()> {
    check_namespace(res, info, obj)?;
    let (Some(url), Some(named)) = (info.name.as_deref(), meta_str(obj, "name")) else {
        return Ok(());
    };
    if !named.is_empty() && named != url {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({named}) does not match the name on the URL ({url})"
        )));
    }
    Ok(())
}

/// The namespace half of [`check`] (creates: the name comes from the body).
pub(crate) fn check_namespace(res: &ResourceInfo, info: &RequestInfo, obj: &Value) -> Result<()> {
    if !res.namespaced {
        return Ok(());
    }
    match meta_str(obj, "namespace") {
        Some(ns) if !ns.is_empty() && Some(ns) != info.object_namespace() => {
            Err(ApiError::bad_request(NAMESPACE_MISMATCH))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
