//! The OpenAPI documents: valid JSON, closed references, what kubectl looks for.

use std::collections::BTreeSet;

use serde_json::Value;

use super::super::refs::{V2_PREFIX, V3_PREFIX};
use super::super::{Catalog, SchemaSet};
use super::crds::crontab;

fn set_with_crd() -> SchemaSet {
    let set = SchemaSet::new(Catalog::new());
    set.apply_crd(&crontab()).expect("valid CRD");
    set
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).expect("documents are JSON")
}

/// Every `$ref` anywhere in `doc` (including paths), with what it must start with.
fn refs(node: &Value, out: &mut Vec<String>) {
    match node {
        Value::Object(o) => {
            if let Some(Value::String(r)) = o.get("$ref") {
                out.push(r.clone());
            }
            o.values().for_each(|v| refs(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

/// What kubectl's v2 model parser rejects.
fn v2_violations(node: &Value, path: &str, out: &mut Vec<String>) {
    let Some(o) = node.as_object() else { return };
    for k in ["oneOf", "anyOf", "allOf", "not", "nullable"] {
        if o.contains_key(k) {
            out.push(format!("{path}: {k}"));
        }
    }
    if o.get("type").is_some_and(|t| !t.is_string()) {
        out.push(format!("{path}: type is not a string"));
    }
    if o.get("type").is_some_and(|t| t == "array") && !o.contains_key("items") {
        out.push(format!("{path}: array without items"));
    }
    if let Some(props) = o.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            v2_violations(v, &format!("{path}.{k}"), out);
        }
    }
    for k in ["items", "additionalProperties"] {
        if let Some(v) = o.get(k) {
            v2_violations(v, &format!("{path}[{k}]"), out);
        }
    }
}

#[test]
fn v2_is_closed_and_parseable_by_kubectl() {
    let set = set_with_crd();
    let doc = json(&set.openapi_v2().bytes);
    assert_eq!(doc["swagger"], "2.0");
    assert_eq!(doc["info"]["title"], "Kubernetes");
    let defs = doc["definitions"].as_object().expect("definitions");
    let mut all = Vec::new();
    refs(&doc, &mut all);
    assert!(all.len() > 1000);
    for r in &all {
        let name = r
            .strip_prefix(V2_PREFIX)
            .unwrap_or_else(|| panic!("not a v2 ref: {r}"));
        assert!(defs.contains_key(name), "dangling {r}");
    }
    let mut bad = Vec::new();
    for (name, def) in defs {
        v2_violations(def, name, &mut bad);
    }
    assert!(bad.is_empty(), "{bad:?}");
    let mut ids = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("path item") {
            if let Some(id) = op.get("operationId").and_then(Value::as_str) {
                assert!(
                    ids.insert(id.to_owned()),
                    "duplicate operationId {id} at {method} {path}"
                );
            }
        }
    }
    let patch = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    assert_eq!(
        patch["x-kubernetes-group-version-kind"]["kind"],
        "Deployment"
    );
    assert!(has_query_param(patch, "fieldValidation"));
}

fn has_query_param(op: &Value, name: &str) -> bool {
    op["parameters"]
        .as_array()
        .is_some_and(|ps| ps.iter().any(|p| p["name"] == name && p["in"] == "query"))
}

#[test]
fn v3_index_lists_every_group_version_with_its_hash() {
    let set = set_with_crd();
    let index = json(&set.openapi_v3_index().bytes);
    let paths = index["paths"].as_object().expect("paths");
    let mut want: BTreeSet<String> = set
        .snapshot()
        .catalog()
        .group_versions()
        .iter()
        .map(|(g, v)| super::super::gv_path(g, v))
        .collect();
    want.insert("apis/stable.example.io/v1".to_owned());
    assert_eq!(paths.keys().cloned().collect::<BTreeSet<_>>(), want);
    for (gv, entry) in paths {
        let doc = set.openapi_v3(gv).expect("document for every listed gv");
        assert_eq!(
            entry["serverRelativeURL"],
            format!("/openapi/v3/{gv}?hash={}", doc.hash)
        );
    }
}

/// Every `parameters` list that is empty, by where it is.
fn empty_parameters(node: &Value, path: &str, out: &mut Vec<String>) {
    match node {
        Value::Object(o) => {
            if o.get("parameters")
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
            {
                out.push(path.to_owned());
            }
            for (k, v) in o {
                empty_parameters(v, &format!("{path}/{k}"), out);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| empty_parameters(v, path, out)),
        _ => {}
    }
}

/// Clients read the documents into typed OpenAPI models that drop an empty `parameters` list,
/// and the upstream suite checks that a document survives that round trip unchanged.
#[test]
fn documents_have_no_empty_parameter_lists() {
    let set = set_with_crd();
    let snap = set.snapshot();
    let mut bad = Vec::new();
    for (g, v) in snap.catalog().group_versions() {
        let gv = super::super::gv_path(&g, &v);
        let doc = json(&snap.openapi_v3(&gv).expect("doc").bytes);
        empty_parameters(&doc, &gv, &mut bad);
    }
    empty_parameters(&json(&set.openapi_v2().bytes), "v2", &mut bad);
    assert!(bad.is_empty(), "empty parameter lists at {bad:?}");
}

#[test]
fn v3_documents_are_closed_and_explainable() {
    let set = set_with_crd();
    let snap = set.snapshot();
    let index = json(&snap.openapi_v3_index().bytes);
    for gv in index["paths"].as_object().expect("paths").keys() {
        let doc = json(&snap.openapi_v3(gv).expect("doc").bytes);
        assert_eq!(doc["openapi"], "3.0.0");
        let schemas = doc["components"]["schemas"].as_object().expect("schemas");
        let mut all = Vec::new();
        refs(&doc, &mut all);
        for r in &all {
            let name = r
                .strip_prefix(V3_PREFIX)
                .unwrap_or_else(|| panic!("{gv}: not a v3 ref: {r}"));
            assert!(schemas.contains_key(name), "{gv}: dangling {r}");
        }
        // kubectl explain: the GET of a resource path names a GVK some schema carries.
        for (path, item) in doc["paths"].as_object().expect("paths") {
            let Some(gvk) = item
                .get("get")
                .and_then(|g| g.get("x-kubernetes-group-version-kind"))
            else {
                continue;
            };
            let found = schemas.values().any(|s| {
                s["x-kubernetes-group-version-kind"]
                    .as_array()
                    .is_some_and(|l| l.contains(gvk))
            });
            assert!(found, "{gv}: no schema for {gvk} of {path}");
        }
    }
}

#[test]
fn v3_carries_patch_metadata_and_field_validation() {
    let set = SchemaSet::new(Catalog::new());
    let doc = json(&set.openapi_v3("apis/apps/v1").expect("apps/v1").bytes);
    let schemas = &doc["components"]["schemas"];
    let spec = &schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
    assert_eq!(spec["x-kubernetes-patch-merge-key"], "name");
    assert_eq!(
        spec["items"]["$ref"],
        "#/components/schemas/io.k8s.api.core.v1.Container"
    );
    let template = &schemas["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["template"];
    assert_eq!(
        template["allOf"][0]["$ref"],
        "#/components/schemas/io.k8s.api.core.v1.PodTemplateSpec"
    );
    assert!(
        template.get("$ref").is_none(),
        "refs with siblings are wrapped in allOf"
    );
    assert!(schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]
        .get("oneOf")
        .is_some());
    let patch = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    assert!(has_query_param(patch, "fieldValidation"));
    assert_eq!(
        patch["x-kubernetes-group-version-kind"]["kind"],
        "Deployment"
    );
    let list_all = &doc["paths"]["/apis/apps/v1/deployments"]["get"];
    assert_eq!(
        list_all["operationId"],
        "listAppsV1DeploymentForAllNamespaces"
    );
    let scale =
        &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]["get"];
    assert_eq!(scale["x-kubernetes-group-version-kind"]["kind"], "Scale");
    let core = json(&set.openapi_v3("api/v1").expect("core").bytes);
    let token =
        &core["paths"]["/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token"]["post"];
    assert_eq!(
        token["x-kubernetes-group-version-kind"]["kind"],
        "TokenRequest"
    );
}
