//! Defaults the server applies on create, for kinds whose clients rely on them.

use serde_json::{json, Value};

use crate::registry::ResourceInfo;

fn set_if_absent(obj: &mut Value, ptr: &[&str], v: Value) {
    let mut cur = obj;
    for (i, k) in ptr.iter().enumerate() {
        if !cur.is_object() {
            return;
        }
        if i == ptr.len() - 1 {
            if cur.get(*k).is_none() {
                cur[*k] = v;
            }
            return;
        }
        if cur.get(*k).is_none() {
            cur[*k] = json!({});
        }
        cur = &mut cur[*k];
    }
}

/// Apply create-time defaults.
pub fn on_create(res: &ResourceInfo, obj: &mut Value) {
    if res.custom {
        return;
    }
    match (res.group.as_str(), res.kind.as_str()) {
        ("", "Namespace") => {
            obj["spec"] = json!({"finalizers": ["kubernetes"]});
            obj["status"] = json!({"phase": "Active"});
            let name = obj
                .pointer("/metadata/name")
                .cloned()
                .unwrap_or(Value::Null);
            set_if_absent(
                obj,
                &["metadata", "labels", "kubernetes.io/metadata.name"],
                name,
            );
        }
        ("", "Secret") => set_if_absent(obj, &["type"], json!("Opaque")),
        ("", "Service") => set_if_absent(obj, &["spec", "type"], json!("ClusterIP")),
        ("apps", "Deployment" | "StatefulSet" | "ReplicaSet") => {
            set_if_absent(obj, &["spec", "replicas"], json!(1));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_gets_phase_finalizer_and_name_label() {
        let reg = crate::registry::Registry::new();
        let snap = reg.snapshot();
        let res = snap.get("", "v1", "namespaces").unwrap();
        let mut ns = json!({"metadata": {"name": "demo"}});
        on_create(res, &mut ns);
        assert_eq!(ns["status"]["phase"], "Active");
        assert_eq!(ns["spec"]["finalizers"][0], "kubernetes");
        assert_eq!(
            ns["metadata"]["labels"]["kubernetes.io/metadata.name"],
            "demo"
        );
    }
}
