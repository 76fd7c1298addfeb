//! Deleting a template removes it from every member, unless it is orphaned or its policy
//! preserves resources on deletion.

use std::time::Duration;

use crate::common::fleet::eventually;
use crate::common::Hub;
use flotilla_testkit::Members;

use super::{deployment, member_replicas, MEMBERS};

/// Deleting the template removes it everywhere; an orphaned one stays.
pub(super) fn delete_or_keep(hub: &Hub, members: &Members) {
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    hub.ok_stdin(
        &["apply", "-f", "-"],
        &deployment("keep", 1, "propagation.flotilla.io/orphan: \"true\""),
    );
    hub.ok_stdin(&["apply", "-f", "-"], &deployment("keep2", 1, ""));
    hub.ok_stdin(
        &["apply", "-f", "-"],
        r#"apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {name: keep, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: keep}
  placement:
    clusterAffinity: {clusterNames: [member-3]}
---
apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {name: keep2, namespace: demo}
spec:
  preserveResourcesOnDeletion: true
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: keep2}
  placement:
    clusterAffinity: {clusterNames: [member-3]}
"#,
    );
    eventually(hub, Duration::from_secs(60), "keep in member-3", || {
        member_replicas(&m("member-3"), "keep") == "1"
            && member_replicas(&m("member-3"), "keep2") == "1"
    });
    hub.ok(&["delete", "deployment", "web", "keep", "keep2", "-n", "demo"]);
    eventually(
        hub,
        Duration::from_secs(60),
        "web gone from every member",
        || {
            MEMBERS
                .iter()
                .all(|c| member_replicas(&m(c), "web").is_empty())
        },
    );
    eventually(
        hub,
        Duration::from_secs(30),
        "the bindings are gone",
        || {
            let out = hub.kubectl(&["get", "rb", "-n", "demo", "-o", "name"]);
            let s = String::from_utf8_lossy(&out.stdout).to_string();
            !s.contains("web-deployment") && !s.contains("keep-deployment")
        },
    );
    assert_eq!(
        member_replicas(&m("member-3"), "keep"),
        "1",
        "an orphaned copy stays"
    );
    assert_eq!(
        member_replicas(&m("member-3"), "keep2"),
        "1",
        "preserveResourcesOnDeletion keeps the copy"
    );
}
