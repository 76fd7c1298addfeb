//! ClusterSets through the real binary: a namespace's policies place only onto the clusters of
//! the sets bound there (the set `default`, unlabelled clusters, everywhere while
//! `--default-clusterset-binding` is on); a ClusterSetBinding is named after its set and needs
//! `create` on `clustersets/bind` of it; `flotilla explain placement` says why a cluster of an
//! unbound set is refused. The clusters are Cluster objects with a reported status (no members:
//! only the scheduler's decision is looked at).

mod common;

use std::time::{Duration, Instant};

use common::{Hub, FLOTILLA};

/// A Ready pull cluster `name` serving Deployments, in `set` (no label for `None`).
fn cluster(hub: &Hub, name: &str, set: Option<&str>) {
    let labels = set
        .map(|s| format!(r#", "labels": {{"cluster.flotilla.io/clusterset": "{s}"}}"#))
        .unwrap_or_default();
    hub.ok_stdin(
        &["apply", "-f", "-"],
        &format!(
            r#"{{"apiVersion": "cluster.flotilla.io/v1alpha1", "kind": "Cluster",
                "metadata": {{"name": "{name}"{labels}}}, "spec": {{"syncMode": "Pull"}}}}"#
        ),
    );
    // Joined now: without a Lease, health counts the silence from the Joined transition.
    let now = k8s_openapi::jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let status = format!(
        r#"{{"status": {{"conditions": [
            {{"type": "Joined", "status": "True", "reason": "Joined", "message": "test", "lastTransitionTime": "{now}"}},
            {{"type": "Ready", "status": "True", "reason": "ClusterReady", "message": "test", "lastTransitionTime": "{now}"}}],
          "apiEnablements": [{{"groupVersion": "apps/v1", "resources": [{{"name": "deployments", "kind": "Deployment"}}]}}]}}}}"#
    );
    hub.ok(&[
        "patch",
        "cluster",
        name,
        "--subresource=status",
        "--type=merge",
        "-p",
        &status,
    ]);
}

/// The clusters the binding of deployment `web` in `ns` is placed in, once it equals `want`.
fn placed(hub: &Hub, ns: &str, want: &str) {
    let started = Instant::now();
    loop {
        let got = hub.ok(&[
            "-n",
            ns,
            "get",
            "resourcebindings",
            "-o",
            "jsonpath={.items[*].spec.clusters[*].name}",
        ]);
        if got.trim() == want {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{ns}: placed in {got:?}, want {want:?}; {}",
            explain(hub, ns)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn workload(hub: &Hub, ns: &str) {
    hub.ok(&["create", "namespace", ns]);
    hub.ok(&["-n", ns, "create", "deployment", "web", "--image=nginx"]);
    hub.ok_stdin(
        &["-n", ns, "apply", "-f", "-"],
        r#"apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {}
"#,
    );
}

fn explain(hub: &Hub, ns: &str) -> String {
    let out = std::process::Command::new(FLOTILLA)
        .args([
            "explain",
            "placement",
            "deployment/web",
            "-n",
            ns,
            "--kubeconfig",
        ])
        .arg(&hub.kubeconfig)
        .output()
        .expect("run flotilla explain");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn namespaces_place_only_onto_the_sets_bound_there() {
    let mut hub = Hub::start_with(&["--cluster-grace-period", "10m"]);
    cluster(&hub, "c-plain", None);
    cluster(&hub, "c-prod", Some("prod"));
    workload(&hub, "team");
    // Only the default set is bound: the prod cluster is refused, and explain says why.
    placed(&hub, "team", "c-plain");
    let why = explain(&hub, "team");
    assert!(
        why.contains("ClusterSet \"prod\" is not bound")
            && why.contains("ClusterSets bound in team: default"),
        "{why}"
    );
    let default = hub.ok(&[
        "get",
        "clusterset",
        "default",
        "-o",
        "jsonpath={.spec.allNamespaces}",
    ]);
    assert_eq!(default, "true");

    // A binding must be named after its set.
    let bad = hub.kubectl_stdin(
        &["-n", "team", "apply", "-f", "-"],
        "apiVersion: cluster.flotilla.io/v1alpha1\nkind: ClusterSetBinding\nmetadata: {name: other}\nspec: {clusterSet: prod}\n",
    );
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && err.contains("must be the binding's name"),
        "{err}"
    );

    // A namespace admin may write bindings but not bind a set it was not given.
    hub.ok(&["-n", "team", "create", "serviceaccount", "lead"]);
    hub.ok(&[
        "-n",
        "team",
        "create",
        "role",
        "bindings",
        "--verb=create,get,list",
        "--resource=clustersetbindings.cluster.flotilla.io",
    ]);
    hub.ok(&[
        "-n",
        "team",
        "create",
        "rolebinding",
        "lead",
        "--role=bindings",
        "--serviceaccount=team:lead",
    ]);
    let token = hub.ok(&["-n", "team", "create", "token", "lead"]);
    let binding = "apiVersion: cluster.flotilla.io/v1alpha1\nkind: ClusterSetBinding\nmetadata: {name: prod}\nspec: {clusterSet: prod}\n";
    let as_lead = ["--token", token.trim(), "-n", "team", "create", "-f", "-"];
    let refused = hub.kubectl_stdin(&as_lead, binding);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("clustersets/bind") && err.contains("Forbidden"),
        "{err}"
    );
    placed(&hub, "team", "c-plain");

    // Given bind on that set, it binds it, and the workload reaches the prod cluster.
    hub.ok(&[
        "create",
        "clusterrole",
        "bind-prod",
        "--verb=create",
        "--resource=clustersets.cluster.flotilla.io/bind",
        "--resource-name=prod",
    ]);
    hub.ok(&[
        "create",
        "clusterrolebinding",
        "lead-bind-prod",
        "--clusterrole=bind-prod",
        "--serviceaccount=team:lead",
    ]);
    let allowed = hub.kubectl_stdin(&as_lead, binding);
    assert!(
        allowed.status.success(),
        "{}",
        String::from_utf8_lossy(&allowed.stderr)
    );
    placed(&hub, "team", "c-plain c-prod");
    // Another namespace is not affected.
    workload(&hub, "other");
    placed(&hub, "other", "c-plain");

    // Unbinding takes the set away again.
    hub.ok(&["-n", "team", "delete", "clustersetbinding", "prod"]);
    placed(&hub, "team", "c-plain");

    // Without the default binding, a namespace needs a binding for the default set too: a new
    // namespace's workload is placed nowhere (Scheduled=False) until it has one. (A workload
    // already placed stays where it runs while no cluster passes, as on any scheduling error.)
    hub.restart_with(&[
        "--cluster-grace-period",
        "10m",
        "--default-clusterset-binding=false",
    ]);
    workload(&hub, "fresh");
    let started = Instant::now();
    loop {
        let scheduled = hub.ok(&[
            "-n",
            "fresh",
            "get",
            "resourcebindings",
            "-o",
            "jsonpath={.items[*].status.conditions[?(@.type==\"Scheduled\")].status}",
        ]);
        if scheduled == "False" {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "Scheduled is {scheduled:?}; {}",
            explain(&hub, "fresh")
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    placed(&hub, "fresh", "");
    hub.ok_stdin(
        &["-n", "fresh", "apply", "-f", "-"],
        "apiVersion: cluster.flotilla.io/v1alpha1\nkind: ClusterSetBinding\nmetadata: {name: default}\nspec: {clusterSet: default}\n",
    );
    placed(&hub, "fresh", "c-plain");
}
