//! OpenAPI documents: v2 (JSON and gnostic protobuf) and v3 (index plus one document per
//! group-version), built from the real Kubernetes schemas that `k8s-openapi` carries and from
//! each established CRD's structural schema.
//!
//! Clients read three things here: `definitions`/`components.schemas` with
//! `x-kubernetes-group-version-kind` (validation, `kubectl explain`), and the PATCH operation of
//! each resource path with a `fieldValidation` parameter, which tells kubectl the server
//! validates fields itself.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::RwLock;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::JsonSchema;
use serde_json::{json, Map, Value};

use crate::registry::{ResourceInfo, Snapshot};

/// Built documents, shared until the set of served resources changes.
pub struct Documents {
    /// Swagger 2.0 JSON.
    pub v2: Bytes,
    /// Swagger 2.0 as gnostic protobuf.
    pub v2_protobuf: Bytes,
    /// `/openapi/v3` index.
    pub v3_index: Bytes,
    /// Per group-version path (`api/v1`, `apis/apps/v1`) → document.
    pub v3: BTreeMap<String, Bytes>,
}

/// The OpenAPI source: built-in definitions (computed once) plus CRD definitions.
pub struct OpenApi {
    builtin: Map<String, Value>,
    /// (group, version, kind) → definition name, for built-ins.
    roots: BTreeMap<(String, String, String), String>,
    crd_defs: RwLock<Map<String, Value>>,
    crd_roots: RwLock<BTreeMap<(String, String, String), String>>,
    cache: RwLock<Option<(usize, Arc<Documents>)>>,
    generation: std::sync::atomic::AtomicUsize,
}

fn add<T: JsonSchema + k8s_openapi::Resource>(
    gen: &mut SchemaGenerator,
    roots: &mut BTreeMap<(String, String, String), String>,
) {
    gen.subschema_for::<T>();
    roots.insert(
        (T::GROUP.into(), T::VERSION.into(), T::KIND.into()),
        T::schema_name().into_owned(),
    );
}

fn add_meta<T: JsonSchema>(gen: &mut SchemaGenerator) {
    gen.subschema_for::<T>();
}

