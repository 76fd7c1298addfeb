//! Custom resources: a CRD's served versions as OpenAPI definitions.
//!
//! Each served version's `schema.openAPIV3Schema` becomes a definition named as Kubernetes
//! names it (`<reversed group>.<version>.<Kind>`, e.g. `com.example.stable.v1.CronTab`) plus
//! its `<Kind>List`, with `apiVersion`/`kind`/`metadata` (a reference to ObjectMeta) injected
//! and `x-kubernetes-group-version-kind` set. The definitions are kept in the form
//! kube-apiserver publishes in OpenAPI v3 (int-or-string unfolded, embedded resources given
//! their type and object meta); `openapi_v2` derives the v2 form from them.

use std::sync::OnceLock;

use k8s_openapi::schemars::generate::SchemaSettings;
use serde_json::{json, Map, Value};

use super::fixups::list_definition;
use super::kinds::names;
use super::paths::{Action, Resource, SubRoute};
use super::refs::{ref_to, walk_mut};
use super::{Error, Gvk, Result};

/// The schemas of one CRD.
#[derive(Clone, Debug, PartialEq)]
pub struct CrdSchemas {
    /// `metadata.name` of the CRD (`<plural>.<group>`).
    pub name: String,
    /// `spec.group`.
    pub group: String,
    /// `spec.names.kind`.
    pub kind: String,
    /// `spec.names.listKind` (defaults to `<kind>List`).
    pub list_kind: String,
    /// `spec.names.plural`.
    pub plural: String,
    /// `spec.scope == "Namespaced"`.
    pub namespaced: bool,
    /// `spec.preserveUnknownFields` (legacy): the schema is not published for kubectl to validate.
    pub preserve_unknown_fields: bool,
    /// The served versions, in the CRD's order.
    pub versions: Vec<CrdVersion>,
}

/// One served version of a CRD.
#[derive(Clone, Debug, PartialEq)]
pub struct CrdVersion {
    /// Version name, e.g. `v1`.
    pub version: String,
    /// Definition name, e.g. `com.example.stable.v1.CronTab`; also the root type name for
    /// [`SchemaLookup`](super::lookup::SchemaLookup).
    pub definition_name: String,
    /// The definition.
    pub definition: Value,
    /// Name of the list kind's definition (`<definition_name>List`).
    pub list_definition_name: String,
    /// The list kind's definition.
    pub list_definition: Value,
    /// Whether the version has a `status` subresource.
    pub status: bool,
    /// Whether the version has a `scale` subresource.
    pub scale: bool,
}

/// The definition name Kubernetes gives a custom kind: the group's DNS labels reversed, then
/// version and kind (`stable.example.com`, `v1`, `CronTab` → `com.example.stable.v1.CronTab`).
pub fn definition_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

/// The schemas of every served version of `crd` (a `CustomResourceDefinition` as JSON).
pub fn crd_schemas(crd: &Value) -> Result<CrdSchemas> {
    let spec = crd.get("spec").ok_or_else(|| invalid("spec is missing"))?;
    let group = string(spec, "/group")?;
    let kind = string(spec, "/names/kind")?;
    let plural = string(spec, "/names/plural")?;
    let list_kind = spec
        .pointer("/names/listKind")
        .and_then(Value::as_str)
        .map_or_else(|| format!("{kind}List"), str::to_owned);
    let namespaced = spec
        .get("scope")
        .and_then(Value::as_str)
        .unwrap_or("Namespaced")
        == "Namespaced";
    let name = crd
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .map_or_else(|| format!("{plural}.{group}"), str::to_owned);
    let versions = spec
        .get("versions")
        .and_then(Value::as_array)
        .ok_or_else(|| invalid("spec.versions is missing"))?;

    let mut out = Vec::new();
    for v in versions {
        if !v.get("served").and_then(Value::as_bool).unwrap_or(true) {
            continue;
        }
        let version = string(v, "/name")?;
        let schema = v
            .pointer("/schema/openAPIV3Schema")
            .or_else(|| spec.pointer("/validation/openAPIV3Schema"));
        let gvk = Gvk::new(&group, &version, &kind);
        let definition_name = definition_name(&group, &version, &kind);
        let definition = definition(schema, &gvk)?;
        let list_gvk = Gvk::new(&group, &version, &list_kind);
        let list_definition = list_definition(&definition_name, &definition, &list_gvk, &plural);
        let subresources = v.get("subresources").or_else(|| spec.get("subresources"));
        out.push(CrdVersion {
            list_definition_name: format!("{definition_name}List"),
            definition_name,
            definition,
            list_definition,
            status: subresources.and_then(|s| s.get("status")).is_some(),
            scale: subresources.and_then(|s| s.get("scale")).is_some(),
            version,
        });
    }
    Ok(CrdSchemas {
        name,
        group,
        kind,
        list_kind,
        plural,
        namespaced,
        preserve_unknown_fields: spec
            .get("preserveUnknownFields")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        versions: out,
    })
}

impl CrdSchemas {
    /// The GVK of `version`.
    pub fn gvk(&self, version: &str) -> Gvk {
        Gvk::new(&self.group, version, &self.kind)
    }

    /// Every definition (kinds and lists of all served versions).
    pub fn definitions(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.versions.iter().flat_map(|v| {
            [
                (v.definition_name.as_str(), &v.definition),
                (v.list_definition_name.as_str(), &v.list_definition),
            ]
        })
    }

