//! Built-in kinds of the smaller groups the hub serves as stored objects: `apps/v1`
//! ControllerRevisions, `discovery.k8s.io/v1` EndpointSlices, `networking.k8s.io/v1`
//! IngressClasses, `scheduling.k8s.io/v1` PriorityClasses, `node.k8s.io/v1` RuntimeClasses and
//! `certificates.k8s.io/v1` CertificateSigningRequests.

use k8s_openapi::api::{
    apps::v1 as apps, certificates::v1 as certificates, discovery::v1 as discovery,
    networking::v1 as networking, node::v1 as node, scheduling::v1 as scheduling,
};

use super::{age, col, entry, x, ResourceInfo};

/// Columns as `kubectl get` shows them from a cluster (`pkg/printers/internalversion`).
pub(super) fn resources() -> Vec<ResourceInfo> {
    vec![
        entry::<discovery::EndpointSlice>(x(
            &[],
            &[],
            false,
            false,
            vec![
                col("AddressType", "string", 0, ".addressType"),
                col("Ports", "string", 0, "@sliceports"),
                col("Endpoints", "string", 0, "@sliceendpoints"),
                age(),
            ],
        )),
        entry::<apps::ControllerRevision>(x(
            &[],
            &[],
            false,
            false,
            vec![
                col("Controller", "string", 0, "@revisioncontroller"),
                col("Revision", "integer", 0, ".revision"),
                age(),
            ],
        )),
        entry::<networking::IngressClass>(x(
            &[],
            &[],
            false,
            false,
            vec![
                col("Controller", "string", 0, ".spec.controller"),
                col("Parameters", "string", 0, "@ingressclassparams"),
                age(),
            ],
        )),
        entry::<scheduling::PriorityClass>(x(
            &["pc"],
            &[],
            false,
            false,
            vec![
                col("Value", "integer", 0, ".value"),
                col("Global-Default", "boolean", 0, "@globaldefault"),
                age(),
                col("PreemptionPolicy", "string", 0, ".preemptionPolicy"),
            ],
        )),
        entry::<node::RuntimeClass>(x(
            &[],
            &[],
            false,
            false,
            vec![col("Handler", "string", 0, ".handler"), age()],
        )),
        entry::<certificates::CertificateSigningRequest>(x(
            &["csr"],
            &[],
            true,
            false,
            vec![
                age(),
                col("SignerName", "string", 0, ".spec.signerName"),
                col("Requestor", "string", 0, ".spec.username"),
                col("RequestedDuration", "string", 0, "@csrduration"),
                col("Condition", "string", 0, "@csrcondition"),
            ],
        )),
    ]
}