impl OpenApi {
    /// Compute the built-in definitions.
    pub fn new() -> OpenApi {
        use k8s_openapi::api::{
            apps::v1 as apps, autoscaling::v2 as autoscaling, batch::v1 as batch,
            coordination::v1 as coordination, core::v1 as core, events::v1 as events,
            networking::v1 as networking, policy::v1 as policy, rbac::v1 as rbac,
        };
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
        let mut settings = SchemaSettings::draft07();
        // Kubernetes documents put descriptions beside `$ref`; keep that shape.
        settings.transforms.clear();
        settings.meta_schema = None;
        let mut gen = settings.into_generator();
        let mut roots = BTreeMap::new();
        add::<core::Namespace>(&mut gen, &mut roots);
        add::<core::ConfigMap>(&mut gen, &mut roots);
        add::<core::Secret>(&mut gen, &mut roots);
        add::<core::Service>(&mut gen, &mut roots);
        add::<core::ServiceAccount>(&mut gen, &mut roots);
        add::<core::Event>(&mut gen, &mut roots);
        add::<core::Endpoints>(&mut gen, &mut roots);
        add::<core::PersistentVolumeClaim>(&mut gen, &mut roots);
        add::<apps::Deployment>(&mut gen, &mut roots);
        add::<apps::StatefulSet>(&mut gen, &mut roots);
        add::<apps::DaemonSet>(&mut gen, &mut roots);
        add::<apps::ReplicaSet>(&mut gen, &mut roots);
        add::<batch::Job>(&mut gen, &mut roots);
        add::<batch::CronJob>(&mut gen, &mut roots);
        add::<autoscaling::HorizontalPodAutoscaler>(&mut gen, &mut roots);
        add::<networking::Ingress>(&mut gen, &mut roots);
        add::<networking::NetworkPolicy>(&mut gen, &mut roots);
        add::<policy::PodDisruptionBudget>(&mut gen, &mut roots);
        add::<coordination::Lease>(&mut gen, &mut roots);
        add::<rbac::Role>(&mut gen, &mut roots);
        add::<rbac::ClusterRole>(&mut gen, &mut roots);
        add::<rbac::RoleBinding>(&mut gen, &mut roots);
        add::<rbac::ClusterRoleBinding>(&mut gen, &mut roots);
        add::<events::Event>(&mut gen, &mut roots);
        add::<apiextensions::CustomResourceDefinition>(&mut gen, &mut roots);
        add::<k8s_openapi::api::autoscaling::v1::Scale>(&mut gen, &mut roots);
        add::<k8s_openapi::api::authentication::v1::TokenRequest>(&mut gen, &mut roots);
        add_meta::<k8s_openapi::apimachinery::pkg::apis::meta::v1::DeleteOptions>(&mut gen);
        add_meta::<k8s_openapi::apimachinery::pkg::apis::meta::v1::Status>(&mut gen);
        add_meta::<k8s_openapi::apimachinery::pkg::apis::meta::v1::Patch>(&mut gen);
        let mut builtin = gen.take_definitions(true);
        add_markers(&mut builtin);
        for ((g, v, k), name) in &roots {
            if let Some(Value::Object(d)) = builtin.get_mut(name) {
                d.insert(
                    "x-kubernetes-group-version-kind".into(),
                    json!([{"group": g, "version": v, "kind": k}]),
                );
            }
        }
        OpenApi {
            builtin,
            roots,
            crd_defs: RwLock::new(Map::new()),
            crd_roots: RwLock::new(BTreeMap::new()),
            cache: RwLock::new(None),
            generation: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// The definition name for a served kind.
    pub fn root(&self, group: &str, version: &str, kind: &str) -> Option<String> {
        let k = (group.to_string(), version.to_string(), kind.to_string());
        self.roots
            .get(&k)
            .cloned()
            .or_else(|| self.crd_roots.read().get(&k).cloned())
    }

    /// A definition (built-in or CRD).
    pub fn definition(&self, name: &str) -> Option<Value> {
        self.builtin
            .get(name)
            .cloned()
            .or_else(|| self.crd_defs.read().get(name).cloned())
    }

    /// Replace the CRD definitions.
    pub fn set_crds(&self, crds: &[Value]) {
        let mut defs = Map::new();
        let mut roots = BTreeMap::new();
        for crd in crds {
            let spec = &crd["spec"];
            let group = spec["group"].as_str().unwrap_or_default();
            let kind = spec["names"]["kind"].as_str().unwrap_or_default();
            let reversed: Vec<&str> = group.split('.').rev().collect();
            for v in spec["versions"].as_array().cloned().unwrap_or_default() {
                if v["served"] != true {
                    continue;
                }
                let version = v["name"].as_str().unwrap_or_default();
                let name = format!("{}.{version}.{kind}", reversed.join("."));
                let mut schema = v
                    .pointer("/schema/openAPIV3Schema")
                    .cloned()
                    .unwrap_or_else(
                        || json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}),
                    );
                if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
                    props.insert("apiVersion".into(), json!({"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."}));
                    props.insert("kind".into(), json!({"type": "string", "description": "Kind is a string value representing the REST resource this object represents."}));
                    props.insert("metadata".into(), json!({"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "description": "Standard object's metadata."}));
                }
                schema["x-kubernetes-group-version-kind"] =
                    json!([{"group": group, "version": version, "kind": kind}]);
                defs.insert(name.clone(), schema);
                roots.insert(
                    (group.to_string(), version.to_string(), kind.to_string()),
                    name,
                );
            }
        }
        *self.crd_defs.write() = defs;
        *self.crd_roots.write() = roots;
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// The documents for what `snap` serves (cached until CRDs change).
    pub fn documents(&self, snap: &Snapshot) -> Arc<Documents> {
        let gen = self.generation.load(std::sync::atomic::Ordering::SeqCst) + snap.all().count();
        if let Some((g, d)) = &*self.cache.read() {
            if *g == gen {
                return d.clone();
            }
        }
        let docs = Arc::new(self.build(snap));
        *self.cache.write() = Some((gen, docs.clone()));
        docs
    }

    fn all_definitions(&self) -> Map<String, Value> {
        let mut all = self.builtin.clone();
        for (k, v) in self.crd_defs.read().iter() {
            all.insert(k.clone(), v.clone());
        }
        all
    }

    fn build(&self, snap: &Snapshot) -> Documents {
        let defs = self.all_definitions();
        let mut paths = Map::new();
        let mut by_gv: BTreeMap<String, (Map<String, Value>, BTreeSet<String>)> = BTreeMap::new();
        for r in snap.all() {
            let Some(root) = self.root(&r.group, &r.version, &r.kind) else {
                continue;
            };
            let gv_path = if r.group.is_empty() {
                format!("api/{}", r.version)
            } else {
                format!("apis/{}/{}", r.group, r.version)
            };
            let entry = by_gv.entry(gv_path.clone()).or_default();
            for (p, item) in resource_paths(r, &gv_path, &root) {
                paths.insert(p.clone(), item.clone());
                entry.0.insert(p, item);
            }
            entry.1.insert(root);
        }
        let v2 = json!({
            "swagger": "2.0",
            "info": {"title": "Kubernetes", "version": crate::KUBERNETES_VERSION},
            "paths": paths,
            "definitions": defs,
        });
        let v2_protobuf = crate::protobuf::openapi_v2_to_protobuf(&v2)
            .map(Bytes::from)
            .unwrap_or_else(|e| {
                tracing::error!(error = %e, "cannot encode OpenAPI v2 as protobuf");
                Bytes::new()
            });
        let mut v3 = BTreeMap::new();
        let mut index = Map::new();
        for (gv, (gv_paths, roots)) in by_gv {
            let mut reachable = BTreeSet::new();
            for r in &roots {
                collect_refs(&defs, r, &mut reachable);
            }
            collect_refs(
                &defs,
                "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
                &mut reachable,
            );
            collect_refs(
                &defs,
                "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
                &mut reachable,
            );
            let schemas: Map<String, Value> = reachable
                .iter()
                .filter_map(|n| defs.get(n).map(|d| (n.clone(), to_v3(d.clone()))))
                .collect();
            let doc = json!({
                "openapi": "3.0.0",
                "info": {"title": "Kubernetes", "version": crate::KUBERNETES_VERSION},
                "paths": to_v3(Value::Object(gv_paths)),
                "components": {"schemas": schemas},
            });
            let bytes = Bytes::from(serde_json::to_vec(&doc).unwrap_or_default());
            let hash = format!("{:016X}", fnv(&bytes));
            index.insert(
                gv.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{gv}?hash={hash}")}),
            );
            v3.insert(gv, bytes);
        }
        Documents {
            v2: Bytes::from(serde_json::to_vec(&v2).unwrap_or_default()),
            v2_protobuf,
            v3_index: Bytes::from(serde_json::to_vec(&json!({"paths": index})).unwrap_or_default()),
            v3,
        }
    }
}

impl Default for OpenApi {
    fn default() -> Self {
        Self::new()
    }
}

/// Put the patch and list markers of the generated table into the definitions, so clients
/// compute strategic merge patches with the same merge keys the server applies them with.
fn add_markers(defs: &mut Map<String, Value>) {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| *c != '_')
            .flat_map(char::to_lowercase)
            .collect()
    };
    for (def, field, strategy, key, list_type, map_keys, map_type) in
        crate::schema::patch_meta::ROWS.iter().copied()
    {
        let Some(props) = defs
            .get_mut(def)
            .and_then(|d| d.get_mut("properties"))
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        let want = norm(field);
        let Some((_, prop)) = props.iter_mut().find(|(k, _)| norm(k) == want) else {
            continue;
        };
        let Some(p) = prop.as_object_mut() else {
            continue;
        };
        if !strategy.is_empty() {
            p.insert("x-kubernetes-patch-strategy".into(), json!(strategy));
        }
        if !key.is_empty() {
            p.insert("x-kubernetes-patch-merge-key".into(), json!(key));
        }
        if !list_type.is_empty() {
            p.insert("x-kubernetes-list-type".into(), json!(list_type));
        }
        if !map_keys.is_empty() {
            p.insert("x-kubernetes-list-map-keys".into(), json!(map_keys));
        }
        if !map_type.is_empty() {
            p.insert("x-kubernetes-map-type".into(), json!(map_type));
        }
    }
}

fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf29ce484222325u64, |h, x| {
        (h ^ *x as u64).wrapping_mul(0x100000001b3)
    })
}

