//! Server-side apply and managedFields tracking, as a pure library over JSON objects.
//!
//! Kubernetes records, for every object, which *field manager* owns which fields
//! (`metadata.managedFields`). Two kinds of writes change that record:
//!
//! - **Apply** ([`apply`], [`Applier::apply`]): a manager sends its whole intent. It is
//!   merged into the live object; fields the manager applied before but no longer applies are
//!   removed unless someone else owns them; changing a field another manager owns is a
//!   [`Conflict`] unless forced, in which case ownership moves to the applier; applying the
//!   same value as another manager shares the field.
//! - **Update** ([`track_update`], [`Applier::track_update`]): create, update and non-apply
//!   patches. The caller has already produced the new object; every field it changed is given
//!   to the manager and taken from everyone else. Updates never conflict.
//!
//! Ownership is a [`FieldSet`] per manager, written in the `FieldsV1` format. How a value is
//! owned — whole, key by key, or item by item — comes from the schema
//! ([`crate::schema::lookup`]); unknown objects are granular and unknown lists atomic.
//!
//! Layout: [`path`] and [`fieldset`] (with the `fieldsV1` codec in `fieldsv1`) are the set
//! algebra; `typed` resolves schema types; `diff`, `merge` and `prune` walk values;
//! [`managed`] reads and writes the entries; `applier` and `tracker` are the two operations.
//!
//! Not here: converting field sets between API versions, capping the number of `Update`
//! managers, and the kubectl last-applied-configuration migration.

mod applier;
mod diff;
pub mod fieldset;
mod fieldsv1;
pub mod managed;
mod merge;
pub mod path;
mod prune;
mod tracker;
mod typed;

#[cfg(test)]
mod tests;

use serde_json::Value;

pub use fieldset::FieldSet;
pub use managed::{ManagedEntry, Operation};
pub use path::{OrderedValue, Path, PathElement};

use crate::schema::lookup::SchemaLookup;

/// Why an apply or an update could not be tracked. [`ApplyError::Conflicts`] is a 409
/// Conflict; [`ApplyError::InvalidManagedFields`] on a stored object is a server error;
/// everything else is the client's (400 Bad Request).
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// The apply changes fields other managers own; re-apply with force to take them.
    #[error("{}", conflicts_message(.0))]
    Conflicts(Vec<Conflict>),
    /// The object or apply configuration is malformed.
    #[error("invalid object: {0}")]
    InvalidObject(String),
    /// An apply configuration carried `metadata.managedFields`.
    #[error("metadata.managedFields must be nil")]
    ManagedFieldsInApply,
    /// A list-map item lacks one of its key fields.
    #[error("associative list with keys has an element that omits key field {key:?}: {item}")]
    MissingListKey {
        /// The missing key field.
        key: String,
        /// The offending item.
        item: String,
    },
    /// A list map or set holds the same key twice.
    #[error("duplicate entries for key {key}")]
    DuplicateKey {
        /// The key, printed as a path element.
        key: String,
    },
    /// `metadata.managedFields` could not be decoded.
    #[error("failed to decode managed fields: {0}")]
    InvalidManagedFields(String),
    /// A `fieldsV1` value could not be decoded.
    #[error("invalid fieldsV1: {0}")]
    InvalidFieldsV1(String),
    /// A printed path could not be parsed.
    #[error("invalid field path {0}")]
    InvalidPath(String),
    /// Apply to a subresource of an object that does not exist.
    #[error("cannot apply to the {0} subresource of an object that does not exist")]
    SubresourceOfMissingObject(String),
}

/// One field an apply would take from another manager.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The other manager's name.
    pub manager: String,
    /// The field, printed as Kubernetes prints paths: `.spec.replicas`.
    pub field: String,
    /// The other manager's operation.
    pub operation: Operation,
    /// The other manager's subresource.
    pub subresource: Option<String>,
    /// The API version of the other manager's entry.
    pub api_version: String,
}

impl Conflict {
    /// The manager as printed in messages: `"kube-controller-manager" using apps/v1`.
    pub fn manager_description(&self) -> String {
        ManagedEntry {
            manager: self.manager.clone(),
            operation: self.operation,
            subresource: self.subresource.clone(),
            api_version: self.api_version.clone(),
            time: None,
            fields: FieldSet::new(),
        }
        .describe()
    }

    /// The `StatusCause` message for this conflict (cause type `FieldManagerConflict`).
    pub fn cause_message(&self) -> String {
        format!("conflict with {}", self.manager_description())
    }
}

