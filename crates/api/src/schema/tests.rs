//! Tests of the catalog, the lookup, CRD schemas and the documents.

mod crds;
mod documents;

use std::sync::OnceLock;

use super::k8s_generated::{ProtoKind, MESSAGES};
use super::lookup::{FieldInfo, FieldShape, ListType, MapType, PatchStrategy, SchemaLookup};
use super::messages::normalize;
use super::{message, message_for_openapi, Catalog};

pub(super) fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(Catalog::new)
}

/// Walk `path` (dot-separated fields) from `root`, returning the last field's info.
pub(super) fn walk(lookup: &dyn SchemaLookup, root: &str, path: &str) -> FieldInfo {
    walk_arc(lookup, root, path).as_ref().clone()
}

fn walk_arc(lookup: &dyn SchemaLookup, root: &str, path: &str) -> std::sync::Arc<FieldInfo> {
    let mut ty = root.to_owned();
    let mut info = None;
    for field in path.split('.') {
        let f = lookup
            .field(&ty, field)
            .unwrap_or_else(|| panic!("{ty} has no field {field} (walking {path})"));
        ty = f.type_name.clone().unwrap_or_default();
        info = Some(f);
    }
    info.expect("path is not empty")
}

const DEPLOYMENT: &str = "io.k8s.api.apps.v1.Deployment";

#[test]
fn deployment_containers_merge_by_name() {
    let f = walk(catalog(), DEPLOYMENT, "spec.template.spec.containers");
    assert_eq!(f.shape, FieldShape::List);
    assert_eq!(f.item_shape, Some(FieldShape::Object));
    assert_eq!(f.type_name.as_deref(), Some("io.k8s.api.core.v1.Container"));
    assert_eq!(f.patch_strategy, vec![PatchStrategy::Merge]);
    assert_eq!(f.patch_merge_key.as_deref(), Some("name"));
    assert_eq!(f.list_type, Some(ListType::Map));
    assert_eq!(f.list_map_keys, vec!["name"]);
}

#[test]
fn container_ports_merge_by_container_port() {
    let f = walk(catalog(), DEPLOYMENT, "spec.template.spec.containers.ports");
    assert_eq!(f.patch_merge_key.as_deref(), Some("containerPort"));
    assert_eq!(f.list_map_keys, vec!["containerPort", "protocol"]);
    assert_eq!(
        f.type_name.as_deref(),
        Some("io.k8s.api.core.v1.ContainerPort")
    );
}

#[test]
fn finalizers_are_a_merged_set() {
    let f = walk(catalog(), DEPLOYMENT, "metadata.finalizers");
    assert_eq!(f.shape, FieldShape::List);
    assert_eq!(f.item_shape, Some(FieldShape::Scalar));
    assert_eq!(f.type_name, None);
    assert_eq!(f.patch_strategy, vec![PatchStrategy::Merge]);
    assert_eq!(f.list_type, Some(ListType::Set));
}

#[test]
fn retain_keys_and_atomic_structs() {
    let strategy = walk(catalog(), DEPLOYMENT, "spec.strategy");
    assert_eq!(strategy.patch_strategy, vec![PatchStrategy::RetainKeys]);
    assert_eq!(strategy.shape, FieldShape::Object);
    let selector = walk(catalog(), DEPLOYMENT, "spec.selector");
    assert_eq!(
        selector.map_type,
        Some(MapType::Atomic),
        "LabelSelector is +structType=atomic"
    );
    let volumes = walk(catalog(), DEPLOYMENT, "spec.template.spec.volumes");
    assert_eq!(
        volumes.patch_strategy,
        vec![PatchStrategy::Merge, PatchStrategy::RetainKeys]
    );
}

#[test]
fn special_shapes() {
    let c = catalog();
    let shape = |root: &str, path: &str| walk(c, root, path).shape;
    assert_eq!(
        shape(DEPLOYMENT, "spec.strategy.rollingUpdate.maxSurge"),
        FieldShape::Unknown
    );
    assert_eq!(
        shape(DEPLOYMENT, "metadata.creationTimestamp"),
        FieldShape::Scalar
    );
    let labels = walk(c, DEPLOYMENT, "metadata.labels");
    assert_eq!(
        (labels.shape, labels.item_shape),
        (FieldShape::Map, Some(FieldShape::Scalar))
    );
    let limits = walk(
        c,
        DEPLOYMENT,
        "spec.template.spec.containers.resources.limits",
    );
    assert_eq!(
        (limits.shape, limits.item_shape),
        (FieldShape::Map, Some(FieldShape::Scalar))
    );
    assert_eq!(
        shape(DEPLOYMENT, "metadata.managedFields.fieldsV1"),
        FieldShape::Unknown
    );
    let crd = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition";
    assert_eq!(
        shape(crd, "spec.versions.schema.openAPIV3Schema.default"),
        FieldShape::Unknown
    );
    assert_eq!(shape("io.k8s.api.core.v1.Secret", "data"), FieldShape::Map);
    assert_eq!(c.field(DEPLOYMENT, "nonsense"), None);
}

