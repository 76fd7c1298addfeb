//! Which bindings a change of one registered cluster concerns, so that the scheduler looks at
//! those and not at every binding of the fleet (at 1,000 clusters and 10,000 bindings, each
//! cluster change was a pass of every binding over every cluster).
//!
//! A binding is concerned by the clusters it runs in (`spec.clusters`, and those an eviction
//! task still keeps) and by those its placement could choose: the clusters its affinity terms
//! name, when every term names its clusters; any cluster when a term selects by labels or
//! fields, or the placement has no affinity. A cluster that is neither can neither gain nor
//! lose the binding whatever it becomes. Kept from what each reconcile read; a binding not
//! reconciled yet is not known, and its first reconcile reads the clusters as they are then.

use std::collections::{HashMap, HashSet};

use flotilla_apis::policy::v1alpha1::Placement;
use flotilla_apis::work::v1alpha1::ResourceBindingSpec;
use parking_lot::Mutex;

use crate::propagation::binding::BindingRef;

/// The clusters a binding is concerned by.
#[derive(Debug, PartialEq, Eq)]
enum Reach {
    /// Only these.
    Named(Vec<String>),
    /// Every cluster.
    Any,
}

/// Which bindings each cluster concerns.
#[derive(Default)]
pub(super) struct Interest(Mutex<State>);

#[derive(Default)]
struct State {
    /// Cluster name → the bindings that named it.
    by_cluster: HashMap<String, HashSet<BindingRef>>,
    /// The bindings concerned by every cluster.
    any: HashSet<BindingRef>,
    /// What each binding was recorded with, to take it back out.
    of: HashMap<BindingRef, Reach>,
    /// Each cluster's changes, counted.
    epochs: HashMap<String, u64>,
    /// All clusters' changes, counted.
    any_epoch: u64,
}

impl State {
    /// The epoch of the clusters `reach` covers: it moves with every change of one of them.
    fn epoch(&self, reach: Option<&Reach>) -> u64 {
        match reach {
            None => 0,
            Some(Reach::Any) => self.any_epoch,
            Some(Reach::Named(names)) => names
                .iter()
                .map(|n| self.epochs.get(n).copied().unwrap_or(0))
                .sum(),
        }
    }
}

impl Interest {
    /// Counts a change of `cluster`; call before waking the bindings it concerns.
    pub(super) fn changed(&self, cluster: &str) {
        let mut st = self.0.lock();
        *st.epochs.entry(cluster.to_owned()).or_default() += 1;
        st.any_epoch += 1;
    }

    /// Records binding `b` with the spec its reconcile read (`None`: it is gone, or not the
    /// scheduler's), and answers the epoch of the clusters it is concerned by: a decision
    /// made after reading it is stale once a change of one of them is counted. Read it before
    /// the clusters.
    pub(super) fn record(&self, b: BindingRef, spec: Option<&ResourceBindingSpec>) -> u64 {
        let reach = spec.and_then(reach);
        let mut st = self.0.lock();
        let epoch = st.epoch(reach.as_ref());
        if st.of.get(&b) == reach.as_ref() {
            return epoch;
        }
        match st.of.remove(&b) {
            Some(Reach::Any) => {
                st.any.remove(&b);
            }
            Some(Reach::Named(names)) => {
                for n in names {
                    if let Some(set) = st.by_cluster.get_mut(&n) {
                        set.remove(&b);
                        if set.is_empty() {
                            st.by_cluster.remove(&n);
                        }
                    }
                }
            }
            None => {}
        }
        if let Some(reach) = reach {
            match &reach {
                Reach::Any => {
                    st.any.insert(b.clone());
                }
                Reach::Named(names) => {
                    for n in names {
                        st.by_cluster
                            .entry(n.clone())
                            .or_default()
                            .insert(b.clone());
                    }
                }
            }
            st.of.insert(b, reach);
        }
        epoch
    }

    /// The bindings a change of `cluster` concerns.
    pub(super) fn concerned(&self, cluster: &str) -> Vec<BindingRef> {
        let st = self.0.lock();
        st.any
            .iter()
            .chain(st.by_cluster.get(cluster).into_iter().flatten())
            .cloned()
            .collect()
    }
}

/// The clusters a binding with `spec` is concerned by (`None`: it has no placement, so the
/// scheduler places it nowhere).
fn reach(spec: &ResourceBindingSpec) -> Option<Reach> {
    let placement = spec.placement.as_ref()?;
    let Some(named) = named(placement) else {
        return Some(Reach::Any);
    };
    let mut names: Vec<String> = named
        .into_iter()
        .chain(spec.clusters.iter().map(|t| t.name.clone()))
        .chain(
            spec.graceful_eviction_tasks
                .iter()
                .map(|t| t.from_cluster.clone()),
        )
        .collect();
    names.sort();
    names.dedup();
    Some(Reach::Named(names))
}

