//! A custom kind the hub has no compiled rules for, taught by a ResourceInterpreter (the
//! shipped OpenKruise CloneSet one): 6 replicas Divided 1:1:1 become 2/2/2 in the members,
//! written where the interpreter's `reviseReplicas` says, with the per-replica requests on the
//! binding; a change of the count re-divides it.

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
    let binding = hub.ok(&[
        "get",
        "rb",
        "web-cloneset",
        "-n",
        "demo",
        "-o",
        "jsonpath={.spec.replicas}/{.spec.replicaRequirements.resourceRequest.cpu}/{.status.conditions[?(@.type==\"Interpreted\")].status}",
    ]);
    assert_eq!(binding.trim(), "6/10m/True");
    hub.ok_stdin(&["apply", "-f", "-"], &clone_set(9));
    eventually(
        hub,
        Duration::from_secs(60),
        "the CloneSet 3/3/3 in the members",
        || MEMBERS.iter().all(|c| replicas(c) == "3"),
    );
    hub.ok(&["delete", "propagationpolicy", "clones", "-n", "demo"]);
    hub.ok(&["delete", "clonesets.apps.kruise.io", "web", "-n", "demo"]);
    eventually(
        hub,
        Duration::from_secs(60),
        "the CloneSet gone from the members",
        || MEMBERS.iter().all(|c| replicas(c).is_empty()),
    );
}
