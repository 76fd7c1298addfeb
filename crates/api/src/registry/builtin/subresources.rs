//! Subresources of built-in kinds beyond `status` and `scale` (which every [`ResourceInfo`]
//! flags itself): what discovery lists for pods, nodes and certificate signing requests, as
//! kube-apiserver 1.32 lists them. The handlers decide what each does on the hub.

use serde_json::{json, Value};

use super::ResourceInfo;

/// One subresource as discovery lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtraSubresource {
    /// The part after `{plural}/`.
    pub name: &'static str,
    /// The kind its requests carry.
    pub kind: &'static str,
    /// That kind's group and version when not the parent's (e.g. `policy`/`v1` Eviction).
    pub group_version: Option<(&'static str, &'static str)>,
    /// Verbs served.
    pub verbs: &'static [&'static str],
}

const fn sub(
    name: &'static str,
    kind: &'static str,
    verbs: &'static [&'static str],
) -> ExtraSubresource {
    ExtraSubresource {
        name,
        kind,
        group_version: None,
        verbs,
    }
}

const CONNECT_VERBS: &[&str] = &["create", "get"];
const PROXY_VERBS: &[&str] = &["create", "delete", "get", "patch", "update"];
const STATUS_VERBS: &[&str] = &["get", "patch", "update"];

const POD: &[ExtraSubresource] = &[
    sub("attach", "PodAttachOptions", CONNECT_VERBS),
    sub("binding", "Binding", &["create"]),
    sub("ephemeralcontainers", "Pod", STATUS_VERBS),
    ExtraSubresource {
        name: "eviction",
        kind: "Eviction",
        group_version: Some(("policy", "v1")),
        verbs: &["create"],
    },
    sub("exec", "PodExecOptions", CONNECT_VERBS),
    sub("log", "Pod", &["get"]),
    sub("portforward", "PodPortForwardOptions", CONNECT_VERBS),
    sub("proxy", "PodProxyOptions", PROXY_VERBS),
];

const NODE: &[ExtraSubresource] = &[sub("proxy", "NodeProxyOptions", PROXY_VERBS)];

const CSR: &[ExtraSubresource] = &[sub("approval", "CertificateSigningRequest", STATUS_VERBS)];

impl ResourceInfo {
    /// This resource's subresources besides `status` and `scale` (none for custom resources).
    pub fn extra_subresources(&self) -> &'static [ExtraSubresource] {
        if self.custom {
            return &[];
        }
        match (self.group.as_str(), self.plural.as_str()) {
            ("", "pods") => POD,
            ("", "nodes") => NODE,
            ("certificates.k8s.io", "certificatesigningrequests") => CSR,
            _ => &[],
        }
    }
}

impl ExtraSubresource {
    /// The entry of `/api/v1` or `/apis/G/V` (an `APIResource`) for this subresource of `parent`.
    pub fn discovery_entry(&self, parent: &ResourceInfo) -> Value {
        let mut e = json!({
            "name": format!("{}/{}", parent.plural, self.name), "singularName": "",
            "namespaced": parent.namespaced, "kind": self.kind, "verbs": self.verbs,
        });
        if let Some((g, v)) = self.group_version {
            e["group"] = json!(g);
            e["version"] = json!(v);
        }
        e
    }

    /// The entry of aggregated discovery (an `APISubresourceDiscovery`).
    pub fn aggregated_entry(&self, parent: &ResourceInfo) -> Value {
        let (group, version) = match self.group_version {
            Some((g, v)) => (g, v),
            None => (parent.group.as_str(), parent.version.as_str()),
        };
        json!({
            "subresource": self.name,
            "responseKind": {"group": group, "version": version, "kind": self.kind},
            "verbs": self.verbs,
        })
    }
}
