//! The live schema set: the built-in catalog plus the CRDs currently served.
//!
//! Readers take an immutable [`Snapshot`] (one `Arc` clone under a read lock); a CRD change
//! builds a new snapshot and swaps it in. Each snapshot renders its OpenAPI documents on first
//! request and keeps them, so documents are rebuilt lazily, once per change.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};

use parking_lot::RwLock;
use serde_json::Value;

use super::catalog::Catalog;
use super::crd::{crd_schemas, CrdSchemas};
use super::lookup::{FieldInfo, SchemaLookup};
use super::openapi_v3::V3Documents;
use super::paths::Resource;
use super::refs::Defs;
use super::{openapi_v2, openapi_v3, walk, Document, Gvk, Result};

/// The built-in catalog plus the live CRDs. Cheap to share (`Arc<SchemaSet>`).
pub struct SchemaSet {
    current: RwLock<Arc<Snapshot>>,
}

/// An immutable view of the schemas at one moment, with its documents cached.
pub struct Snapshot {
    catalog: Arc<Catalog>,
    crds: BTreeMap<String, Arc<CrdSchemas>>,
    /// CRD definition name → (CRD, version index, is the list definition).
    crd_defs: HashMap<String, (Arc<CrdSchemas>, usize, bool)>,
    generation: u64,
    v2: OnceLock<Document>,
    v3: OnceLock<V3Documents>,
    /// Field lookups already answered: type → field → info. Every write walks its object's
    /// fields (managedFields, pruning, patches), and walking the schema documents for each was
    /// a sixth of the hub's CPU under a create load. Only fields a schema declares are kept, so
    /// the memo is bounded by the schemas (not by user data under preserve-unknown-fields).
    fields: RwLock<HashMap<String, HashMap<String, Arc<FieldInfo>>>>,
    /// Schemas derived from a definition for one use ([`Snapshot::derived`]), built once per
    /// snapshot: (use, definition) → the derived schema, if any.
    derived: Derived,
}

