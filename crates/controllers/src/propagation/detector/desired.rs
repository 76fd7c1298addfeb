//! The binding the detector wants for an object under the policy chosen for it, and which
//! objects and kinds it looks at: functions of plain values.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use flotilla_apis::names::{EXECUTION_NAMESPACE_PREFIX, SYSTEM_NAMESPACE};
use flotilla_apis::policy::v1alpha1::{ClusterPropagationPolicy, PropagationPolicy};
use flotilla_apis::quantity;
use kube::Resource;
use serde_json::{json, Value};

use crate::propagation::binding::{
    BINDING_FINALIZER, DETECTOR_HASH_ANNOTATION, ORPHAN_ANNOTATION, TEMPLATE_HASH_ANNOTATION,
};
use crate::propagation::select::Chosen;
use crate::propagation::workload::{binding_name, fnv64, template_hash, Sizing};

/// Namespaces whose objects are never propagated: the hub's own and Kubernetes' system ones.
pub fn excluded_namespace(ns: &str) -> bool {
    ns == SYSTEM_NAMESPACE
        || ns.starts_with(EXECUTION_NAMESPACE_PREFIX)
        || matches!(ns, "kube-system" | "kube-public" | "kube-node-lease")
}

/// Objects every Kubernetes cluster keeps for itself, which the hub has too: never propagated,
/// or the hub's copy would overwrite the member's own (its CA in `kube-root-ca.crt`, its API
/// server's address in `default/kubernetes`). Each member's own control plane keeps them.
pub fn kept_by_each_cluster(
    api_version: &str,
    kind: &str,
    namespace: Option<&str>,
    name: &str,
) -> bool {
    match (api_version, kind, name) {
        ("v1", "ConfigMap", "kube-root-ca.crt") | ("v1", "ServiceAccount", "default") => true,
        ("v1", "Service" | "Endpoints", "kubernetes")
        | ("discovery.k8s.io/v1", "EndpointSlice", "kubernetes") => namespace == Some("default"),
        _ => false,
    }
}

/// flotilla's own API groups: never propagated (a policy naming them is ignored).
pub(super) fn own_group(api_version: &str) -> bool {
    api_version
        .split('/')
        .next()
        .is_some_and(|g| g.ends_with(".flotilla.io"))
}

/// The `apiVersion`s and kinds the `policies`' and `cluster_policies`' resource selectors
/// name: those the detector watches.
pub(super) fn named_kinds(
    policies: &[Arc<PropagationPolicy>],
    cluster_policies: &[Arc<ClusterPropagationPolicy>],
) -> BTreeSet<(String, String)> {
    let mut kinds = BTreeSet::new();
    for p in policies {
        for s in &p.spec.resource_selectors {
            kinds.insert((s.api_version.clone(), s.kind.clone()));
        }
    }
    for p in cluster_policies {
        for s in &p.spec.resource_selectors {
            kinds.insert((s.api_version.clone(), s.kind.clone()));
        }
    }
    kinds
}

/// The kinds of `named` to start watching: those not watched yet (`started`), and not of
/// flotilla's own groups.
pub(super) fn unwatched(
    named: BTreeSet<(String, String)>,
    started: &HashSet<(String, String)>,
) -> Vec<(String, String)> {
    named
        .into_iter()
        .filter(|k| !started.contains(k) && !own_group(&k.0))
        .collect()
}

/// Whether binding `current` is the one [`desired`] with `hash` describes: then it is not
/// written again.
pub(super) fn up_to_date<B: Resource>(current: Option<&B>, hash: &str) -> bool {
    current.is_some_and(|b| {
        b.meta()
            .annotations
            .as_ref()
            .and_then(|a| a.get(DETECTOR_HASH_ANNOTATION))
            .is_some_and(|h| h == hash)
    })
}

/// The binding the detector applies for `template` (with `apiVersion` and `kind` set) under
/// `chosen`, with its own hash in the `work.flotilla.io/detector-hash` annotation and the
/// binding controller's finalizer.
pub fn desired(template: &Value, namespaced: bool, chosen: &Chosen<'_>) -> Value {
    desired_sized(template, namespaced, chosen, &Sizing::compiled(template))
}

/// [`desired`], with the replicas and requests given (a ResourceInterpreter's).
pub fn desired_sized(
    template: &Value,
    namespaced: bool,
    chosen: &Chosen<'_>,
    sizing: &Sizing,
) -> Value {
    let meta = &template["metadata"];
    let name = meta["name"].as_str().unwrap_or_default();
    let api_version = template["apiVersion"].as_str().unwrap_or_default();
    let kind = template["kind"].as_str().unwrap_or_default();
    let spec = chosen.spec;
    let mut annotations = serde_json::Map::new();
    annotations.insert(
        TEMPLATE_HASH_ANNOTATION.into(),
        json!(template_hash(template)),
    );
    if meta["annotations"][ORPHAN_ANNOTATION].as_str() == Some("true")
        || chosen.spec.preserve_resources_on_deletion
    {
        annotations.insert(ORPHAN_ANNOTATION.into(), json!("true"));
    }
    let mut resource =
        json!({"apiVersion": api_version, "kind": kind, "name": name, "uid": meta["uid"]});
    let mut metadata = json!({
        "name": binding_name(name, kind),
        // The binding controller's cleanup finalizer, there from the start: set by that
        // controller after the creation, it raced the scheduler's first placement (both
        // writing a version just created) and one of them wrote again.
        "finalizers": [BINDING_FINALIZER],
        "ownerReferences": [{
            "apiVersion": api_version, "kind": kind, "name": name, "uid": meta["uid"],
            "controller": true, "blockOwnerDeletion": true,
        }],
    });
    if namespaced {
        resource["namespace"] = meta["namespace"].clone();
        metadata["namespace"] = meta["namespace"].clone();
    }
    let mut body_spec = json!({
        "resource": resource,
        "placement": spec.placement,
        "conflictResolution": spec.conflict_resolution,
        "policyRef": {"kind": chosen.kind, "name": chosen.name, "uid": chosen.uid},
    });
    if let Some(ns) = chosen.namespace {
        body_spec["policyRef"]["namespace"] = json!(ns);
    }
    if spec.propagate_deps {
        body_spec["propagateDeps"] = json!(true);
    }
    if let Some(f) = &spec.failover {
        body_spec["failover"] = json!(f);
    }
    if let Some(r) = spec.rollout_strategy.as_ref().filter(|r| r.progressive()) {
        body_spec["rolloutStrategy"] = json!(r);
    }
    if sizing.replicas > 0 {
        body_spec["replicas"] = json!(sizing.replicas);
        let request: BTreeMap<String, String> = sizing
            .requests
            .iter()
            .map(|(k, v)| (k.clone(), quantity::format_millis(*v)))
            .collect();
        if !request.is_empty() {
            body_spec["replicaRequirements"] = json!({"resourceRequest": request});
        }
    }
    let kind_of_binding = if namespaced {
        "ResourceBinding"
    } else {
        "ClusterResourceBinding"
    };
    let mut body = json!({
        "apiVersion": "work.flotilla.io/v1alpha1",
        "kind": kind_of_binding,
        "metadata": metadata,
        "spec": body_spec,
    });
    body["metadata"]["annotations"] = Value::Object(annotations);
    let hash = format!("{:016x}", fnv64(body.to_string().as_bytes()));
    body["metadata"]["annotations"][DETECTOR_HASH_ANNOTATION] = json!(hash);
    body
}
