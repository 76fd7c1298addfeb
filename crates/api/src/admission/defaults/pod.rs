//! Pod template defaults: `SetDefaults_PodSpec` and what `SetObjectDefaults_*` applies inside a
//! pod spec (containers and their ports, probes, lifecycle handlers and env field references;
//! volumes), plus the PersistentVolumeClaim defaults StatefulSet claim templates share.

use serde_json::{json, Value};

use super::{child, default_int, default_ptr, default_str, each, existing, is_nil, set, str_of};

/// The defaulted `mode` of secret, configMap, downwardAPI and projected volumes (0644).
const DEFAULT_MODE: i64 = 0o644;

/// A `PodTemplateSpec` (`spec.template` of workloads).
pub(super) fn template(template: &mut Value) {
    if let Some(spec) = child(template, "spec") {
        pod_spec(spec);
    }
}

/// `SetDefaults_PodSpec` and everything inside it.
pub(super) fn pod_spec(spec: &mut Value) {
    default_str(spec, "dnsPolicy", "ClusterFirst");
    default_str(spec, "restartPolicy", "Always");
    default_ptr(spec, "securityContext", json!({}));
    default_ptr(spec, "terminationGracePeriodSeconds", json!(30));
    default_str(spec, "schedulerName", "default-scheduler");
    for key in ["initContainers", "containers", "ephemeralContainers"] {
        each(spec, key, container);
    }
    each(spec, "volumes", volume);
    if let Some(overhead) = existing(spec, "overhead") {
        quantities(overhead);
    }
}

/// Every value of a resource-name → quantity map in canonical form.
pub(super) fn quantities(map: &mut Value) {
    if let Some(map) = map.as_object_mut() {
        for v in map.values_mut() {
            if let Some(c) = v.as_str().and_then(super::quantity::canonical) {
                *v = json!(c);
            }
        }
    }
}

/// `requests` and `limits` of a container's or a claim's `resources`.
fn resources(holder: &mut Value) {
    if let Some(r) = existing(holder, "resources") {
        for key in ["requests", "limits"] {
            if let Some(q) = existing(r, key) {
                quantities(q);
            }
        }
    }
}

/// `SetDefaults_Container` and its ports, env field references, probes and lifecycle hooks.
fn container(c: &mut Value) {
    if str_of(c, "imagePullPolicy").is_empty() {
        let policy = pull_policy(str_of(c, "image"));
        set(c, "imagePullPolicy", json!(policy));
    }
    default_str(c, "terminationMessagePath", "/dev/termination-log");
    default_str(c, "terminationMessagePolicy", "File");
    resources(c);
    each(c, "ports", |p| default_str(p, "protocol", "TCP"));
    each(c, "env", |e| {
        if let Some(from) = existing(e, "valueFrom") {
            field_ref(from);
        }
    });
    for key in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = existing(c, key) {
            probe(p);
        }
    }
    if let Some(lifecycle) = existing(c, "lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(get) = existing(lifecycle, hook).and_then(|h| existing(h, "httpGet")) {
                http_get(get);
            }
        }
    }
}

/// `IfNotPresent`, or `Always` for an image whose tag is `latest` — which an image with neither
/// tag nor digest has (`parsers.ParseImageName`). An image that does not parse gets
/// `IfNotPresent`, as Kubernetes ignores the parse error.
pub(super) fn pull_policy(image: &str) -> &'static str {
    match image_tag(image) {
        Some("latest") => "Always",
        _ => "IfNotPresent",
    }
}

/// The tag of an image reference: `latest` when it has neither tag nor digest, `""` with only
/// a digest; None when the reference is not valid (docker's reference grammar, condensed).
fn image_tag(image: &str) -> Option<&str> {
    let (named, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    let (name, tag) = match named.rsplit_once(':') {
        Some((n, t)) if !t.contains('/') => (n, Some(t)),
        _ => (named, None),
    };
    let mut parts: Vec<&str> = name.split('/').collect();
    let first = parts[0];
    let is_domain = parts.len() > 1
        && (first.contains(['.', ':']) || first == "localhost" || first != first.to_lowercase());
    if is_domain {
        let host_ok = |h: &str| {
            !h.is_empty()
                && h.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'))
        };
        if !host_ok(first) {
            return None;
        }
        parts.remove(0);
    }
    let component_ok = |p: &&str| {
        let b = p.as_bytes();
        !b.is_empty()
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter().all(|c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'.' | b'_' | b'-')
            })
    };
    if parts.is_empty() || !parts.iter().all(component_ok) {
        return None;
    }
    if let Some(t) = tag {
        let b = t.as_bytes();
        let ok = !b.is_empty()
            && b.len() <= 128
            && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'));
        if !ok {
            return None;
        }
    }
    if let Some(d) = digest {
        if !d.contains(':') {
            return None;
        }
    }
    Some(match (tag, digest) {
        (Some(t), _) => t,
        (None, Some(_)) => "",
        (None, None) => "latest",
    })
}

