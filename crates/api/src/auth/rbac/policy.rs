//! Where RBAC objects come from: the [`PolicySource`] trait the authorizer reads, and
//! [`Policy`], an in-memory snapshot built from stored JSON that implements it.
//!
//! The hub keeps one `Policy` per revision of the RBAC objects (rebuilt or patched from the watch
//! cache with [`Policy::apply`] / [`Policy::remove`], then swapped behind an `Arc`), so a request
//! authorizes against a consistent view without touching the store.

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::bindings::Bindings;
use crate::auth::user::UserInfo;

/// The RBAC objects the authorizer may consult.
pub trait PolicySource {
    /// The ClusterRole `name`.
    fn cluster_role(&self, name: &str) -> Option<&ClusterRole>;
    /// Every ClusterRole (aggregation selects among them by label).
    fn cluster_roles(&self) -> impl Iterator<Item = &ClusterRole>;
    /// The Role `name` in `namespace`.
    fn role(&self, namespace: &str, name: &str) -> Option<&Role>;
    /// The ClusterRoleBindings that may name `user` among their subjects (every one that
    /// does, perhaps more), in name order.
    fn cluster_role_bindings<'a>(
        &'a self,
        user: &UserInfo,
    ) -> impl Iterator<Item = &'a ClusterRoleBinding> + use<'a, Self>;
    /// The RoleBindings in `namespace` that may name `user` among their subjects (every one
    /// that does, perhaps more), in name order.
    fn role_bindings<'a>(
        &'a self,
        namespace: &str,
        user: &UserInfo,
    ) -> impl Iterator<Item = &'a RoleBinding> + use<'a, Self>;
}

/// Why an object could not be added to a [`Policy`].
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The object is not a Role, ClusterRole, RoleBinding or ClusterRoleBinding.
    #[error(
        "apiVersion {api_version:?} kind {kind:?} is not an rbac.authorization.k8s.io/v1 object"
    )]
    NotRbac {
        /// The object's `apiVersion`.
        api_version: String,
        /// The object's `kind`.
        kind: String,
    },
    /// The object does not have the shape of its kind.
    #[error("{kind} {name:?} is not a valid rbac.authorization.k8s.io/v1 {kind}: {source}")]
    Decode {
        /// The object's kind.
        kind: String,
        /// The object's name.
        name: String,
        /// What serde found wrong.
        #[source]
        source: serde_json::Error,
    },
    /// A name, or a namespace for a namespaced kind, is missing.
    #[error("{kind} has no metadata.name, or no metadata.namespace where one is required")]
    MissingName {
        /// The object's kind.
        kind: String,
    },
}

/// An in-memory set of RBAC objects, ordered by namespace and name so that decisions (and
/// their reasons) are deterministic, with the bindings indexed by subject. The objects are
/// shared, so a copy to change (a new snapshot after one RBAC write) copies the maps, not the
/// roles and bindings.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    cluster_roles: BTreeMap<String, Arc<ClusterRole>>,
    cluster_role_bindings: Bindings<ClusterRoleBinding>,
    roles: BTreeMap<String, BTreeMap<String, Arc<Role>>>,
    role_bindings: BTreeMap<String, Bindings<RoleBinding>>,
}

// === impl Policy ===

impl Policy {
    /// An empty policy (denies everyone but `system:masters`).
    pub fn new() -> Self {
        Self::default()
    }

    /// A policy holding `objects` (borrowed or owned JSON, e.g. straight from the watch cache).
    pub fn from_objects<V: Borrow<Value>>(
        objects: impl IntoIterator<Item = V>,
    ) -> Result<Self, PolicyError> {
        let mut policy = Self::new();
        for o in objects {
            policy.apply(o.borrow())?;
        }
        Ok(policy)
    }

