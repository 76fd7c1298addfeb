//! Pure helpers over manifests (no I/O): what a manifest names, the order manifests are applied
//! in, and the hub-only fields removed before an object goes to a member.

use flotilla_apis::work::v1alpha1::Manifest;
use serde_json::{Map, Value};

use flotilla_apis::names::{MANAGED_LABEL, OWNER_ANNOTATION, SERVER_SET_METADATA};

use crate::{Error, Result};

/// What a manifest names, before discovery says which resource it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestRef {
    /// Index in `spec.manifests`.
    pub ordinal: usize,
    /// API group ("" for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// `metadata.namespace` as written (the default namespace is filled in after discovery).
    pub namespace: Option<String>,
    /// `metadata.name`.
    pub name: String,
}

impl ManifestRef {
    /// Reads the names of manifest `ordinal`.
    pub fn of(ordinal: usize, manifest: &Value) -> Result<Self> {
        let text = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned);
        let api_version = text(&manifest["apiVersion"]).ok_or_else(|| {
            Error::InvalidManifest(format!("manifest {ordinal} has no apiVersion"))
        })?;
        let kind = text(&manifest["kind"])
            .ok_or_else(|| Error::InvalidManifest(format!("manifest {ordinal} has no kind")))?;
        let name = text(&manifest["metadata"]["name"]).ok_or_else(|| {
            Error::InvalidManifest(format!("manifest {ordinal} ({kind}) has no metadata.name"))
        })?;
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g.to_owned(), v.to_owned()),
            None => (String::new(), api_version),
        };
        Ok(Self {
            ordinal,
            group,
            version,
            kind,
            namespace: text(&manifest["metadata"]["namespace"]),
            name,
        })
    }

    /// `Kind namespace/name` (or `Kind name`), for messages.
    pub fn describe(&self, namespace: Option<&str>) -> String {
        match namespace.or(self.namespace.as_deref()) {
            Some(ns) => format!("{} {ns}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }
}

/// Whether a manifest must exist before others can: Namespaces hold namespaced objects, and
/// CustomResourceDefinitions define the kinds of later manifests.
fn goes_first(manifest: &Value) -> bool {
    let api_version = manifest["apiVersion"].as_str().unwrap_or_default();
    match manifest["kind"].as_str().unwrap_or_default() {
        "Namespace" => api_version == "v1",
        "CustomResourceDefinition" => api_version.starts_with("apiextensions.k8s.io/"),
        _ => false,
    }
}

/// The indices of `manifests` in apply order: Namespaces and CRDs first, then the rest, each
/// part in manifest order.
pub fn apply_order(manifests: &[Manifest]) -> Vec<usize> {
    let (mut first, rest): (Vec<usize>, Vec<usize>) =
        (0..manifests.len()).partition(|&i| goes_first(&manifests[i].0));
    first.extend(rest);
    first
}

/// Removes what only the hub's copy should have: server-assigned metadata and `status`.
pub fn strip_hub_fields(object: &mut Value) {
    if let Some(obj) = object.as_object_mut() {
        obj.remove("status");
        if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            for field in SERVER_SET_METADATA {
                meta.remove(*field);
            }
        }
    }
}

/// Sets `metadata.namespace`, flotilla's owner annotation and its managed label on `object`.
pub fn mark(object: &mut Value, namespace: Option<&str>, owner: &str) {
    let Some(obj) = object.as_object_mut() else {
        return;
    };
    let meta = obj
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    let Some(meta) = meta.as_object_mut() else {
        return;
    };
    if let Some(ns) = namespace {
        meta.insert("namespace".into(), Value::String(ns.to_owned()));
    }
    for (map, key, value) in [
        ("annotations", OWNER_ANNOTATION, owner),
        ("labels", MANAGED_LABEL, "true"),
    ] {
        let entries = meta.entry(map).or_insert_with(|| Value::Object(Map::new()));
        if !entries.is_object() {
            *entries = Value::Object(Map::new());
        }
        if let Some(entries) = entries.as_object_mut() {
            entries.insert(key.into(), Value::String(value.to_owned()));
        }
    }
}

/// The member API resource an identifier from a Work's status names.
pub fn api_resource(
    id: &flotilla_apis::work::v1alpha1::ResourceIdentifier,
) -> kube::discovery::ApiResource {
    let api_version = if id.group.is_empty() {
        id.version.clone()
    } else {
        format!("{}/{}", id.group, id.version)
    };
    kube::discovery::ApiResource {
        group: id.group.clone(),
        version: id.version.clone(),
        api_version,
        kind: id.kind.clone(),
        plural: id.resource.clone(),
    }
}

/// The Work that owns `annotations`' object, if flotilla applied it.
pub fn owner_of(annotations: Option<&std::collections::BTreeMap<String, String>>) -> Option<&str> {
    annotations?.get(OWNER_ANNOTATION).map(String::as_str)
}

#[cfg(test)]
mod tests;
