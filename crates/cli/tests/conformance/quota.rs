//! Conformance: ResourceQuota and LimitRange. Quota admission refuses what would pass a hard
//! limit (403, kube's `exceeded quota` message) and `status.used` follows creates and deletes
//! within seconds (the upstream suite waits for it); LimitRange defaults land in new pods, and
//! its bounds are enforced.

use serde_json::Value;

use crate::common::Hub;
use crate::support::{get_in, within};

/// Waits until the quota's `status.used[resource]` reads `want`; returns the quota.
fn used_reads(hub: &Hub, ns: &str, quota: &str, resource: &str, want: &str) -> Value {
    let mut last = Value::Null;
    within(10, || {
        last = get_in(hub, &format!("resourcequota/{quota}"), ns)?;
        (last["status"]["used"][resource] == want).then(|| last.clone())
    })
    .unwrap_or_else(|| panic!("{quota}: used {resource} never read {want}: {last}"))
}

fn create_stdin(hub: &Hub, manifest: &str) -> std::process::Output {
    hub.kubectl_stdin(&["create", "-f", "-"], manifest)
}

fn configmap(ns: &str, name: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"{ns}"}}}}"#
    )
}

#[test]
fn count_quota_refuses_the_next_configmap_and_used_follows() {
    let hub = Hub::start();
    hub.ok(&["create", "namespace", "q"]);
    // The namespace's kube-root-ca.crt counts too, as in kube.
    within(5, || get_in(&hub, "configmap/kube-root-ca.crt", "q")).expect("kube-root-ca.crt");
    hub.ok_stdin(
        &["create", "-f", "-"],
        r#"{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"counts","namespace":"q"},
            "spec":{"hard":{"configmaps":"3","count/configmaps":"5","resourcequotas":"1"}}}"#,
    );
    let quota = used_reads(&hub, "q", "counts", "configmaps", "1");
    assert_eq!(quota["status"]["hard"], quota["spec"]["hard"], "{quota}");
    assert_eq!(quota["status"]["used"]["resourcequotas"], "1", "{quota}");
    assert_eq!(quota["status"]["used"]["count/configmaps"], "1", "{quota}");

    for name in ["a", "b"] {
        hub.ok_stdin(&["create", "-f", "-"], &configmap("q", name));
    }
    used_reads(&hub, "q", "counts", "configmaps", "3");

    let refused = create_stdin(&hub, &configmap("q", "c"));
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains(
            "(Forbidden): error when creating \"STDIN\": configmaps \"c\" is forbidden: exceeded \
             quota: counts, requested: configmaps=1, used: configmaps=3, limited: configmaps=3"
        ),
        "{err}"
    );
    assert!(get_in(&hub, "configmap/c", "q").is_none(), "nothing stored");

    // A second quota is past `resourcequotas`.
    let second = create_stdin(
        &hub,
        r#"{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"more","namespace":"q"},"spec":{"hard":{"pods":"1"}}}"#,
    );
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(
        err.contains("resourcequotas \"more\" is forbidden: exceeded quota: counts, requested: resourcequotas=1, used: resourcequotas=1, limited: resourcequotas=1"),
        "{err}"
    );

    // A delete frees its unit within seconds, and the freed unit can be taken.
    hub.ok(&["delete", "configmap", "a", "-n", "q"]);
    used_reads(&hub, "q", "counts", "configmaps", "2");
    hub.ok_stdin(&["create", "-f", "-"], &configmap("q", "c"));
    used_reads(&hub, "q", "counts", "configmaps", "3");

    // A status written by hand is put right.
    hub.ok(&[
        "patch",
        "resourcequota/counts",
        "-n",
        "q",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"hard":{"configmaps":"100"},"used":{"configmaps":"0"}}}"#,
    ]);
    let quota = used_reads(&hub, "q", "counts", "configmaps", "3");
    let fixed = within(10, || {
        let q = get_in(&hub, "resourcequota/counts", "q")?;
        (q["status"]["hard"] == q["spec"]["hard"]).then_some(q)
    });
    assert!(fixed.is_some(), "status.hard put back: {quota}");
}

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.stable.example.com}
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
"#;

fn widget(name: &str) -> String {
    format!(
        r#"{{"apiVersion":"stable.example.com/v1","kind":"Widget","metadata":{{"name":"{name}","namespace":"q"}}}}"#
    )
}