type Derived = RwLock<HashMap<(&'static str, String), Option<Arc<Value>>>>;

/// The built-in catalog, built once per process and shared by every set: it never changes,
/// and it is most of a set's memory (about 2.8 MiB), which a process serving many APIs
/// (`flotilla sim`, one per simulated member cluster) would otherwise pay for each.
static BUILTIN: std::sync::LazyLock<Arc<Catalog>> =
    std::sync::LazyLock::new(|| Arc::new(Catalog::new()));

impl Default for SchemaSet {
    fn default() -> Self {
        SchemaSet::shared(BUILTIN.clone())
    }
}

impl SchemaSet {
    /// A set serving the built-in kinds of `catalog` and no CRDs yet.
    pub fn new(catalog: Catalog) -> SchemaSet {
        SchemaSet::shared(Arc::new(catalog))
    }

    /// A set serving the built-in kinds of a catalog shared with other sets, and no CRDs yet.
    pub fn shared(catalog: Arc<Catalog>) -> SchemaSet {
        let snapshot = Snapshot::new(catalog, BTreeMap::new(), 0);
        SchemaSet {
            current: RwLock::new(Arc::new(snapshot)),
        }
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.read().clone()
    }

    /// Add or replace the schemas of `crd` (a CustomResourceDefinition as JSON). A CRD that
    /// serves no version is removed. Returns whether anything changed.
    pub fn apply_crd(&self, crd: &Value) -> Result<bool> {
        let schemas = crd_schemas(crd)?;
        if schemas.versions.is_empty() {
            return Ok(self.remove_crd(&schemas.name));
        }
        let mut current = self.current.write();
        if current
            .crds
            .get(&schemas.name)
            .is_some_and(|old| **old == schemas)
        {
            return Ok(false);
        }
        let mut crds = current.crds.clone();
        crds.insert(schemas.name.clone(), Arc::new(schemas));
        *current = Arc::new(Snapshot::new(
            current.catalog.clone(),
            crds,
            current.generation + 1,
        ));
        Ok(true)
    }

    /// Forget the CRD named `name` (`<plural>.<group>`). Returns whether it was known.
    pub fn remove_crd(&self, name: &str) -> bool {
        let mut current = self.current.write();
        if !current.crds.contains_key(name) {
            return false;
        }
        let mut crds = current.crds.clone();
        crds.remove(name);
        *current = Arc::new(Snapshot::new(
            current.catalog.clone(),
            crds,
            current.generation + 1,
        ));
        true
    }

    /// `/openapi/v2`.
    pub fn openapi_v2(&self) -> Document {
        self.snapshot().openapi_v2().clone()
    }

    /// `/openapi/v3`.
    pub fn openapi_v3_index(&self) -> Document {
        self.snapshot().openapi_v3_index().clone()
    }

    /// `/openapi/v3/<gv_path>` (`api/v1`, `apis/apps/v1`), if that group-version is served.
    pub fn openapi_v3(&self, gv_path: &str) -> Option<Document> {
        self.snapshot().openapi_v3(gv_path).cloned()
    }

    /// Definition (root type) name of a served kind, built-in or custom.
    pub fn root_type(&self, group: &str, version: &str, kind: &str) -> Option<String> {
        self.snapshot()
            .root_type(group, version, kind)
            .map(str::to_owned)
    }
}

impl SchemaLookup for SchemaSet {
    fn field(&self, type_name: &str, field: &str) -> Option<Arc<FieldInfo>> {
        self.snapshot().field(type_name, field)
    }
}

// === impl Snapshot ===

impl Snapshot {
    fn new(
        catalog: Arc<Catalog>,
        crds: BTreeMap<String, Arc<CrdSchemas>>,
        generation: u64,
    ) -> Snapshot {
        let mut crd_defs = HashMap::new();
        for crd in crds.values() {
            for (i, v) in crd.versions.iter().enumerate() {
                crd_defs.insert(v.definition_name.clone(), (crd.clone(), i, false));
                crd_defs.insert(v.list_definition_name.clone(), (crd.clone(), i, true));
            }
        }
        Snapshot {
            catalog,
            crds,
            crd_defs,
            generation,
            v2: OnceLock::new(),
            v3: OnceLock::new(),
            fields: RwLock::new(HashMap::new()),
            derived: RwLock::new(HashMap::new()),
        }
    }

    /// The built-in catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The CRD named `name`, if served.
    pub fn crd(&self, name: &str) -> Option<&CrdSchemas> {
        self.crds.get(name).map(|c| &**c)
    }

    /// Increases with every change of the CRD set.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Definition (root type) name of a served kind, built-in or custom.
    pub fn root_type(&self, group: &str, version: &str, kind: &str) -> Option<&str> {
        self.catalog.root_type(group, version, kind).or_else(|| {
            self.crds
                .values()
                .filter(|c| c.group == group)
                .find_map(|c| c.root_type(version, kind))
        })
    }

    /// The definition named `name` (built-in or custom), as published.
    pub fn definition(&self, name: &str) -> Option<&Value> {
        self.def(name)
    }

    /// What `build` derives from definition `name` for the use `what` (the part of a schema
    /// that defaulting walks, say), built on first use and kept for this snapshot's life:
    /// a schema is walked for every write of its kind, and most of it is the same each time.
    pub fn derived(
        &self,
        what: &'static str,
        name: &str,
        build: fn(&Value) -> Option<Value>,
    ) -> Option<Arc<Value>> {
        let key = (what, name.to_owned());
        if let Some(d) = self.derived.read().get(&key) {
            return d.clone();
        }
        let d = self.def(name).and_then(build).map(Arc::new);
        self.derived.write().insert(key, d.clone());
        d
    }

    /// `/openapi/v2`, rendered on first use.
    pub fn openapi_v2(&self) -> &Document {
        self.v2.get_or_init(|| openapi_v2::document(&self.served()))
    }

    /// `/openapi/v3`, rendered (with every group-version document) on first use.
    pub fn openapi_v3_index(&self) -> &Document {
        &self.v3().index
    }

    /// `/openapi/v3/<gv_path>`.
    pub fn openapi_v3(&self, gv_path: &str) -> Option<&Document> {
        self.v3().by_gv.get(gv_path)
    }

    fn v3(&self) -> &V3Documents {
        self.v3
            .get_or_init(|| openapi_v3::documents(&self.served()))
    }

    fn served(&self) -> Served<'_> {
        let mut resources: Vec<Resource> = self.catalog.resources().to_vec();
        for crd in self.crds.values() {
            resources.extend(crd.resources());
        }
        let gvs = resources
            .iter()
            .map(|r| (r.gvk.group.clone(), r.gvk.version.clone()))
            .collect();
        Served {
            catalog: &self.catalog,
            crds: self.crds.values().map(|c| &**c).collect(),
            resources,
            gvs,
            snapshot: self,
        }
    }
}

impl Defs for Snapshot {
    fn def(&self, name: &str) -> Option<&Value> {
        self.catalog.definition(name).or_else(|| {
            let (crd, i, list) = self.crd_defs.get(name)?;
            let v = crd.versions.get(*i)?;
            Some(if *list {
                &v.list_definition
            } else {
                &v.definition
            })
        })
    }
}

impl SchemaLookup for Snapshot {
    fn field(&self, type_name: &str, field: &str) -> Option<Arc<FieldInfo>> {
        if let Some(info) = self
            .fields
            .read()
            .get(type_name)
            .and_then(|fields| fields.get(field))
        {
            return Some(info.clone());
        }
        let info = Arc::new(walk::field(self, type_name, field)?);
        if walk::declares(self, type_name, field) {
            self.fields
                .write()
                .entry(type_name.to_owned())
                .or_default()
                .insert(field.to_owned(), info.clone());
        }
        Some(info)
    }
}

/// Everything a document renderer needs from one snapshot.
pub(crate) struct Served<'a> {
    pub catalog: &'a Catalog,
    pub crds: Vec<&'a CrdSchemas>,
    pub resources: Vec<Resource>,
    pub gvs: BTreeSet<(String, String)>,
    snapshot: &'a Snapshot,
}

impl Served<'_> {
    /// `kind` in every served group-version (for DeleteOptions and WatchEvent).
    pub(crate) fn gvks_of(&self, kind: &str) -> Vec<Gvk> {
        self.gvs.iter().map(|(g, v)| Gvk::new(g, v, kind)).collect()
    }
}

impl Defs for Served<'_> {
    fn def(&self, name: &str) -> Option<&Value> {
        self.snapshot.def(name)
    }
}
