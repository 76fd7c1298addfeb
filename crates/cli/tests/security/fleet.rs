//! Delivery: what a namespace user can (not) make the members apply through bindings, overrides and push members.

#[allow(unused_imports)]
use crate::common;
