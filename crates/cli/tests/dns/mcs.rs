//! Multi-cluster services (KEP-1645) on the same fleet: a ServiceExport on the hub becomes a
//! ServiceImport on the hub and in every member of the namespace, with the exporting clusters'
//! EndpointSlices beside it, and `<svc>.<ns>.svc.clusterset.local` answers their ready
//! addresses. The members run KWOK, so the Deployment's pods become ready with addresses and
//! each member's EndpointSlice controller lists them; the pull agents (member-1, member-2)
//! export them to the hub, and the hub's push worker does for member-3. The steps: export →
//! imports and slices, the clusterset name, endpoint changes, a conflict, unexport.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::common::fleet::{condition, eventually, kc};
use crate::kdig::{ask, must};
use crate::Fleet;

/// The exporting clusters: two pull members and the push member.
const MEMBERS: [&str; 3] = ["member-1", "member-2", "member-3"];

/// The exported service's clusterset name.
const NAME: &str = "api.shop.svc.clusterset.local";
const WITHIN: Duration = Duration::from_secs(90);

const MANIFESTS: &str = r#"apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: api, image: registry.invalid/api:1, ports: [{containerPort: 8080}]}]
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec:
  selector: {app: api}
  ports:
  - {name: http, port: 80, protocol: TCP, targetPort: 8080}
