use std::collections::BTreeMap;

use flotilla_apis::cluster::v1alpha1::{Cluster, ReplicaEstimate, ResourceSummary, TaintEffect};
use flotilla_apis::policy::v1alpha1::{
    ClusterAffinityTerm, ClusterPreferences, ClusterReplicaLimit, DynamicWeightFactor, Placement,
    ReplicaSchedulingType, SpreadConstraint, SpreadField,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::*;
use crate::available_replicas;
use crate::testing::{cluster, divided, in_region, named, ready_condition, tainted};

const DEPLOY: (&str, &str, &str) = ("apps", "v1", "Deployment");

fn req(placement: &Placement, replicas: Option<u32>) -> Request<'_> {
    Request {
        eviction: None,
        cluster_sets: None,
        placement,
        gvk: DEPLOY,
        replicas,
        replica_request: BTreeMap::new(),
        current: Vec::new(),
        rebalance: false,
    }
}

fn placed(d: &Decision) -> Vec<(&str, u32)> {
    assert_eq!(d.error, None, "{}", crate::explain::render(d));
    d.clusters
        .iter()
        .map(|a| (a.cluster.as_str(), a.replicas))
        .collect()
}

fn verdict<'d>(d: &'d Decision, c: &str) -> &'d ClusterVerdict {
    d.explanation
        .iter()
        .find(|v| v.cluster == c)
        .expect("every cluster has a verdict")
}

fn three() -> Vec<Cluster> {
    vec![cluster("c"), cluster("a"), cluster("b")]
}

#[test]
fn six_replicas_one_one_one_give_two_each() {
    let p = divided(&[("a", 1), ("b", 1), ("c", 1)]);
    let d = schedule(&req(&p, Some(6)), &three());
    assert_eq!(placed(&d), [("a", 2), ("b", 2), ("c", 2)]);
    let v = verdict(&d, "b");
    assert_eq!(
        (v.outcome, v.score, v.replicas),
        (Outcome::Selected, Some(0), Some(2))
    );
}

#[test]
fn weights_two_to_one_give_four_and_two() {
    let p = divided(&[("a", 2), ("b", 1)]);
    let d = schedule(&req(&p, Some(6)), &three());
    assert_eq!(placed(&d), [("a", 4), ("b", 2)]);
    let c = verdict(&d, "c");
    assert_eq!(c.outcome, Outcome::NotSelected);
    assert!(c
        .filtered
        .as_deref()
        .is_some_and(|r| r.contains("weight 0")));
}

#[test]
fn divided_without_weights_is_equal_and_limits_bound_it() {
    let mut p = divided(&[]);
    let d = schedule(&req(&p, Some(7)), &three());
    assert_eq!(placed(&d), [("a", 3), ("b", 2), ("c", 2)]);
    let rs = p.replica_scheduling.as_mut().expect("set by divided()");
    rs.cluster_replica_limits = vec![
        ClusterReplicaLimit {
            target_cluster: named(&["a"]),
            min_replicas: None,
            max_replicas: Some(1),
        },
        ClusterReplicaLimit {
            target_cluster: named(&["c"]),
            min_replicas: Some(4),
            max_replicas: None,
        },
    ];
    let d = schedule(&req(&p, Some(7)), &three());
    assert_eq!(placed(&d), [("a", 1), ("b", 2), ("c", 4)]);
}

#[test]
fn duplicated_and_unreplicated_kinds_go_whole_everywhere() {
    let mut p = divided(&[]);
    p.replica_scheduling
        .as_mut()
        .expect("set")
        .replica_scheduling_type = ReplicaSchedulingType::Duplicated;
    let d = schedule(&req(&p, Some(5)), &three());
    assert_eq!(placed(&d), [("a", 5), ("b", 5), ("c", 5)]);

    let none = Placement::default();
    let mut r = req(&none, None);
    r.gvk = ("", "v1", "ConfigMap");
    let d = schedule(&r, &three());
    assert_eq!(placed(&d), [("a", 0), ("b", 0), ("c", 0)]);
    assert_eq!(verdict(&d, "a").replicas, None);
}

#[test]
fn filtered_clusters_carry_their_reason() {
    let mut lacking = cluster("b");
    lacking
        .status
        .as_mut()
        .expect("status")
        .api_enablements
        .truncate(1);
    lacking.status.as_mut().expect("status").api_enablements[0]
        .resources
        .clear();
    let mut down = cluster("d");
    down.status.as_mut().expect("status").conditions =
        vec![ready_condition("False", "ClusterNotReady")];
    let clusters = vec![
        cluster("a"),
        lacking,
        tainted(cluster("c"), "maintenance", None, TaintEffect::NoSchedule),
        down,
    ];
    let p = divided(&[]);
    let d = schedule(&req(&p, Some(6)), &clusters);
    assert_eq!(placed(&d), [("a", 6)]);
    let reason = |c| verdict(&d, c).filtered.clone().unwrap_or_default();
    assert_eq!(verdict(&d, "b").outcome, Outcome::Filtered);
    assert!(reason("b").contains("does not serve Deployment in apps/v1"));
    assert!(reason("c").contains("taint maintenance:NoSchedule is not tolerated"));
    assert!(reason("d").starts_with("not ready"));
    let table = crate::explain::render(&d);
    assert!(table.starts_with("CLUSTER  RESULT"), "{table}");
    assert!(
        table.contains("c        filtered  -      -         taint maintenance:NoSchedule"),
        "{table}"
    );
    assert!(table.contains("a        selected  0      6\n"), "{table}");

    let p = Placement::default();
    let d = schedule(&req(&p, Some(1)), &clusters[1..]);
    assert!(d.clusters.is_empty());
    assert!(d
        .error
        .as_deref()
        .is_some_and(|e| e.contains("no cluster passed the filters")));
    assert!(crate::explain::render(&d).contains("error: no cluster passed"));
}

