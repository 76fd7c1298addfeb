//! Tests of server-side apply: a schema that mimics the Kubernetes Deployment, a small
//! harness that runs a sequence of applies and updates, and the tables in the submodules.

mod apply_cases;
mod fieldsv1_cases;
mod merge_cases;
mod scenario;
mod shape_cases;
mod update_cases;

use std::collections::HashMap;

use serde_json::{json, Value};

use super::{Applier, ApplyError, Scope};
use crate::schema::lookup::{
    FieldInfo, FieldShape, ListType, MapType, NoSchema, PatchStrategy, SchemaLookup,
};

// === the Deployment-like schema ===

/// Field infos keyed by (type, field).
pub(super) struct MockSchema(HashMap<(&'static str, &'static str), FieldInfo>);

impl SchemaLookup for MockSchema {
    fn field(&self, type_name: &str, field: &str) -> Option<std::sync::Arc<FieldInfo>> {
        self.0
            .get(&(type_name, field))
            .cloned()
            .map(std::sync::Arc::new)
    }
}

fn scalar() -> FieldInfo {
    FieldInfo::plain(FieldShape::Scalar)
}

fn object(t: &str) -> FieldInfo {
    FieldInfo {
        type_name: Some(t.into()),
        ..FieldInfo::plain(FieldShape::Object)
    }
}

fn atomic_object(t: &str) -> FieldInfo {
    FieldInfo {
        map_type: Some(MapType::Atomic),
        ..object(t)
    }
}

fn string_map(map_type: Option<MapType>) -> FieldInfo {
    FieldInfo {
        item_shape: Some(FieldShape::Scalar),
        map_type,
        ..FieldInfo::plain(FieldShape::Map)
    }
}

fn list(list_type: ListType, keys: &[&str], elem: Option<&str>) -> FieldInfo {
    FieldInfo {
        type_name: elem.map(String::from),
        item_shape: Some(if elem.is_some() {
            FieldShape::Object
        } else {
            FieldShape::Scalar
        }),
        list_type: Some(list_type),
        list_map_keys: keys.iter().map(|k| k.to_string()).collect(),
        ..FieldInfo::plain(FieldShape::List)
    }
}

/// A list known only by its strategic-merge-patch annotations.
fn merge_list(key: &str, elem: &str) -> FieldInfo {
    FieldInfo {
        list_type: None,
        list_map_keys: Vec::new(),
        patch_strategy: vec![PatchStrategy::Merge],
        patch_merge_key: Some(key.into()),
        ..list(ListType::Map, &[], Some(elem))
    }
}

