//! The `Work` kind and its spec.

use kube_derive::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::WorkStatus;

/// What to apply in one member cluster, and how.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "work.flotilla.io",
    version = "v1alpha1",
    kind = "Work",
    namespaced,
    status = "WorkStatus",
    category = "flotilla",
    derive = "PartialEq",
    doc = "Work is the set of manifests to apply in one member cluster; it lives in that cluster's execution namespace flotilla-es-<cluster>.",
    crates(kube_core = "::kube_core"),
    // Columns as JSON: clippy takes repeated `printcolumn(type_ = ...)` for duplicated attributes.
    // A MANIFESTS count is not expressible in kubectl's JSONPath, so there is none.
    printcolumn = r#"{"name": "Applied", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Applied\")].status"}"#,
    printcolumn = r#"{"name": "Available", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Available\")].status"}"#,
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct WorkSpec {
    /// The objects to apply, each a whole Kubernetes object (apiVersion, kind, metadata, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manifests: Vec<Manifest>,
    /// How the manifests are written to the member.
    #[serde(default)]
    pub apply_strategy: ApplyStrategy,
    /// What to do when an object already exists in the member and flotilla does not manage it.
    #[serde(default)]
    pub conflict_policy: ConflictPolicy,
    /// What happens to applied objects when the Work, or a manifest of it, goes away.
    #[serde(default)]
    pub delete_policy: DeletePolicy,
    /// Status fields to read back from applied objects, beyond those fed back by default for
    /// well-known kinds (Deployment, StatefulSet, DaemonSet, Job, Service, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub status_feedback: Vec<FeedbackRule>,
}

/// One whole Kubernetes object, kept as written (unknown fields preserved).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Manifest(pub Value);

impl Manifest {
    /// Whether the object is a core `v1` Service.
    pub fn is_service(&self) -> bool {
        self.0.get("apiVersion").and_then(Value::as_str) == Some("v1")
            && self.0.get("kind").and_then(Value::as_str) == Some("Service")
    }
}

impl JsonSchema for Manifest {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Manifest".into()
    }

    fn json_schema(gen: &mut schemars::SchemaGenerator) -> schemars::Schema {
        crate::schema::embedded_object(gen)
    }
}

/// How manifests are written to the member.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ApplyStrategy {
    /// Server-side apply with field manager `flotilla`: flotilla owns the fields it sets and
    /// leaves the rest to others (e.g. an HPA's replicas).
    #[default]
    ServerSideApply,
    /// Create, or replace the whole object (other writers' changes are overwritten).
    Update,
    /// Create if absent; never change an existing object.
    CreateOnly,
    /// Never write; only read the object's status back (to observe what exists).
    ReadOnly,
}

/// What to do when an object exists in the member and flotilla does not manage it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ConflictPolicy {
    /// Leave it alone and report the manifest `Applied=False` with reason `Conflict`.
    #[default]
    Abort,
    /// Take it over: mark it as flotilla's and apply, keeping fields others own.
    Adopt,
    /// Take it over, forcing flotilla's values over other owners' (SSA with force).
    Overwrite,
}

/// What happens to applied objects when their Work or manifest is removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum DeletePolicy {
    /// Delete them from the member.
    #[default]
    Delete,
    /// Leave them in the member, no longer managed.
    Orphan,
}

/// Status fields to read back from one applied object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedbackRule {
    /// Which manifest of the Work the rule is for.
    pub resource: ResourceRef,
    /// The values to read, each by name.
    pub json_paths: Vec<JsonPathRule>,
}

/// Names an object by group, resource, namespace and name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ResourceRef {
    /// API group ("" for the core group).
    #[serde(default)]
    pub group: String,
    /// Plural resource name, e.g. `deployments`.
    pub resource: String,
    /// Namespace; absent for cluster-scoped objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
}

/// One value to read from an object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JsonPathRule {
    /// The name the value is reported under in `feedback.values`.
    pub name: String,
    /// A kubectl-style JSONPath into the object, e.g. `.status.readyReplicas`.
    pub path: String,
}
