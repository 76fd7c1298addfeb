//! The built-in kinds the hub serves: one line per kind, naming its k8s-openapi type.
//!
//! Group, version, kind, plural, list kind and scope come from the type's
//! `k8s_openapi::Resource`/`ListableResource` impls; its schema from `schemars::JsonSchema`.
//! Adding a kind is adding one `kind::<T>(...)` line to [`BUILTIN_KINDS`].

use k8s_openapi::api::{
    apps, autoscaling, batch, coordination, core, events, networking, policy, rbac,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_openapi::schemars::{JsonSchema, Schema, SchemaGenerator};
use k8s_openapi::{ListableResource, Resource};

/// Adds a type's schema (and everything it references) to the generator; returns the `$ref`.
pub(crate) type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

fn schema_of<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    g.subschema_for::<T>()
}

/// A served top-level kind.
pub(crate) struct BuiltinKind {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub list_kind: &'static str,
    pub plural: &'static str,
    pub namespaced: bool,
    pub schema: SchemaFn,
    pub subresources: &'static [Sub],
}

/// A subresource and the type its requests and responses carry.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Sub {
    /// `/status`: the parent kind; get, replace, patch.
    Status,
    /// `/scale`: `autoscaling/v1` Scale; get, replace, patch.
    Scale,
    /// `/finalize` (namespaces): the parent kind; replace.
    Finalize,
    /// `/token` (service accounts): `authentication.k8s.io/v1` TokenRequest; create.
    Token,
}

/// A type with a GVK that is not itself served at a top-level path.
pub(crate) struct ExtraKind {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub schema: SchemaFn,
}

/// Whether a `k8s_openapi::Resource::Scope` is namespaced.
pub(crate) trait ScopeInfo {
    const NAMESPACED: bool;
}

impl ScopeInfo for k8s_openapi::NamespaceResourceScope {
    const NAMESPACED: bool = true;
}

impl ScopeInfo for k8s_openapi::ClusterResourceScope {
    const NAMESPACED: bool = false;
}

impl ScopeInfo for k8s_openapi::SubResourceScope {
    const NAMESPACED: bool = false;
}

