//! propagateDeps: what a workload's pods refer to (ConfigMaps, Secrets) follows it into its
//! members, moves with it, and leaves with it.

use std::time::Duration;

use crate::common::fleet::{eventually, flotilla, flotilla_ok};
use crate::common::Hub;
use flotilla_testkit::Members;

use super::{member_get, member_replicas};

/// What the pods refer to follows the Deployment, and moves and leaves with it.
pub(super) fn follow_the_workload(hub: &Hub, members: &Members) {
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    hub.ok_stdin(
        &["apply", "-f", "-"],
        r#"apiVersion: v1
kind: ConfigMap
metadata: {name: api-config, namespace: demo}
data: {mode: fast}
---
apiVersion: v1
kind: Secret
metadata: {name: api-secret, namespace: demo}
stringData: {token: s3cret}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: demo}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        envFrom: [{configMapRef: {name: api-config}}]
      volumes:
      - {name: creds, secret: {secretName: api-secret}}
"#,
    );
    let deps_policy = |clusters: &str| {
        format!(
            r#"apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: api, namespace: demo}}
spec:
  propagateDeps: true
  resourceSelectors:
  - {{apiVersion: apps/v1, kind: Deployment, name: api}}
  placement:
    clusterAffinity: {{clusterNames: [{clusters}]}}
"#
        )
    };
    let mode = |c: &str| member_get(&m(c), "cm/api-config", "{.data.mode}");
    let has_secret =
        |c: &str| !member_get(&m(c), "secret/api-secret", "{.metadata.name}").is_empty();
    hub.ok_stdin(&["apply", "-f", "-"], &deps_policy("member-1, member-2"));
    eventually(
        hub,
        Duration::from_secs(60),
        "api-config and api-secret follow api into member-1 and member-2",
        || {
            ["member-1", "member-2"]
                .iter()
                .all(|c| mode(c) == "fast" && has_secret(c) && member_replicas(&m(c), "api") == "1")
        },
    );
    assert_eq!(
        mode("member-3"),
        "",
        "no dependency where the workload is not"
    );
    let explain = flotilla_ok(
        hub,
        &["explain", "placement", "cm/api-config", "-n", "demo"],
    );
    assert!(
        explain.contains("needed by binding api-deployment in member-1, member-2"),
        "{explain}"
    );
    let unknown = flotilla(hub, &["explain", "placement", "nosuchkind/x", "-n", "demo"]);
    assert!(!unknown.status.success());
    assert!(
        String::from_utf8_lossy(&unknown.stderr)
            .contains("the hub serves no kind called \"nosuchkind\""),
        "{}",
        String::from_utf8_lossy(&unknown.stderr)
    );
    hub.ok(&[
        "patch",
        "cm",
        "api-config",
        "-n",
        "demo",
        "--type=merge",
        "-p",
        r#"{"data":{"mode":"safe"}}"#,
    ]);
    eventually(
        hub,
        Duration::from_secs(30),
        "the dependency's edit reaches its members",
        || mode("member-1") == "safe" && mode("member-2") == "safe",
    );
    // A re-created dependency is attached again.
    hub.ok(&["delete", "cm", "api-config", "-n", "demo"]);
    hub.ok_stdin(
        &["apply", "-f", "-"],
        "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"api-config\", \"namespace\": \"demo\"}, \"data\": {\"mode\": \"anew\"}}",
    );
    eventually(
        hub,
        Duration::from_secs(60),
        "the re-created dependency reaches its members",
        || mode("member-1") == "anew" && mode("member-2") == "anew",
    );
    // Changing the policy's clusters moves the workload and its dependencies.
    hub.ok_stdin(&["apply", "-f", "-"], &deps_policy("member-3"));
    eventually(
        hub,
        Duration::from_secs(60),
        "api and its dependencies move to member-3",
        || {
            member_replicas(&m("member-3"), "api") == "1"
                && mode("member-3") == "anew"
                && has_secret("member-3")
                && ["member-1", "member-2"].iter().all(|c| {
                    mode(c).is_empty() && !has_secret(c) && member_replicas(&m(c), "api").is_empty()
                })
        },
    );
    // Deleting the workload takes its dependencies out of the members; the hub keeps them.
    hub.ok(&["delete", "deployment", "api", "-n", "demo"]);
    eventually(
        hub,
        Duration::from_secs(60),
        "api's dependencies leave member-3 with it",
        || mode("member-3").is_empty() && !has_secret("member-3"),
    );
    hub.ok(&["get", "cm/api-config", "secret/api-secret", "-n", "demo"]);
}
