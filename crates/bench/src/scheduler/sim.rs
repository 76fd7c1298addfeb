//! The simulated fleet and workload of `flotilla bench scheduler`: Cluster objects shaped like
//! those the agents report (labels, topology, taints, conditions, API enablements, resource
//! summaries with replica estimates), and bindings with the mix of placements users write.
//!
//! Everything is drawn from a fixed-seed generator, so two runs with the same counts schedule
//! exactly the same input and their figures can be compared.

mod discovery;

use std::collections::BTreeMap;

use flotilla_apis::cluster::v1alpha1::{
    Cluster, ClusterSpec, ClusterStatus, ReplicaEstimate, ResourceSummary, Taint, TaintEffect,
    CONDITION_JOINED, CONDITION_READY, REASON_CLUSTER_NOT_READY, REASON_CLUSTER_READY,
    REASON_JOINED,
};
use flotilla_apis::policy::v1alpha1::{
    ClusterAffinity, ClusterPreferences, DynamicWeightFactor, FieldSelector, Placement,
    ReplicaDivisionPreference, ReplicaSchedulingStrategy, ReplicaSchedulingType, SpreadConstraint,
    SpreadField, StaticClusterWeight,
};
use k8s_openapi::api::core::v1::{NodeSelectorRequirement, Toleration};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, Time};

use discovery::api_enablements;

/// Regions of the simulated fleet; each has zones `a`, `b` and `c`.
pub const REGIONS: [&str; 5] = [
    "eu-west-1",
    "eu-central-1",
    "us-east-1",
    "us-west-2",
    "ap-southeast-1",
];

/// The taint a share of the clusters carries (dedicated GPU clusters).
const GPU_TAINT: &str = "dedicated";

/// Request shapes the agent reports replica estimates for, `(cpu, memory, milli-cpu, MiB)`
/// (as `ESTIMATE_SHAPES` in the agent's heartbeat).
const SHAPES: [(&str, &str, i64, i64); 5] = [
    ("100m", "128Mi", 100, 128),
    ("250m", "256Mi", 250, 256),
    ("500m", "512Mi", 500, 512),
    ("1", "1Gi", 1000, 1024),
    ("2", "4Gi", 2000, 4096),
];

/// The kinds of placement the workload mixes, for the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// `Duplicated` to the clusters of a label selector.
    Duplicated,
    /// `Divided` by a `staticWeightList` over 3–10 named clusters.
    StaticWeights,
    /// `Divided` by `dynamicWeight: AvailableReplicas` over the clusters of one or two regions.
    DynamicWeights,
    /// `Divided` equally under `spreadConstraints` (region 2–3 groups, at most 6 clusters).
    Spread,
}

impl Kind {
    /// The name in the report.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Duplicated => "Duplicated, labelSelector env=prod + tier",
            Kind::StaticWeights => "Divided, staticWeightList over 3–10 named clusters",
            Kind::DynamicWeights => {
                "Divided, dynamicWeight AvailableReplicas, region fieldSelector"
            }
            Kind::Spread => "Divided, spreadConstraints region 2–3 + cluster ≤ 6",
        }
    }
}

/// One simulated binding: what a `ResourceBinding` gives the scheduler.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    /// Which mix it belongs to.
    pub kind: Kind,
    /// The placement copied from the policy.
    pub placement: Placement,
    /// The template's (group, version, kind).
    pub gvk: (&'static str, &'static str, &'static str),
    /// The template's replicas (`None` for a ConfigMap).
    pub replicas: Option<u32>,
    /// Per-replica requests in milli-units.
    pub request: BTreeMap<String, i64>,
}

/// A small fixed-seed generator (SplitMix64): reproducible without a dependency.
pub struct Rng(u64);

