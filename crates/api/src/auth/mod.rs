//! Authentication and authorization, as pure functions over data: no I/O, no HTTP.
//!
//! - [`user`]: the authenticated identity ([`UserInfo`]) and Kubernetes' group conventions.
//! - [`token`]: the admin token, and service-account JWTs (issue, verify, JWKS, OIDC discovery).
//! - [`rbac`]: Kubernetes RBAC over Roles, ClusterRoles and their bindings, with its reasons and
//!   403 messages.
//! - [`bootstrap`]: the default ClusterRoles and ClusterRoleBindings created at first start.
//! - [`bootstrap_token`]: bootstrap tokens (`<id>.<secret>`), the credential a member cluster's
//!   agent asks to join with, checked against their Secrets.
//!
//! The server layer reads credentials from requests and objects from the store, and calls in
//! here; errors are mapped to `Status` objects in one place, `crate::error`.

pub mod bootstrap;
pub mod bootstrap_token;
pub mod rbac;
pub mod token;
pub mod user;

#[cfg(test)]
mod tests;

pub use rbac::{authorize, forbidden_message, Attributes, Decision, Policy, PolicySource};
pub use token::{AdminToken, BearerToken, TokenAuthority, TokenError, TokenSigner};
pub use user::UserInfo;
