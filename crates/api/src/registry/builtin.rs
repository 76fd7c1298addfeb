//! The built-in kinds. Group, version, kind, plural and scope come from `k8s-openapi`'s
//! [`Resource`](k8s_openapi::Resource) impls (generated from the Kubernetes schemas); what the
//! schemas don't say — short names, categories, subresources and `kubectl get` columns — is here.

use std::any::TypeId;

use k8s_openapi::api::{
    apps::v1 as apps, autoscaling::v2 as autoscaling, batch::v1 as batch,
    coordination::v1 as coordination, core::v1 as core, events::v1 as events,
    networking::v1 as networking, policy::v1 as policy, rbac::v1 as rbac,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
use k8s_openapi::{NamespaceResourceScope, Resource};

use super::{PrinterColumn, ResourceInfo, ScaleSpec};

mod admissionregistration;
mod apiregistration;
mod autoscaling_v1;
mod cluster;
mod core_v1;
mod flowcontrol;
mod reviews;
mod storage_k8s;
mod subresources;

/// Every verb a stored resource supports (discovery's `verbs`, and RBAC's "all of them").
pub(crate) const ALL_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// A column: header, type, priority (0 = always, 1 = `-o wide`), JSONPath or `@computed`.
fn col(name: &str, type_: &str, priority: i32, path: &str) -> PrinterColumn {
    PrinterColumn {
        name: name.to_string(),
        type_: type_.to_string(),
        format: String::new(),
        description: String::new(),
        priority,
        json_path: path.to_string(),
    }
}

fn age() -> PrinterColumn {
    col("Age", "date", 0, ".metadata.creationTimestamp")
}

struct Extra {
    short: &'static [&'static str],
    categories: &'static [&'static str],
    status: bool,
    scale: bool,
    columns: Vec<PrinterColumn>,
}

fn entry<K: Resource + 'static>(x: Extra) -> ResourceInfo {
    let namespaced = TypeId::of::<K::Scope>() == TypeId::of::<NamespaceResourceScope>();
    ResourceInfo {
        group: K::GROUP.to_string(),
        version: K::VERSION.to_string(),
        kind: K::KIND.to_string(),
        plural: K::URL_PATH_SEGMENT.to_string(),
        singular: K::KIND.to_ascii_lowercase(),
        namespaced,
        short_names: x.short.iter().map(|s| s.to_string()).collect(),
        categories: x.categories.iter().map(|s| s.to_string()).collect(),
        status: x.status,
        scale: x.scale.then(|| ScaleSpec {
            spec_replicas_path: ".spec.replicas".into(),
            status_replicas_path: ".status.replicas".into(),
            label_selector_path: Some("@selector".into()),
        }),
        verbs: ALL_VERBS.to_vec(),
        columns: x.columns,
        custom: false,
        schema_root: None,
        storage_version: true,
        read_defaults: None,
    }
}

fn x(
    short: &'static [&'static str],
    categories: &'static [&'static str],
    status: bool,
    scale: bool,
    columns: Vec<PrinterColumn>,
) -> Extra {
    Extra {
        short,
        categories,
        status,
        scale,
        columns,
    }
}

fn event_columns() -> Vec<PrinterColumn> {
    vec![
        col("Last Seen", "string", 0, "@lastseen"),
        col("Type", "string", 0, ".type"),
        col("Reason", "string", 0, ".reason"),
        col("Object", "string", 0, "@involved"),
        col("Message", "string", 0, ".message"),
    ]
}

/// Every built-in resource the hub serves: the kinds the hub always had, then one line per group
/// file. The hub stores and propagates pods, nodes and the rest; it runs nothing for them.
pub fn builtin_resources() -> Vec<ResourceInfo> {
    let mut all = first_resources();
    all.extend(core_v1::resources());
    all.extend(cluster::resources());
    all.extend(storage_k8s::resources());
    all.extend(reviews::resources());
    all.extend(flowcontrol::resources());
    all.extend(admissionregistration::resources());
    all.extend(apiregistration::resources());
    all.extend(autoscaling_v1::resources());
    all
}

