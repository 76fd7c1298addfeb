//! The API enablements of a simulated cluster: what discovery reports on a plain Kubernetes
//! cluster, as one table of group/versions and their resources (kept apart from the fleet's
//! generator in `sim.rs` because it is long and never changes).

use flotilla_apis::cluster::v1alpha1::{ApiEnablement, ApiResource};

/// What discovery reports on a plain Kubernetes 1.33 cluster (the groups a scheduler sees,
/// with the resources the benchmark's kinds need and a few beside them), sorted as the agent
/// sorts them.
pub(super) fn api_enablements() -> Vec<ApiEnablement> {
    let table: &[(&str, &[(&str, &str)])] = &[
        (
            "admissionregistration.k8s.io/v1",
            &[
                (
                    "mutatingwebhookconfigurations",
                    "MutatingWebhookConfiguration",
                ),
                (
                    "validatingwebhookconfigurations",
                    "ValidatingWebhookConfiguration",
                ),
            ],
        ),
        (
            "apiextensions.k8s.io/v1",
            &[("customresourcedefinitions", "CustomResourceDefinition")],
        ),
        (
            "apiregistration.k8s.io/v1",
            &[("apiservices", "APIService")],
        ),
        (
            "apps/v1",
            &[
                ("controllerrevisions", "ControllerRevision"),
                ("daemonsets", "DaemonSet"),
                ("deployments", "Deployment"),
                ("replicasets", "ReplicaSet"),
                ("statefulsets", "StatefulSet"),
            ],
        ),
        (
            "authentication.k8s.io/v1",
            &[("tokenreviews", "TokenReview")],
        ),
        (
            "authorization.k8s.io/v1",
            &[("subjectaccessreviews", "SubjectAccessReview")],
        ),
        (
            "autoscaling/v1",
            &[("horizontalpodautoscalers", "HorizontalPodAutoscaler")],
        ),
        (
            "autoscaling/v2",
            &[("horizontalpodautoscalers", "HorizontalPodAutoscaler")],
        ),
        ("batch/v1", &[("cronjobs", "CronJob"), ("jobs", "Job")]),
        (
            "certificates.k8s.io/v1",
            &[("certificatesigningrequests", "CertificateSigningRequest")],
        ),
        ("coordination.k8s.io/v1", &[("leases", "Lease")]),
        (
            "discovery.k8s.io/v1",
            &[("endpointslices", "EndpointSlice")],
        ),
        ("events.k8s.io/v1", &[("events", "Event")]),
        (
            "flowcontrol.apiserver.k8s.io/v1",
            &[
                ("flowschemas", "FlowSchema"),
                ("prioritylevelconfigurations", "PriorityLevelConfiguration"),
            ],
        ),
        (
            "networking.k8s.io/v1",
            &[
                ("ingressclasses", "IngressClass"),
                ("ingresses", "Ingress"),
                ("networkpolicies", "NetworkPolicy"),
            ],
        ),
        ("node.k8s.io/v1", &[("runtimeclasses", "RuntimeClass")]),
        (
            "policy/v1",
            &[("poddisruptionbudgets", "PodDisruptionBudget")],
        ),
        (
            "rbac.authorization.k8s.io/v1",
            &[
                ("clusterrolebindings", "ClusterRoleBinding"),
                ("clusterroles", "ClusterRole"),
                ("rolebindings", "RoleBinding"),
                ("roles", "Role"),
            ],
        ),
        (
            "scheduling.k8s.io/v1",
            &[("priorityclasses", "PriorityClass")],
        ),
        (
            "storage.k8s.io/v1",
            &[
                ("csidrivers", "CSIDriver"),
                ("csinodes", "CSINode"),
                ("storageclasses", "StorageClass"),
                ("volumeattachments", "VolumeAttachment"),
            ],
        ),
        (
            "v1",
            &[
                ("configmaps", "ConfigMap"),
                ("endpoints", "Endpoints"),
                ("events", "Event"),
                ("limitranges", "LimitRange"),
                ("namespaces", "Namespace"),
                ("nodes", "Node"),
                ("persistentvolumeclaims", "PersistentVolumeClaim"),
                ("persistentvolumes", "PersistentVolume"),
                ("pods", "Pod"),
                ("resourcequotas", "ResourceQuota"),
                ("secrets", "Secret"),
                ("serviceaccounts", "ServiceAccount"),
                ("services", "Service"),
            ],
        ),
    ];
    table
        .iter()
        .map(|(gv, resources)| ApiEnablement {
            group_version: (*gv).to_owned(),
            resources: resources
                .iter()
                .map(|(name, kind)| ApiResource {
                    name: (*name).to_owned(),
                    kind: (*kind).to_owned(),
                })
                .collect(),
        })
        .collect()
}
