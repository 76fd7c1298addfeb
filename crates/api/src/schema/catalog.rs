//! The built-in kinds' definitions, built once at startup.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use k8s_openapi::schemars::generate::SchemaSettings;
use k8s_openapi::schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value};

use super::fixups::{add_gvk, apply_markers, correct_k8s_openapi, list_definition, set_gvks};
use super::kinds::{names, MetaGvk, Sub, BUILTIN_KINDS, EXTRA_KINDS, META_TYPES};
use super::lookup::{FieldInfo, SchemaLookup};
use super::paths::{Action, Resource, SubRoute};
use super::refs::{ref_target, Defs};
use super::{walk, Gvk};

/// Definitions of every built-in kind, its list kind, the types they reference and the meta
/// types documents need, in OpenAPI v2 form with Kubernetes' extensions.
#[derive(Debug)]
pub struct Catalog {
    /// Sorted by name.
    defs: Map<String, Value>,
    roots: HashMap<Gvk, String>,
    resources: Vec<Resource>,
    /// Definitions whose GVK list names every served group-version, with the kind to use.
    every_gv: Vec<(&'static str, String)>,
}

impl Default for Catalog {
    fn default() -> Self {
        Catalog::new()
    }
}

impl Catalog {
    /// Build the catalog from `kinds::BUILTIN_KINDS` (a few milliseconds).
    pub fn new() -> Catalog {
        let mut gen: SchemaGenerator = SchemaSettings::draft07()
            .with(|s| {
                // Keep `$ref` siblings (descriptions) and no `$schema`: this is OpenAPI, not
                // JSON Schema; `#/definitions/` makes the refs OpenAPI v2 refs.
                s.transforms.clear();
                s.meta_schema = None;
                s.definitions_path = "/definitions".into();
            })
            .into_generator();

        let mut kinds = Vec::new();
        for k in BUILTIN_KINDS {
            let def = def_name((k.schema)(&mut gen));
            kinds.push((k, def));
        }
        let extras: Vec<_> = EXTRA_KINDS
            .iter()
            .map(|e| (e, def_name((e.schema)(&mut gen))))
            .collect();
        let metas: Vec<_> = META_TYPES
            .iter()
            .map(|(f, gvk)| (gvk, def_name(f(&mut gen))))
            .collect();

        let mut defs = gen.take_definitions(false);
        correct_k8s_openapi(&mut defs);
        apply_markers(&mut defs);

        let mut roots = HashMap::new();
        let mut resources = Vec::new();
        let scale_gvk = extra_gvk(names::SCALE, &extras);
        let token_gvk = extra_gvk(names::TOKEN_REQUEST, &extras);
        for (k, def) in &kinds {
            let gvk = Gvk::new(k.group, k.version, k.kind);
            let list_gvk = Gvk::new(k.group, k.version, k.list_kind);
            let list_def = format!("{def}List");
            if let Some(d) = defs.get_mut(def) {
                add_gvk(d, &gvk);
            }
            let list = defs
                .get(def)
                .map(|d| list_definition(def, d, &list_gvk, k.plural));
            if let Some(list) = list {
                defs.insert(list_def.clone(), list);
            }
            let subresources = k
                .subresources
                .iter()
                .filter_map(|s| match s {
                    Sub::Status => Some(sub(
                        "status",
                        def,
                        &gvk,
                        &[Action::Read, Action::Replace, Action::Patch],
                    )),
                    Sub::Finalize => Some(sub("finalize", def, &gvk, &[Action::Replace])),
                    Sub::Scale => scale_gvk.as_ref().map(|g| {
                        sub(
                            "scale",
                            names::SCALE,
                            g,
                            &[Action::Read, Action::Replace, Action::Patch],
                        )
                    }),
                    Sub::Token => token_gvk
                        .as_ref()
                        .map(|g| sub("token", names::TOKEN_REQUEST, g, &[Action::Create])),
                })
                .collect();
            resources.push(Resource {
                gvk: gvk.clone(),
                plural: k.plural.to_owned(),
                namespaced: k.namespaced,
                def: def.clone(),
                list_def: list_def.clone(),
                subresources,
                builtin: true,
            });
            roots.insert(gvk, def.clone());
            roots.insert(list_gvk, list_def);
        }
        for (e, def) in &extras {
            let gvk = Gvk::new(e.group, e.version, e.kind);
            if let Some(d) = defs.get_mut(def) {
                add_gvk(d, &gvk);
            }
            roots.insert(gvk, def.clone());
        }

        let gvs: BTreeSet<(String, String)> = resources
            .iter()
            .map(|r| (r.gvk.group.clone(), r.gvk.version.clone()))
            .collect();
        let mut every_gv = Vec::new();
        for (policy, def) in metas {
            match policy {
                MetaGvk::CoreV1(kind) => {
                    let gvk = Gvk::new("", "v1", kind);
                    if let Some(d) = defs.get_mut(&def) {
                        add_gvk(d, &gvk);
                    }
                    roots.insert(gvk, def);
                }
                MetaGvk::EveryGroupVersion(kind) => {
                    let all: Vec<Gvk> = gvs.iter().map(|(g, v)| Gvk::new(g, v, kind)).collect();
                    if let Some(d) = defs.get_mut(&def) {
                        set_gvks(d, &all);
                    }
                    for gvk in all {
                        roots.insert(gvk, def.clone());
                    }
                    every_gv.push((*kind, def));
                }
                MetaGvk::Nothing => {}
            }
        }

        let sorted: BTreeMap<String, Value> = defs.into_iter().collect();
        Catalog {
            defs: sorted.into_iter().collect(),
            roots,
            resources,
            every_gv,
        }
    }

