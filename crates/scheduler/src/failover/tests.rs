use std::collections::BTreeMap;
use std::time::Duration;

use flotilla_apis::cluster::v1alpha1::{Cluster, TaintEffect};
use flotilla_apis::policy::v1alpha1::Placement;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::*;
use crate::testing::{cluster, divided, ready_condition, tainted};

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap()
}

fn req<'a>(p: &'a Placement, current: &[(&str, u32)], now: Timestamp) -> Request<'a> {
    Request {
        placement: p,
        gvk: ("apps", "v1", "Deployment"),
        replicas: Some(6),
        replica_request: BTreeMap::new(),
        current: current.iter().map(|(c, n)| ((*c).to_owned(), *n)).collect(),
        rebalance: false,
        eviction: Some(Eviction {
            now,
            default_toleration: Duration::from_secs(60),
        }),
        cluster_sets: None,
    }
}

/// `c` unreachable since `added`: Ready=Unknown and tainted NoExecute.
fn down_since(added: Timestamp) -> Cluster {
    let mut c = tainted(
        cluster("c"),
        "cluster.flotilla.io/unreachable",
        None,
        TaintEffect::NoExecute,
    );
    c.spec.taints[0].time_added = Some(Time(added));
    c.status.as_mut().unwrap().conditions = vec![ready_condition("Unknown", "ClusterUnreachable")];
    c
}

/// `c` Ready again since `since`.
fn up_since(since: Timestamp) -> Cluster {
    let mut c = cluster("c");
    c.status.as_mut().unwrap().conditions[0].last_transition_time = Time(since);
    c
}

fn placed(d: &Decision) -> Vec<(&str, u32)> {
    d.clusters
        .iter()
        .map(|a| (a.cluster.as_str(), a.replicas))
        .collect()
}

#[test]
fn an_untolerated_no_execute_taint_evicts_after_the_toleration() {
    let p = divided(&[("a", 1), ("b", 1), ("c", 1)]);
    let running = [("a", 2), ("b", 2), ("c", 2)];
    let clusters = vec![cluster("a"), cluster("b"), down_since(at(0))];
    // Within the 60 s toleration: nothing moves.
    let r = req(&p, &running, at(30));
    let d = schedule(&r, &clusters);
    assert_eq!(placed(&d), running);
    assert!(evicted(&r, &d, &clusters, r.eviction.unwrap()).is_empty());
    // After it: c's replicas go to a and b, and c is evicted with the 2 it had.
    let r = req(&p, &running, at(61));
    let d = schedule(&r, &clusters);
    assert_eq!(placed(&d), [("a", 3), ("b", 3)]);
    assert_eq!(
        evicted(&r, &d, &clusters, r.eviction.unwrap()),
        [("c".to_owned(), 2)]
    );
}

#[test]
fn a_cluster_that_left_the_registry_is_not_an_eviction() {
    let p = divided(&[("a", 1), ("b", 1), ("c", 1)]);
    let r = req(&p, &[("a", 2), ("b", 2), ("c", 2)], at(0));
    let clusters = vec![cluster("a"), cluster("b")];
    let d = schedule(&r, &clusters);
    assert!(evicted(&r, &d, &clusters, r.eviction.unwrap()).is_empty());
}

#[test]
fn failback_waits_for_the_stable_period_then_returns_to_the_preferred_placement() {
    let p = divided(&[("a", 1), ("b", 1), ("c", 1)]);
    let stable = Duration::from_secs(300);
    let survivors = [("a", 3), ("b", 3)];
    // c is Ready again since t=1000; the kept placement does not take it back by itself.
    let clusters = vec![cluster("a"), cluster("b"), up_since(at(1000))];
    let r = req(&p, &survivors, at(1100));
    let kept = schedule(&r, &clusters);
    assert_eq!(
        placed(&kept),
        survivors,
        "a recovered cluster reshuffles nothing by itself"
    );
    assert_eq!(
        failback(&r, &kept, &clusters, &["c"], stable, at(1100)),
        Failback::At(at(1300))
    );
    // Stable long enough: back to 2/2/2.
    let r = req(&p, &survivors, at(1300));
    let kept = schedule(&r, &clusters);
    match failback(&r, &kept, &clusters, &["c"], stable, at(1300)) {
        Failback::Now(d, back) => {
            assert_eq!(placed(&d), [("a", 2), ("b", 2), ("c", 2)]);
            assert_eq!(back, ["c"]);
        }
        other => panic!("expected a failback, got {other:?}"),
    }
}

#[test]
fn no_failback_to_a_cluster_that_is_down_or_was_never_left() {
    let p = divided(&[("a", 1), ("b", 1), ("c", 1)]);
    let survivors = [("a", 3), ("b", 3)];
    let stable = Duration::ZERO;
    let down = vec![cluster("a"), cluster("b"), down_since(at(0))];
    let r = req(&p, &survivors, at(5000));
    let kept = schedule(&r, &down);
    assert_eq!(
        failback(&r, &kept, &down, &["c"], stable, at(5000)),
        Failback::None
    );
    // c is healthy but the object never failed over from it: no move (a joining cluster).
    let up = vec![cluster("a"), cluster("b"), up_since(at(0))];
    let kept = schedule(&r, &up);
    assert_eq!(
        failback(&r, &kept, &up, &[], stable, at(5000)),
        Failback::None
    );
}

#[test]
fn a_flapping_cluster_restarts_its_stable_period() {
    let p = divided(&[("a", 1), ("b", 1), ("c", 1)]);
    let stable = Duration::from_secs(300);
    let r = req(&p, &[("a", 3), ("b", 3)], at(2000));
    // Up at 1000, down, up again at 1900: the period counts from 1900.
    let clusters = vec![cluster("a"), cluster("b"), up_since(at(1900))];
    let kept = schedule(&r, &clusters);
    assert_eq!(
        failback(&r, &kept, &clusters, &["c"], stable, at(2000)),
        Failback::At(at(2200))
    );
}
