//! flotilla's own API types and their schemas.
//!
//! - [`cluster::v1alpha1`]: `Cluster`, the registry of member clusters (cluster-scoped).
//! - [`policy::v1alpha1`]: where objects go (`PropagationPolicy`, `ClusterPropagationPolicy`)
//!   and how they change per cluster (`OverridePolicy`, `ClusterOverridePolicy`), shaped as
//!   Karmada's `policy.karmada.io/v1alpha1`.
//! - [`work::v1alpha1`]: `Work`, the manifests delivered to one member, living in that
//!   member's execution namespace (`flotilla-es-<cluster>`); `ResourceBinding` and
//!   `ClusterResourceBinding`, the scheduler's decision for one hub object.
//! - [`networking::v1alpha1`]: `GlobalService`, how a propagated Service is answered in DNS,
//!   and `HealthReport`, one voter's probes of the fleet's endpoints.
//! - [`config::v1alpha1`]: `ResourceInterpreter`, CEL rules teaching the hub a kind's replicas,
//!   health, status, dependencies and member-owned fields.
//! - [`externaldns`]: `DNSEndpoint`, the fleet's records for external-dns.
//! - [`multicluster`]: `ServiceExport` and `ServiceImport` of the Multi-Cluster Services API.
//! - [`conditions`]: setting status conditions as Kubernetes does.
//! - [`labels`]: label selectors against labels.
//! - [`quantity`]: resource quantities as milli-units, parsed one way everywhere.
//! - [`duration`]: Go durations (`1m30s`), parsed one way everywhere.
//! - [`names`]: the namespaces, field manager and other well-known names every component shares.
//! - [`scope`]: what a propagation may reach (a namespace's bindings, overrides, push credentials).
//!
//! Types are plain data (serde + schemars, no I/O). Each kind derives its
//! `CustomResourceDefinition` through `kube-derive`; the hub installs [`crds()`] at start, so
//! the kinds are served like built-ins (discovery, OpenAPI, `kubectl explain`, printer columns).
//! Each `#[kube(...)]` names `crates(kube_core = "::kube_core")` because this crate uses
//! kube-core directly, not the `kube` facade that kube-derive's generated code assumes; the
//! other crates it refers to (serde, schemars, k8s-openapi) are at its default paths.
#![deny(missing_docs)]

/// Declares the spec of a cluster-scoped kind that is its namespaced twin's spec under
/// another name (`ClusterPropagationPolicy` and `PropagationPolicy`, ...): one field `spec`,
/// serde-flattened, so both kinds have the same `spec` fields. It derefs to the shared spec
/// and converts from it, so controllers handle one spec type for both scopes. The caller
/// writes the doc (it is the CRD's `spec` description) and the `#[kube(...)]` attribute (the
/// kind's name, scope and columns); the derives are every flotilla kind's.
macro_rules! cluster_twin {
    (
        $(#[$($attr:tt)*])*
        pub struct $outer:ident { pub spec: $inner:ident $(,)? }
    ) => {
        #[derive(
            ::kube_derive::CustomResource,
            Clone,
            Debug,
            Default,
            PartialEq,
            ::serde::Serialize,
            ::serde::Deserialize,
            ::schemars::JsonSchema,
        )]
        $(#[$($attr)*])*
        pub struct $outer {
            /// The shared spec; its fields are this object's `spec` fields.
            #[serde(flatten)]
            pub spec: $inner,
        }

        impl std::ops::Deref for $outer {
            type Target = $inner;

            fn deref(&self) -> &$inner {
                &self.spec
            }
        }

        impl std::ops::DerefMut for $outer {
            fn deref_mut(&mut self) -> &mut $inner {
                &mut self.spec
            }
        }

        impl From<$inner> for $outer {
            fn from(spec: $inner) -> Self {
                Self { spec }
            }
        }
    };
}

pub mod cluster;
pub mod conditions;
pub mod config;
pub mod duration;
pub mod externaldns;
pub mod gvk;
pub mod labels;
pub mod multicluster;
pub mod names;
pub mod networking;
pub mod policy;
pub mod quantity;
mod schema;
pub mod scope;
pub mod work;

