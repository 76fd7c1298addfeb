//! Authentication and authorization of every request.
//!
//! - [`tokens`]: the admin token and service-account tokens (issued through TokenRequest).
//! - [`rbac`]: Kubernetes RBAC evaluated against the Roles, ClusterRoles and bindings stored in
//!   the hub, read from the watch cache on each decision.
//! - [`bootstrap`]: the default roles every cluster has (cluster-admin, admin, edit, view,
//!   system:discovery, …), created at first start.

pub mod bootstrap;
pub mod rbac;
pub mod token_request;
pub mod tokens;