/// `SetDefaults_ObjectFieldSelector` under a `valueFrom` or a downward API item.
fn field_ref(holder: &mut Value) {
    if let Some(f) = existing(holder, "fieldRef") {
        default_str(f, "apiVersion", "v1");
    }
}

/// `SetDefaults_Probe` and its handler.
fn probe(p: &mut Value) {
    default_int(p, "timeoutSeconds", 1);
    default_int(p, "periodSeconds", 10);
    default_int(p, "successThreshold", 1);
    default_int(p, "failureThreshold", 3);
    if let Some(get) = existing(p, "httpGet") {
        http_get(get);
    }
    if let Some(grpc) = existing(p, "grpc") {
        default_ptr(grpc, "service", json!(""));
    }
}

/// `SetDefaults_HTTPGetAction`.
fn http_get(get: &mut Value) {
    default_str(get, "path", "/");
    default_str(get, "scheme", "HTTP");
}

/// Every `VolumeSource` member: a volume naming none of them is an emptyDir.
const VOLUME_SOURCES: &[&str] = &[
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
];

/// `SetDefaults_Volume` and the defaults of its source.
fn volume(v: &mut Value) {
    if VOLUME_SOURCES.iter().all(|s| is_nil(v.get(*s))) {
        set(v, "emptyDir", json!({}));
    }
    if let Some(limit) = existing(v, "emptyDir").and_then(|e| e.get_mut("sizeLimit")) {
        if let Some(c) = limit.as_str().and_then(super::quantity::canonical) {
            *limit = json!(c);
        }
    }
    for key in ["secret", "configMap"] {
        if let Some(src) = existing(v, key) {
            default_ptr(src, "defaultMode", json!(DEFAULT_MODE));
        }
    }
    if let Some(src) = existing(v, "downwardAPI") {
        default_ptr(src, "defaultMode", json!(DEFAULT_MODE));
        each(src, "items", field_ref);
    }
    if let Some(src) = existing(v, "projected") {
        default_ptr(src, "defaultMode", json!(DEFAULT_MODE));
        each(src, "sources", |s| {
            if let Some(d) = existing(s, "downwardAPI") {
                each(d, "items", field_ref);
            }
            if let Some(t) = existing(s, "serviceAccountToken") {
                default_ptr(t, "expirationSeconds", json!(3600));
            }
        });
    }
    if let Some(src) = existing(v, "hostPath") {
        default_ptr(src, "type", json!(""));
    }
    if let Some(src) = existing(v, "iscsi") {
        default_str(src, "iscsiInterface", "default");
    }
    if let Some(src) = existing(v, "rbd") {
        default_str(src, "pool", "rbd");
        default_str(src, "user", "admin");
        default_str(src, "keyring", "/etc/ceph/keyring");
    }
    if let Some(src) = existing(v, "azureDisk") {
        default_ptr(src, "cachingMode", json!("ReadWrite"));
        default_ptr(src, "kind", json!("Shared"));
        default_ptr(src, "fsType", json!("ext4"));
        default_ptr(src, "readOnly", json!(false));
    }
    if let Some(src) = existing(v, "scaleIO") {
        default_str(src, "storageMode", "ThinProvisioned");
        default_str(src, "fsType", "xfs");
    }
    let claim = existing(v, "ephemeral").and_then(|e| existing(e, "volumeClaimTemplate"));
    if let Some(spec) = claim.and_then(|t| child(t, "spec")) {
        claim_spec(spec);
    }
}

/// `SetDefaults_PersistentVolumeClaim` (a claim, or a StatefulSet's claim template).
pub(super) fn persistent_volume_claim(obj: &mut Value) {
    if let Some(spec) = child(obj, "spec") {
        claim_spec(spec);
    }
    if let Some(status) = child(obj, "status") {
        default_str(status, "phase", "Pending");
    }
}

/// `SetDefaults_PersistentVolumeClaimSpec`.
fn claim_spec(spec: &mut Value) {
    default_ptr(spec, "volumeMode", json!("Filesystem"));
    resources(spec);
}
