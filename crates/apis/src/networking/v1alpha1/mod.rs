//! `networking.flotilla.io/v1alpha1`: how a propagated Service is answered in DNS.
//!
//! - `GlobalService` tunes the fleet name of the hub Service of the same name and namespace
//!   (TTL, answer strategy, health check) and reports the served names and each endpoint's
//!   verdict.
//! - `HealthReport` lives in a voter's execution namespace (`flotilla-es-<cluster>`): the hub
//!   writes in its spec the endpoints that voter must probe, the voter (the member's agent, or
//!   the hub for a push member) writes what it saw into its status. RBAC confines each agent to
//!   its own namespace, so a cluster can only vote as itself.

mod global_service;
mod health_report;
#[cfg(test)]
mod tests;

pub use global_service::*;
pub use health_report::*;

/// API group.
pub const GROUP: &str = "networking.flotilla.io";
/// API version.
pub const VERSION: &str = "v1alpha1";

/// The name of the one HealthReport in each voter's execution namespace.
pub const HEALTH_REPORT_NAME: &str = "endpoints";

/// Default answer TTL in seconds.
pub const DEFAULT_TTL_SECONDS: u32 = 30;

/// Condition type of a GlobalService: at least one endpoint is answered as healthy.
pub const CONDITION_SERVING: &str = "Serving";
/// Condition type of a GlobalService: every endpoint is down, so all of them are answered.
pub const CONDITION_FAIL_OPEN: &str = "FailOpen";