const fn kind<T>(subresources: &'static [Sub]) -> BuiltinKind
where
    T: Resource + ListableResource + JsonSchema,
    T::Scope: ScopeInfo,
{
    BuiltinKind {
        group: T::GROUP,
        version: T::VERSION,
        kind: T::KIND,
        list_kind: T::LIST_KIND,
        plural: T::URL_PATH_SEGMENT,
        namespaced: <T::Scope as ScopeInfo>::NAMESPACED,
        schema: schema_of::<T>,
        subresources,
    }
}

const fn extra<T: Resource + JsonSchema>() -> ExtraKind {
    ExtraKind {
        group: T::GROUP,
        version: T::VERSION,
        kind: T::KIND,
        schema: schema_of::<T>,
    }
}

use Sub::{Finalize, Scale, Status, Token};

/// Every built-in kind the hub serves.
pub(crate) static BUILTIN_KINDS: &[BuiltinKind] = &[
    kind::<core::v1::Namespace>(&[Status, Finalize]),
    kind::<core::v1::ConfigMap>(&[]),
    kind::<core::v1::Secret>(&[]),
    kind::<core::v1::Service>(&[Status]),
    kind::<core::v1::ServiceAccount>(&[Token]),
    kind::<core::v1::Event>(&[]),
    kind::<core::v1::Endpoints>(&[]),
    kind::<core::v1::PersistentVolumeClaim>(&[Status]),
    kind::<apps::v1::Deployment>(&[Status, Scale]),
    kind::<apps::v1::StatefulSet>(&[Status, Scale]),
    kind::<apps::v1::DaemonSet>(&[Status]),
    kind::<apps::v1::ReplicaSet>(&[Status, Scale]),
    kind::<batch::v1::Job>(&[Status]),
    kind::<batch::v1::CronJob>(&[Status]),
    kind::<autoscaling::v1::HorizontalPodAutoscaler>(&[Status]),
    kind::<autoscaling::v2::HorizontalPodAutoscaler>(&[Status]),
    kind::<networking::v1::Ingress>(&[Status]),
    kind::<networking::v1::NetworkPolicy>(&[]),
    kind::<policy::v1::PodDisruptionBudget>(&[Status]),
    kind::<coordination::v1::Lease>(&[]),
    kind::<rbac::v1::Role>(&[]),
    kind::<rbac::v1::ClusterRole>(&[]),
    kind::<rbac::v1::RoleBinding>(&[]),
    kind::<rbac::v1::ClusterRoleBinding>(&[]),
    kind::<events::v1::Event>(&[]),
    kind::<apiextensions::v1::CustomResourceDefinition>(&[Status]),
    // Issue 21, part A: every other built-in kind of Kubernetes 1.32, stored (registry/builtin).
    kind::<core::v1::Pod>(&[Status]),
    kind::<core::v1::PodTemplate>(&[]),
    kind::<core::v1::ReplicationController>(&[Status, Scale]),
    kind::<core::v1::LimitRange>(&[]),
    kind::<core::v1::ResourceQuota>(&[Status]),
    kind::<core::v1::Node>(&[Status]),
    kind::<core::v1::PersistentVolume>(&[Status]),
    kind::<apps::v1::ControllerRevision>(&[]),
    kind::<k8s_openapi::api::discovery::v1::EndpointSlice>(&[]),
    kind::<networking::v1::IngressClass>(&[]),
    kind::<k8s_openapi::api::scheduling::v1::PriorityClass>(&[]),
    kind::<k8s_openapi::api::node::v1::RuntimeClass>(&[]),
    kind::<k8s_openapi::api::storage::v1::StorageClass>(&[]),
    kind::<k8s_openapi::api::storage::v1::CSIDriver>(&[]),
    kind::<k8s_openapi::api::storage::v1::CSINode>(&[]),
    kind::<k8s_openapi::api::storage::v1::CSIStorageCapacity>(&[]),
    kind::<k8s_openapi::api::storage::v1::VolumeAttachment>(&[Status]),
    kind::<k8s_openapi::api::certificates::v1::CertificateSigningRequest>(&[Status]),
    // Issue 21, part F: admission policies and webhook configurations.
    kind::<k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy>(&[Status]),
    kind::<k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicyBinding>(&[]),
    kind::<k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration>(&[]),
    kind::<k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration>(&[]),
    kind::<k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService>(&[Status]),
];

/// Kinds carried by subresources.
pub(crate) static EXTRA_KINDS: &[ExtraKind] = &[
    extra::<autoscaling::v1::Scale>(),
    extra::<k8s_openapi::api::authentication::v1::TokenRequest>(),
];

/// How a meta type's `x-kubernetes-group-version-kind` is filled in.
pub(crate) enum MetaGvk {
    /// `{group: "", version: "v1", kind}` only.
    CoreV1(&'static str),
    /// One entry per served group-version (as Kubernetes does for DeleteOptions and WatchEvent).
    EveryGroupVersion(&'static str),
    /// None (a type referenced by others but never sent alone).
    Nothing,
}

/// meta/v1 types every document needs, whether or not a kind references them.
pub(crate) static META_TYPES: &[(SchemaFn, MetaGvk)] = &[
    (schema_of::<meta::Status>, MetaGvk::CoreV1("Status")),
    (schema_of::<meta::APIGroup>, MetaGvk::CoreV1("APIGroup")),
    (
        schema_of::<meta::APIGroupList>,
        MetaGvk::CoreV1("APIGroupList"),
    ),
    (
        schema_of::<meta::APIResourceList>,
        MetaGvk::CoreV1("APIResourceList"),
    ),
    (
        schema_of::<meta::APIVersions>,
        MetaGvk::CoreV1("APIVersions"),
    ),
    (
        schema_of::<meta::DeleteOptions>,
        MetaGvk::EveryGroupVersion("DeleteOptions"),
    ),
    (
        schema_of::<meta::WatchEvent<()>>,
        MetaGvk::EveryGroupVersion("WatchEvent"),
    ),
    (schema_of::<meta::ListMeta>, MetaGvk::Nothing),
    (schema_of::<meta::Patch>, MetaGvk::Nothing),
];

/// Definition names the documents rely on.
pub(crate) mod names {
    pub const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
    pub const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";
    pub const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
    pub const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
    pub const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
    pub const API_RESOURCE_LIST: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList";
    pub const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
    pub const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
    pub const RAW_EXTENSION: &str = "io.k8s.apimachinery.pkg.runtime.RawExtension";
    pub const JSON: &str = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON";
    pub const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";
    pub const TOKEN_REQUEST: &str = "io.k8s.api.authentication.v1.TokenRequest";
}
