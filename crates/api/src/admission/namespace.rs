//! NamespaceLifecycle: a namespaced object is created only in a namespace that exists and is
//! not being deleted.

use serde_json::json;

use crate::error::{ApiError, Result, Target};
use crate::registry::ResourceInfo;
use crate::Api;

/// Namespaced writes need an existing namespace that isn't being deleted. `name` is the
/// object's (empty for generateName, as kube-apiserver's admission sees it).
pub(crate) async fn check_namespace(
    api: &Api,
    res: &ResourceInfo,
    ns: Option<&str>,
    name: &str,
) -> Result<()> {
    let Some(ns) = ns.filter(|_| res.namespaced) else {
        return Ok(());
    };
    let nskey = format!("/registry/core/namespaces/{ns}");
    let mut found = api.cache.get(&nskey);
    if found.is_none() {
        // The namespace may have been created a moment ago (like NamespaceLifecycle's live
        // lookup on an informer miss): only a consistent read may say it doesn't exist.
        api.cache.sync().await?;
        found = api.cache.get(&nskey);
    }
    let Some(n) = found else {
        return Err(ApiError::not_found(Target {
            group: "",
            resource: "namespaces",
            name: ns,
        }));
    };
    if n.value().pointer("/metadata/deletionTimestamp").is_some() {
        return Err(terminating(res, ns, name));
    }
    Ok(())
}

/// kube-apiserver's NamespaceLifecycle refusal: `configmaps "x" is forbidden: unable to …`.
pub(crate) fn terminating(res: &ResourceInfo, ns: &str, name: &str) -> ApiError {
    let resource = if res.group.is_empty() {
        res.plural.clone()
    } else {
        format!("{}.{}", res.plural, res.group)
    };
    let subject = if name.is_empty() {
        resource
    } else {
        format!("{resource} {name:?}")
    };
    ApiError {
        details: Some(json!({"name": name, "group": res.group, "kind": res.plural})),
        ..ApiError::forbidden(format!(
            "{subject} is forbidden: unable to create new content in namespace {ns} because it is being terminated"
        ))
    }
}
