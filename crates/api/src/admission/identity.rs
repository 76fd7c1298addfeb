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
mod tests {
    use http::Method;
    use serde_json::json;

    use super::*;
    use crate::registry::Registry;

    /// (resource, URL, body metadata, refusal message if refused)
    #[test]
    fn a_body_names_the_object_of_its_url() {
        let snap = Registry::new().snapshot();
        let cms = snap.get("", "v1", "configmaps").cloned().unwrap();
        let nss = snap.get("", "v1", "namespaces").cloned().unwrap();
        let cm = "/api/v1/namespaces/a/configmaps/x";
        let renamed = "the name of the object (y) does not match the name on the URL (x)";
        let cases = [
            (&cms, cm, json!({"name": "x", "namespace": "a"}), None),
            (&cms, cm, json!({}), None),
            (&cms, cm, json!({"name": "", "namespace": ""}), None),
            (&cms, cm, json!({"name": "y"}), Some(renamed)),
            (
                &cms,
                cm,
                json!({"namespace": "b"}),
                Some(NAMESPACE_MISMATCH),
            ),
            (&nss, "/api/v1/namespaces/x", json!({"name": "x"}), None),
            // Cluster-scoped: a namespace in the body is cleared, not refused.
            (
                &nss,
                "/api/v1/namespaces/x",
                json!({"name": "x", "namespace": "q"}),
                None,
            ),
            (
                &nss,
                "/api/v1/namespaces/x",
                json!({"name": "y"}),
                Some(renamed),
            ),
        ];
        for (res, path, meta, refused) in cases {
            let info = RequestInfo::parse(&Method::PUT, path, false);
            let got = check(res, &info, &json!({ "metadata": meta }));
            assert_eq!(
                got.as_ref().err().map(|e| (e.code, e.message.as_str())),
                refused.map(|m| (400, m)),
                "{path} {meta}"
            );
        }
    }
}
