//! Applies Work into member clusters
//!
//! Built in a later issue; the crate exists so the dependency direction is fixed from the start.
#![deny(missing_docs)]
