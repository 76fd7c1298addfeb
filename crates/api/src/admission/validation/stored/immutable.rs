//! The fields kube-apiserver never lets an update change, per kind (the `Validate<Kind>Update`
//! checks that compare old and new).

use serde_json::Value;

use super::{immutable_field, Causes};

pub(super) fn causes(group: &str, kind: &str, old: &Value, new: &Value) -> Causes {
    let mut causes = Vec::new();
    let forbidden = |causes: &mut Causes, field: &str| {
        if old.get(field) != new.get(field) {
            causes.push((
                field.to_string(),
                format!("Forbidden: updates to {field} are forbidden."),
            ));
        }
    };
    match (group, kind) {
        ("storage.k8s.io", "StorageClass") => {
            for field in ["parameters", "provisioner", "reclaimPolicy"] {
                forbidden(&mut causes, field);
            }
            immutable_field(
                &mut causes,
                "volumeBindingMode",
                old,
                new,
                "/volumeBindingMode",
            );
        }
        ("storage.k8s.io", "CSIDriver") => {
            // kube names the first field `attachedRequired` in this message.
            immutable_field(
                &mut causes,
                "spec.attachedRequired",
                old,
                new,
                "/spec/attachRequired",
            );
            immutable_field(
                &mut causes,
                "spec.volumeLifecycleModes",
                old,
                new,
                "/spec/volumeLifecycleModes",
            );
        }
        ("storage.k8s.io", "VolumeAttachment") => {
            immutable_field(&mut causes, "spec", old, new, "/spec")
        }
        ("networking.k8s.io", "IngressClass") => {
            immutable_field(&mut causes, "spec.controller", old, new, "/spec/controller")
        }
        ("node.k8s.io", "RuntimeClass") => {
            immutable_field(&mut causes, "handler", old, new, "/handler")
        }
        ("discovery.k8s.io", "EndpointSlice") => {
            immutable_field(&mut causes, "addressType", old, new, "/addressType")
        }
        ("apps", "ControllerRevision") => immutable_field(&mut causes, "data", old, new, "/data"),
        ("", "ConfigMap" | "Secret") if old["immutable"] == Value::Bool(true) => {
            // An immutable ConfigMap or Secret keeps its data and stays immutable.
            let locked = "Forbidden: field is immutable when `immutable` is set";
            if new["immutable"] != Value::Bool(true) {
                causes.push(("immutable".to_string(), locked.to_string()));
            }
            for field in ["data", "binaryData", "stringData"] {
                if kind == "Secret" && field == "binaryData"
                    || kind == "ConfigMap" && field == "stringData"
                {
                    continue;
                }
                if old.get(field) != new.get(field) {
                    causes.push((field.to_string(), locked.to_string()));
                }
            }
        }
        _ => {}
    }
    causes
}