fn collect_refs(defs: &Map<String, Value>, name: &str, out: &mut BTreeSet<String>) {
    if !out.insert(name.to_string()) {
        return;
    }
    let Some(d) = defs.get(name) else { return };
    let mut refs = Vec::new();
    find_refs(d, &mut refs);
    for r in refs {
        collect_refs(defs, &r, out);
    }
}

fn find_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref") {
                if let Some(n) = r.strip_prefix("#/definitions/") {
                    out.push(n.to_string());
                }
            }
            m.values().for_each(|x| find_refs(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| find_refs(x, out)),
        _ => {}
    }
}

/// Rewrite v2 `$ref`s and parameter shapes for OpenAPI 3.
fn to_v3(v: Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, v)| match (k.as_str(), v) {
                    ("$ref", Value::String(r)) => (
                        k,
                        Value::String(r.replace("#/definitions/", "#/components/schemas/")),
                    ),
                    (_, v) => (k, to_v3(v)),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(to_v3).collect()),
        other => other,
    }
}

fn query_param(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "query", "description": description, "type": "string", "uniqueItems": true, "schema": {"type": "string", "uniqueItems": true}})
}

/// The paths of one resource, with the operations clients look for.
fn resource_paths(r: &ResourceInfo, gv_path: &str, root: &str) -> Vec<(String, Value)> {
    let gvk = json!({"group": r.group, "version": r.version, "kind": r.kind});
    let reference = json!({"$ref": format!("#/definitions/{root}")});
    let base = if r.namespaced {
        format!("/{gv_path}/namespaces/{{namespace}}/{}", r.plural)
    } else {
        format!("/{gv_path}/{}", r.plural)
    };
    let write_params = vec![
        query_param("dryRun", "When present, indicates that modifications should not be persisted."),
        query_param("fieldManager", "fieldManager is a name associated with the actor or entity that is making these changes."),
        query_param("fieldValidation", "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields: Ignore, Warn (default) or Strict."),
    ];
    let mut patch_params = write_params.clone();
    patch_params.push(query_param(
        "force",
        "Force is going to \"force\" Apply requests.",
    ));
    let op = |action: &str, params: &[Value], id: &str| {
        json!({
            "operationId": format!("{id}{}", r.kind),
            "parameters": params,
            "consumes": if action == "patch" { json!(["application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml"]) } else { json!(["*/*"]) },
            "produces": ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"],
            "responses": {"200": {"description": "OK", "schema": reference}},
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
        })
    };
    let item = json!({
        "get": op("get", &[], "read"),
        "put": op("put", &write_params, "replace"),
        "patch": op("patch", &patch_params, "patch"),
        "delete": op("delete", &write_params[..1], "delete"),
        "parameters": [{"name": "name", "in": "path", "required": true, "type": "string", "uniqueItems": true}],
    });
    let collection = json!({
        "get": op("list", &[], "list"),
        "post": op("post", &write_params, "create"),
    });
    vec![
        (base.clone(), collection),
        (format!("{base}/{{name}}"), item),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_carry_kinds_paths_and_field_validation() {
        let api = OpenApi::new();
        let reg = crate::registry::Registry::new();
        let docs = api.documents(&reg.snapshot());
        let v2: Value = serde_json::from_slice(&docs.v2).unwrap();
        let dep = &v2["definitions"]["io.k8s.api.apps.v1.Deployment"];
        assert_eq!(
            dep["x-kubernetes-group-version-kind"][0]["kind"],
            "Deployment"
        );
        let patch =
            &v2["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
        assert!(patch["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "fieldValidation"));
        assert!(!docs.v2_protobuf.is_empty());
        let idx: Value = serde_json::from_slice(&docs.v3_index).unwrap();
        assert!(idx["paths"]["apis/apps/v1"]["serverRelativeURL"]
            .as_str()
            .unwrap()
            .starts_with("/openapi/v3/apis/apps/v1?hash="));
        let v3: Value = serde_json::from_slice(&docs.v3["apis/apps/v1"]).unwrap();
        assert!(v3["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"].is_object());
        // Every $ref in a v3 document resolves inside it.
        let mut refs = Vec::new();
        find_refs(
            &serde_json::from_str::<Value>(
                &serde_json::to_string(&v3)
                    .unwrap()
                    .replace("#/components/schemas/", "#/definitions/"),
            )
            .unwrap(),
            &mut refs,
        );
        for r in refs {
            assert!(
                v3["components"]["schemas"].get(&r).is_some(),
                "dangling $ref {r}"
            );
        }
    }
}
