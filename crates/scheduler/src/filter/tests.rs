use flotilla_apis::cluster::v1alpha1::TaintEffect::{NoExecute, NoSchedule, PreferNoSchedule};
use flotilla_apis::policy::v1alpha1::{ClusterAffinity, FieldSelector};
use k8s_openapi::api::core::v1::{NodeSelectorRequirement, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use super::*;
use crate::testing::{cluster, ready_condition, tainted, with_labels};

fn names(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

fn labels(expr: &[(&str, &str, &[&str])], match_labels: &[(&str, &str)]) -> ClusterAffinity {
    ClusterAffinity {
        label_selector: Some(LabelSelector {
            match_labels: (!match_labels.is_empty()).then(|| {
                match_labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect()
            }),
            match_expressions: (!expr.is_empty()).then(|| {
                expr.iter()
                    .map(|(k, op, vs)| LabelSelectorRequirement {
                        key: (*k).into(),
                        operator: (*op).into(),
                        values: Some(names(vs)),
                    })
                    .collect()
            }),
        }),
        ..ClusterAffinity::default()
    }
}

fn fields(expr: &[(&str, &str, &[&str])]) -> ClusterAffinity {
    ClusterAffinity {
        field_selector: Some(FieldSelector {
            match_expressions: expr
                .iter()
                .map(|(k, op, vs)| NodeSelectorRequirement {
                    key: (*k).into(),
                    operator: (*op).into(),
                    values: Some(names(vs)),
                })
                .collect(),
        }),
        ..ClusterAffinity::default()
    }
}

#[test]
fn affinity_names_labels_and_fields() {
    let mut c = with_labels(cluster("m1"), &[("env", "prod"), ("tier", "gold")]);
    c.spec.region = Some("eu".into());
    c.spec.provider = Some("aws".into());
    let by_names = |n: &[&str], ex: &[&str]| ClusterAffinity {
        cluster_names: names(n),
        exclude_clusters: names(ex),
        ..ClusterAffinity::default()
    };
    // (affinity, Ok or a fragment of the reason)
    let table: Vec<(ClusterAffinity, Result<(), &str>)> = vec![
        (ClusterAffinity::default(), Ok(())),
        (by_names(&["m1", "m2"], &[]), Ok(())),
        (
            by_names(&["m2"], &[]),
            Err("not in clusterAffinity.clusterNames"),
        ),
        (
            by_names(&[], &["m1"]),
            Err("excluded by clusterAffinity.exclude"),
        ),
        (by_names(&["m1"], &["m1"]), Err("excluded")),
        (labels(&[], &[("env", "prod")]), Ok(())),
        (
            labels(&[], &[("env", "dev")]),
            Err("label env=dev required by labelSelector, cluster has \"prod\""),
        ),
        (labels(&[("env", "In", &["prod", "dev"])], &[]), Ok(())),
        (
            labels(&[("env", "In", &["dev"])], &[]),
            Err("label env In [dev] does not match"),
        ),
        (labels(&[("env", "NotIn", &["dev"])], &[]), Ok(())),
        (
            labels(&[("tier", "NotIn", &["gold"])], &[]),
            Err("label tier NotIn [gold]"),
        ),
        (labels(&[("gpu", "NotIn", &["yes"])], &[]), Ok(())),
        (labels(&[("tier", "Exists", &[])], &[]), Ok(())),
        (
            labels(&[("gpu", "Exists", &[])], &[]),
            Err("cluster has none"),
        ),
        (labels(&[("gpu", "DoesNotExist", &[])], &[]), Ok(())),
        (
            labels(&[("env", "DoesNotExist", &[])], &[]),
            Err("label env DoesNotExist"),
        ),
        (
            labels(&[("env", "Gt", &["1"])], &[]),
            Err("operator \"Gt\" is not supported"),
        ),
        (fields(&[("region", "In", &["eu", "us"])]), Ok(())),
        (
            fields(&[("region", "In", &["us"])]),
            Err("field region In [us] does not match, cluster has \"eu\""),
        ),
        (fields(&[("provider", "NotIn", &["gcp"])]), Ok(())),
        (
            fields(&[("provider", "NotIn", &["aws"])]),
            Err("field provider NotIn [aws]"),
        ),
        (
            fields(&[("zone", "Exists", &[])]),
            Err("field zone Exists [] does not match, cluster has none"),
        ),
        (fields(&[("zone", "DoesNotExist", &[])]), Ok(())),
        (
            fields(&[("rack", "In", &["1"])]),
            Err("key \"rack\" is not one of provider, region, zone"),
        ),
    ];
    for (i, (aff, want)) in table.into_iter().enumerate() {
        let got = affinity(&aff, &c);
        match want {
            Ok(()) => assert_eq!(got, Ok(()), "row {i}"),
            Err(frag) => {
                let reason = got.expect_err(&format!("row {i} should be filtered"));
                assert!(reason.contains(frag), "row {i}: {reason:?} lacks {frag:?}");
            }
        }
    }
}

fn tol(key: &str, op: &str, value: &str, effect: &str) -> Toleration {
    let opt = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    Toleration {
        key: opt(key),
        operator: opt(op),
        value: opt(value),
        effect: opt(effect),
        toleration_seconds: None,
    }
}

#[test]
fn tolerations_follow_kubernetes_matching() {
    let c = |effect| tainted(cluster("m"), "dedicated", Some("gpu"), effect);
    // (cluster taint effect, tolerations, tolerated?)
    let table: Vec<(_, Vec<Toleration>, bool)> = vec![
        (NoSchedule, vec![], false),
        (NoExecute, vec![], false),
        (PreferNoSchedule, vec![], true),
        (
            NoSchedule,
            vec![tol("dedicated", "Equal", "gpu", "NoSchedule")],
            true,
        ),
        (
            NoSchedule,
            vec![tol("dedicated", "", "gpu", "NoSchedule")],
            true,
        ),
        (
            NoSchedule,
            vec![tol("dedicated", "Equal", "cpu", "NoSchedule")],
            false,
        ),
        (
            NoSchedule,
            vec![tol("dedicated", "Exists", "", "NoSchedule")],
            true,
        ),
        (NoSchedule, vec![tol("other", "Exists", "", "")], false),
        (NoSchedule, vec![tol("", "Exists", "", "")], true),
        (NoExecute, vec![tol("", "Exists", "", "")], true),
        (NoSchedule, vec![tol("dedicated", "Exists", "", "")], true),
        (
            NoSchedule,
            vec![tol("dedicated", "Exists", "", "NoExecute")],
            false,
        ),
        (
            NoExecute,
            vec![tol("dedicated", "Exists", "", "NoExecute")],
            true,
        ),
        (
            NoSchedule,
            vec![tol("dedicated", "Sometimes", "gpu", "")],
            false,
        ),
        (
            NoSchedule,
            vec![
                tol("x", "Exists", "", ""),
                tol("dedicated", "Equal", "gpu", ""),
            ],
            true,
        ),
    ];
    for (i, (effect, tols, want)) in table.into_iter().enumerate() {
        let got = tolerations(&tols, &c(effect));
        assert_eq!(got.is_ok(), want, "row {i}: {got:?}");
        if let Err(reason) = got {
            assert!(reason.starts_with("taint dedicated=gpu:"), "{reason}");
            assert!(reason.contains("is not tolerated"), "{reason}");
        }
    }
    let prefer = tainted(c(PreferNoSchedule), "spot", None, PreferNoSchedule);
    assert_eq!(untolerated_preferences(&[], &prefer), 2);
    assert_eq!(
        untolerated_preferences(&[tol("spot", "Exists", "", "")], &prefer),
        1
    );
}

#[test]
fn api_enablement_needs_the_kind_at_its_group_version() {
    let mut bare = cluster("bare");
    bare.status
        .as_mut()
        .expect("fixture has status")
        .api_enablements
        .clear();
    let mut no_status = cluster("none");
    no_status.status = None;
    let table: &[(&str, &str, &Cluster, Result<(), &str>)] = &[
        ("apps/v1", "Deployment", &cluster("m"), Ok(())),
        ("v1", "ConfigMap", &cluster("m"), Ok(())),
        (
            "apps/v1",
            "StatefulSet",
            &cluster("m"),
            Err("does not serve StatefulSet in apps/v1"),
        ),
        (
            "apps/v1beta1",
            "Deployment",
            &cluster("m"),
            Err("does not serve Deployment in apps/v1beta1"),
        ),
        ("apps/v1", "Deployment", &bare, Err("not reported yet")),
        ("apps/v1", "Deployment", &no_status, Err("not reported yet")),
    ];
    for (gv, kind, c, want) in table {
        let got = api_enablement(gv, kind, c);
        match want {
            Ok(()) => assert_eq!(got, Ok(()), "{gv} {kind}"),
            Err(frag) => assert!(got.as_ref().is_err_and(|r| r.contains(frag)), "{got:?}"),
        }
    }
}

#[test]
fn not_ready_clusters_are_filtered() {
    let with = |status: &str, reason: &str| {
        let mut c = cluster("m");
        c.status.as_mut().expect("fixture has status").conditions =
            vec![ready_condition(status, reason)];
        c
    };
    let mut none = cluster("m");
    none.status = None;
    assert_eq!(ready(&with("True", "ClusterReady")), Ok(()));
    assert_eq!(
        ready(&with("False", "ClusterNotReady")),
        Err("not ready (Ready is False: ClusterNotReady)".to_owned())
    );
    assert_eq!(
        ready(&with("Unknown", "")),
        Err("not ready (Ready is Unknown)".to_owned())
    );
    assert_eq!(
        ready(&none),
        Err("not ready (no Ready condition reported yet)".to_owned())
    );
}

#[test]
fn no_execute_taints_evict_after_their_toleration_window() {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::Timestamp;
    let t0 = Timestamp::from_second(1_000_000).unwrap();
    let mut c = tainted(
        cluster("m"),
        "cluster.flotilla.io/unreachable",
        None,
        NoExecute,
    );
    c.spec.taints[0].time_added = Some(Time(t0));
    let at = |secs: i64| crate::Eviction {
        now: Timestamp::from_second(1_000_000 + secs).unwrap(),
        default_toleration: std::time::Duration::from_secs(60),
    };
    // NoSchedule taints never evict a running workload.
    let mut soft = tainted(
        cluster("s"),
        "cluster.flotilla.io/not-ready",
        None,
        NoSchedule,
    );
    soft.spec.taints[0].time_added = Some(Time(t0));
    assert!(execution(&[], &soft, Some(at(1000))).is_ok());
    // The default window (the hub's --failover-toleration) runs from timeAdded.
    assert!(execution(&[], &c, Some(at(59))).is_ok());
    assert!(execution(&[], &c, Some(at(60))).is_err());
    assert_eq!(
        next_eviction(&[], &c, at(10)),
        Some(Timestamp::from_second(1_000_060).unwrap())
    );
    assert_eq!(next_eviction(&[], &c, at(61)), None);
    // A policy toleration with tolerationSeconds replaces it; without seconds it is for ever.
    let mut short = tol("cluster.flotilla.io/unreachable", "Exists", "", "NoExecute");
    short.toleration_seconds = Some(10);
    assert!(execution(std::slice::from_ref(&short), &c, Some(at(11))).is_err());
    let forever = tol("cluster.flotilla.io/unreachable", "Exists", "", "NoExecute");
    assert!(execution(&[forever], &c, Some(at(100_000))).is_ok());
    // Without eviction timing an untolerated NoExecute taint evicts at once.
    assert!(execution(&[], &c, None).is_err());
}

#[test]
fn a_cluster_passes_only_if_its_set_is_bound() {
    let bound: std::collections::BTreeSet<String> = ["default".to_owned()].into();
    let plain = cluster("plain");
    assert_eq!(
        cluster_set(&bound, &plain),
        Ok(()),
        "no label: the default set"
    );
    let prod = with_labels(cluster("p"), &[("cluster.flotilla.io/clusterset", "prod")]);
    let why = cluster_set(&bound, &prod).unwrap_err();
    assert!(why.contains("ClusterSet \"prod\" is not bound"), "{why}");
    let both: std::collections::BTreeSet<String> = ["default".into(), "prod".into()].into();
    assert_eq!(cluster_set(&both, &prod), Ok(()));
    assert!(
        cluster_set(&Default::default(), &plain).is_err(),
        "nothing bound"
    );
}
