//! flotilla's own kinds (`Cluster`, `Work`, the policies and bindings) are served by a fresh
//! hub like built-ins: listable at once, printer columns, `kubectl explain`, status
//! subresource, enum validation; Karmada's policy YAML applies with only its group changed.

mod common;

use common::{k, k_in, Hub};

const CLUSTER: &str = r#"
apiVersion: cluster.flotilla.io/v1alpha1
kind: Cluster
metadata:
  name: member-1
  labels: {env: prod}
spec:
  region: eu-west-1
  zone: eu-west-1a
  provider: kind
"#;

const PUSH_CLUSTER: &str = r#"
apiVersion: cluster.flotilla.io/v1alpha1
kind: Cluster
metadata: {name: member-2}
spec:
  syncMode: Push
  apiEndpoint: https://127.0.0.1:7443
  secretRef: {namespace: flotilla-system, name: member-2}
  region: us-east-1
  taints: [{key: cluster.flotilla.io/unreachable, effect: NoExecute}]
"#;

const WORK: &str = r#"
apiVersion: work.flotilla.io/v1alpha1
kind: Work
metadata: {name: web, namespace: flotilla-es-member-1}
spec:
  manifests:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, namespace: default}
    spec:
      replicas: 2
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: web, image: nginx}]}
"#;

#[test]
fn cluster_and_work_are_served_as_built_ins() {
    let hub = Hub::start();
    // Served on a fresh hub, before anything was created.
    let out = hub.kubectl(&["get", "clusters"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("No resources found"),
        "{out:?}"
    );
    k(&hub, "get ns flotilla-system");
    let explained = k(&hub, "explain cluster.spec.syncMode");
    assert!(
        explained.contains("cluster.flotilla.io") && explained.contains("Push"),
        "{explained}"
    );

    k_in(&hub, "apply -f -", CLUSTER);
    k_in(&hub, "apply -f -", PUSH_CLUSTER);
    k(&hub, "create namespace flotilla-es-member-1");
    k_in(&hub, "apply -f -", WORK);

    // The default sync mode is filled in by the hub; the columns say what a cluster is.
    assert_eq!(
        k(&hub, "get cluster member-1 -o jsonpath={.spec.syncMode}"),
        "Pull"
    );
    hub.ok(&[
        "patch",
        "cluster",
        "member-1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"kubernetesVersion":"v1.33.1","conditions":[{"type":"Ready","status":"True","reason":"ClusterReady","message":"","lastTransitionTime":"2025-01-02T03:04:05Z"}]}}"#,
    ]);
    let table = k(&hub, "get clusters");
    let lines: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        ["NAME", "MODE", "READY", "VERSION", "REGION", "AGE"],
        "{table}"
    );
    assert_eq!(
        lines[1][..5],
        ["member-1", "Pull", "True", "v1.33.1", "eu-west-1"],
        "{table}"
    );
    assert_eq!(lines[2][..3], ["member-2", "Push", "us-east-1"], "{table}");
    // Selected by labels, listed in the flotilla category.
    assert_eq!(
        k(&hub, "get clusters -l env=prod -o name"),
        "cluster.cluster.flotilla.io/member-1\n"
    );
    let all = k(&hub, "get flotilla -A -o name");
    assert!(
        all.contains("cluster.cluster.flotilla.io/member-2")
            && all.contains("work.work.flotilla.io/web"),
        "{all}"
    );

    // The Work keeps its manifest whole and defaults its policies.
    let work = common::json(&k(&hub, "get work web -n flotilla-es-member-1 -o json"));
    assert_eq!(
        work["spec"]["manifests"][0]["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx"
    );
    assert_eq!(work["spec"]["applyStrategy"], "ServerSideApply");
    assert_eq!(work["spec"]["conflictPolicy"], "Abort");
    assert_eq!(work["spec"]["deletePolicy"], "Delete");
    let works = k(&hub, "get works -n flotilla-es-member-1");
    assert!(
        works.starts_with("NAME") && works.contains("APPLIED") && works.contains("AVAILABLE"),
        "{works}"
    );

    // Enums are enforced: 422 Invalid with the field and the allowed values.
    let bad = CLUSTER
        .replace("name: member-1", "name: bad")
        .replace("spec:", "spec:\n  syncMode: Sideways");
    let out = hub.kubectl_stdin(&["create", "-f", "-", "-v=6"], &bad);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("422"), "{err}");
    assert!(
        err.contains(
            r#"spec.syncMode: Unsupported value: "Sideways": supported values: "Push", "Pull""#
        ),
        "{err}"
    );
    let bad_work = WORK.replace("manifests:", "deletePolicy: Later\n  manifests:");
    let err = common::k_in_err(&hub, "apply -f -", &bad_work);
    assert!(
        err.contains("spec.deletePolicy: Unsupported value"),
        "{err}"
    );
}

#[test]
fn flotilla_crds_come_back_after_a_restart() {
    let mut hub = Hub::start();
    k_in(&hub, "apply -f -", CLUSTER);
    k(&hub, "delete crd clusters.cluster.flotilla.io");
    hub.stop();
    hub.restart();
    let out = hub.kubectl(&["get", "clusters"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    k_in(&hub, "apply -f -", CLUSTER);
    assert_eq!(
        k(&hub, "get clusters -o name"),
        "cluster.cluster.flotilla.io/member-1\n"
    );
    // The CRD left alone (works) is stored as generated, so a restart does not rewrite it.
    let log = hub.log();
    assert!(log.contains("installed flotilla CRD"), "{log}");
    assert!(!log.contains("updated flotilla CRD"), "{log}");
}

/// A Karmada PropagationPolicy; only the group of the apiVersion differs.
const PROPAGATION: &str = r#"
apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx-propagation, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: nginx}
  placement:
    clusterAffinity:
      labelSelector: {matchLabels: {env: prod}}
      exclude: [member-3]
    clusterTolerations:
    - {key: cluster.flotilla.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 120}
    spreadConstraints:
    - {spreadByField: cluster, minGroups: 2, maxGroups: 3}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [member-1]}, weight: 2}
        - {targetCluster: {clusterNames: [member-2]}, weight: 1}
