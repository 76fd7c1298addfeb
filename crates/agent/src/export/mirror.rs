//! What the agent mirrors (pure, no I/O): the member's EndpointSlices of the Services the hub
//! asks it to export, as the copies it keeps on the hub.

use std::collections::{BTreeMap, BTreeSet};

use flotilla_apis::multicluster::{
    ServiceExport, MANAGED_BY, MANAGED_BY_LABEL, SERVICE_NAMESPACE_LABEL, SERVICE_NAME_LABEL,
    SOURCE_CLUSTER_LABEL,
};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::ResourceExt;
use serde_json::{json, Value};

/// The label the member's own EndpointSlice controller puts on a Service's slices.
pub const KUBE_SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";
/// Annotation of a copy on the hub: a hash of its content, so an unchanged copy is not
/// written again.
pub const CONTENT_HASH_ANNOTATION: &str = "multicluster.flotilla.io/content-hash";

/// The Services (`namespace`, `name`) the export requests ask for; a request without its
/// labels names nothing.
pub fn requested<'a>(
    requests: impl IntoIterator<Item = &'a ServiceExport>,
) -> BTreeSet<(String, String)> {
    requests
        .into_iter()
        .filter_map(|r| {
            let labels = r.labels();
            Some((
                labels.get(SERVICE_NAMESPACE_LABEL)?.clone(),
                labels.get(SERVICE_NAME_LABEL)?.clone(),
            ))
        })
        .collect()
}

/// The member's Service a slice belongs to, if it is the member's own (not a copy flotilla
/// delivered from the cluster set, which must never be exported back).
pub fn local_service(slice: &EndpointSlice) -> Option<(String, String)> {
    let labels = slice.labels();
    if labels.contains_key(SOURCE_CLUSTER_LABEL)
        || labels.get(MANAGED_BY_LABEL).map(String::as_str) == Some(MANAGED_BY)
    {
        return None;
    }
    Some((
        slice.namespace()?,
        labels.get(KUBE_SERVICE_NAME_LABEL)?.clone(),
    ))
}

/// The copies on the hub, by name, of `cluster`'s slices of the `requested` Services, in the
/// execution namespace `namespace`.
pub fn desired<'a>(
    cluster: &str,
    namespace: &str,
    requested: &BTreeSet<(String, String)>,
    slices: impl IntoIterator<Item = &'a EndpointSlice>,
) -> BTreeMap<String, Value> {
    slices
        .into_iter()
        .filter_map(|s| {
            let service = local_service(s)?;
            requested
                .contains(&service)
                .then(|| copy(cluster, namespace, &service.0, &service.1, s))
        })
        .collect()
}

/// The hub's name of a copy of slice `slice` of namespace `ns`: `<ns>.<slice>` (namespaces
/// have no dots), cut to 253 characters with a hash of the whole when longer.
pub fn copy_name(ns: &str, slice: &str) -> String {
    let full = format!("{ns}.{slice}");
    if full.len() <= 253 {
        return full;
    }
    let mut cut: String = full.chars().take(236).collect();
    cut.push_str(&format!("-{:016x}", fnv64(full.as_bytes())));
    cut
}

/// The copy of member slice `s` (of Service `ns`/`service`) kept on the hub: its address type,
/// ports and endpoints (addresses, conditions, hostname, zone; not the node or pod it names,
/// which mean nothing outside the member), labelled with its source cluster and Service.
pub fn copy(
    cluster: &str,
    namespace: &str,
    ns: &str,
    service: &str,
    s: &EndpointSlice,
) -> (String, Value) {
    let name = copy_name(ns, &s.name_any());
    let endpoints: Vec<Value> = s
        .endpoints
        .iter()
        .map(|e| {
            let mut v = json!({"addresses": e.addresses});
            for (key, value) in [
                ("conditions", serde_json::to_value(&e.conditions).ok()),
                ("hostname", e.hostname.clone().map(Value::String)),
                ("zone", e.zone.clone().map(Value::String)),
            ] {
                if let Some(value) = value.filter(|v| !v.is_null()) {
                    v[key] = value;
                }
            }
            v
        })
        .collect();
    let mut body = json!({
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {
                SOURCE_CLUSTER_LABEL: cluster,
                SERVICE_NAME_LABEL: service,
                SERVICE_NAMESPACE_LABEL: ns,
                MANAGED_BY_LABEL: MANAGED_BY,
            },
        },
        "addressType": s.address_type,
        "endpoints": endpoints,
        "ports": s.ports.clone().unwrap_or_default(),
    });
    let hash = format!("{:016x}", fnv64(body.to_string().as_bytes()));
    body["metadata"]["annotations"] = json!({CONTENT_HASH_ANNOTATION: hash});
    (name, body)
}

/// FNV-1a, 64 bits: a content hash that is the same on every build.
fn fnv64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}
