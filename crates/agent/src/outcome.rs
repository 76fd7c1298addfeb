//! What applying one manifest came to, and how that maps onto the Work's `ManifestStatus`.

use flotilla_apis::work::v1alpha1::{ManifestStatus, ResourceIdentifier, CONDITION_APPLIED};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

/// The result of applying one manifest.
#[derive(Clone, Debug, PartialEq)]
pub struct ManifestResult {
    /// Which manifest, and the member resource it became (`resource` is empty if discovery failed).
    pub identifier: ResourceIdentifier,
    /// Whether it is applied (the `Applied` condition's status).
    pub applied: bool,
    /// The `Applied` condition's reason (`Applied`, `Conflict`, `ApplyFailed`, `KindNotServed`, ...).
    pub reason: String,
    /// A human-readable message: what happened, or what went wrong.
    pub message: String,
    /// `metadata.resourceVersion` of the object in the member after the write (or read).
    pub resource_version: Option<String>,
    /// `metadata.generation` of the object in the member after the write (or read).
    pub generation: Option<i64>,
    /// The object as the member returned it after the write (or read), status included: what
    /// availability and status feedback are computed from. `None` when nothing was written or read.
    pub object: Option<serde_json::Value>,
}

impl ManifestResult {
    /// The `Applied` condition, stamped now, for generation `observed_generation` of the Work.
    pub fn applied_condition(&self, observed_generation: Option<i64>) -> Condition {
        Condition {
            type_: CONDITION_APPLIED.to_owned(),
            status: if self.applied { "True" } else { "False" }.to_owned(),
            reason: self.reason.clone(),
            message: self.message.clone(),
            observed_generation,
            last_transition_time: Time(Timestamp::now()),
        }
    }

    /// The manifest's status entry with its `Applied` condition only, stamped now. For the
    /// Work's status use [`crate::status::work_status`]: it adds `Available`, `Degraded` and
    /// feedback, and keeps transition times so an unchanged status compares equal.
    pub fn to_status(&self, observed_generation: Option<i64>) -> ManifestStatus {
        ManifestStatus {
            identifier: self.identifier.clone(),
            conditions: vec![self.applied_condition(observed_generation)],
            feedback: None,
            observed_resource_version: self.resource_version.clone(),
            observed_generation: self.generation,
        }
    }
}