#[test]
fn a_joining_cluster_does_not_move_replicas_unless_rebalancing() {
    let p = divided(&[]);
    let mut r = req(&p, Some(6));
    r.current = vec![("a".into(), 3), ("b".into(), 3)];
    let d = schedule(&r, &three());
    assert_eq!(placed(&d), [("a", 3), ("b", 3)]);
    assert_eq!(verdict(&d, "a").score, Some(SCORE_KEEP));
    assert_eq!(verdict(&d, "c").replicas, Some(0));
    r.replicas = Some(9);
    assert_eq!(
        placed(&schedule(&r, &three())),
        [("a", 3), ("b", 3), ("c", 3)]
    );
    r.replicas = Some(6);
    r.rebalance = true;
    assert_eq!(
        placed(&schedule(&r, &three())),
        [("a", 2), ("b", 2), ("c", 2)]
    );
}

#[test]
fn prefer_no_schedule_lowers_the_score() {
    let mut p = Placement::default();
    let clusters = vec![
        cluster("a"),
        tainted(
            cluster("b"),
            "spot",
            Some("true"),
            TaintEffect::PreferNoSchedule,
        ),
    ];
    p.spread_constraints = vec![SpreadConstraint {
        spread_by_field: Some(SpreadField::Cluster),
        max_groups: 1,
        ..SpreadConstraint::default()
    }];
    let mut r = req(&p, Some(1));
    r.current = vec![("b".into(), 1)];
    let d = schedule(&r, &clusters);
    assert_eq!(
        verdict(&d, "b").score,
        Some(SCORE_KEEP - SCORE_PREFER_NO_SCHEDULE)
    );
    assert_eq!(placed(&d), [("b", 1)]);
    r.current.clear();
    let d = schedule(&r, &clusters);
    assert_eq!(verdict(&d, "b").score, Some(-SCORE_PREFER_NO_SCHEDULE));
    assert_eq!(placed(&d), [("a", 1)]);
    assert!(verdict(&d, "b")
        .filtered
        .as_deref()
        .is_some_and(|r| r.contains("maxGroups")));
}

fn regions() -> Vec<Cluster> {
    vec![
        in_region(cluster("eu-1"), "eu"),
        in_region(cluster("eu-2"), "eu"),
        in_region(cluster("us-1"), "us"),
        in_region(cluster("ap-1"), "ap"),
        cluster("nowhere"),
    ]
}

fn spread(by: SpreadField, min: i32, max: i32) -> SpreadConstraint {
    SpreadConstraint {
        spread_by_field: Some(by),
        spread_by_label: None,
        min_groups: min,
        max_groups: max,
    }
}

/// (constraints, current clusters, selected clusters or an error fragment)
type SpreadRow = (
    Vec<SpreadConstraint>,
    Vec<&'static str>,
    Result<Vec<&'static str>, &'static str>,
);

#[test]
fn spread_by_region_respects_min_and_max_groups() {
    let mut p = Placement::default();
    // (constraints, current, selected clusters or an error fragment)
    let table: Vec<SpreadRow> = vec![
        (
            vec![spread(SpreadField::Region, 2, 0)],
            vec![],
            Ok(vec!["ap-1", "eu-1", "eu-2", "us-1"]),
        ),
        // Two regions: eu (largest) then ap (name) on a score tie.
        (
            vec![spread(SpreadField::Region, 1, 2)],
            vec![],
            Ok(vec!["ap-1", "eu-1", "eu-2"]),
        ),
        // The current cluster's region wins.
        (
            vec![spread(SpreadField::Region, 1, 1)],
            vec!["us-1"],
            Ok(vec!["us-1"]),
        ),
        (
            vec![spread(SpreadField::Region, 4, 0)],
            vec![],
            Err("at least 4 region groups, but the feasible clusters span only 3 (eu, ap, us)"),
        ),
        // Two clusters covering two regions.
        (
            vec![
                spread(SpreadField::Region, 2, 3),
                spread(SpreadField::Cluster, 1, 2),
            ],
            vec![],
            Ok(vec!["ap-1", "eu-1"]),
        ),
        (
            vec![
                spread(SpreadField::Region, 3, 3),
                spread(SpreadField::Cluster, 1, 2),
            ],
            vec![],
            Err("at most 2 clusters, too few to cover the 3 groups"),
        ),
        (
            vec![spread(SpreadField::Cluster, 6, 0)],
            vec![],
            Err("at least 6 clusters, but only 5"),
        ),
    ];
    for (i, (constraints, current, want)) in table.into_iter().enumerate() {
        p.spread_constraints = constraints;
        let mut r = req(&p, None);
        r.current = current.iter().map(|c| ((*c).to_owned(), 0)).collect();
        let d = schedule(&r, &regions());
        match want {
            Ok(names) => {
                let got: Vec<&str> = placed(&d).into_iter().map(|(c, _)| c).collect();
                assert_eq!(got, names, "row {i}");
            }
            Err(frag) => {
                let e = d.error.clone().unwrap_or_default();
                assert!(e.contains(frag), "row {i}: {e}");
                assert!(d.clusters.is_empty());
            }
        }
    }
    p.spread_constraints = vec![spread(SpreadField::Region, 1, 1)];
    let d = schedule(&req(&p, None), &regions());
    assert!(verdict(&d, "nowhere")
        .filtered
        .as_deref()
        .is_some_and(|r| r.contains("has no region")));
    assert!(verdict(&d, "us-1")
        .filtered
        .as_deref()
        .is_some_and(|r| r.contains("region us is not among the 1 chosen")));
}

