//! Authorization: paths, RBAC escalation, named reads and watches, create authorized as create.

#[allow(unused_imports)]
use crate::common;
