//! What the benchmark writes on the control plane: a namespace per phase, a PropagationPolicy
//! (Karmada's field shapes, so the same object serves flotilla and Karmada) that sends every Deployment of the namespace to the three members whole
//! (`Duplicated`), and the Deployments — labelled with the run, and annotated with a sequence
//! number that the latency phase raises to change them.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{ApiResource, DynamicObject, ObjectMeta, PostParams};
use kube::{Api, Client};
use serde_json::json;

use crate::track::RUN_LABEL;

/// The annotation on a template (and so on its copies) that counts its changes: `0` when
/// created, the change's sequence number after.
pub const SEQ_ANNOTATION: &str = "bench.flotilla.io/seq";

/// A Deployment `name` in `namespace` with `replicas` pods, labelled with the run and
/// annotated with sequence number 0.
pub fn deployment(run: &str, namespace: &str, name: &str, replicas: i32) -> Result<Deployment> {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {RUN_LABEL: run, "app": name},
            "annotations": {SEQ_ANNOTATION: "0"},
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
            },
        },
    }))
    .context("building a Deployment")
}

/// A PropagationPolicy `name` of kind `kind` (flotilla's or Karmada's) in `namespace`: every
/// Deployment of the namespace, whole, to each of `clusters`.
pub fn policy(
    kind: &ApiResource,
    namespace: &str,
    name: &str,
    clusters: &[String],
) -> Result<DynamicObject> {
    serde_json::from_value(json!({
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}],
            "placement": {
                "clusterAffinity": {"clusterNames": clusters},
                "replicaScheduling": {"replicaSchedulingType": "Duplicated"},
            },
        },
    }))
    .context("building a PropagationPolicy")
}

/// The sequence number a Deployment (on the hub or in a member) shows; 0 without one.
pub fn seq(d: &Deployment) -> u64 {
    d.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(SEQ_ANNOTATION))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// The merge patch that sets a template's sequence number to `seq`.
pub fn seq_patch(seq: u64) -> serde_json::Value {
    json!({"metadata": {"annotations": {SEQ_ANNOTATION: seq.to_string()}}})
}

/// Create namespace `name` on the control plane, labelled with the run, and `policy` (of kind
/// `kind`) in it.
pub async fn setup(
    hub: &Client,
    run: &str,
    name: &str,
    kind: &ApiResource,
    policy: &DynamicObject,
) -> Result<()> {
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(BTreeMap::from([(RUN_LABEL.to_string(), run.to_string())])),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    Api::<Namespace>::all(hub.clone())
        .create(&PostParams::default(), &ns)
        .await
        .with_context(|| format!("creating the namespace {name} on the hub"))?;
    Api::<DynamicObject>::namespaced_with(hub.clone(), name, kind)
        .create(&PostParams::default(), policy)
        .await
        .with_context(|| format!("creating the PropagationPolicy in {name} on the hub"))?;
    Ok(())
}

#[cfg(test)]
mod tests;
