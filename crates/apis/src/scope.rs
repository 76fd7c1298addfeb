//! What a propagation may reach: one set of rules for the hub's admission, the binding
//! controller and the push workers, so a refusal reads the same wherever it is met.
//!
//! Delivery runs with cluster-admin in every member, so hub RBAC on the policy and binding
//! kinds is all that stands between a namespace user and the members. These rules keep a
//! namespaced object's reach inside its namespace:
//!
//! * a `ResourceBinding` propagates only objects of its own namespace ([`binding_reference`]);
//!   cluster-scoped objects and other namespaces need a `ClusterResourceBinding` (made for a
//!   `ClusterPropagationPolicy`), which needs cluster-level permission on the hub;
//! * nothing of the hub's own is propagated: its namespaces (`flotilla-system`, the execution
//!   namespaces) hold member credentials and Works, its API groups are the control plane
//!   ([`hub_internal`]);
//! * overrides never change what an object is: its apiVersion, kind, name, namespace or
//!   generateName ([`touches_identity`], [`identity_change`]); they may change its content.
//!   Other server-set metadata (uid, ownerReferences, ...) is stripped before delivery anyway;
//! * a push member's credential Secret lives in `flotilla-system` ([`push_secret_namespace`]).

use serde_json::Value;

use crate::names::{EXECUTION_NAMESPACE_PREFIX, SYSTEM_NAMESPACE};

/// The identity fields of a manifest: their names (as field paths) and JSON pointers.
pub const IDENTITY_FIELDS: [(&str, &str); 5] = [
    ("apiVersion", "/apiVersion"),
    ("kind", "/kind"),
    ("metadata.name", "/metadata/name"),
    ("metadata.namespace", "/metadata/namespace"),
    ("metadata.generateName", "/metadata/generateName"),
];

/// Why an overrider may not write at a pointer, for messages.
pub const IDENTITY_REASON: &str = "overriders may not change an object's identity \
     (apiVersion, kind, metadata.name, metadata.namespace, metadata.generateName); \
     propagate another object instead";

/// Whether the hub's own namespace, or a cluster's execution namespace.
pub fn is_hub_namespace(namespace: &str) -> bool {
    namespace == SYSTEM_NAMESPACE || namespace.starts_with(EXECUTION_NAMESPACE_PREFIX)
}

/// Why an object of `api_version` in `namespace` is never propagated (it belongs to the hub),
/// or `None`.
pub fn hub_internal(api_version: &str, namespace: Option<&str>) -> Option<String> {
    let group = api_version.split_once('/').map_or("", |(g, _)| g);
    if group == "flotilla.io" || group.ends_with(".flotilla.io") {
        return Some(format!(
            "objects of flotilla's own API group {group} are never propagated"
        ));
    }
    match namespace {
        Some(ns) if is_hub_namespace(ns) => Some(format!(
            "objects of the hub's own namespace {ns} are never propagated"
        )),
        _ => None,
    }
}

/// Why a `ResourceBinding` in `binding_namespace` may not propagate an object in
/// `resource_namespace` (`None`: a cluster-scoped object), or `None` when it may.
pub fn binding_reference(
    binding_namespace: &str,
    resource_namespace: Option<&str>,
) -> Option<String> {
    match resource_namespace.filter(|ns| !ns.is_empty()) {
        Some(ns) if ns == binding_namespace => None,
        Some(ns) => Some(format!(
            "a ResourceBinding in namespace {binding_namespace} propagates only objects of \
             namespace {binding_namespace}, not of {ns}; other namespaces need a \
             ClusterPropagationPolicy"
        )),
        None => Some(format!(
            "a ResourceBinding in namespace {binding_namespace} propagates only objects of \
             namespace {binding_namespace}; cluster-scoped objects need a \
             ClusterPropagationPolicy"
        )),
    }
}

/// Whether writing at JSON pointer `pointer` changes an identity field: the field itself or
/// an object holding one (`/metadata`, the whole object).
pub fn touches_identity(pointer: &str) -> bool {
    if pointer.is_empty() {
        return true;
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return false;
    };
    let tokens: Vec<String> = rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect();
    match tokens.as_slice() {
        [first, ..] if first == "apiVersion" || first == "kind" => true,
        [meta] if meta == "metadata" => true,
        [meta, field, ..] if meta == "metadata" => {
            matches!(field.as_str(), "name" | "namespace" | "generateName")
        }
        _ => false,
    }
}

/// Only the identity fields of `obj`, for a later [`identity_change`] without keeping a
/// copy of the whole object.
pub fn identity(obj: &Value) -> Value {
    let mut out = serde_json::json!({});
    for (_, pointer) in IDENTITY_FIELDS {
        if let Some(v) = obj.pointer(pointer) {
            let mut at = &mut out;
            for token in pointer.split('/').skip(1) {
                at = &mut at[token];
            }
            *at = v.clone();
        }
    }
    out
}

/// How `after` differs from `before` in an identity field (`field: "a" → "b"`), or `None`.
pub fn identity_change(before: &Value, after: &Value) -> Option<String> {
    IDENTITY_FIELDS.iter().find_map(|(field, pointer)| {
        let (b, a) = (before.pointer(pointer), after.pointer(pointer));
        (b != a).then(|| {
            let show = |v: Option<&Value>| v.map_or_else(|| "nothing".to_owned(), Value::to_string);
            format!("{field}: {} → {}", show(b), show(a))
        })
    })
}

/// Why a push member's credential may not be read from a Secret in `namespace`, or `None`.
pub fn push_secret_namespace(namespace: &str) -> Option<String> {
    (namespace != SYSTEM_NAMESPACE).then(|| {
        format!(
            "a push member's credential Secret must be in {SYSTEM_NAMESPACE}, not in \
             {namespace:?} (`flotilla join` puts it there)"
        )
    })
}

#[cfg(test)]
mod tests;
