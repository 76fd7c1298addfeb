//! What the member is: its version, its nodes and their resources, the APIs it serves — read
//! from the member and shaped into the Cluster's status.

use std::collections::BTreeMap;

use flotilla_apis::cluster::v1alpha1::{
    ApiEnablement, ApiResource, NodeSummary, ReplicaEstimate, ResourceSummary,
};
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::api::ListParams;
use kube::{Api, Client};

/// Resource name → amount in thousandths of its unit.
pub(crate) type Amounts = BTreeMap<String, i128>;

/// The request shapes replica estimates are reported for: `(cpu, memory)` per replica, from a
/// small sidecar-sized pod to a large one. The scheduler uses the one closest to a workload's.
pub(crate) const ESTIMATE_SHAPES: [(&str, &str); 5] = [
    ("100m", "128Mi"),
    ("250m", "256Mi"),
    ("500m", "512Mi"),
    ("1", "1Gi"),
    ("2", "4Gi"),
];

/// Node counts, and the allocatable resources of each ready, schedulable node by name.
pub(crate) async fn nodes(
    member: &Client,
) -> kube::Result<(NodeSummary, BTreeMap<String, Amounts>)> {
    let nodes: Api<Node> = Api::all(member.clone());
    let mut summary = NodeSummary::default();
    let mut per_node = BTreeMap::new();
    for node in nodes.list(&ListParams::default()).await?.items {
        let name = node.metadata.name.clone().unwrap_or_default();
        let cordoned = node.spec.as_ref().and_then(|s| s.unschedulable) == Some(true);
        summary.total_num += 1;
        let status = node.status.unwrap_or_default();
        let ready = status
            .conditions
            .unwrap_or_default()
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True");
        if !ready {
            continue;
        }
        summary.ready_num += 1;
        if cordoned {
            continue;
        }
        let mut allocatable = Amounts::new();
        for (resource, q) in status.allocatable.unwrap_or_default() {
            if let Some(v) = milli(&q.0) {
                allocatable.insert(resource, v);
            }
        }
        per_node.insert(name, allocatable);
    }
    Ok((summary, per_node))
}

/// What the member's pods that still hold resources request, by node name ("" for pods not
/// scheduled yet).
pub(crate) async fn requested(member: &Client) -> kube::Result<BTreeMap<String, Amounts>> {
    let pods: Api<Pod> = Api::all(member.clone());
    let params = ListParams::default()
        .fields("status.phase!=Succeeded,status.phase!=Failed")
        .limit(500);
    let mut by_node: BTreeMap<String, Amounts> = BTreeMap::new();
    let mut continue_token = None;
    loop {
        let mut page_params = params.clone();
        page_params.continue_token = continue_token;
        let page = pods.list(&page_params).await?;
        for pod in &page.items {
            let Some(spec) = &pod.spec else { continue };
            let total = by_node
                .entry(spec.node_name.clone().unwrap_or_default())
                .or_default();
            *total.entry("pods".into()).or_default() += 1000;
            for c in &spec.containers {
                let requests = c.resources.as_ref().and_then(|r| r.requests.as_ref());
                for (name, q) in requests.into_iter().flatten() {
                    if let Some(v) = milli(&q.0) {
                        *total.entry(name.clone()).or_default() += v;
                    }
                }
            }
        }
        continue_token = page.metadata.continue_.filter(|c| !c.is_empty());
        if continue_token.is_none() {
            return Ok(by_node);
        }
    }
}

/// The member's resources as the Cluster reports them: totals over its ready, schedulable
/// nodes, and how many more replicas of each [`ESTIMATE_SHAPES`] request fit, node by node (a
/// replica cannot span nodes, so free capacity is not simply summed).
pub(crate) fn resources(
    allocatable: &BTreeMap<String, Amounts>,
    requested: &BTreeMap<String, Amounts>,
) -> ResourceSummary {
    let quantities = |m: &Amounts| {
        m.iter()
            .map(|(k, v)| (k.clone(), Quantity(format_milli(*v))))
            .collect()
    };
    let mut total_allocatable = Amounts::new();
    for node in allocatable.values() {
        add(&mut total_allocatable, node);
    }
    let mut total_requested = Amounts::new();
    for node in requested.values() {
        add(&mut total_requested, node);
    }
    let replica_estimates = ESTIMATE_SHAPES
        .iter()
        .filter_map(|(cpu, memory)| {
            let request: Amounts = [("cpu", milli(cpu)?), ("memory", milli(memory)?)]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect();
            let replicas = allocatable
                .iter()
                .map(|(name, offered)| fits(offered, requested.get(name), &request))
                .sum();
            Some(ReplicaEstimate {
                request: quantities(&request),
                replicas,
            })
        })
        .collect();
    ResourceSummary {
        allocatable: quantities(&total_allocatable),
        allocated: quantities(&total_requested),
        replica_estimates,
    }
}

fn add(total: &mut Amounts, more: &Amounts) {
    for (k, v) in more {
        *total.entry(k.clone()).or_default() += v;
    }
}

/// How many replicas of `request` (plus one pod slot each) fit in what `offered` has left.
fn fits(offered: &Amounts, used: Option<&Amounts>, request: &Amounts) -> i64 {
    let free = |resource: &str| {
        let have = offered.get(resource).copied().unwrap_or(0);
        let taken = used.and_then(|u| u.get(resource)).copied().unwrap_or(0);
        (have - taken).max(0)
    };
    let mut n = free("pods") / 1000;
    for (resource, amount) in request.iter().filter(|(_, a)| **a > 0) {
        n = n.min(free(resource) / amount);
    }
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The group-versions and resources the member serves (subresources left out).
pub(crate) async fn api_enablements(member: &Client) -> kube::Result<Vec<ApiEnablement>> {
    let discovery = kube::Discovery::new(member.clone()).run().await?;
    let mut out = Vec::new();
    for group in discovery.groups() {
        for version in group.versions() {
            let mut resources: Vec<ApiResource> = group
                .versioned_resources(version)
                .into_iter()
                .map(|(ar, _)| ApiResource {
                    name: ar.plural,
                    kind: ar.kind,
                })
                .collect();
            resources.sort_by(|a, b| a.name.cmp(&b.name));
            let group_version = if group.name().is_empty() {
                version.to_owned()
            } else {
                format!("{}/{version}", group.name())
            };
            out.push(ApiEnablement {
                group_version,
                resources,
            });
        }
    }
    out.sort_by(|a, b| a.group_version.cmp(&b.group_version));
    Ok(out)
}

/// A quantity in thousandths of its unit (`100m` → 100, `2` → 2000, `1Gi` → 1073741824000),
/// widened for sums over many nodes.
pub(crate) fn milli(s: &str) -> Option<i128> {
    flotilla_apis::quantity::parse_millis(s).map(i128::from)
}

/// Thousandths back to a quantity: whole units when exact (`2000` → `2`), else `m` (`1500m`).
pub(crate) fn format_milli(v: i128) -> String {
    flotilla_apis::quantity::format_millis(i64::try_from(v).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests;
