//! Cluster and placement fixtures for the unit tests.

use std::collections::BTreeMap;

use flotilla_apis::cluster::v1alpha1::{
    ApiEnablement, ApiResource, Cluster, ClusterSpec, ClusterStatus, Taint, TaintEffect,
};
use flotilla_apis::policy::v1alpha1::{
    ClusterAffinity, ClusterPreferences, Placement, ReplicaSchedulingStrategy,
    ReplicaSchedulingType, StaticClusterWeight,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};

/// A Ready cluster serving apps/v1 Deployments and v1 ConfigMaps, with a region.
pub(crate) fn cluster(name: &str) -> Cluster {
    let mut c = Cluster::new(name, ClusterSpec::default());
    c.status = Some(ClusterStatus {
        conditions: vec![ready_condition("True", "ClusterReady")],
        api_enablements: vec![
            ApiEnablement {
                group_version: "apps/v1".into(),
                resources: vec![ApiResource {
                    name: "deployments".into(),
                    kind: "Deployment".into(),
                }],
            },
            ApiEnablement {
                group_version: "v1".into(),
                resources: vec![ApiResource {
                    name: "configmaps".into(),
                    kind: "ConfigMap".into(),
                }],
            },
        ],
        ..ClusterStatus::default()
    });
    c
}

pub(crate) fn ready_condition(status: &str, reason: &str) -> Condition {
    Condition {
        type_: "Ready".into(),
        status: status.into(),
        reason: reason.into(),
        message: String::new(),
        last_transition_time: Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
        observed_generation: None,
    }
}

pub(crate) fn with_labels(mut c: Cluster, labels: &[(&str, &str)]) -> Cluster {
    let map: BTreeMap<String, String> = labels
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    c.metadata.labels = Some(map);
    c
}

pub(crate) fn in_region(mut c: Cluster, region: &str) -> Cluster {
    c.spec.region = Some(region.into());
    c
}

pub(crate) fn tainted(
    mut c: Cluster,
    key: &str,
    value: Option<&str>,
    effect: TaintEffect,
) -> Cluster {
    c.spec.taints.push(Taint {
        key: key.into(),
        value: value.map(Into::into),
        effect,
        time_added: None,
    });
    c
}

/// An affinity naming exactly these clusters.
pub(crate) fn named(names: &[&str]) -> ClusterAffinity {
    ClusterAffinity {
        cluster_names: names.iter().map(|n| (*n).to_owned()).collect(),
        ..ClusterAffinity::default()
    }
}

/// A `Divided` placement with these static weights.
pub(crate) fn divided(weights: &[(&str, i64)]) -> Placement {
    let list = weights
        .iter()
        .map(|(c, w)| StaticClusterWeight {
            target_cluster: named(&[c]),
            weight: *w,
        })
        .collect();
    Placement {
        replica_scheduling: Some(ReplicaSchedulingStrategy {
            replica_scheduling_type: ReplicaSchedulingType::Divided,
            weight_preference: Some(ClusterPreferences {
                static_weight_list: list,
                dynamic_weight: None,
            }),
            ..ReplicaSchedulingStrategy::default()
        }),
        ..Placement::default()
    }
}
