//! What the MCS controller wants for one `ServiceExport` (pure, no I/O): which clusters export
//! the Service, whether the export is valid or in conflict, the `ServiceImport`, and what the
//! members of the namespace receive.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_apis::multicluster::{
    ClusterStatus, ServiceImport, ServiceImportSpec, ServiceImportStatus, ServicePort, MANAGED_BY,
    MANAGED_BY_LABEL, SERVICE_NAME_LABEL, SOURCE_CLUSTER_LABEL,
};
use flotilla_apis::work::v1alpha1::ResourceBinding;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::ObjectMeta;
use kube::ResourceExt;
use serde_json::{json, Value};

use crate::propagation::workload::fnv64;

/// Reason of `Valid=False`: there is no Service of the export's name.
pub const REASON_NO_SERVICE: &str = "ServiceNotFound";
/// Reason of `Valid=False`: an ExternalName Service cannot be exported.
pub const REASON_TYPE_INVALID: &str = "ServiceTypeInvalid";
/// Reason of `Valid=False`: no policy propagates the Service, so no cluster runs it.
pub const REASON_NOT_PROPAGATED: &str = "ServiceNotPropagated";
/// Reason of `Valid=True`.
pub const REASON_VALID: &str = "Valid";
/// Reason of `Conflict=True`: the exporting clusters' Services have different ports.
pub const REASON_PORT_CONFLICT: &str = "PortConflict";
/// Reason of `Conflict=True`: some exporting clusters' Services are headless, some are not.
pub const REASON_TYPE_CONFLICT: &str = "TypeConflict";
/// Reason of `Conflict=False`.
pub const REASON_NO_CONFLICTS: &str = "NoConflicts";

/// The clusters a binding's object goes to: its placement, the clusters of the workloads it
/// follows, and those still serving while a graceful eviction runs.
pub fn binding_clusters(b: &ResourceBinding) -> BTreeSet<String> {
    let spec = &b.spec;
    spec.clusters
        .iter()
        .chain(spec.required_by.iter().flat_map(|r| &r.clusters))
        .map(|t| t.name.clone())
        .chain(
            spec.graceful_eviction_tasks
                .iter()
                .map(|t| t.from_cluster.clone()),
        )
        .collect()
}

/// Where a binding puts its object, as far as multi-cluster services care.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The binding's namespace.
    pub namespace: Option<String>,
    /// The Service's name, when the binding's object is a Service.
    pub service: Option<String>,
    /// [`binding_clusters`].
    pub clusters: BTreeSet<String>,
}

impl Placed {
    /// Where `b` puts its object.
    pub fn of(b: &ResourceBinding) -> Placed {
        let r = &b.spec.resource;
        Placed {
            namespace: b.namespace(),
            service: r.is_service().then(|| r.name.clone()),
            clusters: binding_clusters(b),
        }
    }
}

/// The clusters that run Service `ns`/`name`: those of the binding of that Service.
pub fn exporting_clusters<'a>(
    placed: impl IntoIterator<Item = &'a Placed>,
    ns: &str,
    name: &str,
) -> BTreeSet<String> {
    placed
        .into_iter()
        .filter(|p| p.namespace.as_deref() == Some(ns) && p.service.as_deref() == Some(name))
        .flat_map(|p| p.clusters.iter().cloned())
        .collect()
}

/// The members of namespace `ns`: every cluster one of its bindings reaches.
pub fn namespace_clusters<'a>(
    placed: impl IntoIterator<Item = &'a Placed>,
    ns: &str,
) -> BTreeSet<String> {
    placed
        .into_iter()
        .filter(|p| p.namespace.as_deref() == Some(ns))
        .flat_map(|p| p.clusters.iter().cloned())
        .collect()
}

/// Why Service `service` cannot be exported (reason, message), or `None`.
pub fn invalid(
    service: Option<&Service>,
    exporting: &BTreeSet<String>,
) -> Option<(&'static str, String)> {
    let Some(service) = service else {
        return Some((
            REASON_NO_SERVICE,
            "there is no Service of this name in the namespace".into(),
        ));
    };
    let type_ = service.spec.as_ref().and_then(|s| s.type_.as_deref());
    if type_ == Some("ExternalName") {
        return Some((
            REASON_TYPE_INVALID,
            "an ExternalName Service cannot be exported".into(),
        ));
    }
    if exporting.is_empty() {
        return Some((
            REASON_NOT_PROPAGATED,
            "no member cluster runs the Service: no propagation policy places it".into(),
        ));
    }
    None
}

/// What the cluster set must agree on about a Service: its ports and whether it is headless.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    /// The ports, sorted (name, protocol, port).
    pub ports: Vec<ServicePort>,
    /// `spec.clusterIP: None`.
    pub headless: bool,
}

/// The [`Shape`] of a Service given as JSON (the hub's, or the one rendered for a member).
pub fn shape(service: &Value) -> Shape {
    let spec = &service["spec"];
    let mut ports: Vec<ServicePort> = spec["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| ServicePort {
            name: p["name"]
                .as_str()
                .filter(|n| !n.is_empty())
                .map(str::to_owned),
            protocol: Some(p["protocol"].as_str().unwrap_or("TCP").to_owned()),
            app_protocol: p["appProtocol"].as_str().map(str::to_owned),
            port: p["port"].as_i64().unwrap_or_default() as i32,
        })
        .collect();
    ports.sort_by(|a, b| (&a.name, &a.protocol, a.port).cmp(&(&b.name, &b.protocol, b.port)));
    Shape {
        ports,
        headless: spec["clusterIP"].as_str() == Some("None"),
    }
}

