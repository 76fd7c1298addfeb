//! The loop that type-checks ValidatingAdmissionPolicies, as kube-apiserver's policy status
//! controller does: for each policy whose generation it has not seen, the expressions of its
//! validations are checked against the schemas of the kinds its `matchConstraints` name (and of
//! its `paramKind`), and `status.typeChecking.expressionWarnings` (a field that does not exist,
//! an operator with no overload for its operand types) and `status.observedGeneration` are
//! written.

use std::collections::HashMap;
use std::sync::Arc;

use flotilla_cel::typecheck::{self, Fields, Type};
use serde_json::{json, Value};

use super::GROUP;
use crate::cache::ChangeKind;
use crate::objects::{guaranteed_update, Writer};
use crate::registry::{ResourceInfo, Snapshot};
use crate::Api;

const PREFIX: &str = "/registry/admissionregistration.k8s.io/validatingadmissionpolicies/";

/// Follow policies and write the type check of each change (a policy's status is rewritten only
/// when its check or generation differs, so the loop's own writes end it).
pub async fn run(api: Arc<Api>) {
    crate::lifecycle::follow(api.clone(), PREFIX, |c| {
        let api = api.clone();
        async move {
            if c.kind == ChangeKind::Deleted {
                return;
            }
            if let Err(e) = write_status(&api, &c.object.value()).await {
                tracing::warn!(error = %e, "validating admission policy status not written");
            }
        }
    })
    .await
}

/// The status a policy's type check gives, compared with what it holds.
fn up_to_date(policy: &Value, type_checking: &Value) -> bool {
    policy.pointer("/status/observedGeneration") == policy.pointer("/metadata/generation")
        && policy.pointer("/status/typeChecking") == Some(type_checking)
}

async fn write_status(api: &Arc<Api>, policy: &Value) -> crate::error::Result<()> {
    let snap = api.registry.snapshot();
    let Some(res) = snap
        .get(GROUP, "v1", "validatingadmissionpolicies")
        .cloned()
    else {
        return Ok(());
    };
    let name = policy["metadata"]["name"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let warnings = check(&snap, &definitions(api), api, policy);
    let type_checking = if warnings.is_empty() {
        json!({})
    } else {
        json!({"expressionWarnings": warnings})
    };
    if up_to_date(policy, &type_checking) {
        return Ok(());
    }
    let key = res.key(None, &name);
    guaranteed_update(api, Writer::Server, &res, &key, &name, false, |cur| {
        let mut new = cur.clone();
        if up_to_date(cur, &type_checking) {
            return Ok(new);
        }
        new["status"]["observedGeneration"] = cur["metadata"]["generation"].clone();
        new["status"]["typeChecking"] = type_checking.clone();
        Ok(new)
    })
    .await
    .map(|_| ())
}

/// The OpenAPI v2 definitions of every served kind.
fn definitions(api: &Api) -> Value {
    serde_json::from_slice::<Value>(&api.schemas.openapi_v2_json())
        .map(|mut d| d["definitions"].take())
        .unwrap_or(Value::Null)
}

/// The expression warnings of `policy`: one per expression with errors, its errors joined.
pub(crate) fn check(snap: &Snapshot, definitions: &Value, api: &Api, policy: &Value) -> Vec<Value> {
    let spec = &policy["spec"];
    let kinds = matched_kinds(snap, &spec["matchConstraints"]);
    if kinds.is_empty() {
        return Vec::new();
    }
    let params = spec["paramKind"]["kind"].as_str().and_then(|k| {
        let av = spec["paramKind"]["apiVersion"].as_str().unwrap_or("");
        let (group, _) = av.rsplit_once('/').unwrap_or(("", av));
        snap.by_kind(group, k).map(|r| api.schemas.root_type(r))
    });
    let schema = Definitions(definitions);
    let mut out = Vec::new();
    for (i, v) in spec["validations"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        for field in ["expression", "messageExpression"] {
            let Some(src) = v[field].as_str().filter(|s| !s.is_empty()) else {
                continue;
            };
            let mut errors: Vec<String> = Vec::new();
            for kind in &kinds {
                let vars = variables(&api.schemas.root_type(kind), params.as_deref());
                for e in typecheck::check(src, &vars, &schema) {
                    if !errors.contains(&e) {
                        errors.push(e);
                    }
                }
            }
            if !errors.is_empty() {
                out.push(json!({
                    "fieldRef": format!("spec.validations[{i}].{field}"),
                    "warning": errors.join("\n"),
                }));
            }
        }
    }
    out
}

/// The variables of a policy's expressions, typed for one matched kind.
fn variables(root: &str, params: Option<&str>) -> HashMap<String, Type> {
    let object = if root.is_empty() {
        Type::Dyn
    } else {
        Type::Object(root.to_string())
    };
    let params = params
        .filter(|p| !p.is_empty())
        .map_or(Type::Dyn, |p| Type::Object(p.to_string()));
    HashMap::from([
        ("object".to_string(), object.clone()),
        ("oldObject".to_string(), object),
        ("params".to_string(), params),
        ("request".to_string(), Type::Dyn),
        (
            "namespaceObject".to_string(),
            Type::Object("io.k8s.api.core.v1.Namespace".into()),
        ),
        ("variables".to_string(), Type::Dyn),
        ("authorizer".to_string(), Type::Dyn),
    ])
}

/// The served kinds a policy's resource rules name without wildcards (kube type-checks only
/// against kinds it can name).
fn matched_kinds(snap: &Snapshot, mc: &Value) -> Vec<Arc<ResourceInfo>> {
    let mut out: Vec<Arc<ResourceInfo>> = Vec::new();
    let strs = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect()
    };
    for rule in mc["resourceRules"].as_array().into_iter().flatten() {
        for g in strs(&rule["apiGroups"]) {
            for v in strs(&rule["apiVersions"]) {
                for r in strs(&rule["resources"]) {
                    if [&g, &v, &r].iter().any(|s| s.contains('*')) || r.contains('/') {
                        continue;
                    }
                    if let Some(res) = snap.get(&g, &v, &r) {
                        if !out.iter().any(|o| Arc::ptr_eq(o, res)) {
                            out.push(res.clone());
                        }
                    }
                }
            }
        }
    }
    out
}

