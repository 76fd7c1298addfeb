//! The objects the benchmark creates: Works of small ConfigMaps, all labelled with the run
//! ([`RUN_LABEL`]) so watches, cleanup and the check for leftovers in the members see only this
//! run's objects.

use std::collections::BTreeMap;

use flotilla_apis::work::v1alpha1::{Manifest, Work, WorkSpec};
use serde_json::json;

use crate::track::RUN_LABEL;

/// The namespace the ConfigMaps are applied to in the members.
pub const BENCH_NAMESPACE: &str = "bench-work";
/// Bytes of data in each ConfigMap.
pub const DATA_BYTES: usize = 256;

/// A Work `name` in `namespace` (an execution namespace) holding one ConfigMap per name in
/// `configmaps`, each with [`DATA_BYTES`] of data.
pub fn work(run: &str, namespace: &str, name: &str, configmaps: &[String]) -> Work {
    let labels = BTreeMap::from([(RUN_LABEL.to_string(), run.to_string())]);
    let payload = "x".repeat(DATA_BYTES);
    let manifests = configmaps
        .iter()
        .map(|cm| {
            Manifest(json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": cm, "namespace": BENCH_NAMESPACE, "labels": labels},
                "data": {"payload": payload},
            }))
        })
        .collect();
    let mut w = Work::new(
        name,
        WorkSpec {
            manifests,
            ..WorkSpec::default()
        },
    );
    w.metadata.namespace = Some(namespace.to_string());
    w.metadata.labels = Some(labels);
    w
}

/// Split `total` manifests into Works of at most `per_work`: the sizes of the Works.
pub fn batches(total: usize, per_work: usize) -> Vec<usize> {
    let per_work = per_work.max(1);
    let mut out = vec![per_work; total / per_work];
    if !total.is_multiple_of(per_work) {
        out.push(total % per_work);
    }
    out
}

#[cfg(test)]
mod tests;
