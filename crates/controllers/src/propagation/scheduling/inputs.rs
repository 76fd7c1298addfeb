//! What a scheduling decision depends on ([`super::super::settled`]): the binding's generation
//! (its spec: placement, replicas, current clusters, eviction tasks), the placement it was
//! scheduled under, the status fields the scheduler owns, and the clusters' epochs. Other
//! controllers' status writes change none of these.

use flotilla_apis::conditions;
use flotilla_apis::work::v1alpha1::{FailedOverCluster, CONDITION_SCHEDULED};
use kube::ResourceExt;

use super::PLACEMENT_HASH_ANNOTATION;
use crate::propagation::binding::BindingObject;

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Inputs {
    clusters: (u64, u64),
    generation: Option<i64>,
    placement: Option<String>,
    observed: Option<i64>,
    affinity: Option<String>,
    failed_over: Vec<FailedOverCluster>,
    scheduled: Option<(String, String, String)>,
}

impl Inputs {
    /// `clusters`: the epoch of the fleet's ClusterSets and of clusters joining, and that of
    /// the clusters the binding is concerned by ([`super::interest`]).
    pub(super) fn of<B: BindingObject>(b: &B, clusters: (u64, u64)) -> Self {
        let status = b.status();
        Self {
            clusters,
            generation: b.meta().generation,
            placement: b.annotations().get(PLACEMENT_HASH_ANNOTATION).cloned(),
            observed: status.and_then(|s| s.scheduler_observed_generation),
            affinity: status.and_then(|s| s.scheduler_observed_affinity_name.clone()),
            failed_over: status.map(|s| s.failed_over.clone()).unwrap_or_default(),
            scheduled: status
                .and_then(|s| conditions::find(&s.conditions, CONDITION_SCHEDULED))
                .map(|c| (c.status.clone(), c.reason.clone(), c.message.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use flotilla_apis::work::v1alpha1::{ResourceBinding, ResourceBindingStatus};

    use super::*;

    fn binding(generation: i64, observed: i64) -> ResourceBinding {
        let mut b = ResourceBinding::new("web-deployment", Default::default());
        b.metadata.namespace = Some("shop".into());
        b.metadata.generation = Some(generation);
        b.status = Some(ResourceBindingStatus {
            scheduler_observed_generation: Some(observed),
            ..Default::default()
        });
        b
    }

    #[test]
    fn other_controllers_status_writes_are_not_inputs() {
        let b = binding(3, 3);
        let mut other = b.clone();
        other.status.as_mut().expect("status").aggregated_status = vec![Default::default()];
        assert_eq!(Inputs::of(&b, (7, 0)), Inputs::of(&other, (7, 0)));
        // A cluster changed, the spec changed, the scheduler's own status changed.
        assert_ne!(Inputs::of(&b, (7, 0)), Inputs::of(&b, (8, 0)));
        assert_ne!(Inputs::of(&b, (7, 0)), Inputs::of(&binding(4, 3), (7, 0)));
        assert_ne!(Inputs::of(&b, (7, 0)), Inputs::of(&binding(3, 2), (7, 0)));
        let mut placed = b.clone();
        placed
            .annotations_mut()
            .insert(PLACEMENT_HASH_ANNOTATION.into(), "1234".into());
        assert_ne!(Inputs::of(&b, (7, 0)), Inputs::of(&placed, (7, 0)));
    }
}
