//! The control plane a fleet is joined to: flotilla's hub (one `flotilla serve`), or Karmada's
//! (several processes) as the peer of `bench propagation --peer karmada`. Both speak the same
//! field shapes (flotilla's policy, binding and Cluster kinds follow Karmada's), so the phases
//! use one code path over dynamic objects of each plane's kinds.

use anyhow::{Context, Result};
use flotilla_apis::cluster::v1alpha1::Cluster;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind};
use kube::{Api, Client};
use serde_json::{json, Value};

use crate::karmada::Karmada;
use crate::procs::{self, Proc, Rss};

/// The control plane's processes.
pub enum Plane {
    /// `flotilla serve` (SQLite).
    Flotilla(Proc),
    /// Karmada's control plane, from scripts/karmada.
    Karmada(Karmada),
}

/// The kinds a control plane propagates with, and where it marks a Work's binding.
pub struct Kinds {
    /// `flotilla` or `Karmada`, for reports.
    pub name: &'static str,
    policy: (&'static str, &'static str),
    binding: (&'static str, &'static str),
    work: (&'static str, &'static str),
    cluster: (&'static str, &'static str),
    /// The annotation on a Work naming its binding's namespace.
    pub binding_namespace_annotation: &'static str,
}

/// flotilla's kinds.
pub const FLOTILLA: Kinds = Kinds {
    name: "flotilla",
    policy: ("policy.flotilla.io", "v1alpha1"),
    binding: ("work.flotilla.io", "v1alpha1"),
    work: ("work.flotilla.io", "v1alpha1"),
    cluster: ("cluster.flotilla.io", "v1alpha1"),
    binding_namespace_annotation:
        flotilla_controllers::propagation::binding::BINDING_NAMESPACE_ANNOTATION,
};

const KARMADA: Kinds = Kinds {
    name: "Karmada",
    policy: ("policy.karmada.io", "v1alpha1"),
    binding: ("work.karmada.io", "v1alpha2"),
    work: ("work.karmada.io", "v1alpha1"),
    cluster: ("cluster.karmada.io", "v1alpha1"),
    binding_namespace_annotation: "resourcebinding.karmada.io/namespace",
};

fn resource((group, version): (&str, &str), kind: &str) -> ApiResource {
    ApiResource::from_gvk(&GroupVersionKind::gvk(group, version, kind))
}

impl Kinds {
    /// PropagationPolicy.
    pub fn policy(&self) -> ApiResource {
        resource(self.policy, "PropagationPolicy")
    }
    /// ResourceBinding.
    pub fn binding(&self) -> ApiResource {
        resource(self.binding, "ResourceBinding")
    }
    /// Work.
    pub fn work(&self) -> ApiResource {
        resource(self.work, "Work")
    }
    /// Cluster.
    pub fn cluster(&self) -> ApiResource {
        resource(self.cluster, "Cluster")
    }
}

impl Plane {
    /// Its kinds.
    pub fn kinds(&self) -> &'static Kinds {
        match self {
            Plane::Flotilla(_) => &FLOTILLA,
            Plane::Karmada(_) => &KARMADA,
        }
    }

    /// Resident memory of the whole control plane (the sum over its processes).
    pub fn rss(&self) -> Result<Rss> {
        match self {
            Plane::Flotilla(hub) => procs::rss(hub.pid()),
            Plane::Karmada(k) => k.rss(),
        }
    }

    /// An error if a process of the control plane has exited.
    pub fn check_alive(&mut self) -> Result<()> {
        match self {
            Plane::Flotilla(hub) => hub.check_alive(),
            Plane::Karmada(k) => k.check_alive(),
        }
    }

    /// The end of the control plane's main log.
    pub fn log_tail(&self, n: usize) -> String {
        match self {
            Plane::Flotilla(hub) => hub.log_tail(n),
            Plane::Karmada(k) => k.log_tail(n),
        }
    }

    /// What it is, with its process ids, for a report.
    pub fn describe(&self) -> String {
        match self {
            Plane::Flotilla(hub) => format!("flotilla serve (pid {})", hub.pid()),
            Plane::Karmada(k) => format!(
                "Karmada: {}",
                k.pids
                    .iter()
                    .map(|(what, pid)| format!("{} {pid}", what.to_lowercase()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// The Clusters it knows, read into flotilla's type (only the metadata and the status's
    /// conditions and API enablements, which both planes shape alike).
    pub async fn clusters(&self, client: &Client) -> Result<Vec<Cluster>> {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &self.kinds().cluster());
        let list = api
            .list(&Default::default())
            .await
            .context("listing the Clusters of the control plane")?;
        list.items
            .into_iter()
            .map(|c| {
                let status = c.data.get("status").cloned().unwrap_or(Value::Null);
                let v = json!({
                    "apiVersion": "cluster.flotilla.io/v1alpha1",
                    "kind": "Cluster",
                    "metadata": c.metadata,
                    "spec": {},
                    "status": {
                        "conditions": status.get("conditions").cloned().unwrap_or(json!([])),
                        "apiEnablements": status.get("apiEnablements").cloned().unwrap_or(json!([])),
                    },
                });
                serde_json::from_value(v).context("reading a Cluster")
            })
            .collect()
    }
}
