//! PostgreSQL: TLS to the store and commits whose outcome is unknown.

#[allow(unused_imports)]
use crate::common;