/// The message of a conflict error, as the Kubernetes API server words it.
pub fn conflicts_message(conflicts: &[Conflict]) -> String {
    if let [c] = conflicts {
        return format!(
            "Apply failed with 1 conflict: {}: {}",
            c.cause_message(),
            c.field
        );
    }
    let mut lines = Vec::new();
    let mut last: Option<String> = None;
    for c in conflicts {
        let who = c.manager_description();
        if last.as_deref() != Some(&who) {
            lines.push(format!("conflicts with {who}:"));
            last = Some(who);
        }
        lines.push(format!("- {}", c.field));
    }
    format!(
        "Apply failed with {} conflicts: {}",
        conflicts.len(),
        lines.join("\n")
    )
}

/// Which part of an object a request may write, and therefore which fields it may own.
#[derive(Clone, Debug)]
pub struct Scope {
    /// The subresource the request went to (`status`), if any.
    pub subresource: Option<String>,
    /// The fields the registry strategy resets for this request: never owned, and in an
    /// apply never taken from the configuration.
    pub reset: Reset,
}

/// The fields a [`Scope`] ignores.
#[derive(Clone, Debug)]
pub enum Reset {
    /// These fields and everything below them.
    Paths(FieldSet),
    /// Everything except these fields and what is below them.
    AllExcept(FieldSet),
}

impl Scope {
    /// The main resource of a kind with a status subresource: `.status` is ignored.
    pub fn main() -> Scope {
        Scope {
            subresource: None,
            reset: Reset::Paths(single(".status")),
        }
    }

    /// The main resource of a kind without a status subresource: nothing is ignored.
    pub fn whole() -> Scope {
        Scope {
            subresource: None,
            reset: Reset::Paths(FieldSet::new()),
        }
    }

    /// The status subresource: only `.status` is considered.
    pub fn status() -> Scope {
        Scope {
            subresource: Some("status".into()),
            reset: Reset::AllExcept(single(".status")),
        }
    }

    /// The usual scope of a request to `subresource`: [`Scope::main`], [`Scope::status`], or
    /// for any other subresource, that subresource with nothing ignored.
    pub fn for_subresource(subresource: Option<&str>) -> Scope {
        match subresource {
            None => Scope::main(),
            Some("status") => Scope::status(),
            Some(other) => Scope {
                subresource: Some(other.into()),
                reset: Reset::Paths(FieldSet::new()),
            },
        }
    }
}

fn single(path: &str) -> FieldSet {
    let mut set = FieldSet::new();
    if let Ok(p) = Path::parse(path) {
        set.insert(&p.0);
    }
    set
}

/// Server-side apply and update tracking for one kind: its schema root, the request scope,
/// and the defaults of list-map key fields.
pub struct Applier<'a> {
    schema: &'a dyn SchemaLookup,
    root_type: String,
    scope: Scope,
    key_defaults: Vec<(String, Value)>,
}

impl<'a> Applier<'a> {
    /// An applier for objects of `root_type`, on the main resource ([`Scope::main`]). The
    /// list-map key `protocol` defaults to `"TCP"`, as the Kubernetes schemas declare for
    /// every port list.
    pub fn new(schema: &'a dyn SchemaLookup, root_type: &str) -> Self {
        Applier {
            schema,
            root_type: root_type.to_string(),
            scope: Scope::main(),
            key_defaults: vec![("protocol".into(), Value::String("TCP".into()))],
        }
    }

    /// The same applier for another scope.
    pub fn with_scope(mut self, scope: Scope) -> Self {
        self.scope = scope;
        self
    }

    /// Adds a default for a list-map key field that items may omit.
    pub fn with_key_default(mut self, key: &str, value: Value) -> Self {
        self.key_defaults.retain(|(k, _)| k != key);
        self.key_defaults.push((key.to_string(), value));
        self
    }

    /// Records in `new`'s managedFields that `manager` changed `old` (`None`: a create) into
    /// `new`. On error `new` is left without managedFields, as Kubernetes does: the caller
    /// may log and go on.
    pub fn track_update(
        &self,
        old: Option<&Value>,
        new: &mut Value,
        manager: &str,
        now: &str,
    ) -> Result<(), ApplyError> {
        let out = tracker::track_update(self, old, new, manager, now);
        if out.is_err() {
            managed::remove(new);
        }
        out
    }
}

/// Server-side apply to the main resource of a kind with a status subresource; see
/// [`Applier::apply`].
pub fn apply(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
    schema: &dyn SchemaLookup,
    root_type: &str,
    now: &str,
) -> Result<Value, ApplyError> {
    Applier::new(schema, root_type).apply(live, applied, manager, force, now)
}

/// Managed-fields tracking for a create, update or non-apply patch, in the usual scope of
/// `subresource` ([`Scope::for_subresource`]); see [`Applier::track_update`].
pub fn track_update(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: Option<&str>,
    schema: &dyn SchemaLookup,
    root_type: &str,
    now: &str,
) -> Result<(), ApplyError> {
    Applier::new(schema, root_type)
        .with_scope(Scope::for_subresource(subresource))
        .track_update(old, new, manager, now)
}