    /// The definition name of a kind the catalog knows (kinds, their lists, Scale,
    /// TokenRequest, meta types).
    pub fn root_type(&self, group: &str, version: &str, kind: &str) -> Option<&str> {
        self.roots
            .get(&Gvk::new(group, version, kind))
            .map(String::as_str)
    }

    /// Every definition, sorted by name.
    pub fn definitions(&self) -> &Map<String, Value> {
        &self.defs
    }

    /// Definition `name`.
    pub fn definition(&self, name: &str) -> Option<&Value> {
        self.defs.get(name)
    }

    /// The group-versions of the built-in kinds.
    pub fn group_versions(&self) -> BTreeSet<(String, String)> {
        self.resources
            .iter()
            .map(|r| (r.gvk.group.clone(), r.gvk.version.clone()))
            .collect()
    }

    pub(crate) fn resources(&self) -> &[Resource] {
        &self.resources
    }

    /// `(kind, definition)` of meta types whose GVK list names every served group-version.
    pub(crate) fn every_gv_types(&self) -> &[(&'static str, String)] {
        &self.every_gv
    }
}

impl Defs for Catalog {
    fn def(&self, name: &str) -> Option<&Value> {
        self.defs.get(name)
    }
}

impl SchemaLookup for Catalog {
    fn field(&self, type_name: &str, field: &str) -> Option<Arc<FieldInfo>> {
        walk::field(self, type_name, field).map(Arc::new)
    }
}

fn def_name(schema: Schema) -> String {
    match ref_target(schema.as_value()) {
        Some(name) => name.to_owned(),
        // Every k8s-openapi type implements `schema_name` and is not inlined, so schemars
        // always answers with a reference; the catalog tests build every kind.
        None => unreachable!(
            "k8s-openapi schema without a definition name: {}",
            schema.as_value()
        ),
    }
}

fn extra_gvk(def: &str, extras: &[(&super::kinds::ExtraKind, String)]) -> Option<Gvk> {
    extras
        .iter()
        .find(|(_, d)| d == def)
        .map(|(e, _)| Gvk::new(e.group, e.version, e.kind))
}

fn sub(name: &'static str, def: &str, gvk: &Gvk, actions: &'static [Action]) -> SubRoute {
    SubRoute {
        name,
        def: def.to_owned(),
        gvk: gvk.clone(),
        actions,
    }
}
