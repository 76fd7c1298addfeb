//! core/v1 kinds the hub serves as stored objects although it runs nothing for them: pods and
//! their templates, replication controllers, nodes, persistent volumes, and the namespace
//! policies (limit ranges, resource quotas) whose behaviour lives in admission.

use k8s_openapi::api::core::v1 as core;

use super::{age, col, entry, x, PrinterColumn, ResourceInfo, ScaleSpec};

/// `Created At`: the column kube-apiserver's default table gives a kind without a printer.
fn created_at() -> PrinterColumn {
    col("Created At", "date", 0, ".metadata.creationTimestamp")
}

/// The core/v1 kinds added for conformance, columns as `kubectl get` shows them from a cluster
/// (`pkg/printers/internalversion`).
pub(super) fn resources() -> Vec<ResourceInfo> {
    let mut rc = entry::<core::ReplicationController>(x(
        &["rc"],
        &["all"],
        true,
        true,
        vec![
            col("Desired", "integer", 0, ".spec.replicas"),
            col("Current", "integer", 0, "@statusreplicas"),
            col("Ready", "integer", 0, "@readyreplicas"),
            age(),
            col("Containers", "string", 1, "@containers"),
            col("Images", "string", 1, "@images"),
            col("Selector", "string", 1, "@svcselector"),
        ],
    ));
    // A replication controller's selector is a plain label map, not a LabelSelector.
    rc.scale = Some(ScaleSpec {
        spec_replicas_path: ".spec.replicas".into(),
        status_replicas_path: ".status.replicas".into(),
        label_selector_path: Some("@mapselector".into()),
    });
    vec![
        entry::<core::ResourceQuota>(x(
            &["quota"],
            &[],
            true,
            false,
            vec![
                age(),
                col("Request", "string", 0, "@quotarequest"),
                col("Limit", "string", 0, "@quotalimit"),
            ],
        )),
        entry::<core::LimitRange>(x(&["limits"], &[], false, false, vec![created_at()])),
        entry::<core::Pod>(x(
            &["po"],
            &["all"],
            true,
            false,
            vec![
                col("Ready", "string", 0, "@podready"),
                col("Status", "string", 0, "@podstatus"),
                col("Restarts", "string", 0, "@podrestarts"),
                age(),
                col("IP", "string", 1, "@podip"),
                col("Node", "string", 1, "@podnode"),
                col("Nominated Node", "string", 1, "@podnominated"),
                col("Readiness Gates", "string", 1, "@podgates"),
            ],
        )),
        entry::<core::PodTemplate>(x(
            &[],
            &[],
            false,
            false,
            vec![
                col("Containers", "string", 0, "@tplcontainers"),
                col("Images", "string", 0, "@tplimages"),
                col("Pod Labels", "string", 0, "@tpllabels"),
            ],
        )),
        rc,
        entry::<core::Node>(x(
            &["no"],
            &[],
            true,
            false,
            vec![
                col("Status", "string", 0, "@nodestatus"),
                col("Roles", "string", 0, "@noderoles"),
                age(),
                col("Version", "string", 0, ".status.nodeInfo.kubeletVersion"),
                col("Internal-IP", "string", 1, "@nodeinternalip"),
                col("External-IP", "string", 1, "@nodeexternalip"),
                col("OS-Image", "string", 1, "@nodeosimage"),
                col("Kernel-Version", "string", 1, "@nodekernel"),
                col("Container-Runtime", "string", 1, "@noderuntime"),
            ],
        )),
        entry::<core::PersistentVolume>(x(
            &["pv"],
            &[],
            true,
            false,
            vec![
                col("Capacity", "string", 0, ".spec.capacity.storage"),
                col("Access Modes", "string", 0, "@pvaccessmodes"),
                col(
                    "Reclaim Policy",
                    "string",
                    0,
                    ".spec.persistentVolumeReclaimPolicy",
                ),
                col("Status", "string", 0, ".status.phase"),
                col("Claim", "string", 0, "@pvclaim"),
                col("StorageClass", "string", 0, ".spec.storageClassName"),
                col("VolumeAttributesClass", "string", 0, "@pvattrclass"),
                col("Reason", "string", 0, ".status.reason"),
                age(),
                col("VolumeMode", "string", 1, ".spec.volumeMode"),
            ],
        )),
    ]
}
