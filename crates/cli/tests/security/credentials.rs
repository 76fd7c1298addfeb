//! Credentials and files: token lifetimes, data-dir modes, bootstrap RBAC cleanup, revoked tokens, cluster names.

#[allow(unused_imports)]
use crate::common;
