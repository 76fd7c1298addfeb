//! The resources the hub serves: the built-in kinds plus whatever CustomResourceDefinitions add.
//!
//! Handlers resolve `(group, version, plural)` here; discovery lists what is here. The registry
//! is a cheap-to-read snapshot that is swapped whole when a CRD changes.

mod builtin;
pub mod crd;
pub mod storage;
pub mod version_hash;

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::RwLock;

pub use builtin::builtin_resources;
pub(crate) use builtin::ALL_VERBS;

/// `scale` subresource wiring (JSON paths as in a CRD's `subresources.scale`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleSpec {
    /// e.g. `.spec.replicas`.
    pub spec_replicas_path: String,
    /// e.g. `.status.replicas`.
    pub status_replicas_path: String,
    /// e.g. `.status.selector`; None when the kind has no selector string.
    pub label_selector_path: Option<String>,
}

/// One printer column (a CRD's `additionalPrinterColumns` entry, or a built-in's column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrinterColumn {
    /// Column header.
    pub name: String,
    /// OpenAPI type: string, integer, number, boolean, date.
    pub type_: String,
    /// Optional format (e.g. `name`).
    pub format: String,
    /// Help text.
    pub description: String,
    /// 0 = shown always; higher = shown with `-o wide`.
    pub priority: i32,
    /// Simple JSONPath (e.g. `.spec.replicas`), or a built-in computed cell named `@name`.
    pub json_path: String,
}

/// Everything the server needs to know about one served resource at one version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceInfo {
    /// API group ("" for core).
    pub group: String,
    /// Version served at this entry.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Plural resource name (URL segment).
    pub plural: String,
    /// Singular name.
    pub singular: String,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// `kubectl` short names.
    pub short_names: Vec<String>,
    /// Categories (e.g. `all`).
    pub categories: Vec<String>,
    /// Has a `status` subresource.
    pub status: bool,
    /// Has a `scale` subresource.
    pub scale: Option<ScaleSpec>,
    /// Verbs served.
    pub verbs: Vec<&'static str>,
    /// Columns for `kubectl get`.
    pub columns: Vec<PrinterColumn>,
    /// Served from a CRD (custom resource) rather than built in.
    pub custom: bool,
    /// The definition name to validate/patch against, if a schema is known.
    pub schema_root: Option<String>,
    /// Is this version the preferred (first listed) one of its group.
    pub storage_version: bool,
    /// A custom resource's schema defaults at this version, when it declares any: objects read
    /// from storage get them, as kube-apiserver defaults what it decodes (a default added to
    /// the CRD after an object was stored shows on GET, LIST and WATCH).
    pub read_defaults: Option<Arc<crate::admission::schema::on_read::ReadDefaults>>,
}

impl ResourceInfo {
    /// `group/version`, or just `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Storage prefix for all objects of this resource, independent of version (and, for a
    /// resource that shares another API's storage, that API's prefix: see [`storage`]).
    pub fn key_prefix(&self, namespace: Option<&str>) -> String {
        let g = match storage::storage_group(&self.group, &self.plural) {
            "" => "core",
            g => g,
        };
        match (self.namespaced, namespace) {
            (true, Some(ns)) => format!("/registry/{g}/{}/{ns}/", self.plural),
            _ => format!("/registry/{g}/{}/", self.plural),
        }
    }

    /// Storage key of one object.
    pub fn key(&self, namespace: Option<&str>, name: &str) -> String {
        let mut k = self.key_prefix(if self.namespaced { namespace } else { None });
        k.push_str(name);
        k
    }

    /// The `<plural>.<group>` form used in messages and RBAC.
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

/// An immutable view of everything served; swapped whole on CRD changes.
#[derive(Default)]
pub struct Snapshot {
    by_path: BTreeMap<(String, String, String), Arc<ResourceInfo>>,
    /// Group → versions in preference order.
    groups: Vec<(String, Vec<String>)>,
}

impl Snapshot {
    fn build(resources: Vec<Arc<ResourceInfo>>) -> Snapshot {
        let mut s = Snapshot::default();
        for r in resources {
            if let Some((_, versions)) = s.groups.iter_mut().find(|(g, _)| *g == r.group) {
                if !versions.contains(&r.version) {
                    versions.push(r.version.clone());
                }
            } else {
                s.groups.push((r.group.clone(), vec![r.version.clone()]));
            }
            s.by_path
                .insert((r.group.clone(), r.version.clone(), r.plural.clone()), r);
        }
        s
    }

    /// The resource at `group/version/plural`.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<&Arc<ResourceInfo>> {
        self.by_path
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
    }

    /// Groups (core first) with their versions, preferred version first.
    pub fn groups(&self) -> &[(String, Vec<String>)] {
        &self.groups
    }

    /// All resources of one group-version, in a stable order.
    pub fn resources_of(&self, group: &str, version: &str) -> Vec<&Arc<ResourceInfo>> {
        self.by_path
            .iter()
            .filter(|((g, v, _), _)| g == group && v == version)
            .map(|(_, r)| r)
            .collect()
    }

    /// Every resource.
    pub fn all(&self) -> impl Iterator<Item = &Arc<ResourceInfo>> {
        self.by_path.values()
    }

    /// The entry for a kind in a group at any version (e.g. owner references, GC).
    pub fn by_kind(&self, group: &str, kind: &str) -> Option<&Arc<ResourceInfo>> {
        self.by_path
            .values()
            .find(|r| r.group == group && r.kind == kind && r.storage_version)
    }
}

/// The live registry.
pub struct Registry {
    builtin: Vec<Arc<ResourceInfo>>,
    current: RwLock<Arc<Snapshot>>,
}

impl Registry {
    /// A registry serving only the built-in kinds.
    pub fn new() -> Registry {
        let builtin: Vec<Arc<ResourceInfo>> =
            builtin_resources().into_iter().map(Arc::new).collect();
        let snap = Snapshot::build(builtin.clone());
        Registry {
            builtin,
            current: RwLock::new(Arc::new(snap)),
        }
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.read().clone()
    }

    /// Replace the set of custom resources (called whenever the set of established CRDs changes).
    pub fn set_custom(&self, custom: Vec<ResourceInfo>) {
        let mut all = self.builtin.clone();
        let before = self.snapshot();
        // Never let a CRD shadow a built-in resource (a CRD's own versions share group/plural).
        for mut c in custom {
            // The read defaults served before, when the same: objects' memos of them (whether
            // a read changes an object) compare them by pointer first, and every CRD event
            // rebuilds the served resources.
            if let Some(old) = before.get(&c.group, &c.version, &c.plural) {
                if old.read_defaults == c.read_defaults {
                    c.read_defaults.clone_from(&old.read_defaults);
                }
            }
            if !self
                .builtin
                .iter()
                .any(|b| b.group == c.group && b.plural == c.plural)
            {
                all.push(Arc::new(c));
            }
        }
        *self.current.write() = Arc::new(Snapshot::build(all));
    }
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

/// The built-in resource `group`/`plural` (its first listed version), for tests that need a
/// served kind's [`ResourceInfo`]; panics when it is not served.
#[cfg(test)]
pub(crate) fn served_for_test(group: &str, plural: &str) -> ResourceInfo {
    let snap = Registry::new().snapshot();
    let r = snap
        .all()
        .find(|r| r.group == group && r.plural == plural)
        .map(|r| (**r).clone());
    r.unwrap_or_else(|| panic!("{group}/{plural} is not served"))
}

#[cfg(test)]
mod tests;
