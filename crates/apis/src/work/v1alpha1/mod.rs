//! `work.flotilla.io/v1alpha1`: `Work`, the manifests to apply in one member cluster.
//!
//! A Work lives in the member's execution namespace `flotilla-es-<cluster>`. The binding
//! controller writes its spec; the member's agent (pull) or the hub's push worker applies the
//! manifests and writes the status: per manifest whether it applied, whether it is available,
//! and the status fields fed back from the member.

mod binding;
mod rollout;
mod spec;
mod status;
#[cfg(test)]
mod tests;

pub use binding::*;
pub use rollout::*;
pub use spec::*;
pub use status::*;

/// API group.
pub const GROUP: &str = "work.flotilla.io";
/// API version.
pub const VERSION: &str = "v1alpha1";

/// Condition type (Work and manifest): the manifests are applied as specified.
pub const CONDITION_APPLIED: &str = "Applied";
/// Condition type (Work and manifest): the applied resources exist and are available.
pub const CONDITION_AVAILABLE: &str = "Available";
/// Condition type (manifest): the resource exists but is not healthy (e.g. replicas unavailable).
pub const CONDITION_DEGRADED: &str = "Degraded";

/// Reason of `Applied=True`.
pub const REASON_APPLIED: &str = "Applied";
/// Reason of `Applied=False` when the member refused or the request failed.
pub const REASON_APPLY_FAILED: &str = "ApplyFailed";
/// Reason of `Applied=False` when the object exists in the member and is not flotilla's
/// (conflictPolicy Abort), or CreateOnly found it already there.
pub const REASON_CONFLICT: &str = "Conflict";
/// Reason of `Applied=False` when the member does not serve the manifest's kind (e.g. its CRD
/// is not installed there).
pub const REASON_KIND_NOT_SERVED: &str = "KindNotServed";
/// Reason of `Applied=False` while some manifests of the Work are not applied yet.
pub const REASON_PROGRESSING: &str = "Progressing";
/// Reason of `Available=True`.
pub const REASON_AVAILABLE: &str = "Available";
/// Reason of `Available=False` when the resource is missing in the member.
pub const REASON_NOT_FOUND: &str = "ResourceNotFound";
/// Reason of `Available=False`/`Degraded=True` when the resource reports itself unhealthy.
pub const REASON_NOT_AVAILABLE: &str = "ResourceNotAvailable";