/// The kinds served before issue 21 (workloads, services, RBAC, CRDs).
fn first_resources() -> Vec<ResourceInfo> {
    let containers = || {
        vec![
            col("Containers", "string", 1, "@containers"),
            col("Images", "string", 1, "@images"),
            col("Selector", "string", 1, "@selector"),
        ]
    };
    let with = |mut a: Vec<PrinterColumn>, b: Vec<PrinterColumn>| {
        a.extend(b);
        a
    };
    vec![
        entry::<core::Namespace>(x(
            &["ns"],
            &[],
            true,
            false,
            vec![col("Status", "string", 0, ".status.phase"), age()],
        )),
        entry::<core::ConfigMap>(x(
            &["cm"],
            &[],
            false,
            false,
            vec![col("Data", "integer", 0, "@data"), age()],
        )),
        entry::<core::Secret>(x(
            &[],
            &[],
            false,
            false,
            vec![
                col("Type", "string", 0, ".type"),
                col("Data", "integer", 0, "@data"),
                age(),
            ],
        )),
        entry::<core::Service>(x(
            &["svc"],
            &["all"],
            true,
            false,
            vec![
                col("Type", "string", 0, ".spec.type"),
                col("Cluster-IP", "string", 0, "@clusterip"),
                col("External-IP", "string", 0, "@externalip"),
                col("Port(s)", "string", 0, "@ports"),
                age(),
                col("Selector", "string", 1, "@svcselector"),
            ],
        )),
        entry::<core::ServiceAccount>(x(&["sa"], &[], false, false, vec![age()])),
        entry::<core::Event>(x(&["ev"], &[], false, false, event_columns())),
        entry::<core::Endpoints>(x(
            &["ep"],
            &[],
            false,
            false,
            vec![col("Endpoints", "string", 0, "@endpoints"), age()],
        )),
        entry::<core::PersistentVolumeClaim>(x(
            &["pvc"],
            &[],
            true,
            false,
            vec![
                col("Status", "string", 0, ".status.phase"),
                col("Volume", "string", 0, ".spec.volumeName"),
                col("Capacity", "string", 0, ".status.capacity.storage"),
                col("Access Modes", "string", 0, "@accessmodes"),
                col("StorageClass", "string", 0, ".spec.storageClassName"),
                age(),
            ],
        )),
        entry::<apps::Deployment>(x(
            &["deploy"],
            &["all"],
            true,
            true,
            with(
                vec![
                    col("Ready", "string", 0, "@ready"),
                    col("Up-to-date", "integer", 0, ".status.updatedReplicas"),
                    col("Available", "integer", 0, ".status.availableReplicas"),
                    age(),
                ],
                containers(),
            ),
        )),
        entry::<apps::StatefulSet>(x(
            &["sts"],
            &["all"],
            true,
            true,
            with(
                vec![col("Ready", "string", 0, "@ready"), age()],
                containers(),
            ),
        )),
        entry::<apps::DaemonSet>(x(
            &["ds"],
            &["all"],
            true,
            false,
            with(
                vec![
                    col("Desired", "integer", 0, ".status.desiredNumberScheduled"),
                    col("Current", "integer", 0, ".status.currentNumberScheduled"),
                    col("Ready", "integer", 0, ".status.numberReady"),
                    col("Up-to-date", "integer", 0, ".status.updatedNumberScheduled"),
                    col("Available", "integer", 0, ".status.numberAvailable"),
                    age(),
                ],
                containers(),
            ),
        )),
        entry::<apps::ReplicaSet>(x(
            &["rs"],
            &["all"],
            true,
            true,
            with(
                vec![
                    col("Desired", "integer", 0, ".spec.replicas"),
                    col("Current", "integer", 0, ".status.replicas"),
                    col("Ready", "integer", 0, ".status.readyReplicas"),
                    age(),
                ],
                containers(),
            ),
        )),
        entry::<batch::Job>(x(
            &[],
            &["all"],
            true,
            false,
            with(
                vec![
                    col("Status", "string", 0, "@jobstatus"),
                    col("Completions", "string", 0, "@completions"),
                    col("Duration", "string", 0, "@duration"),
                    age(),
                ],
                containers(),
            ),
        )),
        entry::<batch::CronJob>(x(
            &["cj"],
            &["all"],
            true,
            false,
            vec![
                col("Schedule", "string", 0, ".spec.schedule"),
                col("Timezone", "string", 0, ".spec.timeZone"),
                col("Suspend", "boolean", 0, ".spec.suspend"),
                col("Active", "integer", 0, "@active"),
                col("Last Schedule", "date", 0, ".status.lastScheduleTime"),
                age(),
            ],
        )),
        entry::<autoscaling::HorizontalPodAutoscaler>(x(
            &["hpa"],
            &["all"],
            true,
            false,
            vec![
                col("Reference", "string", 0, "@scaletarget"),
                col("MinPods", "integer", 0, ".spec.minReplicas"),
                col("MaxPods", "integer", 0, ".spec.maxReplicas"),
                col("Replicas", "integer", 0, ".status.currentReplicas"),
                age(),
            ],
        )),
        entry::<networking::Ingress>(x(
            &["ing"],
            &[],
            true,
            false,
            vec![
                col("Class", "string", 0, ".spec.ingressClassName"),
                col("Hosts", "string", 0, "@hosts"),
                col("Address", "string", 0, "@lbaddress"),
                age(),
            ],
        )),
        entry::<networking::NetworkPolicy>(x(
            &["netpol"],
            &[],
            false,
            false,
            vec![col("Pod-Selector", "string", 0, "@podselector"), age()],
        )),
        entry::<policy::PodDisruptionBudget>(x(
            &["pdb"],
            &[],
            true,
            false,
            vec![
                col("Min Available", "string", 0, ".spec.minAvailable"),
                col("Max Unavailable", "string", 0, ".spec.maxUnavailable"),
                col(
                    "Allowed Disruptions",
                    "integer",
                    0,
                    ".status.disruptionsAllowed",
                ),
                age(),
            ],
        )),
        entry::<coordination::Lease>(x(
            &[],
            &[],
            false,
            false,
            vec![col("Holder", "string", 0, ".spec.holderIdentity"), age()],
        )),
        entry::<rbac::Role>(x(
            &[],
            &[],
            false,
            false,
            vec![col("Created At", "date", 0, ".metadata.creationTimestamp")],
        )),
        entry::<rbac::ClusterRole>(x(
            &[],
            &[],
            false,
            false,
            vec![col("Created At", "date", 0, ".metadata.creationTimestamp")],
        )),
        entry::<rbac::RoleBinding>(x(
            &[],
            &[],
            false,
            false,
            vec![col("Role", "string", 0, "@roleref"), age()],
        )),
        entry::<rbac::ClusterRoleBinding>(x(
            &[],
            &[],
            false,
            false,
            vec![col("Role", "string", 0, "@roleref"), age()],
        )),
        // The same Events as core/v1's (shared storage, see `storage`), printed by the same
        // printer as in Kubernetes; cells are computed from the stored core/v1 shape.
        entry::<events::Event>(x(&["ev"], &[], false, false, event_columns())),
        entry::<apiextensions::CustomResourceDefinition>(x(
            &["crd", "crds"],
            &["api-extensions"],
            true,
            false,
            vec![col("Created At", "date", 0, ".metadata.creationTimestamp")],
        )),
    ]
}

#[cfg(test)]
mod tests;
