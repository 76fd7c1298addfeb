//! ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1) as kube-apiserver runs it: every
//! client write of every resource — built-in or custom, main resource or subresource — is
//! matched against each policy's `matchConstraints` and each of its bindings' `matchResources`,
//! and judged by the policy's CEL `validations` with the binding's params; a failed validation
//! acts as the binding's `validationActions` say (Deny refuses the write with the policy's
//! reason, Warn adds a `Warning` header, Audit only logs).
//!
//! - [`matching`]: rules and selectors (shared with [`super::webhook`]).
//! - [`evaluate`]: params, variables, match conditions, validations, failure policy.
//! - [`kinds`]: defaults and validation of the four admissionregistration kinds.
//! - [`status`]: the loop that type-checks policies into `status.typeChecking`.

pub(crate) mod evaluate;
pub(crate) mod kinds;
pub(crate) mod matching;
pub mod status;

use serde_json::{json, Value};

use crate::auth::UserInfo;
use crate::error::Result;
use crate::registry::ResourceInfo;
use crate::request::RequestInfo;
use crate::Api;

/// The API group of policies and webhook configurations.
pub const GROUP: &str = "admissionregistration.k8s.io";

/// What admission matches and judges a request by (kube's `admission.Attributes`).
#[derive(Clone, Copy)]
pub(crate) struct Attributes<'a> {
    /// The resource written.
    pub res: &'a ResourceInfo,
    /// `CREATE`, `UPDATE` or `DELETE`.
    pub operation: &'static str,
    /// The subresource written (`status`), if any.
    pub subresource: Option<&'a str>,
    /// The object's name (empty for a create with generateName).
    pub name: &'a str,
    /// The object's namespace (empty for a cluster-scoped one).
    pub namespace: &'a str,
    /// The object to store (none for a delete).
    pub object: Option<&'a Value>,
    /// The stored object (none for a create).
    pub old_object: Option<&'a Value>,
    /// The namespace the object is in, as stored.
    pub namespace_object: Option<&'a Value>,
    /// Who writes.
    pub user: &'a UserInfo,
    /// Is the request a dry run?
    pub dry_run: bool,
    /// The other versions the resource is served at (`matchPolicy: Equivalent`).
    pub equivalent_versions: &'a [String],
}

impl Attributes<'_> {
    /// The `request` variable of CEL expressions, as kube's AdmissionRequest.
    pub(crate) fn request_json(&self) -> Value {
        let gvk =
            json!({"group": self.res.group, "version": self.res.version, "kind": self.res.kind});
        let gvr = json!({"group": self.res.group, "version": self.res.version, "resource": self.res.plural});
        let mut r = json!({
            "kind": gvk,
            "resource": gvr,
            "requestKind": gvk,
            "requestResource": gvr,
            "name": self.name,
            "namespace": self.namespace,
            "operation": self.operation,
            "userInfo": self.user_json(),
            "dryRun": self.dry_run,
        });
        if let Some(sub) = self.subresource {
            r["subResource"] = json!(sub);
            r["requestSubResource"] = json!(sub);
        }
        r
    }

    /// kube's `authentication.k8s.io/v1` UserInfo.
    pub(crate) fn user_json(&self) -> Value {
        let mut u = json!({"username": self.user.name});
        if !self.user.uid.is_empty() {
            u["uid"] = json!(self.user.uid);
        }
        if !self.user.groups.is_empty() {
            u["groups"] = json!(self.user.groups);
        }
        if !self.user.extra.is_empty() {
            u["extra"] = json!(self.user.extra);
        }
        u
    }
}

/// Policies and webhooks never judge writes of their own configuration (kube exempts them, so
/// a bad policy can always be fixed).
pub(crate) fn exempt(res: &ResourceInfo) -> bool {
    !res.custom && res.group == GROUP
}

/// Judge a client's write of `new` (over `old` for an update) by every ValidatingAdmissionPolicy
/// that matches it: mutating webhooks first (they may change `new`), then the policies, then
/// validating webhooks (kube-apiserver's order: mutating admission, then validating).
pub(crate) fn admit(
    api: &Api,
    user: &UserInfo,
    info: &RequestInfo,
    res: &ResourceInfo,
    old: Option<&Value>,
    new: &mut Value,
) -> Result<()> {
    if exempt(res) || !anything_configured(api) {
        return Ok(());
    }
    let operation = if old.is_some() { "UPDATE" } else { "CREATE" };
    let name = crate::meta::meta_str(new, "name")
        .filter(|n| !n.is_empty())
        .or(info.name.as_deref())
        .unwrap_or("")
        .to_string();
    let namespace = if res.namespaced {
        info.object_namespace().unwrap_or("").to_string()
    } else {
        String::new()
    };
    let namespace_object = namespace_object(api, &namespace);
    let equivalents = equivalent_versions(api, res);
    // Admission sees the object as it will be stored, with its defaults (kube admits the
    // decoded, defaulted object); a create's body gets them only later in the write.
    let mut current = new.clone();
    if old.is_none() {
        super::defaults::apply(res, &mut current);
    }
    let mut a = Attributes {
        res,
        operation,
        subresource: info.subresource.as_deref(),
        name: &name,
        namespace: &namespace,
        object: Some(&current),
        old_object: old,
        namespace_object: namespace_object.as_ref(),
        user,
        dry_run: super::scope::dry_run(),
        equivalent_versions: &equivalents,
    };
    let patched = super::webhook::admit(api, &a, true)?;
    if let Some(patched) = &patched {
        // Defaults a webhook's patch leaves out are applied again later in the write.
        *new = patched.clone();
        a.object = Some(patched);
    }
    evaluate::validate(api, &a)?;
    super::webhook::admit(api, &a, false).map(|_| ())
}