/// Whether the exporting clusters disagree on the Service (reason, message), or `None`. The
/// import then follows the hub's Service (KEP-1645 resolves a conflict by one side's
/// properties; flotilla's side is the template every member's copy is rendered from).
pub fn conflict(shapes: &BTreeMap<String, Shape>) -> Option<(&'static str, String)> {
    let mut groups: Vec<(&Shape, Vec<&str>)> = Vec::new();
    for (cluster, s) in shapes {
        match groups.iter_mut().find(|(g, _)| *g == s) {
            Some((_, clusters)) => clusters.push(cluster),
            None => groups.push((s, vec![cluster])),
        }
    }
    if groups.len() < 2 {
        return None;
    }
    let headless: BTreeSet<bool> = groups.iter().map(|(s, _)| s.headless).collect();
    let reason = if headless.len() > 1 {
        REASON_TYPE_CONFLICT
    } else {
        REASON_PORT_CONFLICT
    };
    let described: Vec<String> = groups
        .iter()
        .map(|(s, clusters)| {
            let ports: Vec<String> = s
                .ports
                .iter()
                .map(|p| {
                    format!(
                        "{}{}/{}",
                        p.name
                            .as_deref()
                            .map(|n| format!("{n}:"))
                            .unwrap_or_default(),
                        p.port,
                        p.protocol.as_deref().unwrap_or("TCP")
                    )
                })
                .collect();
            let kind = if s.headless { " headless" } else { "" };
            format!("{} [{}]{kind}", clusters.join(","), ports.join(" "))
        })
        .collect();
    Some((
        reason,
        format!(
            "the exporting clusters' Services differ: {}; the ServiceImport follows the hub's Service",
            described.join("; ")
        ),
    ))
}

/// The `ServiceImport` of Service `service` exported by `exporting`: the Service's ports, type
/// `Headless` for a headless Service and `ClusterSetIP` otherwise (no cluster-set IP is
/// allocated: `ips` stays empty and clients resolve the endpoints by DNS).
pub fn service_import(service: &Service, exporting: &BTreeSet<String>) -> ServiceImport {
    let value = serde_json::to_value(service).unwrap_or_default();
    let s = shape(&value);
    let spec = service.spec.as_ref();
    // In the Service's order, not the sorted one.
    let ports = spec
        .and_then(|s| s.ports.as_ref())
        .into_iter()
        .flatten()
        .map(|p| ServicePort {
            name: p.name.clone().filter(|n| !n.is_empty()),
            protocol: Some(p.protocol.clone().unwrap_or_else(|| "TCP".into())),
            app_protocol: p.app_protocol.clone(),
            port: p.port,
        })
        .collect();
    ServiceImport {
        metadata: ObjectMeta {
            name: Some(service.name_any()),
            namespace: service.namespace(),
            ..ObjectMeta::default()
        },
        spec: ServiceImportSpec {
            ports,
            ips: vec![],
            type_: if s.headless {
                "Headless"
            } else {
                "ClusterSetIP"
            }
            .into(),
            session_affinity: spec.and_then(|s| s.session_affinity.clone()),
        },
        status: Some(ServiceImportStatus {
            clusters: exporting
                .iter()
                .map(|c| ClusterStatus { cluster: c.clone() })
                .collect(),
        }),
    }
}

/// The copy of a hub slice (an agent's mirror in `flotilla-es-<cluster>`) that members of
/// namespace `ns` receive: named `<cluster>.<slice>`, labelled with its source cluster and the
/// ServiceImport's name, and not with `kubernetes.io/service-name` (it belongs to the
/// ServiceImport, not to the member's own Service, and must not be exported back).
pub fn member_slice(slice: &EndpointSlice, ns: &str) -> Option<Value> {
    let labels = slice.labels();
    let cluster = labels.get(SOURCE_CLUSTER_LABEL)?;
    let service = labels.get(SERVICE_NAME_LABEL)?;
    let hub_name = slice.name_any();
    let local = hub_name
        .strip_prefix(&format!("{ns}."))
        .unwrap_or(&hub_name);
    let mut name = format!("{cluster}.{local}");
    if name.len() > 253 {
        let hash = fnv64(name.as_bytes());
        name = format!("{}-{hash:016x}", &name[..236]);
    }
    Some(json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": {
                SOURCE_CLUSTER_LABEL: cluster,
                SERVICE_NAME_LABEL: service,
                MANAGED_BY_LABEL: MANAGED_BY,
            },
        },
        "addressType": slice.address_type,
        "endpoints": slice.endpoints,
        "ports": slice.ports.clone().unwrap_or_default(),
    }))
}

/// What a member of the namespace receives for one export: the ServiceImport, then every
/// exporting cluster's slices (ordered by name, so the Work only changes when they do).
pub fn import_manifests(import: &ServiceImport, slices: &[&EndpointSlice]) -> Vec<Value> {
    let ns = import.namespace().unwrap_or_default();
    let mut body = serde_json::to_value(import).unwrap_or_default();
    body["apiVersion"] = json!("multicluster.x-k8s.io/v1alpha1");
    body["kind"] = json!("ServiceImport");
    let mut copies: Vec<Value> = slices.iter().filter_map(|s| member_slice(s, &ns)).collect();
    copies.sort_by(|a, b| {
        a["metadata"]["name"]
            .as_str()
            .cmp(&b["metadata"]["name"].as_str())
    });
    std::iter::once(body).chain(copies).collect()
}
