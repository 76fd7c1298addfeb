//! What the benchmark writes on the hub: a namespace per phase, a PropagationPolicy (Karmada's
//! field shapes) that sends every Deployment of the namespace to the three members whole
//! (`Duplicated`), and the Deployments — labelled with the run, and annotated with a sequence
//! number that the latency phase raises to change them.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use flotilla_apis::policy::v1alpha1::PropagationPolicy;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{ObjectMeta, PostParams};
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

/// A PropagationPolicy `name` in `namespace`: every Deployment of the namespace, whole, to
/// each of `clusters`.
pub fn policy(namespace: &str, name: &str, clusters: &[String]) -> Result<PropagationPolicy> {
    serde_json::from_value(json!({
        "apiVersion": "policy.flotilla.io/v1alpha1",
        "kind": "PropagationPolicy",
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

/// Create namespace `name` on the hub, labelled with the run, and `policy` in it.
pub async fn setup(hub: &Client, run: &str, name: &str, policy: &PropagationPolicy) -> Result<()> {
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
    Api::<PropagationPolicy>::namespaced(hub.clone(), name)
        .create(&PostParams::default(), policy)
        .await
        .with_context(|| format!("creating the PropagationPolicy in {name} on the hub"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_labelled_deployment_and_a_karmada_shaped_policy() {
        let d = deployment("bench-1", "ns", "web-0001", 1).unwrap();
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["metadata"]["labels"][RUN_LABEL], "bench-1");
        assert_eq!(v["spec"]["replicas"], 1);
        assert_eq!(seq(&d), 0);
        let p = policy("ns", "all", &["member-1".into(), "member-3".into()]).unwrap();
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v["spec"]["resourceSelectors"][0]["kind"], "Deployment");
        assert_eq!(
            v["spec"]["placement"]["clusterAffinity"]["clusterNames"][1],
            "member-3"
        );
        assert_eq!(
            v["spec"]["placement"]["replicaScheduling"]["replicaSchedulingType"],
            "Duplicated"
        );
    }

    #[test]
    fn sequence_numbers_round_trip_through_the_patch() {
        let mut d = deployment("r", "ns", "d", 0).unwrap();
        let patch = seq_patch(42);
        let value = patch["metadata"]["annotations"][SEQ_ANNOTATION].as_str();
        d.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(SEQ_ANNOTATION.into(), value.unwrap().into());
        assert_eq!(seq(&d), 42);
        d.metadata.annotations = None;
        assert_eq!(seq(&d), 0);
    }
}
