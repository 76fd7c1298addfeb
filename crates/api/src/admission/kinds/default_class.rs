//! kube-apiserver's `DefaultIngressClass` and `DefaultStorageClass` admission plugins: a new
//! Ingress that names no class gets the default IngressClass, a new PersistentVolumeClaim that
//! names no storage class gets the default StorageClass. The default is the class annotated as
//! such; of several, the newest (then the lowest name).

use serde_json::{json, Value};

use super::stored;
use crate::meta::meta_str;
use crate::Api;

const DEFAULT_INGRESS_CLASS: &str = "ingressclass.kubernetes.io/is-default-class";
const LEGACY_INGRESS_CLASS: &str = "kubernetes.io/ingress.class";
const DEFAULT_STORAGE_CLASS: &str = "storageclass.kubernetes.io/is-default-class";
const BETA_DEFAULT_STORAGE_CLASS: &str = "storageclass.beta.kubernetes.io/is-default-class";

/// The newest of `classes` annotated with one of `annotations` = "true".
fn newest_default(classes: Vec<Value>, annotations: &[&str]) -> Option<String> {
    let mut defaults: Vec<Value> = classes
        .into_iter()
        .filter(|c| {
            annotations.iter().any(|a| {
                c.pointer("/metadata/annotations")
                    .and_then(|m| m.get(*a))
                    .and_then(Value::as_str)
                    == Some("true")
            })
        })
        .collect();
    // RFC 3339 timestamps of one format sort as text.
    defaults.sort_by(|a, b| {
        let ts = |c: &Value| meta_str(c, "creationTimestamp").unwrap_or("").to_string();
        ts(b)
            .cmp(&ts(a))
            .then_with(|| meta_str(a, "name").cmp(&meta_str(b, "name")))
    });
    defaults
        .first()
        .and_then(|c| meta_str(c, "name"))
        .map(String::from)
}

/// A new Ingress with neither `spec.ingressClassName` nor the legacy class annotation.
pub(super) fn ingress(api: &Api, new: &mut Value) {
    let named = new
        .pointer("/spec/ingressClassName")
        .is_some_and(|n| !n.is_null());
    let annotated = new
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(LEGACY_INGRESS_CLASS))
        .is_some();
    if named || annotated {
        return;
    }
    let classes = stored(api, "networking.k8s.io", "v1", "ingressclasses");
    if let Some(class) = newest_default(classes, &[DEFAULT_INGRESS_CLASS]) {
        if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
            spec.insert("ingressClassName".into(), json!(class));
        } else if let Some(o) = new.as_object_mut() {
            o.insert("spec".into(), json!({"ingressClassName": class}));
        }
    }
}

/// A new PersistentVolumeClaim with no `spec.storageClassName` (an empty one asks for none).
pub(super) fn persistent_volume_claim(api: &Api, new: &mut Value) {
    if new
        .pointer("/spec/storageClassName")
        .is_some_and(|n| !n.is_null())
    {
        return;
    }
    let classes = stored(api, "storage.k8s.io", "v1", "storageclasses");
    let default = newest_default(
        classes,
        &[DEFAULT_STORAGE_CLASS, BETA_DEFAULT_STORAGE_CLASS],
    );
    if let (Some(class), Some(spec)) = (default, new.get_mut("spec").and_then(Value::as_object_mut))
    {
        spec.insert("storageClassName".into(), json!(class));
    }
}