    /// The definition name of `kind` (or the list kind) in `version`, if served.
    pub fn root_type(&self, version: &str, kind: &str) -> Option<&str> {
        let v = self.versions.iter().find(|v| v.version == version)?;
        if kind == self.kind {
            Some(&v.definition_name)
        } else if kind == self.list_kind {
            Some(&v.list_definition_name)
        } else {
            None
        }
    }

    pub(crate) fn resources(&self) -> Vec<Resource> {
        let scale = Gvk::new("autoscaling", "v1", "Scale");
        self.versions
            .iter()
            .map(|v| {
                let gvk = self.gvk(&v.version);
                let mut subresources = Vec::new();
                if v.status {
                    let actions: &[Action] = &[Action::Read, Action::Replace, Action::Patch];
                    subresources.push(SubRoute {
                        name: "status",
                        def: v.definition_name.clone(),
                        gvk: gvk.clone(),
                        actions,
                    });
                }
                if v.scale {
                    let actions: &[Action] = &[Action::Read, Action::Replace, Action::Patch];
                    subresources.push(SubRoute {
                        name: "scale",
                        def: names::SCALE.to_owned(),
                        gvk: scale.clone(),
                        actions,
                    });
                }
                Resource {
                    gvk,
                    plural: self.plural.clone(),
                    namespaced: self.namespaced,
                    def: v.definition_name.clone(),
                    list_def: v.list_definition_name.clone(),
                    subresources,
                    builtin: false,
                }
            })
            .collect()
    }
}

fn invalid(what: &str) -> Error {
    Error::InvalidCrd(what.to_owned())
}

fn string(v: &Value, pointer: &str) -> Result<String> {
    match v.pointer(pointer).and_then(Value::as_str) {
        Some(s) if !s.is_empty() => Ok(s.to_owned()),
        _ => Err(Error::InvalidCrd(format!(
            "{} must be a non-empty string",
            pointer.trim_start_matches('/').replace('/', ".")
        ))),
    }
}

/// The published root definition of one version.
fn definition(schema: Option<&Value>, gvk: &Gvk) -> Result<Value> {
    let mut def = match schema {
        Some(s) if s.is_object() => s.clone(),
        Some(_) => return Err(invalid("openAPIV3Schema must be an object")),
        None => json!({ "type": "object", "x-kubernetes-preserve-unknown-fields": true }),
    };
    walk_mut(&mut def, &mut unfold);
    let obj = def
        .as_object_mut()
        .ok_or_else(|| invalid("openAPIV3Schema must be an object"))?;
    obj.insert("type".to_owned(), json!("object"));
    let props = properties(obj);
    let (api_version, kind, metadata) = type_meta();
    props.insert("apiVersion".to_owned(), api_version.clone());
    props.insert("kind".to_owned(), kind.clone());
    props.insert("metadata".to_owned(), metadata.clone());
    obj.insert(
        "x-kubernetes-group-version-kind".to_owned(),
        json!([gvk.to_json()]),
    );
    Ok(def)
}

fn properties(obj: &mut Map<String, Value>) -> &mut Map<String, Value> {
    let props = obj.entry("properties").or_insert_with(|| json!({}));
    if !props.is_object() {
        *props = json!({});
    }
    match props.as_object_mut() {
        Some(p) => p,
        // Replaced by an object just above.
        None => unreachable!("properties is an object"),
    }
}

/// What kube-apiserver adds to a structural schema before publishing it: int-or-string
/// alternatives, and the type and object meta of embedded resources.
fn unfold(node: &mut Value) {
    let Some(obj) = node.as_object_mut() else {
        return;
    };
    let flag = |o: &Map<String, Value>, k: &str| o.get(k).and_then(Value::as_bool).unwrap_or(false);
    if flag(obj, "x-kubernetes-int-or-string")
        && !obj.contains_key("anyOf")
        && !obj.contains_key("allOf")
    {
        obj.insert(
            "anyOf".to_owned(),
            json!([{ "type": "integer" }, { "type": "string" }]),
        );
    }
    if flag(obj, "x-kubernetes-embedded-resource") {
        let (api_version, kind, metadata) = type_meta();
        let props = properties(obj);
        props.insert("apiVersion".to_owned(), api_version.clone());
        props.insert("kind".to_owned(), kind.clone());
        props.insert("metadata".to_owned(), metadata.clone());
        let required = obj.entry("required").or_insert_with(|| json!([]));
        if let Some(r) = required.as_array_mut() {
            for k in ["kind", "apiVersion"] {
                if !r.iter().any(|x| x == k) {
                    r.push(json!(k));
                }
            }
        }
    }
}

/// `apiVersion`, `kind` and `metadata` property schemas with k8s-openapi's descriptions.
fn type_meta() -> &'static (Value, Value, Value) {
    static TYPE_META: OnceLock<(Value, Value, Value)> = OnceLock::new();
    TYPE_META.get_or_init(|| {
        let mut gen = SchemaSettings::draft07()
            .with(|s| s.transforms.clear())
            .into_generator();
        gen.subschema_for::<k8s_openapi::api::core::v1::ConfigMap>();
        let defs = gen.take_definitions(false);
        let prop = |name: &str| {
            defs.get("io.k8s.api.core.v1.ConfigMap")
                .and_then(|d| d.pointer(&format!("/properties/{name}")))
                .cloned()
                .unwrap_or_else(|| json!({ "type": "string" }))
        };
        let mut metadata = prop("metadata");
        if let Some(m) = metadata.as_object_mut() {
            m.insert("$ref".to_owned(), json!(ref_to(names::OBJECT_META)));
        }
        (prop("apiVersion"), prop("kind"), metadata)
    })
}
