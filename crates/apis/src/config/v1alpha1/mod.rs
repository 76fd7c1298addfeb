//! `config.flotilla.io/v1alpha1`: `ResourceInterpreter`, CEL rules that tell the hub the
//! replicas, health, status, dependencies and member-owned fields of one kind.

mod interpreter;
#[cfg(test)]
mod tests;

pub use interpreter::*;

/// API group.
pub const GROUP: &str = "config.flotilla.io";
/// API version.
pub const VERSION: &str = "v1alpha1";
