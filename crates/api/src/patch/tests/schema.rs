//! A small [`SchemaLookup`] mimicking the Kubernetes types the tests patch: Deployment down to
//! Container, EnvVar, ContainerPort, Volume and Toleration, with their real patch strategies.

use std::collections::HashMap;

use crate::schema::lookup::{FieldInfo, FieldShape, PatchStrategy, SchemaLookup};

use FieldShape::{List, Map, Object, Scalar};

/// Field tables keyed by (type, field).
pub(super) struct KubeSchema {
    fields: HashMap<(&'static str, &'static str), FieldInfo>,
}

impl SchemaLookup for KubeSchema {
    fn field(&self, type_name: &str, field: &str) -> Option<std::sync::Arc<FieldInfo>> {
        self.fields
            .get(&(type_name, field))
            .cloned()
            .map(std::sync::Arc::new)
    }
}

fn scalar() -> FieldInfo {
    FieldInfo::plain(Scalar)
}

fn object(type_name: &str) -> FieldInfo {
    FieldInfo {
        type_name: Some(type_name.into()),
        ..FieldInfo::plain(Object)
    }
}

fn string_map() -> FieldInfo {
    FieldInfo {
        item_shape: Some(Scalar),
        ..FieldInfo::plain(Map)
    }
}

/// A list replaced whole (no patch strategy), of scalars or of objects of `element`.
fn atomic_list(element: Option<&str>) -> FieldInfo {
    let item_shape = Some(if element.is_some() { Object } else { Scalar });
    FieldInfo {
        type_name: element.map(Into::into),
        item_shape,
        ..FieldInfo::plain(List)
    }
}

/// A `patchStrategy:"merge"` list of scalars (a set).
fn set_list() -> FieldInfo {
    FieldInfo {
        item_shape: Some(Scalar),
        patch_strategy: vec![PatchStrategy::Merge],
        ..FieldInfo::plain(List)
    }
}

/// A `patchStrategy:"merge"` list of `element` objects keyed by `key`.
fn keyed_list(element: &str, key: &str) -> FieldInfo {
    FieldInfo {
        type_name: Some(element.into()),
        item_shape: Some(Object),
        patch_strategy: vec![PatchStrategy::Merge],
        patch_merge_key: Some(key.into()),
        ..FieldInfo::plain(List)
    }
}

/// `field` with `patchStrategy:"replace"` instead of its own strategy.
fn replaced(field: FieldInfo) -> FieldInfo {
    FieldInfo {
        patch_strategy: vec![PatchStrategy::Replace],
        ..field
    }
}

pub(super) fn kube() -> KubeSchema {
    let mut volumes = keyed_list("Volume", "name");
    volumes.patch_strategy.push(PatchStrategy::RetainKeys);
    let strategy = FieldInfo {
        patch_strategy: vec![PatchStrategy::RetainKeys],
        ..object("DeploymentStrategy")
    };
    let table: Vec<(&'static str, &'static str, FieldInfo)> = vec![
        ("Deployment", "apiVersion", scalar()),
        ("Deployment", "kind", scalar()),
        ("Deployment", "metadata", object("ObjectMeta")),
        ("Deployment", "spec", object("DeploymentSpec")),
        ("Deployment", "status", object("DeploymentStatus")),
        ("Scale", "metadata", object("ObjectMeta")),
        ("Scale", "spec", object("ScaleSpec")),
        ("ScaleSpec", "replicas", scalar()),
        ("ObjectMeta", "name", scalar()),
        ("ObjectMeta", "namespace", scalar()),
        ("ObjectMeta", "resourceVersion", scalar()),
        ("ObjectMeta", "labels", string_map()),
        ("ObjectMeta", "annotations", string_map()),
        ("ObjectMeta", "finalizers", set_list()),
        (
            "ObjectMeta",
            "ownerReferences",
            keyed_list("OwnerReference", "uid"),
        ),
        ("OwnerReference", "uid", scalar()),
        ("OwnerReference", "kind", scalar()),
        ("OwnerReference", "name", scalar()),
        ("OwnerReference", "controller", scalar()),
        ("DeploymentSpec", "replicas", scalar()),
        ("DeploymentSpec", "selector", object("LabelSelector")),
        ("DeploymentSpec", "template", object("PodTemplateSpec")),
        ("DeploymentSpec", "strategy", strategy),
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
        ("LabelSelector", "matchLabels", string_map()),
        ("PodTemplateSpec", "metadata", object("ObjectMeta")),
        ("PodTemplateSpec", "spec", object("PodSpec")),
        ("PodSpec", "containers", keyed_list("Container", "name")),
        ("PodSpec", "initContainers", keyed_list("Container", "name")),
        ("PodSpec", "volumes", volumes),
        ("PodSpec", "tolerations", atomic_list(Some("Toleration"))),
        ("PodSpec", "nodeSelector", string_map()),
        ("PodSpec", "serviceAccountName", scalar()),
        ("Container", "name", scalar()),
        ("Container", "image", scalar()),
        ("Container", "args", atomic_list(None)),
        ("Container", "command", atomic_list(None)),
        ("Container", "env", keyed_list("EnvVar", "name")),
        (
            "Container",
            "ports",
            keyed_list("ContainerPort", "containerPort"),
        ),
        (
            "Container",
            "volumeMounts",
            keyed_list("VolumeMount", "mountPath"),
        ),
        ("Container", "resources", object("ResourceRequirements")),
        ("ResourceRequirements", "limits", string_map()),
        ("ResourceRequirements", "requests", string_map()),
        ("EnvVar", "name", scalar()),
        ("EnvVar", "value", scalar()),
        ("EnvVar", "valueFrom", object("EnvVarSource")),
        ("ContainerPort", "containerPort", scalar()),
        ("ContainerPort", "name", scalar()),
        ("ContainerPort", "protocol", scalar()),
        ("VolumeMount", "name", scalar()),
        ("VolumeMount", "mountPath", scalar()),
        ("Volume", "name", scalar()),
        ("Volume", "emptyDir", object("EmptyDirVolumeSource")),
        ("Volume", "configMap", object("ConfigMapVolumeSource")),
        ("Volume", "secret", object("SecretVolumeSource")),
        ("ConfigMapVolumeSource", "name", scalar()),
        ("SecretVolumeSource", "secretName", scalar()),
        ("Toleration", "key", scalar()),
        ("Toleration", "operator", scalar()),
        ("Toleration", "value", scalar()),
        ("Toleration", "effect", scalar()),
        // Kubernetes rarely says `patchStrategy:"replace"`; a made-up type exercises it.
        ("Widget", "settings", replaced(object("WidgetSettings"))),
        ("Widget", "parts", replaced(keyed_list("Part", "name"))),
        ("WidgetSettings", "mode", scalar()),
        // A CRD's JSON schema really has a field spelled `$ref`.
        ("JSONSchemaProps", "$ref", scalar()),
        ("JSONSchemaProps", "type", scalar()),
    ];
    KubeSchema {
        fields: table
            .into_iter()
            .map(|(t, f, info)| ((t, f), info))
            .collect(),
    }
}