#[test]
fn every_kind_has_a_root_type_with_its_gvk() {
    let c = catalog();
    for k in super::kinds::BUILTIN_KINDS {
        for kind in [k.kind, k.list_kind] {
            let name = c
                .root_type(k.group, k.version, kind)
                .unwrap_or_else(|| panic!("no root for {kind}"));
            let gvks = &c.definition(name).expect("root exists")["x-kubernetes-group-version-kind"];
            let want = super::Gvk::new(k.group, k.version, kind).to_json();
            assert!(
                gvks.as_array().is_some_and(|a| a.contains(&want)),
                "{name} lacks {want}"
            );
        }
    }
    assert_eq!(
        c.root_type("autoscaling", "v1", "Scale"),
        Some("io.k8s.api.autoscaling.v1.Scale")
    );
    assert_eq!(
        c.root_type("authentication.k8s.io", "v1", "TokenRequest"),
        Some("io.k8s.api.authentication.v1.TokenRequest")
    );
    assert_eq!(
        c.root_type("apps", "v1", "DeleteOptions"),
        Some("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions")
    );
    assert_eq!(
        c.root_type("", "v1", "Status"),
        Some("io.k8s.apimachinery.pkg.apis.meta.v1.Status")
    );
    assert_eq!(
        c.root_type("events.k8s.io", "v1", "Event"),
        Some("io.k8s.api.events.v1.Event")
    );
    assert_eq!(
        c.root_type("", "v1", "Event"),
        Some("io.k8s.api.core.v1.Event")
    );
    let deployment = c.definition(DEPLOYMENT).expect("deployment");
    assert!(
        deployment.get("required").is_none(),
        "metadata must not be required"
    );
}

/// Every marker of a catalog type must land on a property: a miss means the prost and JSON
/// names failed to meet after normalization.
#[test]
fn every_marker_finds_its_property() {
    let mut misses = Vec::new();
    for (name, def) in catalog().definitions() {
        let Some(msg) = message_for_openapi(name) else {
            continue;
        };
        let props: Vec<String> = def["properties"]
            .as_object()
            .map(|p| p.keys().map(|k| normalize(k)).collect())
            .unwrap_or_default();
        for f in msg.fields {
            let marked =
                !(f.patch_strategy.is_empty() && f.list_type.is_empty() && f.map_type.is_empty());
            if marked && !props.contains(&normalize(f.rust)) {
                misses.push(format!("{name}.{}", f.rust));
            }
        }
    }
    // k8s-pb follows a newer Kubernetes than k8s-openapi's v1_33 (restartPolicyRules, a node's
    // declaredFeatures), and the JSONSchemaPropsOr* wrappers are unions in JSON, not objects
    // with these properties.
    let expected = [
        "io.k8s.api.core.v1.Container.restart_policy_rules",
        "io.k8s.api.core.v1.NodeStatus.declared_features",
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray.j_son_schemas",
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray.property",
    ];
    misses.retain(|m| !expected.contains(&m.as_str()));
    assert!(misses.is_empty(), "markers without a property: {misses:?}");
}

#[test]
fn generated_table_is_sorted_and_closed() {
    assert!(MESSAGES.len() > 1000);
    assert!(
        MESSAGES.windows(2).all(|w| w[0].proto < w[1].proto),
        "sorted by proto name"
    );
    for m in MESSAGES {
        let tags: std::collections::BTreeSet<u32> = m.fields.iter().map(|f| f.tag).collect();
        assert_eq!(tags.len(), m.fields.len(), "{} has unique tags", m.proto);
        for f in m.fields {
            if f.kind == ProtoKind::Message {
                assert!(
                    message(f.message).is_some(),
                    "{}.{} refers to unknown {}",
                    m.proto,
                    f.rust,
                    f.message
                );
            }
        }
    }
    let container = message("k8s.io.api.core.v1.Container").expect("Container");
    assert_eq!(container.openapi, "io.k8s.api.core.v1.Container");
    let env = container.field(7).expect("env is field 7");
    assert_eq!(
        (env.rust, env.repeated, env.message),
        ("env", true, "k8s.io.api.core.v1.EnvVar")
    );
    assert_eq!(
        (env.patch_strategy, env.patch_merge_key, env.list_type),
        ("merge", "name", "map")
    );
    let http =
        message("k8s.io.api.core.v1.HTTPGetAction").expect("acronyms are spelled as in Kubernetes");
    assert_eq!(http.openapi, "io.k8s.api.core.v1.HTTPGetAction");
    let labels = message("k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta")
        .and_then(|m| m.field(11))
        .expect("labels");
    assert_eq!(labels.map, Some((ProtoKind::String, ProtoKind::String)));
    let props = message_for_openapi(
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
    )
    .expect("JSONSchemaProps");
    assert_eq!(
        props.proto,
        "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"
    );
    assert!(
        props.fields.iter().any(|f| f.rust == "ref"),
        "raw identifiers lose their r#"
    );
}
