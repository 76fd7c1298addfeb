//! `cluster.flotilla.io/v1alpha1`: `Cluster`, one member cluster known to the hub.
//!
//! A Cluster is cluster-scoped and selected by its labels (and `region`/`zone`/`provider`).
//! Its spec says how flotilla reaches the member; its status is written by the member's agent
//! (pull) or the hub's push worker, and by the cluster-health controller.

mod clusterset;
mod spec;
mod status;
#[cfg(test)]
mod tests;

pub use clusterset::*;
pub use spec::*;
pub use status::*;

/// API group.
pub const GROUP: &str = "cluster.flotilla.io";
/// API version.
pub const VERSION: &str = "v1alpha1";

/// Condition type: the member has joined (its agent registered, or push credentials work).
pub const CONDITION_JOINED: &str = "Joined";
/// Condition type: the member is healthy and reachable (heartbeats arrive in time).
pub const CONDITION_READY: &str = "Ready";
/// Condition type (push): the hub's worker accepts the member credential `spec.secretRef`
/// names (a Secret in flotilla-system holding a kubeconfig with inline credentials only).
pub const CONDITION_CREDENTIAL_ACCEPTED: &str = "CredentialAccepted";

/// Reason of `Joined=True`.
pub const REASON_JOINED: &str = "Joined";
/// Reason of `Joined=False` while the cluster waits for `flotilla cluster approve`.
pub const REASON_PENDING_APPROVAL: &str = "PendingApproval";
/// Reason of `Joined=True` once approved, until the agent (or push worker) first reports.
pub const REASON_APPROVED: &str = "Approved";
/// Reason of `Ready=True`.
pub const REASON_CLUSTER_READY: &str = "ClusterReady";
/// Reason of `Ready=False`: the member answered but is not healthy.
pub const REASON_CLUSTER_NOT_READY: &str = "ClusterNotReady";
/// Reason of `Ready=False`: the agent runs but cannot reach its own member's API server.
pub const REASON_MEMBER_UNREACHABLE: &str = "MemberUnreachable";
/// Reason of `CredentialAccepted=True`.
pub const REASON_CREDENTIAL_ACCEPTED: &str = "CredentialAccepted";
/// Reason of `CredentialAccepted=False`: the credential is refused (a Secret outside
/// flotilla-system, an exec plugin, a file reference); nothing of it is used.
pub const REASON_CREDENTIAL_REFUSED: &str = "CredentialRefused";
/// Reason of `CredentialAccepted=False`: the Secret or its kubeconfig cannot be read.
pub const REASON_CREDENTIAL_UNAVAILABLE: &str = "CredentialUnavailable";
/// Reason of `Ready=Unknown`: heartbeats stopped.
pub const REASON_CLUSTER_UNREACHABLE: &str = "ClusterUnreachable";

/// The taint the cluster-health controller puts on a Cluster whose heartbeats stopped.
pub const TAINT_UNREACHABLE: &str = "cluster.flotilla.io/unreachable";
/// The taint the cluster-health controller puts on a Cluster that reports `Ready=False`.
pub const TAINT_NOT_READY: &str = "cluster.flotilla.io/not-ready";