pub(super) fn schema() -> MockSchema {
    use ListType::{Atomic, Map, Set};
    let fields: Vec<(&str, &str, FieldInfo)> = vec![
        ("Deployment", "apiVersion", scalar()),
        ("Deployment", "kind", scalar()),
        ("Deployment", "metadata", object("ObjectMeta")),
        ("Deployment", "spec", object("DeploymentSpec")),
        ("Deployment", "status", object("DeploymentStatus")),
        ("ObjectMeta", "name", scalar()),
        ("ObjectMeta", "namespace", scalar()),
        ("ObjectMeta", "uid", scalar()),
        ("ObjectMeta", "resourceVersion", scalar()),
        ("ObjectMeta", "generation", scalar()),
        ("ObjectMeta", "creationTimestamp", scalar()),
        ("ObjectMeta", "labels", string_map(None)),
        ("ObjectMeta", "annotations", string_map(None)),
        ("ObjectMeta", "finalizers", list(Set, &[], None)),
        (
            "ObjectMeta",
            "ownerReferences",
            list(Map, &["uid"], Some("OwnerReference")),
        ),
        ("OwnerReference", "uid", scalar()),
        ("OwnerReference", "name", scalar()),
        ("DeploymentSpec", "replicas", scalar()),
        ("DeploymentSpec", "paused", scalar()),
        ("DeploymentSpec", "minReadySeconds", scalar()),
        ("DeploymentSpec", "selector", atomic_object("LabelSelector")),
        ("DeploymentSpec", "template", object("PodTemplateSpec")),
        ("DeploymentSpec", "strategy", object("DeploymentStrategy")),
        ("DeploymentStrategy", "type", scalar()),
        (
            "DeploymentStrategy",
            "rollingUpdate",
            object("RollingUpdateDeployment"),
        ),
        (
            "RollingUpdateDeployment",
            "maxSurge",
            FieldInfo::plain(FieldShape::Unknown),
        ),
        (
            "RollingUpdateDeployment",
            "maxUnavailable",
            FieldInfo::plain(FieldShape::Unknown),
        ),
        ("PodTemplateSpec", "metadata", object("ObjectMeta")),
        ("PodTemplateSpec", "spec", object("PodSpec")),
        (
            "PodSpec",
            "containers",
            list(Map, &["name"], Some("Container")),
        ),
        (
            "PodSpec",
            "initContainers",
            list(Map, &["name"], Some("Container")),
        ),
        ("PodSpec", "hostAliases", merge_list("ip", "HostAlias")),
        ("PodSpec", "nodeSelector", string_map(Some(MapType::Atomic))),
        (
            "PodSpec",
            "tolerations",
            list(Atomic, &[], Some("Toleration")),
        ),
        ("PodSpec", "securityContext", object("PodSecurityContext")),
        ("PodSpec", "serviceAccountName", scalar()),
        ("PodSecurityContext", "runAsUser", scalar()),
        ("PodSecurityContext", "runAsNonRoot", scalar()),
        ("PodSecurityContext", "fsGroup", scalar()),
        ("HostAlias", "ip", scalar()),
        ("HostAlias", "hostnames", list(Atomic, &[], None)),
        ("Container", "name", scalar()),
        ("Container", "image", scalar()),
        ("Container", "imagePullPolicy", scalar()),
        ("Container", "args", list(Atomic, &[], None)),
        ("Container", "command", list(Atomic, &[], None)),
        (
            "Container",
            "ports",
            list(Map, &["containerPort", "protocol"], Some("ContainerPort")),
        ),
        ("Container", "env", list(Map, &["name"], Some("EnvVar"))),
        ("Container", "resources", object("ResourceRequirements")),
        ("ContainerPort", "containerPort", scalar()),
        ("ContainerPort", "protocol", scalar()),
        ("ContainerPort", "name", scalar()),
        ("EnvVar", "name", scalar()),
        ("EnvVar", "value", scalar()),
        ("ResourceRequirements", "limits", string_map(None)),
        ("ResourceRequirements", "requests", string_map(None)),
        ("DeploymentStatus", "replicas", scalar()),
        ("DeploymentStatus", "readyReplicas", scalar()),
        ("DeploymentStatus", "observedGeneration", scalar()),
        (
            "DeploymentStatus",
            "conditions",
            list(Map, &["type"], Some("DeploymentCondition")),
        ),
        ("DeploymentCondition", "type", scalar()),
        ("DeploymentCondition", "status", scalar()),
    ];
    MockSchema(fields.into_iter().map(|(t, f, i)| ((t, f), i)).collect())
}

// === objects ===

/// A Deployment named `web` with the given spec.
pub(super) fn deploy(spec: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "web", "namespace": "default"}, "spec": spec})
}

/// The usual nginx Deployment spec.
pub(super) fn nginx_spec() -> Value {
    json!({
        "replicas": 3,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25",
                                     "ports": [{"containerPort": 80}]}]}
        }
    })
}

/// A custom resource without schema.
pub(super) fn widget(spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget",
           "metadata": {"name": "w"}, "spec": spec})
}

/// The `n`th test timestamp.
pub(super) fn at(n: usize) -> String {
    format!("2024-05-01T10:00:{n:02}Z")
}

// === the harness ===

/// One request in a scenario.
pub(super) enum Step {
    /// Server-side apply of a configuration.
    Apply {
        manager: &'static str,
        config: Value,
        force: bool,
        scope: Scope,
    },
    /// A create with this object (tracked as an Update).
    Create {
        manager: &'static str,
        object: Value,
    },
    /// An update that edits the current object.
    Update {
        manager: &'static str,
        subresource: Option<&'static str>,
        edit: fn(&mut Value),
    },
    /// The object appears in storage as is (no tracking), e.g. from before tracking existed.
    Store(Value),
}