    /// Add `object`, replacing any object of the same kind, namespace and name.
    pub fn apply(&mut self, object: &Value) -> Result<(), PolicyError> {
        let (api_version, kind, namespace, name) = identity(object);
        if api_version != "rbac.authorization.k8s.io/v1" {
            return Err(PolicyError::NotRbac {
                api_version: api_version.to_string(),
                kind: kind.to_string(),
            });
        }
        let namespaced = matches!(kind, "Role" | "RoleBinding");
        if name.is_empty() || (namespaced && namespace.is_empty()) {
            return Err(PolicyError::MissingName {
                kind: kind.to_string(),
            });
        }
        let (ns, name) = (namespace.to_string(), name.to_string());
        match kind {
            "ClusterRole" => {
                self.cluster_roles.insert(name, decode(object, kind)?);
            }
            "ClusterRoleBinding" => {
                self.cluster_role_bindings
                    .insert(name, decode(object, kind)?);
            }
            "Role" => {
                self.roles
                    .entry(ns)
                    .or_default()
                    .insert(name, decode(object, kind)?);
            }
            "RoleBinding" => {
                let binding = decode(object, kind)?;
                self.role_bindings
                    .entry(ns)
                    .or_insert_with_key(|ns| Bindings::new(ns))
                    .insert(name, binding);
            }
            _ => {
                return Err(PolicyError::NotRbac {
                    api_version: api_version.to_string(),
                    kind: kind.to_string(),
                })
            }
        }
        Ok(())
    }

    /// Remove the object `object` names (its kind, namespace and name). Returns whether there
    /// was one.
    pub fn remove_object(&mut self, object: &Value) -> bool {
        let (_, kind, namespace, name) = identity(object);
        self.remove(kind, namespace, name)
    }

    /// Remove the object of `kind` named `name` (in `namespace` for Roles and RoleBindings).
    /// Returns whether there was one.
    pub fn remove(&mut self, kind: &str, namespace: &str, name: &str) -> bool {
        match kind {
            "ClusterRole" => self.cluster_roles.remove(name).is_some(),
            "ClusterRoleBinding" => self.cluster_role_bindings.remove(name),
            "Role" => remove_namespaced(&mut self.roles, namespace, name),
            "RoleBinding" => {
                let Some(bindings) = self.role_bindings.get_mut(namespace) else {
                    return false;
                };
                let removed = bindings.remove(name);
                if bindings.len() == 0 {
                    self.role_bindings.remove(namespace);
                }
                removed
            }
            _ => false,
        }
    }

    /// How many objects the policy holds.
    pub fn len(&self) -> usize {
        self.cluster_roles.len()
            + self.cluster_role_bindings.len()
            + self.roles.values().map(BTreeMap::len).sum::<usize>()
            + self
                .role_bindings
                .values()
                .map(Bindings::len)
                .sum::<usize>()
    }

    /// Does the policy hold nothing?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An object's apiVersion, kind, namespace and name (empty where absent).
fn identity(object: &Value) -> (&str, &str, &str, &str) {
    let str_at = |p: &str| object.pointer(p).and_then(Value::as_str).unwrap_or("");
    (
        str_at("/apiVersion"),
        str_at("/kind"),
        str_at("/metadata/namespace"),
        str_at("/metadata/name"),
    )
}

fn decode<T: DeserializeOwned>(object: &Value, kind: &str) -> Result<Arc<T>, PolicyError> {
    T::deserialize(object)
        .map(Arc::new)
        .map_err(|source| PolicyError::Decode {
            kind: kind.to_string(),
            name: object
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            source,
        })
}

fn remove_namespaced<T>(
    map: &mut BTreeMap<String, BTreeMap<String, T>>,
    ns: &str,
    name: &str,
) -> bool {
    let Some(inner) = map.get_mut(ns) else {
        return false;
    };
    let removed = inner.remove(name).is_some();
    if inner.is_empty() {
        map.remove(ns);
    }
    removed
}

impl PolicySource for Policy {
    fn cluster_role(&self, name: &str) -> Option<&ClusterRole> {
        self.cluster_roles.get(name).map(|r| &**r)
    }

    fn cluster_roles(&self) -> impl Iterator<Item = &ClusterRole> {
        self.cluster_roles.values().map(|r| &**r)
    }

    fn role(&self, namespace: &str, name: &str) -> Option<&Role> {
        self.roles.get(namespace)?.get(name).map(|r| &**r)
    }

    fn cluster_role_bindings<'a>(
        &'a self,
        user: &UserInfo,
    ) -> impl Iterator<Item = &'a ClusterRoleBinding> + use<'a> {
        self.cluster_role_bindings.naming(user)
    }

    fn role_bindings<'a>(
        &'a self,
        namespace: &str,
        user: &UserInfo,
    ) -> impl Iterator<Item = &'a RoleBinding> + use<'a> {
        let bindings = self.role_bindings.get(namespace);
        bindings.map(|b| b.naming(user)).into_iter().flatten()
    }
}
