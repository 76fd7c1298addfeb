//! What the benchmark writes on the control plane: a namespace per phase, a PropagationPolicy
//! (Karmada's field shapes, so the same object serves flotilla and Karmada) that sends every Deployment of the namespace to the three members whole
//! (`Duplicated`), and the Deployments — labelled with the run, and annotated with a sequence
//! number that the latency phase raises to change them.

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::{Context, Result};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{ApiResource, DynamicObject, ObjectMeta, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::json;

use crate::track::{Key, RUN_LABEL};

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
/// Deployment of the namespace, whole, to each of `clusters`; with `rollout`, flotilla's
/// `rolloutStrategy`.
pub fn policy(
    kind: &ApiResource,
    namespace: &str,
    name: &str,
    clusters: &[String],
    rollout: Option<&serde_json::Value>,
) -> Result<DynamicObject> {
    let mut body = json!({
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
    });
    if let Some(r) = rollout {
        body["spec"]["rolloutStrategy"] = r.clone();
    }
    serde_json::from_value(body).context("building a PropagationPolicy")
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
fn seq_patch(seq: u64) -> serde_json::Value {
    json!({"metadata": {"annotations": {SEQ_ANNOTATION: seq.to_string()}}})
}

/// Raises templates' sequence numbers: change `i` goes to template `i mod K` and sets it to
/// `i / K + 1`, one template's changes in the order they were offered. An open loop starts
/// change `i + K` when it is due, whether or not change `i` has been answered; two merge
/// patches in flight on one object may be committed in either order, and a later number
/// overwritten by an earlier one would never be shown anywhere. So each template's writes take
/// turns (a FIFO lock each), and the clock of a change still starts at the hub's answer to it.
pub struct Raiser {
    hub: Api<Deployment>,
    /// Each template's key (`namespace/name`) and its turn.
    templates: Vec<(Key, Arc<tokio::sync::Mutex<()>>)>,
}

impl Raiser {
    /// For the templates `keys` (`namespace/name`) in `hub`'s namespace.
    pub fn new(hub: Api<Deployment>, keys: impl IntoIterator<Item = Key>) -> Self {
        let templates = keys.into_iter().map(|k| (k, Arc::default())).collect();
        Self { hub, templates }
    }

    /// Change `i`: the template's key, the sequence number it sets, and the write, made after
    /// that template's earlier changes were answered (its error names the template and the
    /// number).
    pub fn raise(
        &self,
        i: usize,
    ) -> (
        Key,
        u64,
        impl std::future::Future<Output = Result<(), String>> + 'static,
    ) {
        let (key, turn) = &self.templates[i % self.templates.len()];
        let seq = (i / self.templates.len()) as u64 + 1;
        let name = key.rsplit('/').next().unwrap_or_default().to_string();
        let (hub, turn) = (self.hub.clone(), turn.clone());
        let write = async move {
            let _turn = turn.lock().await;
            hub.patch(
                &name,
                &PatchParams::default(),
                &Patch::Merge(seq_patch(seq)),
            )
            .await
            .map(drop)
            .map_err(|e| format!("{name} to {seq}: {e}"))
        };
        (key.clone(), seq, write)
    }
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
