//! Admission of the built-in kinds the hub stores without running them (issue 21, part A):
//! what kube-apiserver's admission plugins and registry strategies do to them on a client's
//! write, beyond defaults and field validation.
//!
//! - [`priority`]: the `Priority` plugin — a new pod's priority from its PriorityClass (403 for
//!   an unknown class), one global default PriorityClass at most (403).
//! - [`certificates`]: a CertificateSigningRequest's requester is who created it; its spec never
//!   changes; approval conditions change only through `/approval`.
//! - [`runtime_class`]: the `RuntimeClass` plugin — a new pod's RuntimeClass exists (403), and
//!   its overhead and scheduling constraints become the pod's.
//! - [`default_class`]: a new Ingress or claim naming no class gets the default one.
//! - [`pods`]: `/ephemeralcontainers` changes only the pod's ephemeral containers.
//! - [`admit_delete`]: the system PriorityClasses cannot be deleted.

mod certificates;
mod default_class;
mod pods;
mod priority;
mod runtime_class;

use serde_json::Value;

use crate::auth::UserInfo;
use crate::error::Result;
use crate::registry::ResourceInfo;
use crate::request::RequestInfo;
use crate::Api;

/// Admit a client's write of `new` (`old` for an update) of one of these kinds; other kinds
/// pass untouched.
pub(crate) fn admit(
    api: &Api,
    user: &UserInfo,
    info: &RequestInfo,
    res: &ResourceInfo,
    old: Option<&Value>,
    new: &mut Value,
) -> Result<()> {
    if res.custom {
        return Ok(());
    }
    let sub = info.subresource.as_deref();
    match (res.group.as_str(), res.plural.as_str()) {
        ("", "pods") => {
            match (old, sub) {
                (Some(old), Some("ephemeralcontainers")) => {
                    pods::ephemeral_containers_only(old, new)
                }
                // Ephemeral containers change only through their subresource.
                (Some(old), None) => {
                    let eph = |o: &Value| o.pointer("/spec/ephemeralContainers").cloned();
                    if eph(old) != eph(new) {
                        let cause = crate::admission::validation::spec_change_cause(
                            &old["spec"],
                            &new["spec"],
                        );
                        return Err(crate::error::ApiError::invalid_object(
                            res,
                            new,
                            vec![cause],
                        ));
                    }
                }
                _ => {}
            }
            if old.is_none() && sub.is_none() {
                runtime_class::admit_pod(api, res, new)?;
            }
            priority::admit_pod(api, res, sub, old, new)
        }
        ("scheduling.k8s.io", "priorityclasses") if sub.is_none() => {
            priority::admit_priority_class(api, res, new)
        }
        ("certificates.k8s.io", "certificatesigningrequests") => {
            let Some(old) = old else {
                certificates::requested_by(user, new);
                return Ok(());
            };
            if let Some(why) = certificates::signer_refusal(api, user, sub, old, new) {
                let name = crate::meta::meta_str(new, "name").unwrap_or("");
                return Err(crate::admission::quota::forbidden(res, name, &why));
            }
            let causes = certificates::update(sub, old, new);
            if causes.is_empty() {
                Ok(())
            } else {
                Err(crate::error::ApiError::invalid_object(res, new, causes))
            }
        }
        ("networking.k8s.io", "ingresses") if old.is_none() && sub.is_none() => {
            default_class::ingress(api, new);
            Ok(())
        }
        ("", "persistentvolumeclaims") if old.is_none() && sub.is_none() => {
            default_class::persistent_volume_claim(api, new);
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Refuse deleting what kube-apiserver never deletes: the system PriorityClasses (403).
pub(crate) fn admit_delete(res: &ResourceInfo, name: &str) -> Result<()> {
    let system = crate::admission::validation::SYSTEM_PRIORITY_CLASSES
        .iter()
        .any(|(n, _, _)| *n == name);
    if !res.custom && res.group == "scheduling.k8s.io" && res.plural == "priorityclasses" && system
    {
        return Err(crate::admission::quota::forbidden(
            res,
            name,
            "this is a system priority class and cannot be deleted",
        ));
    }
    Ok(())
}

/// The stored objects of the built-in resource `group`/`plural` (cluster-wide).
fn stored(api: &Api, group: &str, version: &str, plural: &str) -> Vec<Value> {
    let snap = api.registry.snapshot();
    let Some(res) = snap.get(group, version, plural) else {
        return Vec::new();
    };
    let (objects, _, _) = api.cache.list(&res.key_prefix(None), None, None, |_| true);
    objects.iter().map(|o| o.value()).collect()
}
