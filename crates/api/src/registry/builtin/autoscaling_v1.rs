//! autoscaling/v1 HorizontalPodAutoscalers: the autoscaling/v2 objects (their storage
//! version) served at v1 as kube-apiserver serves them, converted by
//! [`crate::registry::storage`]; printed with the same columns.

use k8s_openapi::api::autoscaling::v1 as autoscaling;

use super::{age, col, entry, x};
use crate::registry::ResourceInfo;

/// HorizontalPodAutoscalers at v1.
pub(super) fn resources() -> Vec<ResourceInfo> {
    let mut hpa = entry::<autoscaling::HorizontalPodAutoscaler>(x(
        &["hpa"],
        &["all"],
        true,
        false,
        vec![
            col("Reference", "string", 0, "@scaletarget"),
            col("MinPods", "integer", 0, ".spec.minReplicas"),
            col("MaxPods", "integer", 0, ".spec.maxReplicas"),
            col("Replicas", "integer", 0, ".status.currentReplicas"),
            age(),
        ],
    ));
    // Stored at v2: lookups by kind, namespace cleanup and quota use that entry.
    hpa.storage_version = false;
    vec![hpa]
}
