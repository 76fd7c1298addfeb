//! Conformance: every built-in resource of Kubernetes 1.32 is served as a stored object, with
//! kube-apiserver's discovery entry, defaults, validation, subresources and `kubectl get`
//! columns. The hub stores and propagates pods, nodes, volumes and the rest; it runs nothing
//! for them. Typed kubectl commands (`run`, `create priorityclass|quota`, `certificate
//! approve`, `scale`) send protobuf, so they also prove the protobuf path for these kinds.
//! One file per area: [`pods`], [`priority`], [`certificates`], [`storage`] (with replication
//! controllers); discovery is here.

mod certificates;
mod pods;
mod priority;
mod storage;

use serde_json::Value;

use crate::common::{json, Hub};

pub(super) fn get(hub: &Hub, args: &[&str]) -> Value {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "json"]);
    json(&hub.ok(&all))
}

/// The row of `kubectl get` for one object, split on runs of spaces (no header).
pub(super) fn row(hub: &Hub, args: &[&str]) -> Vec<String> {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    all.push("--no-headers");
    let out = hub.ok(&all);
    out.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(String::from)
        .collect()
}

#[test]
fn api_resources_lists_the_kinds_of_kube_apiserver() {
    let hub = Hub::start();
    let out = hub.ok(&["api-resources", "--no-headers"]);
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    // NAME [SHORTNAMES] APIVERSION NAMESPACED KIND, as kube-apiserver 1.32 lists them.
    let want: &[&[&str]] = &[
        &["pods", "po", "v1", "true", "Pod"],
        &["podtemplates", "v1", "true", "PodTemplate"],
        &[
            "replicationcontrollers",
            "rc",
            "v1",
            "true",
            "ReplicationController",
        ],
        &["limitranges", "limits", "v1", "true", "LimitRange"],
        &["resourcequotas", "quota", "v1", "true", "ResourceQuota"],
        &["nodes", "no", "v1", "false", "Node"],
        &["persistentvolumes", "pv", "v1", "false", "PersistentVolume"],
        &[
            "controllerrevisions",
            "apps/v1",
            "true",
            "ControllerRevision",
        ],
        &[
            "endpointslices",
            "discovery.k8s.io/v1",
            "true",
            "EndpointSlice",
        ],
        &[
            "ingressclasses",
            "networking.k8s.io/v1",
            "false",
            "IngressClass",
        ],
        &[
            "priorityclasses",
            "pc",
            "scheduling.k8s.io/v1",
            "false",
            "PriorityClass",
        ],
        &["runtimeclasses", "node.k8s.io/v1", "false", "RuntimeClass"],
        &[
            "storageclasses",
            "sc",
            "storage.k8s.io/v1",
            "false",
            "StorageClass",
        ],
        &["csidrivers", "storage.k8s.io/v1", "false", "CSIDriver"],
        &["csinodes", "storage.k8s.io/v1", "false", "CSINode"],
        &[
            "csistoragecapacities",
            "storage.k8s.io/v1",
            "true",
            "CSIStorageCapacity",
        ],
        &[
            "volumeattachments",
            "storage.k8s.io/v1",
            "false",
            "VolumeAttachment",
        ],
        &[
            "certificatesigningrequests",
            "csr",
            "certificates.k8s.io/v1",
            "false",
            "CertificateSigningRequest",
        ],
    ];
    for w in want {
        assert!(
            rows.iter().any(|r| r.as_slice() == *w),
            "kubectl api-resources lacks {w:?}:\n{out}"
        );
    }
    let core = json(&hub.ok(&["get", "--raw", "/api/v1"]));
    let eviction = core["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["name"] == "pods/eviction"))
        .unwrap_or_else(|| panic!("no pods/eviction in {core}"));
    assert_eq!(
        (&eviction["group"], &eviction["kind"]),
        (&Value::from("policy"), &Value::from("Eviction"))
    );
    let csr = hub.ok(&["get", "--raw", "/apis/certificates.k8s.io/v1"]);
    for sub in [
        "certificatesigningrequests/approval",
        "certificatesigningrequests/status",
    ] {
        assert!(csr.contains(&format!("\"{sub}\"")), "{sub} missing: {csr}");
    }
}
