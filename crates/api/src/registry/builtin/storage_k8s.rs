//! `storage.k8s.io/v1`: storage classes, CSI drivers, CSI nodes, CSI storage capacities and
//! volume attachments, served as stored objects (the hub attaches nothing).

use k8s_openapi::api::storage::v1 as storage;

use super::{age, col, entry, x, ResourceInfo};

/// Columns as `kubectl get` shows them from a cluster (`pkg/printers/internalversion`).
pub(super) fn resources() -> Vec<ResourceInfo> {
    vec![
        entry::<storage::StorageClass>(x(
            &["sc"],
            &[],
            false,
            false,
            vec![
                col("Provisioner", "string", 0, ".provisioner"),
                col("ReclaimPolicy", "string", 0, "@reclaimpolicy"),
                col("VolumeBindingMode", "string", 0, "@bindingmode"),
                col("AllowVolumeExpansion", "string", 0, "@allowexpansion"),
                age(),
            ],
        )),
        entry::<storage::CSIDriver>(x(
            &[],
            &[],
            false,
            false,
            vec![
                col("AttachRequired", "boolean", 0, ".spec.attachRequired"),
                col("PodInfoOnMount", "boolean", 0, ".spec.podInfoOnMount"),
                col("StorageCapacity", "boolean", 0, ".spec.storageCapacity"),
                col("TokenRequests", "string", 0, "@csitokenrequests"),
                col("RequiresRepublish", "boolean", 0, ".spec.requiresRepublish"),
                col("Modes", "string", 0, "@csimodes"),
                age(),
            ],
        )),
        entry::<storage::CSINode>(x(
            &[],
            &[],
            false,
            false,
            vec![col("Drivers", "integer", 0, "@csinodedrivers"), age()],
        )),
        entry::<storage::CSIStorageCapacity>(x(
            &[],
            &[],
            false,
            false,
            vec![
                col("StorageClassName", "string", 0, ".storageClassName"),
                col("Capacity", "string", 0, ".capacity"),
            ],
        )),
        entry::<storage::VolumeAttachment>(x(
            &[],
            &[],
            true,
            false,
            vec![
                col("Attacher", "string", 0, ".spec.attacher"),
                col("PV", "string", 0, ".spec.source.persistentVolumeName"),
                col("Node", "string", 0, ".spec.nodeName"),
                col("Attached", "boolean", 0, ".status.attached"),
                age(),
            ],
        )),
    ]
}
