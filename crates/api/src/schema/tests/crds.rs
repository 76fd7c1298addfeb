//! CRD schemas: naming, injected metadata, lookup through CR schemas, live add/remove.

use serde_json::{json, Value};

use super::super::lookup::{FieldShape, ListType, MapType, SchemaLookup};
use super::super::{crd_schemas, definition_name, Catalog, Error, SchemaSet};
use super::walk;

pub(in crate::schema) fn crontab() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": { "name": "crontabs.stable.example.io" },
        "spec": {
            "group": "stable.example.io",
            "scope": "Namespaced",
            "names": { "plural": "crontabs", "singular": "crontab", "kind": "CronTab" },
            "versions": [
                { "name": "v1beta1", "served": false, "storage": false },
                {
                    "name": "v1", "served": true, "storage": true,
                    "subresources": { "status": {}, "scale": { "specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas" } },
                    "schema": { "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "metadata": { "type": "object", "properties": { "name": { "type": "string", "maxLength": 20 } } },
                            "spec": {
                                "type": "object",
                                "required": ["cronSpec", "note"],
                                "properties": {
                                    "cronSpec": { "type": "string" },
                                    "note": { "type": "string", "nullable": true },
                                    "replicas": { "type": "integer" },
                                    "port": { "x-kubernetes-int-or-string": true },
                                    "ports": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "map",
                                        "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
                                        "items": { "type": "object", "properties": {
                                            "containerPort": { "type": "integer" }, "protocol": { "type": "string" } } }
                                    },
                                    "selector": { "type": "object", "x-kubernetes-map-type": "atomic",
                                        "additionalProperties": { "type": "string" } },
                                    "config": { "type": "object", "x-kubernetes-preserve-unknown-fields": true },
                                    "template": { "type": "object", "x-kubernetes-embedded-resource": true,
                                        "x-kubernetes-preserve-unknown-fields": true },
                                    "tags": { "type": "array", "x-kubernetes-preserve-unknown-fields": true }
                                }
                            },
                            "status": { "type": "object", "properties": { "replicas": { "type": "integer" } } }
                        }
                    } }
                }
            ]
        }
    })
}

const CRONTAB: &str = "io.example.stable.v1.CronTab";

