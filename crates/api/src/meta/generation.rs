//! `metadata.generation`: which kinds have it and when it moves, as kube-apiserver's strategies
//! decide.
//!
//! Only kinds whose controllers need to tell spec changes from status changes carry one: the
//! workloads, PodDisruptionBudgets, Ingresses, NetworkPolicies, CustomResourceDefinitions and
//! every custom resource. Their create sets it to 1 and an update that changes the spec adds one.
//! Other kinds (ConfigMaps, Secrets, ServiceAccounts, RBAC, …) get none; for every kind, an
//! update can never set it (`rest.BeforeUpdate` puts the stored value back).

use serde_json::{Map, Value};

use crate::registry::ResourceInfo;

/// Does `res` carry a generation (`PrepareForCreate` sets `Generation = 1`)?
pub fn tracked(res: &ResourceInfo) -> bool {
    if res.custom {
        return true;
    }
    matches!(
        (res.group.as_str(), res.kind.as_str()),
        (
            "apps",
            "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet"
        ) | ("batch", "Job" | "CronJob")
            | ("", "ReplicationController")
            | ("policy", "PodDisruptionBudget")
            | ("networking.k8s.io", "Ingress" | "NetworkPolicy")
            | ("apiextensions.k8s.io", "CustomResourceDefinition")
    )
}

/// The generation an update from `old` to `new` stores: the stored one (requests cannot set
/// it), plus one when the kind tracks generations and the update changes what they count.
/// None: the stored object has none and the update adds none.
pub fn after_update(res: &ResourceInfo, old: &Value, new: &Value) -> Option<i64> {
    let stored = old.pointer("/metadata/generation").and_then(Value::as_i64);
    if !tracked(res) || !counted_change(res, old, new) {
        return stored;
    }
    Some(stored.unwrap_or(0) + 1)
}

/// Does the update change what the kind's generation counts?
fn counted_change(res: &ResourceInfo, old: &Value, new: &Value) -> bool {
    if res.custom {
        // Everything but metadata (`customResourceStrategy`); status only when it is not a
        // subresource, since the status endpoint never moves the generation.
        let skip: &[&str] = if res.status {
            &["metadata", "status"]
        } else {
            &["metadata"]
        };
        return content(old, skip) != content(new, skip);
    }
    let spec = content(old, &["metadata", "status"]) != content(new, &["metadata", "status"]);
    if res.group == "apps" && res.kind == "Deployment" {
        // Annotations are copied to the Deployment's ReplicaSets, so they count too.
        let annotations = |v: &Value| v.pointer("/metadata/annotations").cloned();
        return spec || annotations(old) != annotations(new);
    }
    spec
}

/// The top-level fields of `obj` but `skip` (and apiVersion/kind, which identify, not describe).
fn content(obj: &Value, skip: &[&str]) -> Map<String, Value> {
    obj.as_object()
        .map(|o| {
            o.iter()
                .filter(|(k, _)| {
                    !skip.contains(&k.as_str()) && !matches!(k.as_str(), "apiVersion" | "kind")
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::registry::Registry;

    fn res(group: &str, plural: &str) -> ResourceInfo {
        let snap = Registry::new().snapshot();
        let r = snap
            .all()
            .find(|r| r.group == group && r.plural == plural)
            .map(|r| (**r).clone());
        r.unwrap_or_else(|| panic!("{group}/{plural} is not served"))
    }

    #[test]
    fn only_kinds_with_a_spec_controllers_watch_have_one() {
        for (group, plural) in [
            ("apps", "deployments"),
            ("apps", "statefulsets"),
            ("apps", "daemonsets"),
            ("apps", "replicasets"),
            ("batch", "jobs"),
            ("batch", "cronjobs"),
            ("policy", "poddisruptionbudgets"),
            ("networking.k8s.io", "ingresses"),
            ("networking.k8s.io", "networkpolicies"),
            ("apiextensions.k8s.io", "customresourcedefinitions"),
        ] {
            assert!(tracked(&res(group, plural)), "{plural}");
        }
        for (group, plural) in [
            ("", "configmaps"),
            ("", "secrets"),
            ("", "serviceaccounts"),
            ("", "services"),
            ("", "namespaces"),
            ("", "events"),
            ("", "persistentvolumeclaims"),
            ("autoscaling", "horizontalpodautoscalers"),
            ("rbac.authorization.k8s.io", "roles"),
            ("rbac.authorization.k8s.io", "clusterrolebindings"),
            ("coordination.k8s.io", "leases"),
        ] {
            assert!(!tracked(&res(group, plural)), "{plural}");
        }
        let mut cr = res("", "configmaps");
        cr.custom = true;
        assert!(tracked(&cr));
    }

    #[test]
    fn updates_move_it_as_kube_apiserver_does() {
        let deploy = res("apps", "deployments");
        let old = json!({"metadata": {"generation": 3, "labels": {"a": "1"}}, "spec": {"replicas": 1}, "status": {"replicas": 1}});
        let with = |f: &dyn Fn(&mut Value)| {
            let mut v = old.clone();
            f(&mut v);
            v
        };
        // Requests cannot set it.
        let forged = with(&|v| v["metadata"]["generation"] = json!(9));
        assert_eq!(after_update(&deploy, &old, &forged), Some(3));
        let labels = with(&|v| v["metadata"]["labels"]["a"] = json!("2"));
        assert_eq!(after_update(&deploy, &old, &labels), Some(3));
        let status = with(&|v| v["status"]["replicas"] = json!(2));
        assert_eq!(after_update(&deploy, &old, &status), Some(3));
        let spec = with(&|v| v["spec"]["replicas"] = json!(2));
        assert_eq!(after_update(&deploy, &old, &spec), Some(4));
        // Deployments (only) count annotations.
        let annotated = with(&|v| v["metadata"]["annotations"] = json!({"note": "x"}));
        assert_eq!(after_update(&deploy, &old, &annotated), Some(4));
        assert_eq!(
            after_update(&res("apps", "replicasets"), &old, &annotated),
            Some(3)
        );

        // Kinds without one keep whatever is stored, and get none.
        let cm = res("", "configmaps");
        let old_cm = json!({"metadata": {}, "data": {"a": "1"}});
        let new_cm = json!({"metadata": {"generation": 5}, "data": {"a": "2"}});
        assert_eq!(after_update(&cm, &old_cm, &new_cm), None);

        // Custom resources: every change outside metadata, status too unless it is a
        // subresource.
        let mut cr = res("", "configmaps");
        cr.custom = true;
        let old_cr = json!({"metadata": {"generation": 1}, "spec": {"a": 1}, "status": {"s": 1}, "extra": 1});
        let mut changed = old_cr.clone();
        changed["extra"] = json!(2);
        assert_eq!(after_update(&cr, &old_cr, &changed), Some(2));
        let mut status_only = old_cr.clone();
        status_only["status"]["s"] = json!(2);
        assert_eq!(after_update(&cr, &old_cr, &status_only), Some(2));
        cr.status = true;
        assert_eq!(after_update(&cr, &old_cr, &status_only), Some(1));
    }
}
