//! flotilla's own kinds (`Cluster`, `Work`) are served by a fresh hub like built-ins:
//! listable at once, printer columns, `kubectl explain`, status subresource, enum validation.

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
