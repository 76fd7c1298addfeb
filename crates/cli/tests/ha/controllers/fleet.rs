//! The fleet side of the test: members joined in push mode, Deployments with a policy sending
//! them to every member, and checks on the members and the hub's Clusters.

use std::path::Path;
use std::process::Command;

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use kube::Client;

use crate::set::HaSet;

use super::{FLOTILLA, MEMBERS};

/// `flotilla join NAME --member-kubeconfig M` against replica 1 (push mode).
pub fn join(set: &HaSet, name: &str, member: &Path) {
    let out = Command::new(FLOTILLA)
        .args(["join", name, "--member-kubeconfig"])
        .arg(member)
        .env("KUBECONFIG", set.kubeconfig(1))
        .env("RUST_LOG", "warn")
        .output()
        .expect("run flotilla join");
    assert!(
        out.status.success(),
        "flotilla join {name} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn dynamic(
    client: Client,
    group: &str,
    kind: &str,
    plural: &str,
    ns: Option<&str>,
) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(group, "v1alpha1", kind);
    let ar = ApiResource::from_gvk_with_plural(&gvk, plural);
    match ns {
        Some(ns) => Api::namespaced_with(client, ns, &ar),
        None => Api::all_with(client, &ar),
    }
}

/// Creates Deployment `name` in namespace demo and a PropagationPolicy sending it to every
/// member (Duplicated), through replica `k`.
pub async fn propagate(set: &HaSet, k: usize, name: &str) {
    let client = set.client(k).await;
    let deploy: Deployment = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "namespace": "demo", "labels": {"app": name}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}
            }
        }
    }))
    .unwrap();
    Api::<Deployment>::namespaced(client.clone(), "demo")
        .create(&PostParams::default(), &deploy)
        .await
        .unwrap_or_else(|e| panic!("create Deployment {name}: {e}"));
    let policy: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "policy.flotilla.io/v1alpha1",
        "kind": "PropagationPolicy",
        "metadata": {"name": name, "namespace": "demo"},
        "spec": {
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name}],
            "placement": {
                "clusterAffinity": {"clusterNames": MEMBERS},
                "replicaScheduling": {"replicaSchedulingType": "Duplicated"}
            }
        }
    }))
    .unwrap();
    dynamic(
        client,
        "policy.flotilla.io",
        "PropagationPolicy",
        "propagationpolicies",
        Some("demo"),
    )
    .create(&PostParams::default(), &policy)
    .await
    .unwrap_or_else(|e| panic!("create PropagationPolicy {name}: {e}"));
}

/// Whether Deployment `name` is in namespace demo of every member.
pub async fn everywhere(members: &[Client], name: &str) -> bool {
    for m in members {
        let api = Api::<Deployment>::namespaced(m.clone(), "demo");
        if !matches!(api.get_opt(name).await, Ok(Some(_))) {
            return false;
        }
    }
    true
}

/// Whether cluster `name` is Ready with apps/v1 enabled, as replica 1 reads it.
pub async fn cluster_ready(clusters: &Api<DynamicObject>, name: &str) -> bool {
    let Ok(Some(c)) = clusters.get_opt(name).await else {
        return false;
    };
    let status = &c.data["status"];
    let ready = status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    let apps = status["apiEnablements"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|e| e["groupVersion"] == "apps/v1");
    ready && apps
}

/// Sets the image of Deployment `name` in namespace demo through replica `k`.
pub async fn set_image(set: &HaSet, k: usize, name: &str, image: &str) {
    let patch = serde_json::json!({"spec": {"template": {"spec": {
        "containers": [{"name": "app", "image": image}]
    }}}});
    Api::<Deployment>::namespaced(set.client(k).await, "demo")
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap_or_else(|e| panic!("set the image of Deployment {name}: {e}"));
}

/// Whether Deployment `name` runs `image` in every member.
pub async fn image_everywhere(members: &[Client], name: &str, image: &str) -> bool {
    for m in members {
        let api = Api::<Deployment>::namespaced(m.clone(), "demo");
        let Ok(Some(d)) = api.get_opt(name).await else {
            return false;
        };
        let now = d
            .spec
            .and_then(|s| s.template.spec)
            .and_then(|s| s.containers.into_iter().next())
            .and_then(|c| c.image);
        if now.as_deref() != Some(image) {
            return false;
        }
    }
    true
}
