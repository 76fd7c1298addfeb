//! Multi-cluster services (KEP-1645) on the same fleet: a ServiceExport on the hub becomes a
//! ServiceImport on the hub and in every member of the namespace, with the exporting clusters'
//! EndpointSlices beside it, and `<svc>.<ns>.svc.clusterset.local` answers their ready
//! addresses. The members run KWOK, so the Deployment's pods become ready with addresses and
//! each member's EndpointSlice controller lists them; the pull agents (member-1, member-2)
//! export them to the hub, and the hub's push worker does for member-3.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::common::fleet::{condition, eventually, kc};
use crate::kdig::{ask, must};
use crate::Fleet;

/// The exported service's DNS name.
const NAME: &str = "api.demo.svc.clusterset.local";
/// The exporting clusters: two pull members (their agents report their slices) and the push
/// member (the hub's push worker reports them).
const EXPORTERS: [&str; 3] = ["member-1", "member-2", "member-3"];

fn manifests() -> &'static str {
    r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: demo}
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
metadata: {name: api, namespace: demo}
spec:
  selector: {app: api}
  ports:
  - {name: http, port: 80, protocol: TCP, targetPort: 8080}
---
apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {name: api, namespace: demo}
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
metadata: {name: api, namespace: demo}
"#
}

/// `kubectl get endpointslices -n demo -l SELECTOR -o OUTPUT` in `cluster`; None if it failed.
fn slices(f: &Fleet, cluster: &str, selector: &str, output: &str) -> Option<String> {
    let args = [
        "get",
        "endpointslices",
        "-n",
        "demo",
        "-l",
        selector,
        "-o",
        output,
    ];
    let (ok, out, _) = kc(&f.member(cluster), &args);
    ok.then_some(out)
}

/// The ready addresses of the member's own EndpointSlices of `demo/api`.
fn member_addresses(f: &Fleet, cluster: &str) -> BTreeSet<String> {
    let Some(out) = slices(f, cluster, "kubernetes.io/service-name=api", "json") else {
        return BTreeSet::new();
    };
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
    let mut ips = BTreeSet::new();
    for slice in v["items"].as_array().into_iter().flatten() {
        for ep in slice["endpoints"].as_array().into_iter().flatten() {
            if ep["conditions"]["ready"].as_bool() == Some(false) {
                continue;
            }
            for a in ep["addresses"].as_array().into_iter().flatten() {
                ips.extend(a.as_str().map(str::to_string));
            }
        }
    }
    ips
}

/// Names of the EndpointSlice copies in `cluster`'s `demo` namespace, by source cluster label.
fn imported_slices(f: &Fleet, cluster: &str) -> Vec<String> {
    let output = "jsonpath={range .items[*]}{.metadata.labels.multicluster\\.kubernetes\\.io/source-cluster}/{.metadata.name}{\"\\n\"}{end}";
    let Some(out) = slices(
        f,
        cluster,
        "multicluster.kubernetes.io/service-name=api",
        output,
    ) else {
        return Vec::new();
    };
    let mut names: Vec<String> = out.lines().map(str::to_string).collect();
    names.sort();
    names
}

fn clusterset_ips(f: &Fleet) -> Vec<String> {
    ask(f.dns, NAME, "A", &[])
        .map(|r| r.ips())
        .unwrap_or_default()
}

/// Export → import on the hub and in the members → slices → `clusterset.local` answers;
/// unexport → all gone, NXDOMAIN.
pub(crate) fn an_export_is_imported_and_answered(f: &Fleet) {
    f.hub.ok_stdin(&["apply", "-f", "-"], manifests());
    let within = Duration::from_secs(90);

    // Each exporting member's own slices list its two ready pods.
    for c in EXPORTERS {
        eventually(
            &f.hub,
            within,
            &format!("2 ready endpoints of api in {c}"),
            || member_addresses(f, c).len() == 2,
        );
    }

    // The hub's ServiceImport: the Service's ports, ClusterSetIP, both exporters.
    eventually(&f.hub, within, "ServiceImport demo/api on the hub", || {
        let out = f
            .hub
            .kubectl(&["get", "serviceimport", "api", "-n", "demo", "-o", "json"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        let mut clusters: Vec<&str> = v["status"]["clusters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["cluster"].as_str())
            .collect();
        clusters.sort();
        clusters == EXPORTERS
            && v["spec"]["type"] == "ClusterSetIP"
            && v["spec"]["ports"][0]["name"] == "http"
            && v["spec"]["ports"][0]["port"] == 80
    });
    eventually(&f.hub, within, "the export Valid", || {
        condition(&f.hub, "serviceexport/api", Some("demo"), "Valid") == "True"
    });

    // Every member of the namespace (the web Service reaches all three) gets the import and
    // both exporters' slices, named after their source cluster.
    for (c, ..) in crate::MEMBERS {
        eventually(
            &f.hub,
            within,
            &format!("the import and slices in {c}"),
            || {
                let (has_import, _, _) =
                    kc(&f.member(c), &["get", "serviceimport", "api", "-n", "demo"]);
                let slices = imported_slices(f, c);
                has_import
                    && EXPORTERS
                        .iter()
                        .all(|e| slices.iter().any(|s| s.starts_with(&format!("{e}/{e}."))))
            },
        );
    }

    // clusterset.local answers the exporters' ready addresses.
    let want: Vec<String> = EXPORTERS
        .iter()
        .flat_map(|c| member_addresses(f, c))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    eventually(&f.hub, within, &format!("{NAME} answers {want:?}"), || {
        clusterset_ips(f) == want
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
    let other = must(f.dns, "nothere.demo.svc.clusterset.local", "A", &[]);
    assert_eq!(other.status, "NXDOMAIN", "{}", other.text);

    // Unexport: the import leaves the hub and the members, the name leaves DNS.
    f.hub.ok(&[
        "delete",
        "serviceexport",
        "api",
        "-n",
        "demo",
        "--wait=false",
    ]);
    eventually(&f.hub, within, "the import gone everywhere", || {
        let hub_gone = !f
            .hub
            .kubectl(&["get", "serviceimport", "api", "-n", "demo"])
            .status
            .success();
        hub_gone
            && crate::MEMBERS.iter().all(|(c, ..)| {
                !kc(&f.member(c), &["get", "serviceimport", "api", "-n", "demo"]).0
                    && imported_slices(f, c).is_empty()
            })
    });
    eventually(&f.hub, within, &format!("{NAME} NXDOMAIN"), || {
        ask(f.dns, NAME, "A", &[]).is_some_and(|r| r.status == "NXDOMAIN")
    });
}