/// Judge a client's delete of `old` (as stored) by the policies and validating webhooks that
/// match a DELETE (kube admits deletes too; there is no object, only the old one). Returns the
/// warnings for the client (Warn bindings, webhooks).
pub(crate) fn admit_delete(
    api: &Api,
    user: &UserInfo,
    info: &RequestInfo,
    res: &ResourceInfo,
    old: &Value,
    dry_run: bool,
) -> Result<Vec<String>> {
    if exempt(res) || !anything_configured(api) {
        return Ok(Vec::new());
    }
    let (admitted, warnings) =
        super::scope::collect(dry_run, || judge_delete(api, user, info, res, old, dry_run));
    admitted.map(|()| warnings)
}

fn judge_delete(
    api: &Api,
    user: &UserInfo,
    info: &RequestInfo,
    res: &ResourceInfo,
    old: &Value,
    dry_run: bool,
) -> Result<()> {
    let old = crate::registry::storage::from_storage(res, old.clone());
    let name = crate::meta::meta_str(&old, "name")
        .unwrap_or("")
        .to_string();
    let namespace = crate::meta::meta_str(&old, "namespace")
        .unwrap_or("")
        .to_string();
    let namespace_object = namespace_object(api, &namespace);
    let equivalents = equivalent_versions(api, res);
    let a = Attributes {
        res,
        operation: "DELETE",
        subresource: info.subresource.as_deref(),
        name: &name,
        namespace: &namespace,
        object: None,
        old_object: Some(&old),
        namespace_object: namespace_object.as_ref(),
        user,
        dry_run,
        equivalent_versions: &equivalents,
    };
    evaluate::validate(api, &a)?;
    super::webhook::admit(api, &a, false).map(|_| ())
}

/// Judge a client's write of a `/scale` subresource: the policies and validating webhooks that
/// match `<resource>/scale` see the autoscaling/v1 Scale objects (`old_scale` → `new_scale`),
/// as kube admits a scale update.
pub(crate) fn admit_scale(
    api: &Api,
    user: &UserInfo,
    info: &RequestInfo,
    res: &ResourceInfo,
    old_scale: &Value,
    new_scale: &Value,
    dry_run: bool,
) -> Result<()> {
    if exempt(res) || !anything_configured(api) {
        return Ok(());
    }
    let name = info.name.clone().unwrap_or_default();
    let namespace = if res.namespaced {
        info.object_namespace().unwrap_or("").to_string()
    } else {
        String::new()
    };
    let namespace_object = namespace_object(api, &namespace);
    let equivalents = equivalent_versions(api, res);
    let a = Attributes {
        res,
        operation: "UPDATE",
        subresource: Some("scale"),
        name: &name,
        namespace: &namespace,
        object: Some(new_scale),
        old_object: Some(old_scale),
        namespace_object: namespace_object.as_ref(),
        user,
        dry_run,
        equivalent_versions: &equivalents,
    };
    evaluate::validate(api, &a)?;
    super::webhook::admit(api, &a, false).map(|_| ())
}

/// The other versions of `res`'s group that serve the same resource.
fn equivalent_versions(api: &Api, res: &ResourceInfo) -> Vec<String> {
    let snap = api.registry.snapshot();
    let Some((_, versions)) = snap.groups().iter().find(|(g, _)| *g == res.group) else {
        return Vec::new();
    };
    versions
        .iter()
        .filter(|v| **v != res.version && snap.get(&res.group, v, &res.plural).is_some())
        .cloned()
        .collect()
}

/// Is anything configured that judges writes? Most hubs have no policy and no webhook, and
/// their writes should not pay for building what judging needs.
fn anything_configured(api: &Api) -> bool {
    let snap = api.registry.snapshot();
    [
        "validatingadmissionpolicies",
        "validatingwebhookconfigurations",
        "mutatingwebhookconfigurations",
    ]
    .iter()
    .filter_map(|p| snap.get(GROUP, "v1", p))
    .any(|r| {
        !api.cache
            .list(&r.key_prefix(None), None, Some(1), |_| true)
            .0
            .is_empty()
    })
}

/// The stored namespace `name` (none for cluster-scoped objects or a namespace not found).
pub(crate) fn namespace_object(api: &Api, name: &str) -> Option<Value> {
    if name.is_empty() {
        return None;
    }
    let snap = api.registry.snapshot();
    let ns = snap.get("", "v1", "namespaces")?;
    api.cache.get(&ns.key(None, name)).map(|o| o.value())
}

#[cfg(test)]
mod tests;
