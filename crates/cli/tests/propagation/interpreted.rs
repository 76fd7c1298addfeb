//! A custom kind the hub has no compiled rules for, taught by a ResourceInterpreter (the
//! shipped OpenKruise CloneSet one): 6 replicas Divided 1:1:1 become 2/2/2 in the members,
//! written where the interpreter's `reviseReplicas` says, with the per-replica requests on the
//! binding; a change of the count re-divides it. The members' statuses (written by hand: no
//! Kruise controller runs) sum on the hub by the interpreter's status rules, and its health rule
//! gates a progressive rollout.

use std::path::Path;
use std::time::Duration;

use crate::common::fleet::{eventually, kc};
use crate::common::Hub;
use flotilla_testkit::Members;

use super::{member_get, MEMBERS};

/// A CloneSet CRD that keeps any content (no Kruise controller runs: only the delivered spec
/// is looked at).
pub(super) const CLONESET_CRD: &str = r#"{"apiVersion": "apiextensions.k8s.io/v1",
  "kind": "CustomResourceDefinition", "metadata": {"name": "clonesets.apps.kruise.io"},
  "spec": {"group": "apps.kruise.io", "scope": "Namespaced",
    "names": {"plural": "clonesets", "singular": "cloneset", "kind": "CloneSet"},
    "versions": [{"name": "v1alpha1", "served": true, "storage": true,
      "subresources": {"status": {}},
      "schema": {"openAPIV3Schema": {"type": "object",
        "x-kubernetes-preserve-unknown-fields": true}}}]}}"#;

/// Install [`CLONESET_CRD`] with `kubeconfig` and wait until it is served.
pub(super) fn install_crd(kubeconfig: &Path) {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), CLONESET_CRD).expect("write the CRD");
    let (ok, _, err) = kc(kubeconfig, &["apply", "-f", file.path().to_str().unwrap()]);
    assert!(ok, "install the CloneSet CRD: {err}");
    let (ok, _, err) = kc(
        kubeconfig,
        &[
            "wait",
            "--for=condition=Established",
            "crd/clonesets.apps.kruise.io",
            "--timeout=60s",
        ],
    );
    assert!(ok, "the CloneSet CRD is not established: {err}");
}

fn clone_set(replicas: u32) -> String {
    format!(
        r#"{{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
            "metadata": {{"name": "web", "namespace": "demo"}},
            "spec": {{"replicas": {replicas}, "selector": {{"matchLabels": {{"app": "clones"}}}},
              "template": {{"metadata": {{"labels": {{"app": "clones"}}}},
                "spec": {{"containers": [{{"name": "app", "image": "nginx:1.27",
                  "resources": {{"requests": {{"cpu": "10m"}}}}}}]}}}}}}}}"#
    )
}

const POLICY: &str = r#"apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {name: clones, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet, name: web}
  placement:
    clusterAffinity: {clusterNames: [member-1, member-2, member-3]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [member-1, member-2, member-3]}, weight: 1}
"#;

/// The CloneSet is divided by its interpreter's rules; the members' CRD was installed before
/// they joined (their APIs are discovered every few minutes).
pub(super) fn custom_kind_divided(hub: &Hub, members: &Members) {
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/interpreters");
    hub.ok(&["apply", "-f", &format!("{examples}/kruise-cloneset.yaml")]);
    install_crd(&hub.kubeconfig);
    hub.ok_stdin(&["apply", "-f", "-"], &clone_set(6));
    hub.ok_stdin(&["apply", "-f", "-"], POLICY);
    let replicas = |c: &str| member_get(&m(c), "clonesets.apps.kruise.io/web", "{.spec.replicas}");
    eventually(
        hub,
        Duration::from_secs(60),
        "the CloneSet 2/2/2 in the members",
        || MEMBERS.iter().all(|c| replicas(c) == "2"),
    );
    let sized = binding(
        hub,
        "{.spec.replicas}/{.spec.replicaRequirements.resourceRequest.cpu}/{.status.conditions[?(@.type==\"Interpreted\")].status}",
    );
    assert_eq!(sized, "6/10m/True");
    hub.ok_stdin(&["apply", "-f", "-"], &clone_set(9));
    eventually(
        hub,
        Duration::from_secs(60),
        "the CloneSet 3/3/3 in the members",
        || MEMBERS.iter().all(|c| replicas(c) == "3"),
    );
    status_summed_and_health_gates_a_rollout(hub, members);
    hub.ok(&["delete", "propagationpolicy", "clones", "-n", "demo"]);
    hub.ok(&["delete", "clonesets.apps.kruise.io", "web", "-n", "demo"]);
    eventually(
        hub,
        Duration::from_secs(60),
        "the CloneSet gone from the members",
        || MEMBERS.iter().all(|c| replicas(c).is_empty()),
    );
}

