//! The status of a `Work`, written by whoever applies it (agent or push worker).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the Work fared in its member.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkStatus {
    /// `Applied` (every manifest applied) and `Available` (every applied resource available).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "crate::schema::conditions")]
    pub conditions: Vec<Condition>,
    /// One entry per manifest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub manifest_statuses: Vec<ManifestStatus>,
}

/// The state of one manifest in the member.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManifestStatus {
    /// Which manifest.
    pub identifier: ResourceIdentifier,
    /// `Applied`, `Available`, `Degraded`; a conflict is `Applied=False` with reason `Conflict`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "crate::schema::conditions")]
    pub conditions: Vec<Condition>,
    /// Status values read back from the applied object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<StatusFeedback>,
    /// `metadata.resourceVersion` of the object in the member when last observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_resource_version: Option<String>,
    /// `metadata.generation` of the object in the member when last observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// Identifies a manifest of a Work and the object it became.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ResourceIdentifier {
    /// The manifest's index in `spec.manifests`.
    pub ordinal: i32,
    /// API group ("" for the core group).
    #[serde(default)]
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Plural resource name (as discovered in the member).
    #[serde(default)]
    pub resource: String,
    /// Namespace; absent for cluster-scoped objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
}

/// Values read back from an applied object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StatusFeedback {
    /// The values, by name (rule names, or well-known names such as `readyReplicas`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<FeedbackValue>,
}

/// One named value read back.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FeedbackValue {
    /// The name (of the rule, or the well-known field).
    pub name: String,
    /// The value.
    pub value: FieldValue,
}

/// A value read back: exactly one of the fields is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FieldValue {
    /// An integer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integer: Option<i64>,
    /// A string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub string: Option<String>,
    /// A boolean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boolean: Option<bool>,
    /// Anything else (objects, lists, floats), as JSON text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json_raw: Option<String>,
}