/// The clusters `placement` can choose from, when every affinity term names them.
fn named(placement: &Placement) -> Option<Vec<String>> {
    let terms: Vec<_> = placement
        .cluster_affinity
        .iter()
        .chain(placement.cluster_affinities.iter().map(|t| &t.affinity))
        .collect();
    if terms.is_empty() || terms.iter().any(|t| t.cluster_names.is_empty()) {
        return None;
    }
    Some(
        terms
            .iter()
            .flat_map(|t| t.cluster_names.iter().cloned())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(placement: serde_json::Value, clusters: &[&str]) -> ResourceBindingSpec {
        let clusters: Vec<_> = clusters
            .iter()
            .map(|c| json!({"name": c, "replicas": 1}))
            .collect();
        serde_json::from_value(json!({
            "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "placement": placement,
            "clusters": clusters,
        }))
        .expect("a binding spec")
    }

    fn binding(name: &str) -> BindingRef {
        (Some("shop".to_owned()), name.to_owned())
    }

    fn concerned(i: &Interest, cluster: &str) -> Vec<String> {
        let mut names: Vec<String> = i.concerned(cluster).into_iter().map(|b| b.1).collect();
        names.sort();
        names
    }

    #[test]
    fn a_cluster_concerns_the_bindings_that_name_it_run_there_or_select_by_labels() {
        let i = Interest::default();
        let by_name = json!({"clusterAffinity": {"clusterNames": ["m-1", "m-2"]}});
        i.record(binding("named"), Some(&spec(by_name.clone(), &["m-1"])));
        // Placed where its affinity no longer names (the policy was edited).
        i.record(binding("moved"), Some(&spec(by_name, &["m-9"])));
        let by_label =
            json!({"clusterAffinity": {"labelSelector": {"matchLabels": {"env": "prod"}}}});
        i.record(binding("labels"), Some(&spec(by_label, &["m-1"])));
        i.record(binding("anywhere"), Some(&spec(json!({}), &[])));
        let groups = json!({"clusterAffinities": [
            {"affinityName": "primary", "clusterNames": ["m-3"]},
            {"affinityName": "backup", "clusterNames": ["m-4"]},
        ]});
        i.record(binding("groups"), Some(&spec(groups, &["m-3"])));
        assert_eq!(
            concerned(&i, "m-2"),
            ["anywhere", "labels", "moved", "named"]
        );
        assert_eq!(concerned(&i, "m-9"), ["anywhere", "labels", "moved"]);
        assert_eq!(concerned(&i, "m-4"), ["anywhere", "groups", "labels"]);
        assert_eq!(concerned(&i, "m-7"), ["anywhere", "labels"]);
    }

    #[test]
    fn a_bindings_epoch_moves_with_the_clusters_it_is_concerned_by_only() {
        let i = Interest::default();
        let named = spec(
            json!({"clusterAffinity": {"clusterNames": ["m-1"]}}),
            &["m-1"],
        );
        let anywhere = spec(json!({}), &["m-1"]);
        let epochs = || {
            (
                i.record(binding("named"), Some(&named)),
                i.record(binding("anywhere"), Some(&anywhere)),
            )
        };
        let before = epochs();
        i.changed("m-2");
        let after_m2 = epochs();
        assert_eq!(after_m2.0, before.0);
        assert_ne!(after_m2.1, before.1);
        i.changed("m-1");
        let after_m1 = epochs();
        assert_ne!(after_m1.0, after_m2.0);
        assert_ne!(after_m1.1, after_m2.1);
    }

    #[test]
    fn a_binding_recorded_again_or_gone_is_taken_out_of_what_it_named() {
        let i = Interest::default();
        let on = |names: &[&str]| json!({"clusterAffinity": {"clusterNames": names}});
        i.record(binding("web"), Some(&spec(on(&["m-1"]), &["m-1"])));
        i.record(binding("web"), Some(&spec(on(&["m-2"]), &["m-2"])));
        assert!(concerned(&i, "m-1").is_empty());
        assert_eq!(concerned(&i, "m-2"), ["web"]);
        i.record(binding("web"), None);
        assert!(concerned(&i, "m-2").is_empty());
        // Without a placement the scheduler places it nowhere.
        let mut follower = spec(json!({}), &["m-1"]);
        follower.placement = None;
        i.record(binding("follower"), Some(&follower));
        assert!(concerned(&i, "m-1").is_empty());
    }
}