#[test]
fn count_quota_of_a_custom_resource() {
    let hub = Hub::start();
    hub.ok(&["create", "namespace", "q"]);
    hub.ok_stdin(&["create", "-f", "-"], CRD);
    hub.ok(&[
        "wait",
        "--for",
        "condition=Established",
        "crd/widgets.stable.example.com",
        "--timeout=30s",
    ]);
    hub.ok_stdin(
        &["create", "-f", "-"],
        r#"{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"widgets","namespace":"q"},
            "spec":{"hard":{"count/widgets.stable.example.com":"1"}}}"#,
    );
    used_reads(
        &hub,
        "q",
        "widgets",
        "count/widgets.stable.example.com",
        "0",
    );
    hub.ok_stdin(&["create", "-f", "-"], &widget("w1"));
    used_reads(
        &hub,
        "q",
        "widgets",
        "count/widgets.stable.example.com",
        "1",
    );
    let refused = create_stdin(&hub, &widget("w2"));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains(
            "widgets.stable.example.com \"w2\" is forbidden: exceeded quota: widgets, requested: \
             count/widgets.stable.example.com=1, used: count/widgets.stable.example.com=1, \
             limited: count/widgets.stable.example.com=1"
        ),
        "{err}"
    );
    hub.ok(&["delete", "widget", "w1", "-n", "q"]);
    used_reads(
        &hub,
        "q",
        "widgets",
        "count/widgets.stable.example.com",
        "0",
    );
    hub.ok_stdin(&["create", "-f", "-"], &widget("w2"));
}

fn pod(name: &str, resources: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}","namespace":"q"}},
            "spec":{{"containers":[{{"name":"c","image":"pause","resources":{resources}}}]}}}}"#
    )
}

#[test]
fn limit_range_defaults_and_compute_quota_on_pods() {
    let hub = Hub::start();
    hub.ok(&["create", "namespace", "q"]);
    hub.ok_stdin(
        &["create", "-f", "-"],
        r#"{"apiVersion":"v1","kind":"LimitRange","metadata":{"name":"limits","namespace":"q"},
            "spec":{"limits":[{"type":"Container",
              "min":{"cpu":"50m","memory":"100Mi"},"max":{"cpu":"500m","memory":"500Mi"},
              "default":{"cpu":"500m","memory":"500Mi"},"defaultRequest":{"cpu":"100m","memory":"200Mi"}}]}}"#,
    );
    // No resources: the defaults, and the annotation saying so.
    hub.ok_stdin(&["create", "-f", "-"], &pod("bare", "{}"));
    let p = get_in(&hub, "pod/bare", "q").expect("pod");
    let r = &p["spec"]["containers"][0]["resources"];
    assert_eq!(r["requests"]["cpu"], "100m", "{p}");
    assert_eq!(r["requests"]["memory"], "200Mi", "{p}");
    assert_eq!(r["limits"]["cpu"], "500m", "{p}");
    assert_eq!(r["limits"]["memory"], "500Mi", "{p}");
    let note = p["metadata"]["annotations"]["kubernetes.io/limit-ranger"]
        .as_str()
        .unwrap_or_default();
    assert!(note.starts_with("LimitRanger plugin set: "), "{p}");
    // A limit without a request: the request is the limit, not the default request.
    hub.ok_stdin(
        &["create", "-f", "-"],
        &pod("partial", r#"{"limits":{"cpu":"300m"}}"#),
    );
    let p = get_in(&hub, "pod/partial", "q").expect("pod");
    let r = &p["spec"]["containers"][0]["resources"];
    assert_eq!(r["requests"]["cpu"], "300m", "{p}");
    assert_eq!(r["limits"]["memory"], "500Mi", "{p}");
    // Below the minimum: refused in kube's words.
    let small = create_stdin(&hub, &pod("small", r#"{"requests":{"cpu":"10m"}}"#));
    let err = String::from_utf8_lossy(&small.stderr);
    assert!(
        err.contains("pods \"small\" is forbidden: minimum cpu usage per Container is 50m, but request is 10m"),
        "{err}"
    );

    // A compute quota counts the defaulted requests.
    hub.ok_stdin(
        &["create", "-f", "-"],
        r#"{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"compute","namespace":"q"},
            "spec":{"hard":{"requests.cpu":"500m","pods":"5"}}}"#,
    );
    let quota = used_reads(&hub, "q", "compute", "requests.cpu", "400m");
    assert_eq!(quota["status"]["used"]["pods"], "2", "{quota}");
    let over = create_stdin(&hub, &pod("over", r#"{"requests":{"cpu":"200m"}}"#));
    let err = String::from_utf8_lossy(&over.stderr);
    assert!(
        err.contains("pods \"over\" is forbidden: exceeded quota: compute, requested: requests.cpu=200m, used: requests.cpu=400m, limited: requests.cpu=500m"),
        "{err}"
    );
    hub.ok_stdin(
        &["create", "-f", "-"],
        &pod("fits", r#"{"requests":{"cpu":"100m"}}"#),
    );
    used_reads(&hub, "q", "compute", "requests.cpu", "500m");
}
