//! `status.rollout` of a binding whose policy rolls changes out progressively
//! (`spec.rolloutStrategy`): which revision of the template is going out, where each cluster
//! stands, and whether the rollout is progressing, complete or failed.
//!
//! A revision is a `ControllerRevision` on the hub (in the binding's namespace, or
//! `flotilla-system` for a cluster-scoped template) holding the template as it was, named
//! `<binding>-<hash of the template>`: clusters the rollout has not reached keep rendering the
//! revision they run, and `flotilla rollout undo` finds the previous one there.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Condition type (`status.rollout`): the rollout is under way (`False` once it is complete,
/// or stopped).
pub const CONDITION_PROGRESSING: &str = "Progressing";
/// Condition type (`status.rollout`): every cluster is healthy on the revision, for
/// `minSuccessTime`.
pub const CONDITION_COMPLETE: &str = "Complete";
/// Condition type (`status.rollout`): more clusters failed than `maxFailures` allows; the
/// rollout takes no new cluster.
pub const CONDITION_FAILED: &str = "Failed";

/// Label on a revision (`ControllerRevision`): the hash of the template it holds.
pub const REVISION_HASH_LABEL: &str = "rollout.flotilla.io/revision-hash";
/// Annotation on a Work: the revision (`ControllerRevision` name) it was rendered from.
pub const WORK_REVISION_ANNOTATION: &str = "rollout.flotilla.io/revision";
/// Annotation on a binding: `"true"` holds its rollout, as the policy's `paused` does
/// (`flotilla rollout pause|resume`).
pub const PAUSED_ANNOTATION: &str = "rollout.flotilla.io/paused";

/// Where a progressive rollout stands.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStatus {
    /// The revision going out: the template as it is now.
    pub revision: String,
    /// Its number (revisions are numbered as they become current, as kubectl numbers them).
    #[serde(default)]
    pub revision_number: i64,
    /// The last revision that reached every cluster; a cluster joining mid-rollout gets it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stable_revision: Option<String>,
    /// The group being rolled out (`*` for the clusters in no group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_group: Option<String>,
    /// How many clusters failed on the revision (`Failed` or `TimeOut`).
    #[serde(default)]
    pub failures: i32,
    /// Each target cluster.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<ClusterRollout>,
    /// `Progressing`, `Complete`, `Failed`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "crate::schema::conditions")]
    pub conditions: Vec<Condition>,
}

/// One cluster in a rollout.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterRollout {
    /// The Cluster's name.
    pub name: String,
    /// The group it is rolled out with (`*`: in no group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The revision its Work carries now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// Where it stands on the rollout's revision.
    pub phase: RolloutPhase,
    /// Since when: sent the revision (`Progressing`, `TimeOut`), healthy on it (`Succeeded`),
    /// failed (`Failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Time>,
    /// What the member says, when it is not healthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// Where one cluster stands on a rollout's revision.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum RolloutPhase {
    /// Not sent the revision yet.
    #[default]
    ToApply,
    /// Sent it, not healthy on it yet.
    Progressing,
    /// Healthy on it.
    Succeeded,
    /// The member reports it failed (degraded).
    Failed,
    /// Not healthy within `progressDeadline`.
    TimeOut,
}

impl RolloutPhase {
    /// Whether the phase counts as a failure (`Failed`, `TimeOut`).
    pub fn failed(self) -> bool {
        matches!(self, Self::Failed | Self::TimeOut)
    }
}