---
apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {name: api, namespace: shop}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: api}
  - {apiVersion: v1, kind: Service, name: api}
  placement:
    clusterAffinity: {clusterNames: [member-1, member-2, member-3]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
---
apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceExport
metadata: {name: api, namespace: shop}
"#;

/// `kubectl get endpointslices -n shop -l SELECTOR -o json` items in `cluster`.
fn slices(f: &Fleet, cluster: &str, selector: &str) -> Vec<serde_json::Value> {
    let (ok, out, _) = kc(
        &f.member(cluster),
        &[
            "get",
            "endpointslices",
            "-n",
            "shop",
            "-l",
            selector,
            "-o",
            "json",
        ],
    );
    if !ok {
        return Vec::new();
    }
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
    v["items"].as_array().cloned().unwrap_or_default()
}

/// The ready addresses of the member's own slices of `shop/api`.
fn own_addresses(f: &Fleet, cluster: &str) -> BTreeSet<String> {
    addresses(f, cluster, "kubernetes.io/service-name=api")
}

/// The ready addresses of the slices matching `selector` in `cluster`.
fn addresses(f: &Fleet, cluster: &str, selector: &str) -> BTreeSet<String> {
    let mut ips = BTreeSet::new();
    for s in slices(f, cluster, selector) {
        for ep in s["endpoints"].as_array().into_iter().flatten() {
            if ep["conditions"]["ready"].as_bool() == Some(false) {
                continue;
            }
            for a in ep["addresses"].as_array().into_iter().flatten() {
                ips.extend(a.as_str().map(str::to_owned));
            }
        }
    }
    ips
}

/// `(source cluster, name)` of the imported slices in `cluster`.
fn imported(f: &Fleet, cluster: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> =
        slices(f, cluster, "multicluster.kubernetes.io/service-name=api")
            .iter()
            .map(|s| {
                let m = &s["metadata"];
                (
                    m["labels"]["multicluster.kubernetes.io/source-cluster"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    m["name"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
    v.sort();
    v
}

fn hub_import(f: &Fleet) -> serde_json::Value {
    let out = f
        .hub
        .kubectl(&["get", "serviceimport", "api", "-n", "shop", "-o", "json"]);
    serde_json::from_slice(&out.stdout).unwrap_or_default()
}

/// Export → hub import (ports, type, clusters), Valid, and the import with every exporter's
/// slices (`<cluster>.<slice>`, source-cluster label) in every member.
pub(crate) fn export_imports_everywhere(f: &Fleet) {
    f.hub.ok_stdin(&["apply", "-f", "-"], MANIFESTS);
    for c in MEMBERS {
        eventually(
            &f.hub,
            WITHIN,
            &format!("2 ready pods of api in {c}"),
            || own_addresses(f, c).len() == 2,
        );
    }
    eventually(&f.hub, WITHIN, "ServiceImport shop/api on the hub", || {
        let v = hub_import(f);
        let clusters: BTreeSet<&str> = v["status"]["clusters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["cluster"].as_str())
            .collect();
        clusters == MEMBERS.into_iter().collect()
            && v["spec"]["type"] == "ClusterSetIP"
            && v["spec"]["ports"].as_array().map(Vec::len) == Some(1)
            && v["spec"]["ports"][0]["name"] == "http"
            && v["spec"]["ports"][0]["port"] == 80
            && v["spec"]["ports"][0]["protocol"] == "TCP"
    });
    eventually(&f.hub, WITHIN, "the export Valid, no Conflict", || {
        condition(&f.hub, "serviceexport/api", Some("shop"), "Valid") == "True"
            && condition(&f.hub, "serviceexport/api", Some("shop"), "Conflict") == "False"
    });
    for c in MEMBERS {
        eventually(
            &f.hub,
            WITHIN,
            &format!("the import and slices in {c}"),
            || {
                let (has, out, _) = kc(
                    &f.member(c),
                    &["get", "serviceimport", "api", "-n", "shop", "-o", "json"],
                );
                let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
                let got = imported(f, c);
                has && v["spec"]["ports"][0]["port"] == 80
                    && MEMBERS.iter().all(|e| {
                        got.iter()
                            .any(|(src, name)| src == e && name.starts_with(&format!("{e}.")))
                    })
                    && got
                        .iter()
                        .all(|(src, name)| name.starts_with(&format!("{src}.")))
            },
        );
    }
}

/// `api.shop.svc.clusterset.local` answers every exporter's ready addresses, TTL 5.
pub(crate) fn clusterset_name_answers(f: &Fleet) {
    let want: Vec<String> = MEMBERS
        .iter()
        .flat_map(|c| own_addresses(f, c))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    eventually(&f.hub, WITHIN, &format!("{NAME} answers {want:?}"), || {
        ask(f.dns, NAME, "A", &[])
            .map(|r| r.ips())
            .unwrap_or_default()
            == want
    });
    let reply = must(f.dns, NAME, "A", &[]);
    assert!(reply.answer.iter().all(|r| r.ttl == 5), "{}", reply.text);
    let srv = must(f.dns, &format!("_http._tcp.{NAME}"), "SRV", &[]);
    let records = srv.data("SRV");
    assert_eq!(records.len(), 1, "{}", srv.text);
    let fields: Vec<&str> = records[0].split_whitespace().collect();
    assert_eq!(fields.len(), 4, "{}", srv.text);
    assert_eq!(fields[2], "80", "SRV port: {}", srv.text);
    assert_eq!(
        fields[3].trim_end_matches('.').to_lowercase(),
        NAME,
        "SRV target: {}",
        srv.text
    );
    let soa = must(f.dns, "clusterset.local", "SOA", &[]);
    assert_eq!(soa.status, "NOERROR", "{}", soa.text);
    let other = must(f.dns, "nothere.shop.svc.clusterset.local", "A", &[]);
    assert_eq!(other.status, "NXDOMAIN", "{}", other.text);
}

/// Scaling the Deployment down to one replica: each member's slices shrink, and so do the
/// imported copies and the clusterset answers.
pub(crate) fn endpoint_changes_follow(f: &Fleet) {
    f.hub
        .ok(&["scale", "deployment", "api", "-n", "shop", "--replicas=1"]);
    for c in MEMBERS {
        eventually(
            &f.hub,
            WITHIN,
            &format!("1 ready pod of api in {c}"),
            || own_addresses(f, c).len() == 1,
        );
    }
    let want: Vec<String> = MEMBERS
        .iter()
        .flat_map(|c| own_addresses(f, c))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    eventually(&f.hub, WITHIN, &format!("{NAME} answers {want:?}"), || {
        ask(f.dns, NAME, "A", &[])
            .map(|r| r.ips())
            .unwrap_or_default()
            == want
    });
    for c in MEMBERS {
        eventually(
            &f.hub,
            WITHIN,
            &format!("{c}'s imported slices list {want:?}"),
            || {
                let got = addresses(f, c, "multicluster.kubernetes.io/service-name=api");
                got.into_iter().collect::<Vec<_>>() == want
            },
        );
    }
}

/// An override giving member-2's Service another port: Conflict=True (PortConflict), the
/// import keeps the hub Service's port; removing the override clears it.
pub(crate) fn a_port_override_is_a_conflict(f: &Fleet) {
    f.hub.ok_stdin(
        &["apply", "-f", "-"],
        r#"apiVersion: policy.flotilla.io/v1alpha1
kind: OverridePolicy
metadata: {name: api-port, namespace: shop}
spec:
  resourceSelectors:
  - {apiVersion: v1, kind: Service, name: api}
  overrideRules:
  - targetCluster: {clusterNames: [member-2]}
    overriders:
      plaintext:
      - {path: /spec/ports/0/port, operator: replace, value: 8081}
"#,
    );
    eventually(&f.hub, WITHIN, "member-2's Service on 8081", || {
        let (_, out, _) = kc(
            &f.member("member-2"),
            &[
                "get",
                "svc",
                "api",
                "-n",
                "shop",
                "-o",
                "jsonpath={.spec.ports[0].port}",
            ],
        );
        out.trim() == "8081"
    });
    eventually(&f.hub, WITHIN, "Conflict=True", || {
        condition(&f.hub, "serviceexport/api", Some("shop"), "Conflict") == "True"
    });
    let reason = f.hub.kubectl(&[
        "get",
        "serviceexport",
        "api",
        "-n",
        "shop",
        "-o",
        "jsonpath={.status.conditions[?(@.type==\"Conflict\")].reason}",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&reason.stdout).trim(),
        "PortConflict"
    );
    assert_eq!(hub_import(f)["spec"]["ports"][0]["port"], 80);
    f.hub
        .ok(&["delete", "overridepolicy", "api-port", "-n", "shop"]);
    eventually(&f.hub, WITHIN, "Conflict=False again", || {
        condition(&f.hub, "serviceexport/api", Some("shop"), "Conflict") == "False"
    });
}

/// Deleting the ServiceExport removes the import and the slices everywhere, and the name.
pub(crate) fn unexport_removes_everything(f: &Fleet) {
    f.hub.ok(&[
        "delete",
        "serviceexport",
        "api",
        "-n",
        "shop",
        "--wait=false",
    ]);
    eventually(
        &f.hub,
        WITHIN,
        "the import and slices gone everywhere",
        || {
            !f.hub
                .kubectl(&["get", "serviceimport", "api", "-n", "shop"])
                .status
                .success()
                && MEMBERS.iter().all(|c| {
                    !kc(&f.member(c), &["get", "serviceimport", "api", "-n", "shop"]).0
                        && imported(f, c).is_empty()
                })
        },
    );
    eventually(&f.hub, WITHIN, &format!("{NAME} NXDOMAIN"), || {
        ask(f.dns, NAME, "A", &[]).is_some_and(|r| r.status == "NXDOMAIN")
    });
}