pub(super) fn ssa(manager: &'static str, config: Value) -> Step {
    Step::Apply {
        manager,
        config,
        force: false,
        scope: Scope::main(),
    }
}

pub(super) fn ssa_force(manager: &'static str, config: Value) -> Step {
    Step::Apply {
        manager,
        config,
        force: true,
        scope: Scope::main(),
    }
}

pub(super) fn update(manager: &'static str, edit: fn(&mut Value)) -> Step {
    Step::Update {
        manager,
        subresource: None,
        edit,
    }
}

/// Runs the steps on the Deployment schema (or no schema for kinds other than Deployment);
/// returns the object before and after the last step, or the last step's error.
pub(super) fn run(steps: Vec<Step>) -> (Option<Value>, Result<Value, ApplyError>) {
    let schema = schema();
    let mut current: Option<Value> = None;
    let mut before = None;
    let n = steps.len();
    for (i, step) in steps.into_iter().enumerate() {
        let now = at(i + 1);
        before = current.clone();
        let result = match step {
            Step::Apply {
                manager,
                config,
                force,
                scope,
            } => {
                let (lookup, root): (&dyn SchemaLookup, &str) = match config["kind"].as_str() {
                    Some("Deployment") => (&schema, "Deployment"),
                    _ => (&NoSchema, "Widget"),
                };
                Applier::new(lookup, root).with_scope(scope).apply(
                    current.as_ref(),
                    &config,
                    manager,
                    force,
                    &now,
                )
            }
            Step::Create {
                manager,
                mut object,
            } => super::track_update(
                None,
                &mut object,
                manager,
                None,
                &schema,
                "Deployment",
                &now,
            )
            .map(|()| object),
            Step::Update {
                manager,
                subresource,
                edit,
            } => {
                let old = current.clone().expect("update of a missing object");
                let mut new = old.clone();
                edit(&mut new);
                let scope = Scope::for_subresource(subresource);
                Applier::new(&schema, "Deployment")
                    .with_scope(scope)
                    .track_update(Some(&old), &mut new, manager, &now)
                    .map(|()| new)
            }
            Step::Store(object) => Ok(object),
        };
        match result {
            Ok(v) => current = Some(v),
            Err(e) if i + 1 == n => return (before, Err(e)),
            Err(e) => panic!("step {} failed: {e}", i + 1),
        }
    }
    (
        before,
        current.ok_or_else(|| ApplyError::InvalidObject("no steps".into())),
    )
}

/// The managedFields entry of (manager, operation), if any.
pub(super) fn entry<'v>(obj: &'v Value, manager: &str, operation: &str) -> Option<&'v Value> {
    obj["metadata"]["managedFields"]
        .as_array()?
        .iter()
        .find(|e| e["manager"] == manager && e["operation"] == operation)
}

/// "manager/Operation[/subresource]" of every entry, in order.
pub(super) fn managers(obj: &Value) -> Vec<String> {
    let Some(list) = obj["metadata"]["managedFields"].as_array() else {
        return Vec::new();
    };
    list.iter()
        .map(|e| {
            let mut s = format!(
                "{}/{}",
                e["manager"].as_str().unwrap(),
                e["operation"].as_str().unwrap()
            );
            if let Some(sub) = e["subresource"].as_str() {
                s.push('/');
                s.push_str(sub);
            }
            s
        })
        .collect()
}

/// Whether `manager` (any operation) owns the printed path.
pub(super) fn owns(obj: &Value, manager: &str, path: &str) -> bool {
    let Some(list) = obj["metadata"]["managedFields"].as_array() else {
        return false;
    };
    let path = super::Path::parse(path).unwrap();
    list.iter().filter(|e| e["manager"] == manager).any(|e| {
        super::FieldSet::from_fields_v1(&e["fieldsV1"])
            .unwrap()
            .contains(&path.0)
    })
}