#[test]
fn names_follow_kubernetes() {
    assert_eq!(
        definition_name("stable.example.io", "v1", "CronTab"),
        CRONTAB
    );
    let s = crd_schemas(&crontab()).expect("valid CRD");
    assert_eq!(s.versions.len(), 1, "unserved versions are skipped");
    let v = &s.versions[0];
    assert_eq!(v.definition_name, CRONTAB);
    assert_eq!(v.list_definition_name, "io.example.stable.v1.CronTabList");
    assert!(v.status && v.scale);
    assert_eq!(
        v.definition["x-kubernetes-group-version-kind"],
        json!([{ "group": "stable.example.io", "kind": "CronTab", "version": "v1" }])
    );
    assert_eq!(
        v.list_definition["x-kubernetes-group-version-kind"][0]["kind"],
        "CronTabList"
    );
    let meta = &v.definition["properties"]["metadata"];
    assert_eq!(
        meta["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    assert!(
        meta.get("properties").is_none(),
        "the CRD's own metadata schema is replaced"
    );
    assert_eq!(v.definition["properties"]["apiVersion"]["type"], "string");
    assert_eq!(
        v.definition["properties"]["spec"]["properties"]["port"]["anyOf"][0]["type"],
        "integer"
    );
}

#[test]
fn invalid_crds_say_what_is_missing() {
    let mut crd = crontab();
    crd["spec"].as_object_mut().expect("spec").remove("group");
    let err = crd_schemas(&crd).expect_err("no group");
    assert!(
        matches!(&err, Error::InvalidCrd(m) if m.contains("group")),
        "{err}"
    );
}

#[test]
fn lookup_walks_custom_resources() {
    let set = SchemaSet::new(Catalog::new());
    assert!(set.apply_crd(&crontab()).expect("valid"));
    let root = set
        .root_type("stable.example.io", "v1", "CronTab")
        .expect("served");
    assert_eq!(root, CRONTAB);
    let ports = walk(&set, &root, "spec.ports");
    assert_eq!(ports.list_type, Some(ListType::Map));
    assert_eq!(ports.list_map_keys, vec!["containerPort", "protocol"]);
    assert_eq!(
        ports.type_name.as_deref(),
        Some("io.example.stable.v1.CronTab#/properties/spec/properties/ports/items")
    );
    assert_eq!(
        walk(&set, &root, "spec.ports.protocol").shape,
        FieldShape::Scalar
    );
    assert_eq!(walk(&set, &root, "spec.port").shape, FieldShape::Unknown);
    assert_eq!(
        walk(&set, &root, "spec.selector").map_type,
        Some(MapType::Atomic)
    );
    assert_eq!(walk(&set, &root, "spec.config").shape, FieldShape::Unknown);
    let template = walk(&set, &root, "spec.template");
    assert_eq!(
        template.shape,
        FieldShape::Object,
        "embedded resources get apiVersion/kind/metadata"
    );
    assert_eq!(
        walk(&set, &root, "spec.template.metadata.labels").shape,
        FieldShape::Map
    );
    assert_eq!(
        walk(&set, &root, "metadata.finalizers").list_type,
        Some(ListType::Set),
        "ObjectMeta from the catalog"
    );
    assert_eq!(set.field(&root, "nope"), None);
    let list = set
        .root_type("stable.example.io", "v1", "CronTabList")
        .expect("list served");
    assert_eq!(
        walk(&set, &list, "items").type_name.as_deref(),
        Some(CRONTAB)
    );
}

#[test]
fn crds_come_and_go() {
    let set = SchemaSet::new(Catalog::new());
    let before = set.openapi_v2().hash;
    assert!(set.apply_crd(&crontab()).expect("valid"));
    assert!(
        !set.apply_crd(&crontab()).expect("valid"),
        "re-applying the same CRD changes nothing"
    );
    let with = set.openapi_v2();
    assert_ne!(with.hash, before);
    let doc: Value = serde_json::from_slice(&with.bytes).expect("json");
    assert!(doc["definitions"].get(CRONTAB).is_some());
    let delete_options = &doc["definitions"]["io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"]
        ["x-kubernetes-group-version-kind"];
    assert!(delete_options
        .as_array()
        .expect("list")
        .iter()
        .any(|g| g["group"] == "stable.example.io"));
    assert!(set.openapi_v3("apis/stable.example.io/v1").is_some());
    assert!(set.remove_crd("crontabs.stable.example.io"));
    assert!(!set.remove_crd("crontabs.stable.example.io"));
    assert_eq!(set.openapi_v2().hash, before, "documents are deterministic");
    assert!(set.openapi_v3("apis/stable.example.io/v1").is_none());
    assert_eq!(set.root_type("stable.example.io", "v1", "CronTab"), None);
}

#[test]
fn v2_lowers_what_kubectl_cannot_parse() {
    let set = SchemaSet::new(Catalog::new());
    set.apply_crd(&crontab()).expect("valid");
    let doc: Value = serde_json::from_slice(&set.openapi_v2().bytes).expect("json");
    let spec = &doc["definitions"][CRONTAB]["properties"]["spec"];
    assert_eq!(
        spec["required"],
        json!(["cronSpec"]),
        "nullable fields are not required"
    );
    assert!(
        spec["properties"]["note"].get("type").is_none(),
        "nullable drops the type"
    );
    assert!(spec["properties"]["port"].get("anyOf").is_none());
    assert!(
        spec["properties"]["config"].get("type").is_none(),
        "preserve-unknown objects are untyped"
    );
    assert!(spec["properties"]["template"].get("properties").is_none());
    assert!(
        spec["properties"]["tags"].get("type").is_none(),
        "arrays without items are untyped"
    );

    let mut opaque = crontab();
    opaque["spec"]["versions"][1]["schema"]["openAPIV3Schema"]
        ["x-kubernetes-preserve-unknown-fields"] = json!(true);
    set.apply_crd(&opaque).expect("valid");
    let doc: Value = serde_json::from_slice(&set.openapi_v2().bytes).expect("json");
    let def = &doc["definitions"][CRONTAB];
    assert_eq!(def["type"], "object");
    assert!(def.get("properties").is_none());
    assert_eq!(def["x-kubernetes-group-version-kind"][0]["kind"], "CronTab");
}
