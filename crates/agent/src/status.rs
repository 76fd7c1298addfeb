//! Turning what applying a Work came to into the Work's `status` (pure: no I/O, no clock).
//!
//! The [`Applier`](crate::Applier) returns one [`ManifestResult`](crate::ManifestResult) per
//! manifest, holding the object as the member returned it. From that this module computes what
//! the hub needs to know, without the hub ever reading the member:
//!
//! * [`health`]: whether each object is available or degraded, judged as `kubectl rollout
//!   status` and `kubectl wait` judge it;
//! * [`feedback`](mod@feedback): status values read back (well-known ones per kind, plus the Work's
//!   kubectl-style JSONPath rules, see [`jsonpath`]);
//! * [`work`]: the assembled [`WorkStatus`](flotilla_apis::work::v1alpha1::WorkStatus),
//!   deterministic for equal input so the caller can skip writes that would change nothing.

pub mod feedback;
pub mod health;
pub mod jsonpath;
mod object;
pub mod work;
mod workloads;

pub use feedback::{feedback, rules_for};
pub use health::{assess, Health};
pub use work::{same_status, work_status};

/// Reason of a manifest's `Available=Unknown` when it was not applied, so nothing is known of
/// the object in the member (the `Applied` condition says why).
pub const REASON_NOT_APPLIED: &str = "NotApplied";
/// Reason of a manifest's `Degraded=False`: the object reports no failure.
pub const REASON_AS_EXPECTED: &str = "AsExpected";