use kube_core::CustomResourceExt;
use serde_json::Value;

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A generated CRD could not be turned into JSON (a bug in a type's schema).
    #[error("serialize the CRD {name}: {source}")]
    SerializeCrd {
        /// The CRD's name.
        name: &'static str,
        /// What serde said.
        source: serde_json::Error,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The CRDs of every flotilla kind, as JSON objects ready to store.
pub fn crds() -> Result<Vec<Value>> {
    [
        (
            cluster::v1alpha1::Cluster::crd_name(),
            cluster::v1alpha1::Cluster::crd(),
        ),
        (
            cluster::v1alpha1::ClusterSet::crd_name(),
            cluster::v1alpha1::ClusterSet::crd(),
        ),
        (
            cluster::v1alpha1::ClusterSetBinding::crd_name(),
            cluster::v1alpha1::ClusterSetBinding::crd(),
        ),
        (
            work::v1alpha1::Work::crd_name(),
            work::v1alpha1::Work::crd(),
        ),
        (
            policy::v1alpha1::PropagationPolicy::crd_name(),
            policy::v1alpha1::PropagationPolicy::crd(),
        ),
        (
            policy::v1alpha1::ClusterPropagationPolicy::crd_name(),
            policy::v1alpha1::ClusterPropagationPolicy::crd(),
        ),
        (
            policy::v1alpha1::OverridePolicy::crd_name(),
            policy::v1alpha1::OverridePolicy::crd(),
        ),
        (
            policy::v1alpha1::ClusterOverridePolicy::crd_name(),
            policy::v1alpha1::ClusterOverridePolicy::crd(),
        ),
        (
            work::v1alpha1::ResourceBinding::crd_name(),
            work::v1alpha1::ResourceBinding::crd(),
        ),
        (
            work::v1alpha1::ClusterResourceBinding::crd_name(),
            work::v1alpha1::ClusterResourceBinding::crd(),
        ),
        (
            networking::v1alpha1::GlobalService::crd_name(),
            networking::v1alpha1::GlobalService::crd(),
        ),
        (
            networking::v1alpha1::HealthReport::crd_name(),
            networking::v1alpha1::HealthReport::crd(),
        ),
        (
            externaldns::DNSEndpoint::crd_name(),
            externaldns::DNSEndpoint::crd(),
        ),
        (
            multicluster::ServiceExport::crd_name(),
            multicluster::ServiceExport::crd(),
        ),
        (
            multicluster::ServiceImport::crd_name(),
            multicluster::ServiceImport::crd(),
        ),
        (
            config::v1alpha1::ResourceInterpreter::crd_name(),
            config::v1alpha1::ResourceInterpreter::crd(),
        ),
    ]
    .into_iter()
    .map(|(name, crd)| {
        let mut crd =
            serde_json::to_value(crd).map_err(|source| Error::SerializeCrd { name, source })?;
        if SPEC_OPTIONAL.contains(&name) {
            spec_optional(&mut crd);
        }
        Ok(crd)
    })
    .collect()
}

/// Kinds whose every spec field has a default: users write them without a `spec` (a bare
/// `ServiceExport`, as KEP-1645 shows it; a `GlobalService` keeping every default), and the
/// hub fills in `spec: {}` so clients that expect one can read it.
const SPEC_OPTIONAL: [&str; 3] = [
    "clustersets.cluster.flotilla.io",
    "serviceexports.multicluster.x-k8s.io",
    "globalservices.networking.flotilla.io",
];

/// Drops `spec` from the required fields of every version's schema and defaults it to `{}`.
fn spec_optional(crd: &mut Value) {
    let versions = crd["spec"]["versions"].as_array_mut().into_iter().flatten();
    for version in versions {
        let schema = &mut version["schema"]["openAPIV3Schema"];
        if let Some(required) = schema["required"].as_array_mut() {
            required.retain(|field| field != "spec");
            if required.is_empty() {
                if let Some(obj) = schema.as_object_mut() {
                    obj.remove("required");
                }
            }
        }
        if let Some(spec) = schema["properties"]["spec"].as_object_mut() {
            spec.insert("default".into(), Value::Object(Default::default()));
        }
    }
}

#[cfg(test)]
mod tests;