impl Rng {
    /// A generator started at `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// True with probability `percent`/100.
    pub fn percent(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// The name of cluster `i` (1-based): `member-0001`.
pub fn cluster_name(i: usize) -> String {
    format!("member-{i:04}")
}

/// `n` clusters: 2/3 env=prod, tier gold/silver/bronze, spread evenly over 5 regions × 3 zones
/// and 3 providers, 5% tainted `dedicated=gpu:NoSchedule`, 3% `PreferNoSchedule`, 3% not Ready.
pub fn fleet(n: usize, seed: u64) -> Vec<Cluster> {
    let mut rng = Rng::new(seed);
    let apis = api_enablements();
    (1..=n)
        .map(|i| {
            let region = REGIONS[i % REGIONS.len()];
            let zone = format!("{region}{}", ["a", "b", "c"][(i / REGIONS.len()) % 3]);
            let mut taints = Vec::new();
            if rng.percent(5) {
                taints.push(taint(GPU_TAINT, Some("gpu"), TaintEffect::NoSchedule));
            }
            if rng.percent(3) {
                taints.push(taint("maintenance", None, TaintEffect::PreferNoSchedule));
            }
            let spec = ClusterSpec {
                region: Some(region.to_owned()),
                zone: Some(zone),
                provider: Some(["aws", "gcp", "azure"][i % 3].to_owned()),
                taints,
                ..ClusterSpec::default()
            };
            let mut c = Cluster::new(&cluster_name(i), spec);
            let env = if i % 3 == 0 { "staging" } else { "prod" };
            let tier = ["gold", "silver", "bronze"][rng.below(3) as usize];
            c.metadata.labels = Some(BTreeMap::from([
                ("env".to_owned(), env.to_owned()),
                ("tier".to_owned(), tier.to_owned()),
                ("team".to_owned(), format!("team-{}", rng.below(20))),
            ]));
            let ready = !rng.percent(3);
            c.status = Some(ClusterStatus {
                conditions: vec![
                    condition(CONDITION_JOINED, "True", REASON_JOINED),
                    if ready {
                        condition(CONDITION_READY, "True", REASON_CLUSTER_READY)
                    } else {
                        condition(CONDITION_READY, "False", REASON_CLUSTER_NOT_READY)
                    },
                ],
                kubernetes_version: Some("v1.33.1".to_owned()),
                api_enablements: apis.clone(),
                resource_summary: Some(resources(&mut rng)),
                ..ClusterStatus::default()
            });
            c
        })
        .collect()
}

/// `n` bindings over a fleet of `clusters` clusters: 30% Duplicated, 25% static weights, 25%
/// dynamic weights, 20% spread; 10% tolerate the GPU taint; replicas 1–50.
pub fn bindings(n: usize, clusters: usize, seed: u64) -> Vec<Binding> {
    let mut rng = Rng::new(seed ^ 0x5EED);
    (0..n)
        .map(|_| {
            let roll = rng.below(100);
            let replicas = 1 + rng.below(50) as u32;
            let shape = SHAPES[rng.below(SHAPES.len() as u64) as usize];
            let request = BTreeMap::from([
                ("cpu".to_owned(), shape.2),
                ("memory".to_owned(), shape.3 * 1024 * 1024 * 1000),
            ]);
            let mut b = Binding {
                kind: Kind::Duplicated,
                placement: Placement::default(),
                gvk: ("apps", "v1", "Deployment"),
                replicas: Some(replicas),
                request,
            };
            if roll < 30 {
                let tier = ["gold", "silver", "bronze"][rng.below(3) as usize];
                b.placement.cluster_affinity = Some(ClusterAffinity {
                    label_selector: Some(LabelSelector {
                        match_labels: Some(BTreeMap::from([
                            ("env".to_owned(), "prod".to_owned()),
                            ("tier".to_owned(), tier.to_owned()),
                        ])),
                        match_expressions: None,
                    }),
                    ..ClusterAffinity::default()
                });
                b.placement.replica_scheduling = Some(strategy(ReplicaSchedulingType::Duplicated));
                if rng.percent(30) {
                    // Shared configuration goes wherever its workloads go.
                    b.gvk = ("", "v1", "ConfigMap");
                    b.replicas = None;
                }
            } else if roll < 55 {
                b.kind = Kind::StaticWeights;
                let count = 3 + rng.below(8) as usize;
                let mut names: Vec<String> = Vec::with_capacity(count);
                while names.len() < count.min(clusters) {
                    let name = cluster_name(1 + rng.below(clusters as u64) as usize);
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
                let weights = names
                    .iter()
                    .map(|name| StaticClusterWeight {
                        target_cluster: ClusterAffinity {
                            cluster_names: vec![name.clone()],
                            ..ClusterAffinity::default()
                        },
                        weight: 1 + rng.below(5) as i64,
                    })
                    .collect();
                b.placement.cluster_affinity = Some(ClusterAffinity {
                    cluster_names: names,
                    ..ClusterAffinity::default()
                });
                b.placement.replica_scheduling = Some(ReplicaSchedulingStrategy {
                    weight_preference: Some(ClusterPreferences {
                        static_weight_list: weights,
                        dynamic_weight: None,
                    }),
                    ..weighted()
                });
                if rng.percent(20) {
                    b.gvk = ("apps", "v1", "StatefulSet");
                }
            } else if roll < 80 {
                b.kind = Kind::DynamicWeights;
                let first = rng.below(REGIONS.len() as u64) as usize;
                let mut regions = vec![REGIONS[first].to_owned()];
                if rng.percent(50) {
                    regions.push(REGIONS[(first + 1) % REGIONS.len()].to_owned());
                }
                b.placement.cluster_affinity = Some(ClusterAffinity {
                    field_selector: Some(FieldSelector {
                        match_expressions: vec![NodeSelectorRequirement {
                            key: "region".to_owned(),
                            operator: "In".to_owned(),
                            values: Some(regions),
                        }],
                    }),
                    ..ClusterAffinity::default()
                });
                b.placement.replica_scheduling = Some(ReplicaSchedulingStrategy {
                    weight_preference: Some(ClusterPreferences {
                        static_weight_list: Vec::new(),
                        dynamic_weight: Some(DynamicWeightFactor::AvailableReplicas),
                    }),
                    ..weighted()
                });
            } else {
                b.kind = Kind::Spread;
                b.placement.cluster_affinity = Some(ClusterAffinity {
                    label_selector: Some(LabelSelector {
                        match_labels: Some(BTreeMap::from([("env".to_owned(), "prod".to_owned())])),
                        match_expressions: None,
                    }),
                    ..ClusterAffinity::default()
                });
                b.placement.spread_constraints = vec![
                    SpreadConstraint {
                        spread_by_field: Some(SpreadField::Region),
                        min_groups: 2,
                        max_groups: 3,
                        ..SpreadConstraint::default()
                    },
                    SpreadConstraint {
                        spread_by_field: Some(SpreadField::Cluster),
                        min_groups: 2,
                        max_groups: 6,
                        ..SpreadConstraint::default()
                    },
                ];
                b.placement.replica_scheduling = Some(strategy(ReplicaSchedulingType::Divided));
            }
            if rng.percent(10) {
                b.placement.cluster_tolerations = vec![Toleration {
                    key: Some(GPU_TAINT.to_owned()),
                    operator: Some("Equal".to_owned()),
                    value: Some("gpu".to_owned()),
                    effect: Some("NoSchedule".to_owned()),
                    toleration_seconds: None,
                }];
            }
            b
        })
        .collect()
}

fn strategy(t: ReplicaSchedulingType) -> ReplicaSchedulingStrategy {
    ReplicaSchedulingStrategy {
        replica_scheduling_type: t,
        ..ReplicaSchedulingStrategy::default()
    }
}

fn weighted() -> ReplicaSchedulingStrategy {
    ReplicaSchedulingStrategy {
        replica_division_preference: Some(ReplicaDivisionPreference::Weighted),
        ..strategy(ReplicaSchedulingType::Divided)
    }
}

fn taint(key: &str, value: Option<&str>, effect: TaintEffect) -> Taint {
    Taint {
        key: key.to_owned(),
        value: value.map(str::to_owned),
        effect,
        time_added: None,
    }
}

fn condition(type_: &str, status: &str, reason: &str) -> Condition {
    Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message: String::new(),
        last_transition_time: Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
        observed_generation: None,
    }
}

/// 10–100 nodes of 16 CPUs and 64 GiB, 20–90% allocated; estimates per shape from the free
/// share of one node times the nodes (as the agent computes them node by node).
fn resources(rng: &mut Rng) -> ResourceSummary {
    let nodes = 10 + rng.below(91) as i64;
    let used_percent = 20 + rng.below(71) as i64;
    let cpu_free_per_node = 16_000 * (100 - used_percent) / 100;
    let mem_free_per_node = 64 * 1024 * (100 - used_percent) / 100;
    let q = |s: String| Quantity(s);
    ResourceSummary {
        allocatable: BTreeMap::from([
            ("cpu".to_owned(), q(format!("{}", 16 * nodes))),
            ("memory".to_owned(), q(format!("{}Gi", 64 * nodes))),
            ("pods".to_owned(), q(format!("{}", 110 * nodes))),
        ]),
        allocated: BTreeMap::from([
            (
                "cpu".to_owned(),
                q(format!("{}m", 16_000 * nodes * used_percent / 100)),
            ),
            (
                "memory".to_owned(),
                q(format!("{}Mi", 64 * 1024 * nodes * used_percent / 100)),
            ),
        ]),
        replica_estimates: SHAPES
            .iter()
            .map(|(cpu, mem, mcpu, mib)| ReplicaEstimate {
                request: BTreeMap::from([
                    ("cpu".to_owned(), q((*cpu).to_owned())),
                    ("memory".to_owned(), q((*mem).to_owned())),
                ]),
                replicas: nodes * (cpu_free_per_node / mcpu).min(mem_free_per_node / mib),
            })
            .collect(),
    }
}