#[test]
fn cluster_affinities_fall_back_in_order() {
    let term = |name: &str, clusters: &[&str]| ClusterAffinityTerm {
        affinity_name: name.into(),
        affinity: named(clusters),
    };
    let mut p = Placement {
        cluster_affinities: vec![term("primary", &["x", "y"]), term("backup", &["b", "c"])],
        // Ignored once clusterAffinities is set.
        cluster_affinity: Some(named(&["a"])),
        ..Placement::default()
    };
    let d = schedule(&req(&p, None), &three());
    assert_eq!(placed(&d), [("b", 0), ("c", 0)]);
    assert_eq!(d.affinity_name.as_deref(), Some("backup"));
    assert!(crate::explain::render(&d).starts_with("affinity group: backup\n"));

    p.cluster_affinities.insert(0, term("first", &["a"]));
    let d = schedule(&req(&p, None), &three());
    assert_eq!(placed(&d), [("a", 0)]);
    assert_eq!(d.affinity_name.as_deref(), Some("first"));

    p.cluster_affinities = vec![term("primary", &["x"]), term("backup", &["y"])];
    let d = schedule(&req(&p, None), &three());
    let e = d.error.unwrap_or_default();
    assert!(
        e.starts_with("no clusterAffinities group can be placed (primary: no cluster"),
        "{e}"
    );
    assert!(e.contains("; backup: no cluster"), "{e}");
}

fn summary(c: &mut Cluster, estimates: &[(&str, i64)], alloc: &[(&str, &str, &str)]) {
    let q = |s: &str| Quantity(s.to_owned());
    c.status.as_mut().expect("status").resource_summary = Some(ResourceSummary {
        allocatable: alloc
            .iter()
            .map(|(r, a, _)| ((*r).to_owned(), q(a)))
            .collect(),
        allocated: alloc
            .iter()
            .map(|(r, _, u)| ((*r).to_owned(), q(u)))
            .collect(),
        replica_estimates: estimates
            .iter()
            .map(|(cpu, n)| ReplicaEstimate {
                request: [("cpu".to_owned(), q(cpu))].into(),
                replicas: *n,
            })
            .collect(),
    });
}

#[test]
fn dynamic_weights_use_the_tightest_estimate_or_free_capacity() {
    let mut a = cluster("a");
    // 250m is smaller than the request and ignored; of 500m and 1, 500m gives the most.
    summary(&mut a, &[("250m", 100), ("500m", 8), ("1", 4)], &[]);
    let mut b = cluster("b");
    // No estimate covers 500m: (4 - 2) cpu / 500m = 4.
    summary(&mut b, &[], &[("cpu", "4", "2")]);
    let c = cluster("c");
    let request: BTreeMap<String, i64> = [("cpu".to_owned(), 500)].into();
    assert_eq!(available_replicas(&a, &request), 8);
    assert_eq!(available_replicas(&b, &request), 4);
    assert_eq!(available_replicas(&c, &request), 0);

    let mut p = divided(&[]);
    p.replica_scheduling
        .as_mut()
        .expect("set")
        .weight_preference = Some(ClusterPreferences {
        static_weight_list: vec![],
        dynamic_weight: Some(DynamicWeightFactor::AvailableReplicas),
    });
    let mut r = req(&p, Some(6));
    r.replica_request = request;
    assert_eq!(placed(&schedule(&r, &[a, b, c])), [("a", 4), ("b", 2)]);
}

#[test]
fn input_order_does_not_matter() {
    let p = divided(&[("a", 1), ("b", 1), ("c", 1)]);
    let mut clusters = three();
    let first = schedule(&req(&p, Some(7)), &clusters);
    clusters.reverse();
    assert_eq!(schedule(&req(&p, Some(7)), &clusters), first);
    let names: Vec<&str> = first
        .explanation
        .iter()
        .map(|v| v.cluster.as_str())
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
}
