//! Propagation end to end on three real member clusters: a Deployment and a policy on the hub
//! become Works, replicas divided by weight, overrides per cluster, status summed back on the
//! hub (`kubectl rollout status` works there), policy changes move the workload, and deleting
//! the template removes it everywhere (or leaves it, when orphaned); a custom kind is divided by
//! its ResourceInterpreter; a progressive rollout goes group by group, stops on failure, is
//! undone and paused.

#[path = "../common/mod.rs"]
mod common;

mod deletion;
mod dependencies;
mod divided;
mod duplicated;
mod failover;
mod interpreted;
mod overrides;
mod rollout;

use std::time::Duration;

use common::fleet::{eventually, flotilla_ok, kc};
use common::Hub;
use flotilla_testkit::Members;

const MEMBERS: [&str; 3] = ["member-1", "member-2", "member-3"];

fn deployment(name: &str, replicas: u32, annotations: &str) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: demo
  labels: {{app: {name}}}
  annotations: {{{annotations}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers: [{{name: app, image: nginx:1.27}}]
"#
    )
}

fn weighted_policy(weights: &[(&str, u32)]) -> String {
    let list: Vec<String> = weights
        .iter()
        .map(|(c, w)| {
            format!("        - targetCluster: {{clusterNames: [{c}]}}\n          weight: {w}")
        })
        .collect();
    let names: Vec<&str> = weights.iter().map(|(c, _)| *c).collect();
    format!(
        r#"apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: web, namespace: demo}}
spec:
  resourceSelectors:
  - {{apiVersion: apps/v1, kind: Deployment, name: web}}
  placement:
    clusterAffinity: {{clusterNames: [{}]}}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
{}
"#,
        names.join(", "),
        list.join("\n")
    )
}

/// A JSONPath `path` of object `what` (e.g. `deploy/web`) in namespace demo of a member; ""
/// when it is not there or the member does not answer within 3 s.
fn member_get(m: &std::path::Path, what: &str, path: &str) -> String {
    let (ok, out, _) = kc(
        m,
        &[
            "get",
            what,
            "-n",
            "demo",
            "-o",
            &format!("jsonpath={path}"),
            "--request-timeout=3s",
        ],
    );
    if ok {
        out.trim().to_owned()
    } else {
        String::new()
    }
}

/// `spec.replicas` of a Deployment in a member ("" when it is not there).
fn member_replicas(m: &std::path::Path, name: &str) -> String {
    member_get(m, &format!("deploy/{name}"), "{.spec.replicas}")
}

/// `data.color` of the ConfigMap `settings` in a member ("" when it is not there).
fn color(m: &std::path::Path) -> String {
    member_get(m, "cm/settings", "{.data.color}")
}

#[test]
fn templates_and_policies_run_in_the_right_members() {
    let members = Members::up(3).expect("member clusters (scripts/members build)");
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    // Before the members join, so their first API discovery reports the kind.
    for c in MEMBERS {
        interpreted::install_crd(&m(c));
    }
    // Short health and failover timings, so the failover step takes seconds, not minutes.
    let hub = Hub::start_with(&[
        "--heartbeat-interval",
        "2s",
        "--cluster-grace-period",
        "10s",
        "--failover-toleration",
        "5s",
        "--failback-after",
        "20s",
    ]);
    for c in MEMBERS {
        let region = if c == "member-3" { "ap" } else { "eu" };
        flotilla_ok(
            &hub,
            &[
                "join",
                c,
                "--member-kubeconfig",
                m(c).to_str().unwrap(),
                "--region",
                region,
            ],
        );
    }
    for c in MEMBERS {
        eventually(
            &hub,
            Duration::from_secs(60),
            &format!("{c} ready with APIs"),
            || {
                let out = hub.kubectl(&[
                "get",
                &format!("cluster/{c}"),
                "-o",
                "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}/{.status.apiEnablements[*].groupVersion}",
            ]);
                let s = String::from_utf8_lossy(&out.stdout);
                s.starts_with("True/") && s.contains("apps/v1")
            },
        );
    }

    divided::divided_evenly(&hub, &members);
    overrides::image_override(&hub, &members);
    divided::reweighted(&hub, &members);
    duplicated::duplicated_config(&hub, &members);
    dependencies::follow_the_workload(&hub, &members);
    interpreted::custom_kind_divided(&hub, &members);
    rollout::progressive(&hub, &members);
    deletion::delete_or_keep(&hub, &members);
    failover::failover_and_failback(&hub, &members);
}
