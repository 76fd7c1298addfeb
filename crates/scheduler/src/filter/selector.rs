//! Matching a [`ClusterAffinity`] against a cluster: names, exclusions, labels, topology fields.
//!
//! Used by the affinity filter and by the assign step (static weights, replica limits), so the
//! two always agree on which clusters a term names. Unknown operators and field keys do not
//! match, with a reason saying so, rather than matching everything by accident.

use flotilla_apis::cluster::v1alpha1::Cluster;
use flotilla_apis::policy::v1alpha1::{ClusterAffinity, FieldSelector};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use flotilla_apis::labels::requirement;

use super::Reason;

/// Does `affinity` select `cluster`? The first disagreement is the reason.
pub(crate) fn affinity(affinity: &ClusterAffinity, cluster: &Cluster) -> Result<(), Reason> {
    let name = cluster.metadata.name.as_deref().unwrap_or("");
    if affinity.exclude_clusters.iter().any(|n| n == name) {
        return Err("excluded by clusterAffinity.exclude".to_owned());
    }
    if !affinity.cluster_names.is_empty() && !affinity.cluster_names.iter().any(|n| n == name) {
        return Err("not in clusterAffinity.clusterNames".to_owned());
    }
    if let Some(sel) = &affinity.label_selector {
        labels(sel, cluster)?;
    }
    if let Some(sel) = &affinity.field_selector {
        fields(sel, cluster)?;
    }
    Ok(())
}

/// Does `affinity` select `cluster`, without the reason.
pub(crate) fn matches(affinity: &ClusterAffinity, cluster: &Cluster) -> bool {
    self::affinity(affinity, cluster).is_ok()
}

fn labels(sel: &LabelSelector, cluster: &Cluster) -> Result<(), Reason> {
    flotilla_apis::labels::check(sel, cluster.metadata.labels.as_ref(), "cluster")
}

fn fields(sel: &FieldSelector, cluster: &Cluster) -> Result<(), Reason> {
    for req in &sel.match_expressions {
        let value = match req.key.as_str() {
            "provider" => cluster.spec.provider.as_deref(),
            "region" => cluster.spec.region.as_deref(),
            "zone" => cluster.spec.zone.as_deref(),
            other => {
                return Err(format!(
                    "fieldSelector key {other:?} is not one of provider, region, zone"
                ))
            }
        };
        requirement(
            "field",
            &req.key,
            &req.operator,
            req.values.as_deref(),
            value,
            "cluster",
        )?;
    }
    Ok(())
}
