//! Duplicated placement: the whole object in every cluster, and template edits follow.

use std::time::Duration;

use crate::common::fleet::eventually;
use crate::common::Hub;
use flotilla_testkit::Members;

use super::{color, MEMBERS};

/// Duplicated: the whole object in every cluster; a template edit reaches the members.
pub(super) fn duplicated_config(hub: &Hub, members: &Members) {
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    hub.ok_stdin(
        &["apply", "-f", "-"],
        r#"apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: demo, labels: {shared: "yes"}}
data: {color: blue}
---
apiVersion: policy.flotilla.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: shared-config}
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: ConfigMap
    labelSelector: {matchLabels: {shared: "yes"}}
  placement:
    replicaScheduling: {replicaSchedulingType: Duplicated}
"#,
    );
    eventually(
        hub,
        Duration::from_secs(60),
        "settings in every member",
        || MEMBERS.iter().all(|c| color(&m(c)) == "blue"),
    );
    // A template edit reaches the members.
    hub.ok(&[
        "patch",
        "cm",
        "settings",
        "-n",
        "demo",
        "--type=merge",
        "-p",
        r#"{"data":{"color":"green"}}"#,
    ]);
    eventually(
        hub,
        Duration::from_secs(30),
        "the edit in every member",
        || MEMBERS.iter().all(|c| color(&m(c)) == "green"),
    );
}
