//! Defaults applied to custom resources read from storage.
//!
//! kube-apiserver defaults a custom resource each time it decodes one from storage, with the
//! schema of the version it serves, so a `default` added to a CRD shows on objects stored
//! before it (GET, LIST, WATCH) without rewriting them. The registry hands each served version
//! its schema when that declares defaults ([`ResourceInfo::read_defaults`]).

use serde_json::Value;

use crate::registry::ResourceInfo;

/// Fill in `res`'s schema defaults in an object read from storage; whether it holds to the
/// rest of the schema is not a reader's business.
pub(crate) fn apply(res: &ResourceInfo, obj: &mut Value) {
    if let Some(schema) = &res.read_defaults {
        let _ = super::values::default_and_check(schema, obj);
    }
}

#[cfg(test)]
mod tests;
