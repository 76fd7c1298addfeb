//! Hostile input: protobuf recursion, JSON patch bombs, metrics labels and connection limits.

#[allow(unused_imports)]
use crate::common;