/// A JSONPath `path` of the CloneSet's binding on the hub, trimmed.
fn binding(hub: &Hub, path: &str) -> String {
    let out = hub.ok(&[
        "get",
        "rb",
        "web-cloneset",
        "-n",
        "demo",
        "-o",
        &format!("jsonpath={path}"),
    ]);
    out.trim().to_owned()
}

/// Writes what a CloneSet controller would into a member's status: every one of its `replicas`
/// ready on the current spec (`observedGeneration` its generation now).
fn report_ready(kubeconfig: &Path, replicas: u32) {
    let generation = member_get(
        kubeconfig,
        "clonesets.apps.kruise.io/web",
        "{.metadata.generation}",
    );
    let status = format!(
        r#"{{"status": {{"observedGeneration": {generation}, "replicas": {replicas}, "readyReplicas": {replicas}, "updatedReplicas": {replicas}, "updatedReadyReplicas": {replicas}}}}}"#
    );
    let (ok, _, err) = kc(
        kubeconfig,
        &[
            "patch",
            "clonesets.apps.kruise.io",
            "web",
            "-n",
            "demo",
            "--subresource=status",
            "--type=merge",
            "-p",
            &status,
        ],
    );
    assert!(ok, "write the member's CloneSet status: {err}");
}

const GATED: &str = r#"  rolloutStrategy:
    type: ProgressivePerGroup
    groups:
    - {name: first, clusterAffinity: {clusterNames: [member-1]}}
"#;

fn status_summed_and_health_gates_a_rollout(hub: &Hub, members: &Members) {
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    for c in MEMBERS {
        report_ready(&m(c), 3);
    }
    eventually(
        hub,
        Duration::from_secs(60),
        "the members' ready replicas summed on the hub",
        || {
            hub.ok(&[
                "get",
                "clonesets.apps.kruise.io",
                "web",
                "-n",
                "demo",
                "-o",
                "jsonpath={.status.readyReplicas}/{.status.updatedReadyReplicas}",
            ])
            .trim()
                == "9/9"
        },
    );
    let health = || binding(hub, "{.status.aggregatedStatus[*].health}");
    eventually(
        hub,
        Duration::from_secs(30),
        "healthy in every member by the CEL rule",
        || health() == "Healthy Healthy Healthy",
    );

    // Progressive from now on: member-1 first, the others once it is healthy by the rule.
    hub.ok_stdin(&["apply", "-f", "-"], &format!("{POLICY}{GATED}"));
    let image = |c: &str| {
        member_get(
            &m(c),
            "clonesets.apps.kruise.io/web",
            "{.spec.template.spec.containers[0].image}",
        )
    };
    let complete = || {
        binding(
            hub,
            "{.status.rollout.conditions[?(@.type==\"Complete\")].status}",
        ) == "True"
    };
    eventually(
        hub,
        Duration::from_secs(60),
        "the rollout of the unchanged CloneSet complete",
        complete,
    );
    let changed = clone_set(9).replace("nginx:1.27", "nginx:1.28");
    hub.ok_stdin(&["apply", "-f", "-"], &changed);
    eventually(
        hub,
        Duration::from_secs(30),
        "member-1 on the new image",
        || image("member-1") == "nginx:1.28",
    );
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(
        [image("member-2"), image("member-3")],
        ["nginx:1.27", "nginx:1.27"],
        "member-1 is not healthy by the rule (its controller has not seen the new spec): the others wait"
    );
    report_ready(&m("member-1"), 3);
    eventually(
        hub,
        Duration::from_secs(30),
        "the others on the new image once member-1 is healthy",
        || image("member-2") == "nginx:1.28" && image("member-3") == "nginx:1.28",
    );
}
