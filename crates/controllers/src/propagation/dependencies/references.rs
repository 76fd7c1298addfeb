//! What a workload's pod template refers to by name: the ConfigMaps, Secrets, ServiceAccount
//! and PersistentVolumeClaims its pods cannot start without.
//!
//! With `propagateDeps`, these objects follow the workload into every cluster it is scheduled
//! to. All of them are core v1 objects in the workload's own namespace. A StatefulSet's
//! `volumeClaimTemplates` are not dependencies: each member's StatefulSet controller creates
//! its own claims from them.

use std::collections::BTreeSet;

use crate::propagation::workload::{group_kind, pod_spec};
use serde_json::Value;

/// Kind of a [`Dependency`] on a ConfigMap.
pub const CONFIG_MAP: &str = "ConfigMap";
/// Kind of a [`Dependency`] on a Secret.
pub const SECRET: &str = "Secret";
/// Kind of a [`Dependency`] on a ServiceAccount.
pub const SERVICE_ACCOUNT: &str = "ServiceAccount";
/// Kind of a [`Dependency`] on a PersistentVolumeClaim.
pub const PERSISTENT_VOLUME_CLAIM: &str = "PersistentVolumeClaim";

/// One object a pod template refers to, in the workload's namespace.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dependency {
    /// Its kind (core v1): [`CONFIG_MAP`], [`SECRET`], [`SERVICE_ACCOUNT`] or
    /// [`PERSISTENT_VOLUME_CLAIM`].
    pub kind: &'static str,
    /// Its name.
    pub name: String,
}

/// Everything `template`'s pod spec refers to, sorted and without duplicates: ConfigMaps and
/// Secrets of volumes (also projected ones and the secrets of volume plugins), of containers'
/// `env` and `envFrom` (containers, init and ephemeral containers) and of `imagePullSecrets`;
/// the ServiceAccount unless it is `default`; the claims of PersistentVolumeClaim volumes. The
/// ConfigMap `kube-root-ca.crt` is each cluster's own and never a dependency.
/// Empty for kinds without a pod template.
pub fn dependencies(template: &Value) -> Vec<Dependency> {
    let Some(spec) = pod_spec(template) else {
        return Vec::new();
    };
    let mut found = Found::default();
    // A StatefulSet's controller replaces pod volumes named like a claim template with that
    // claim, so such a volume refers to nothing here.
    let claim_templates: Vec<&str> = list(template, "/spec/volumeClaimTemplates")
        .filter_map(|t| t.pointer("/metadata/name")?.as_str())
        .collect();
    let is_stateful_set = group_kind(template) == ("apps", "StatefulSet");
    for volume in list(spec, "/volumes") {
        let replaced = is_stateful_set
            && volume["name"]
                .as_str()
                .is_some_and(|name| claim_templates.contains(&name));
        if !replaced {
            found.volume(volume);
        }
    }
    for containers in ["/containers", "/initContainers", "/ephemeralContainers"] {
        for container in list(spec, containers) {
            found.container(container);
        }
    }
    for secret in list(spec, "/imagePullSecrets") {
        found.add(SECRET, &secret["name"]);
    }
    // `serviceAccount` is the deprecated spelling, used when `serviceAccountName` is unset.
    let account = [&spec["serviceAccountName"], &spec["serviceAccount"]]
        .into_iter()
        .find_map(|v| v.as_str().filter(|name| !name.is_empty()));
    if let Some(account) = account.filter(|name| *name != "default") {
        found.add(SERVICE_ACCOUNT, &Value::from(account));
    }
    found.0.into_iter().collect()
}

/// Dependencies gathered so far.
#[derive(Default)]
struct Found(BTreeSet<Dependency>);

// === impl Found ===

impl Found {
    /// Adds a dependency on `kind` named `name`, when `name` is a non-empty string.
    fn add(&mut self, kind: &'static str, name: &Value) {
        // Every cluster publishes its own CA there (pods' projected service-account volumes
        // name it): the hub's copy must not replace a member's.
        let own_ca = |name: &str| kind == CONFIG_MAP && name == "kube-root-ca.crt";
        if let Some(name) = name
            .as_str()
            .filter(|name| !name.is_empty() && !own_ca(name))
        {
            self.0.insert(Dependency {
                kind,
                name: name.to_owned(),
            });
        }
    }

    fn volume(&mut self, volume: &Value) {
        self.add(CONFIG_MAP, &volume["configMap"]["name"]);
        self.add(SECRET, &volume["secret"]["secretName"]);
        self.add(
            PERSISTENT_VOLUME_CLAIM,
            &volume["persistentVolumeClaim"]["claimName"],
        );
        for source in list(volume, "/projected/sources") {
            self.add(CONFIG_MAP, &source["configMap"]["name"]);
            self.add(SECRET, &source["secret"]["name"]);
        }
        // Volume plugins' credentials, as Kubernetes' own `VisitPodSecretNames` lists them.
        self.add(SECRET, &volume["azureFile"]["secretName"]);
        for plugin in [
            "cephfs",
            "cinder",
            "flexVolume",
            "iscsi",
            "rbd",
            "scaleIO",
            "storageos",
        ] {
            self.add(SECRET, &volume[plugin]["secretRef"]["name"]);
        }
        self.add(SECRET, &volume["csi"]["nodePublishSecretRef"]["name"]);
    }

    fn container(&mut self, container: &Value) {
        for env in list(container, "/env") {
            let from = &env["valueFrom"];
            self.add(CONFIG_MAP, &from["configMapKeyRef"]["name"]);
            self.add(SECRET, &from["secretKeyRef"]["name"]);
        }
        for from in list(container, "/envFrom") {
            self.add(CONFIG_MAP, &from["configMapRef"]["name"]);
            self.add(SECRET, &from["secretRef"]["name"]);
        }
    }
}

/// The items of the array at `pointer` in `value` (none when it is absent or not an array).
fn list<'a>(value: &'a Value, pointer: &str) -> impl Iterator<Item = &'a Value> {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

#[cfg(test)]
mod tests;