/// Field types from the OpenAPI v2 definitions.
struct Definitions<'a>(&'a Value);

/// Types the check treats as `dyn`: they hold several shapes (or a timestamp CEL types apart).
const OPAQUE: &[&str] = &[
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
    "io.k8s.apimachinery.pkg.api.resource.Quantity",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
];

impl Definitions<'_> {
    /// The schema a type name stands for: a definition, or a node inside one
    /// (`<definition>#<JSON pointer>`, for the inline objects of CRD schemas).
    fn resolve(&self, name: &str) -> Option<&Value> {
        match name.split_once('#') {
            Some((base, path)) => self.0.get(base)?.pointer(path),
            None => self.0.get(name),
        }
    }

    /// The type of `schema`, found at `here` (a type name as [`Definitions::resolve`] reads it).
    fn type_of(&self, schema: &Value, here: &str) -> Type {
        if let Some(r) = schema["$ref"].as_str() {
            let name = r.trim_start_matches("#/definitions/");
            if OPAQUE.contains(&name) || self.0.get(name).is_none() {
                return Type::Dyn;
            }
            return Type::Object(name.to_string());
        }
        if let Some(first) = schema["allOf"].as_array().and_then(|a| a.first()) {
            return self.type_of(first, &format!("{}/allOf/0", anchor(here)));
        }
        if schema["x-kubernetes-int-or-string"] == json!(true) {
            return Type::Dyn;
        }
        match (schema["type"].as_str(), schema["format"].as_str()) {
            (Some("integer"), _) => Type::Int,
            (Some("number"), _) => Type::Double,
            (Some("boolean"), _) => Type::Bool,
            (Some("string"), Some("byte")) => Type::Bytes,
            (Some("string"), Some("date-time" | "duration")) => Type::Dyn,
            (Some("string"), _) => Type::String,
            (Some("array"), _) => Type::List(Box::new(
                self.type_of(&schema["items"], &format!("{}/items", anchor(here))),
            )),
            (Some("object") | None, _) if schema["properties"].is_object() => {
                Type::Object(anchor(here))
            }
            (Some("object"), _) if schema["additionalProperties"].is_object() => {
                Type::Map(Box::new(self.type_of(
                    &schema["additionalProperties"],
                    &format!("{}/additionalProperties", anchor(here)),
                )))
            }
            _ => Type::Dyn,
        }
    }
}

/// A type name that can take a JSON pointer after it.
fn anchor(name: &str) -> String {
    if name.contains('#') {
        name.to_string()
    } else {
        format!("{name}#")
    }
}

/// A JSON pointer segment for a property name.
fn escape(field: &str) -> String {
    field.replace('~', "~0").replace('/', "~1")
}

impl Fields for Definitions<'_> {
    fn field(&self, object: &str, field: &str) -> Option<Type> {
        let def = self.resolve(object)?;
        let Some(props) = def["properties"].as_object() else {
            return Some(Type::Dyn);
        };
        let here = format!("{}/properties/{}", anchor(object), escape(field));
        match props.get(field) {
            Some(s) => Some(self.type_of(s, &here)),
            None if def["x-kubernetes-preserve-unknown-fields"] == json!(true) => Some(Type::Dyn),
            None => None,
        }
    }
}
