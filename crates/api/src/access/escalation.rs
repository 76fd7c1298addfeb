//! RBAC writes grant nothing the writer does not hold: the server side of kube-apiserver's
//! policy-based storages for Roles, ClusterRoles and their bindings.
//!
//! Every write of one of the four kinds — create, update, patch, server-side apply, dry run or
//! not — passes [`Access::admit_rbac_write`] with the object it would store:
//!
//! - members of `system:masters` (the hub's admin and its in-process controllers) always pass;
//! - a Role or ClusterRole passes when the writer may `escalate` it, or holds every rule it
//!   grants — where the role applies: a Role's namespace, the cluster for a ClusterRole; an
//!   `aggregationRule` (now or before the write) also needs every permission, since it may
//!   gather any rule;
//! - a RoleBinding or ClusterRoleBinding passes when the writer may `bind` the role it refers to
//!   (checked in the binding's namespace, `resourceNames` honoured), or holds the role's rules in
//!   that namespace; a missing role is a 404;
//! - an update that only changes what the garbage collector changes (owner references,
//!   finalizers) always passes, so objects can still be released and deleted.
//!
//! Refusals are kube-apiserver's 403, listing the missing rules
//! ([`crate::auth::rbac::escalation`]).

use k8s_openapi::api::rbac::v1::{PolicyRule, RoleRef};
use serde_json::{json, Value};

use super::Access;
use crate::auth::rbac::escalation::RoleRefError;
use crate::auth::rbac::escalation::{bound_rules, confirm_no_escalation, full_authority};
use crate::auth::{authorize, Attributes, UserInfo};
use crate::cache::Cache;
use crate::error::{ApiError, Result, Target};
use crate::registry::ResourceInfo;
use crate::request::RequestInfo;

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// Metadata the garbage collector writes, or the server does on every write: changing only
/// these grants nothing.
const GC_FIELDS: &[&str] = &[
    "ownerReferences",
    "finalizers",
    "selfLink",
    "resourceVersion",
    "managedFields",
    "generation",
];

// === impl Access ===

impl Access {
    /// May `user` store `new` (replacing `old`, on an update) through the request `info` at
    /// `res`? Does nothing for kinds other than Roles, ClusterRoles and their bindings.
    pub(crate) fn admit_rbac_write(
        &self,
        cache: &Cache,
        user: &UserInfo,
        info: &RequestInfo,
        res: &ResourceInfo,
        old: Option<&Value>,
        new: &Value,
    ) -> Result<()> {
        if res.custom || res.group != RBAC_GROUP || user.is_privileged() {
            return Ok(());
        }
        let (is_role, namespaced) = match res.plural.as_str() {
            "roles" => (true, true),
            "clusterroles" => (true, false),
            "rolebindings" => (false, true),
            "clusterrolebindings" => (false, false),
            _ => return Ok(()),
        };
        if old.is_some_and(|old| only_gc_fields_differ(old, new)) {
            return Ok(());
        }
        let namespace = if namespaced {
            info.object_namespace().unwrap_or_default()
        } else {
            ""
        };
        let name = new
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let policy = self.policy.snapshot(cache);
        let may = |attrs: Attributes| authorize(&attrs, &*policy).is_allowed();
        let refuse = |why: String| forbidden(res, name, why);
        if is_role {
            // `escalate` on the role being written, as the request names it (kube-apiserver's
            // RoleEscalationAuthorized: no name on a create through the collection).
            let escalate = Attributes::resource(user.clone(), "escalate", RBAC_GROUP, &res.plural)
                .in_namespace(info.namespace.as_deref().unwrap_or_default())
                .named(info.name.as_deref().unwrap_or_default());
            if may(escalate) {
                return Ok(());
            }
            let rules: Vec<PolicyRule> = decode(res, name, new, "rules")?.unwrap_or_default();
            confirm_no_escalation(user, namespace, &rules, &*policy).map_err(refuse)?;
            let aggregates = |v: &Value| {
                v.pointer("/aggregationRule/clusterRoleSelectors")
                    .and_then(Value::as_array)
                    .is_some_and(|s| !s.is_empty())
            };
            if !namespaced && (aggregates(new) || old.is_some_and(aggregates)) {
                confirm_no_escalation(user, "", &full_authority(), &*policy).map_err(|_| {
                    refuse("must have cluster-admin privileges to use the aggregationRule".into())
                })?;
            }
            return Ok(());
        }
        let Some(role_ref) = decode::<RoleRef>(res, name, new, "roleRef")? else {
            // Grants nothing; validation refuses it in its own words.
            return Ok(());
        };
        let role_resource = match role_ref.kind.as_str() {
            "Role" => "roles",
            "ClusterRole" => "clusterroles",
            _ => "",
        };
        // `bind` on the referenced role, in the binding's namespace ("" for cluster bindings).
        let bind = Attributes::resource(user.clone(), "bind", &role_ref.api_group, role_resource)
            .in_namespace(namespace)
            .named(&role_ref.name);
        if !role_resource.is_empty() && may(bind) {
            return Ok(());
        }
        let rules = bound_rules(&*policy, &role_ref, namespace).map_err(|e| match e {
            RoleRefError::NotFound { resource, name } => ApiError::not_found(Target {
                group: RBAC_GROUP,
                resource,
                name: &name,
            }),
            RoleRefError::UnsupportedKind(kind) => {
                ApiError::bad_request(format!("unsupported role reference kind: {kind:?}"))
            }
        })?;
        confirm_no_escalation(user, namespace, &rules, &*policy).map_err(refuse)
    }
}

/// The field `field` of `obj` as `T` (`None` when absent); a shape the kind does not allow is a
/// 400 (validation would refuse it anyway).
fn decode<T: serde::de::DeserializeOwned>(
    res: &ResourceInfo,
    name: &str,
    obj: &Value,
    field: &str,
) -> Result<Option<T>> {
    match obj.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v.clone()).map(Some).map_err(|e| {
            ApiError::bad_request(format!("{} {name:?}: invalid {field}: {e}", res.kind))
        }),
    }
}

/// kube-apiserver's `NewForbidden(groupResource, name, err)`.
fn forbidden(res: &ResourceInfo, name: &str, why: String) -> ApiError {
    let mut e = ApiError::forbidden(format!(
        "{}.{RBAC_GROUP} {name:?} is forbidden: {why}",
        res.plural
    ));
    e.details = Some(json!({"name": name, "group": RBAC_GROUP, "kind": res.plural}));
    e
}

/// Are `old` and `new` the same but for [`GC_FIELDS`]?
fn only_gc_fields_differ(old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            for f in GC_FIELDS {
                meta.remove(*f);
            }
        }
        v
    };
    strip(old) == strip(new)
}

#[cfg(test)]
mod tests;
