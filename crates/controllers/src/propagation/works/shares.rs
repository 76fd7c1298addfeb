//! Each cluster's share of a binding's replicas, in the form its kind keeps them.

use std::collections::HashMap;

use flotilla_apis::policy::v1alpha1::ReplicaSchedulingType;
use flotilla_apis::work::v1alpha1::ResourceBindingSpec;
use flotilla_scheduler::assign::{divide_hpa, divide_job, Assignment, Target};
use serde_json::Value;

use crate::propagation::workload::binding_has_replicas;
use crate::render::ReplicaShare;

/// The share of every cluster in `spec.clusters`, or none at all when the whole object goes to
/// each cluster (`Duplicated`, or a kind without replicas).
pub fn shares(spec: &ResourceBindingSpec, template: &Value) -> HashMap<String, ReplicaShare> {
    let divided = spec
        .placement
        .as_ref()
        .and_then(|p| p.replica_scheduling.as_ref())
        .is_some_and(|s| s.replica_scheduling_type == ReplicaSchedulingType::Divided);
    let kind = spec.resource.kind.as_str();
    if !divided || !binding_has_replicas(spec) {
        return HashMap::new();
    }
    let count = |n: i32| u32::try_from(n.max(0)).unwrap_or(0);
    let number = |field: &str| {
        template["spec"][field]
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
    };
    match kind {
        "Job" => {
            let assignments: Vec<Assignment> = spec
                .clusters
                .iter()
                .map(|t| Assignment {
                    cluster: t.name.clone(),
                    replicas: count(t.replicas),
                })
                .collect();
            divide_job(&assignments, number("completions"))
                .into_iter()
                .map(|j| {
                    let share = ReplicaShare::Job {
                        parallelism: j.parallelism,
                        completions: j.completions,
                    };
                    (j.cluster, share)
                })
                .collect()
        }
        "HorizontalPodAutoscaler" => {
            let targets: Vec<Target> = spec
                .clusters
                .iter()
                .map(|t| Target::new(t.name.clone(), count(t.replicas)))
                .collect();
            let max = number("maxReplicas").unwrap_or(1);
            let min = number("minReplicas").unwrap_or(1).min(max);
            match divide_hpa(min, max, &targets) {
                Ok(split) => split
                    .into_iter()
                    .map(|h| {
                        let share = ReplicaShare::Hpa {
                            min: h.min_replicas,
                            max: h.max_replicas,
                        };
                        (h.cluster, share)
                    })
                    .collect(),
                Err(_) => HashMap::new(),
            }
        }
        _ => spec
            .clusters
            .iter()
            .map(|t| (t.name.clone(), ReplicaShare::Replicas(count(t.replicas))))
            .collect(),
    }
}

#[cfg(test)]
mod tests;
