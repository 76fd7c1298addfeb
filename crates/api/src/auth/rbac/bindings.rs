//! Bindings indexed by the subjects they name, so that finding the bindings of one user reads
//! a few entries instead of every binding: a hub with a thousand member clusters holds a
//! binding or two per member's agent, and each agent's request would otherwise scan them all.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleBinding, Subject};

use crate::auth::user::{service_account_username, UserInfo};

/// A binding's subjects.
pub(super) trait Subjects {
    /// The subjects, none when absent.
    fn subjects(&self) -> &[Subject];
}

impl Subjects for ClusterRoleBinding {
    fn subjects(&self) -> &[Subject] {
        self.subjects.as_deref().unwrap_or_default()
    }
}

impl Subjects for RoleBinding {
    fn subjects(&self) -> &[Subject] {
        self.subjects.as_deref().unwrap_or_default()
    }
}

/// The bindings of one scope (the cluster, or one namespace) by name, and the names of those
/// that name each user (a ServiceAccount subject under its user name) and each group.
#[derive(Debug, Clone, Default)]
pub(super) struct Bindings<T> {
    by_name: BTreeMap<String, Arc<T>>,
    users: HashMap<String, BTreeSet<String>>,
    groups: HashMap<String, BTreeSet<String>>,
    /// The namespace a ServiceAccount subject without one means: the bindings' own (none for
    /// ClusterRoleBindings, where such a subject matches nobody).
    namespace: String,
}

impl<T: Subjects> Bindings<T> {
    /// No bindings, in `namespace` (empty for ClusterRoleBindings).
    pub fn new(namespace: &str) -> Self {
        Self {
            by_name: BTreeMap::new(),
            users: HashMap::new(),
            groups: HashMap::new(),
            namespace: namespace.to_string(),
        }
    }

    /// Adds `binding` as `name`, replacing the one of that name.
    pub fn insert(&mut self, name: String, binding: Arc<T>) {
        self.unindex(&name);
        for subject in binding.subjects() {
            if let Some((key, groups)) = self.key(subject) {
                let index = if groups {
                    &mut self.groups
                } else {
                    &mut self.users
                };
                index.entry(key).or_default().insert(name.clone());
            }
        }
        self.by_name.insert(name, binding);
    }

    /// Removes the binding `name`; returns whether there was one.
    pub fn remove(&mut self, name: &str) -> bool {
        self.unindex(name);
        self.by_name.remove(name).is_some()
    }

    /// How many bindings there are.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Every binding that names `user` (by name, a ServiceAccount's name, or a group of theirs)
    /// among its subjects, at least; in name order.
    pub fn naming<'a>(&'a self, user: &UserInfo) -> impl Iterator<Item = &'a T> + use<'a, T> {
        let mut names: Vec<&'a str> = Vec::new();
        let of = |set: &'a BTreeSet<String>| set.iter().map(String::as_str);
        if let Some(set) = self.users.get(&user.name) {
            names.extend(of(set));
        }
        for group in &user.groups {
            if let Some(set) = self.groups.get(group) {
                names.extend(of(set));
            }
        }
        names.sort_unstable();
        names.dedup();
        names
            .into_iter()
            .filter_map(|name| self.by_name.get(name).map(|b| &**b))
    }

    /// Whose the subject is: a user's name (`false`) or a group's (`true`); `None` for one that
    /// names nobody.
    fn key(&self, subject: &Subject) -> Option<(String, bool)> {
        match subject.kind.as_str() {
            "User" => Some((subject.name.clone(), false)),
            "Group" => Some((subject.name.clone(), true)),
            "ServiceAccount" => {
                let ns = match subject.namespace.as_deref() {
                    Some(ns) if !ns.is_empty() => ns,
                    _ => &self.namespace,
                };
                (!ns.is_empty()).then(|| (service_account_username(ns, &subject.name), false))
            }
            _ => None,
        }
    }

    fn unindex(&mut self, name: &str) {
        let Some(old) = self.by_name.get(name).cloned() else {
            return;
        };
        for subject in old.subjects() {
            if let Some((key, groups)) = self.key(subject) {
                let index = if groups {
                    &mut self.groups
                } else {
                    &mut self.users
                };
                if let Some(set) = index.get_mut(&key) {
                    set.remove(name);
                    if set.is_empty() {
                        index.remove(&key);
                    }
                }
            }
        }
    }
}