"#;

/// A Karmada OverridePolicy; only the group of the apiVersion differs.
const OVERRIDE: &str = r#"
apiVersion: policy.flotilla.io/v1alpha1
kind: OverridePolicy
metadata: {name: nginx-override, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: nginx}
  overrideRules:
  - targetCluster: {clusterNames: [member-1]}
    overriders:
      imageOverrider:
      - {component: Registry, operator: replace, value: registry.example.com}
      plaintext:
      - {path: /spec/replicas, operator: replace, value: 3}
      - {path: /metadata/annotations, operator: add, value: {team: web}}
"#;

const BINDING: &str = r#"
apiVersion: work.flotilla.io/v1alpha1
kind: ResourceBinding
metadata: {name: nginx-deployment, namespace: demo}
spec:
  resource: {apiVersion: apps/v1, kind: Deployment, namespace: demo, name: nginx}
  replicas: 6
  clusters: [{name: member-1, replicas: 4}, {name: member-2, replicas: 2}]
"#;

#[test]
fn karmada_style_policies_and_bindings_are_served() {
    let hub = Hub::start();
    k(&hub, "create namespace demo");
    k_in(&hub, "apply -f -", PROPAGATION);
    k_in(&hub, "apply -f -", OVERRIDE);
    k_in(&hub, "apply -f -", BINDING);

    // Karmada's defaults are filled in; the shapes survive storage whole.
    let pp = common::json(&k(&hub, "get pp nginx-propagation -n demo -o json"));
    assert_eq!(pp["spec"]["conflictResolution"], "Abort");
    assert_eq!(pp["spec"]["priority"], 0);
    let placement = &pp["spec"]["placement"];
    assert_eq!(placement["clusterAffinity"]["exclude"][0], "member-3");
    assert_eq!(placement["clusterTolerations"][0]["tolerationSeconds"], 120);
    assert_eq!(
        placement["replicaScheduling"]["weightPreference"]["staticWeightList"][0]["weight"],
        2
    );
    let table = k(&hub, "get propagationpolicies -n demo");
    let head: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        head,
        ["NAME", "CONFLICT-RESOLUTION", "PRIORITY", "AGE"],
        "{table}"
    );
    assert!(table.contains("nginx-propagation   Abort"), "{table}");
    let op = common::json(&k(&hub, "get op nginx-override -n demo -o json"));
    let o = &op["spec"]["overrideRules"][0]["overriders"];
    assert_eq!(o["plaintext"][0]["value"], 3);
    assert_eq!(o["plaintext"][1]["value"]["team"], "web");
    assert_eq!(o["imageOverrider"][0]["component"], "Registry");

    // Bindings: status through the subresource, conditions as columns.
    hub.ok(&[
        "patch", "rb", "nginx-deployment", "-n", "demo", "--subresource=status", "--type=merge", "-p",
        r#"{"status":{"conditions":[{"type":"Scheduled","status":"True","reason":"Success","message":"","lastTransitionTime":"2025-01-02T03:04:05Z"}],"aggregatedStatus":[{"clusterName":"member-1","applied":true,"health":"Healthy","status":{"readyReplicas":4}}]}}"#,
    ]);
    let table = k(&hub, "get resourcebindings -n demo");
    let lines: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        ["NAME", "SCHEDULED", "FULLYAPPLIED", "ROLLOUT", "AGE"],
        "{table}"
    );
    assert_eq!(lines[1][..2], ["nginx-deployment", "True"], "{table}");
    let rb = common::json(&k(&hub, "get rb nginx-deployment -n demo -o json"));
    assert_eq!(
        rb["status"]["aggregatedStatus"][0]["status"]["readyReplicas"],
        4
    );
    let all = k(&hub, "get flotilla -n demo -o name");
    for want in [
        "propagationpolicy.policy.flotilla.io/nginx-propagation",
        "overridepolicy.policy.flotilla.io/nginx-override",
        "resourcebinding.work.flotilla.io/nginx-deployment",
    ] {
        assert!(all.contains(want), "{want} not in {all}");
    }
    let explained = k(
        &hub,
        "explain propagationpolicy.spec.placement.replicaScheduling",
    );
    assert!(explained.contains("replicaSchedulingType"), "{explained}");

    // A Karmada field flotilla does not act on is refused, not silently kept.
    let unknown = PROPAGATION
        .replace("name: nginx-propagation", "name: unknown")
        .replace(
            "  placement:",
            "  schedulerName: default-scheduler\n  placement:",
        );
    let err = common::k_in_err(&hub, "apply -f -", &unknown);
    assert!(
        err.contains("unknown field \"spec.schedulerName\""),
        "{err}"
    );

    // Enums are enforced.
    let bad = PROPAGATION
        .replace("name: nginx-propagation", "name: bad")
        .replace(
            "replicaSchedulingType: Divided",
            "replicaSchedulingType: Split",
        );
    let err = common::k_in_err(&hub, "apply -f -", &bad);
    assert!(
        err.contains("spec.placement.replicaScheduling.replicaSchedulingType: Unsupported value"),
        "{err}"
    );
}
