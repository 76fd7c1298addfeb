"""What scripts/conformance runs: the selection of upstream e2e specs, and why each one left out
is left out. Kept apart from the runner so the list reads as a document.

The selection has two parts:
  * every `[sig-api-machinery]` spec of the e2e binary, less the tags and specs below;
  * the `[Conformance]` specs of the other groups that only exercise an API (no pod has to run
    or serve, no node has to exist), listed by name in OTHER_GROUPS.
"""

import re

# Specs with these tags are not part of the selection (as for a conformance run of any server).
EXCLUDED_TAGS = {
    "Feature:": "needs an optional feature the conformance profile does not include",
    "Alpha": "alpha API, off by default in kube-apiserver too",
    "Beta": "beta feature gate, off by default",
    "Disruptive": "disrupts the cluster under test (kills etcd, restarts the server)",
    "Flaky": "marked flaky upstream",
    "Slow": "marked slow upstream (minutes of waiting)",
}

_TAG_RE = re.compile(r"\[(Feature:[^\]]*|Alpha|Beta|Disruptive|Flaky|Slow)\]")

# api-machinery specs left out, by a substring of their name, with the reason. Only what needs a
# pod to run or to serve, or a workload controller the hub does not run by design (the hub
# propagates workloads to member clusters; it runs none itself).
SKIPPED = [
    ("AdmissionWebhook [Privileged:ClusterAdmin]",
     "the webhook server is a pod of the suite (agnhost) behind a Service: the hub runs no pods; "
     "webhooks by URL are covered by the hub's own suite"),
    ("CustomResourceConversionWebhook",
     "the conversion webhook server is a pod of the suite"),
    ("CustomResourceFieldSelectors [Privileged:ClusterAdmin] CustomResourceFieldSelectors MUST",
     "its BeforeEach deploys the CRD conversion webhook as a pod of the suite"),
    ("Namespaces [Serial] should ensure that all pods are removed when a namespace is deleted",
     "waits for its pod to be Running before deleting the namespace: the hub runs no pods "
     "(namespace deletion removing every object is covered by the services spec and the hub's "
     "own suite)"),
    ("Generated clientset should create pods, set the deletionTimestamp",
     "waits for the pod to be Running: the hub runs no pods"),
    ("Servers with support for Table transformation should return generic metadata details "
     "across all namespaces for nodes",
     "expects at least one Node: the hub has no nodes (it runs no kubelet); Tables of other "
     "kinds are checked by the other Table specs"),
    ("Aggregator Should be able to support the 1.17 Sample API Server",
     "the sample aggregated API server is a pod of the suite"),
    ("OpenAPIV3 should contain OpenAPI V3 for Aggregated APIServer",
     "the sample aggregated API server is a pod of the suite"),
    ("Garbage collector should delete RS created by deployment when not orphaning",
     "waits for the Deployment controller to create ReplicaSets: the hub propagates Deployments, "
     "it does not run them"),
    ("Garbage collector should orphan RS created by deployment",
     "waits for the Deployment controller to create ReplicaSets: the hub propagates Deployments, "
     "it does not run them"),
    ("Garbage collector should delete pods created by rc when not orphaning",
     "waits for the ReplicationController manager to create pods: the hub runs no workload "
     "controller"),
    ("Garbage collector should orphan pods created by rc if delete options say so",
     "waits for the ReplicationController manager to create pods: the hub runs no workload "
     "controller"),
    ("Garbage collector should orphan pods created by rc if deleteOptions.OrphanDependents is nil",
     "waits for the ReplicationController manager to create pods: the hub runs no workload "
     "controller"),
    ("Garbage collector should keep the rc around until all its pods are deleted",
     "waits for the ReplicationController manager to create pods: the hub runs no workload "
     "controller"),
    ("Garbage collector should not delete dependents that have both valid owner and owner that's "
     "waiting for dependents to be deleted",
     "sizes its ReplicationControllers from the ready nodes and waits for the ReplicationController "
     "manager to create their pods: the hub has no nodes and runs no workload controller (the "
     "collector behaviour it checks is covered by the hub's own suite)"),
    ("Garbage collector should delete jobs and pods created by cronjob",
     "waits for the CronJob and Job controllers to create Jobs and pods: the hub runs no workload "
     "controller"),
]

# The [Conformance] specs of the other groups that only exercise an API, by exact name (after
# the group tag). Left out of these groups: everything that waits for a pod to run, a node to be
# ready, a workload controller, DNS or a network path: e.g. the PodDisruptionBudget status specs
# that wait for Ready pods, and the two VolumeAttachment specs, which attach to a randomly chosen
# Node and panic when there is none (the hub has no nodes).
OTHER_GROUPS = [
    "[sig-apps] CronJob should support CronJob API operations",
    "[sig-apps] DisruptionController should create a PodDisruptionBudget",
    "[sig-apps] DisruptionController Listing PodDisruptionBudgets for all namespaces should list "
    "and delete a collection of PodDisruptionBudgets",
    "[sig-auth] SubjectReview should support SubjectReview API operations",
    "[sig-auth] ServiceAccounts should update a ServiceAccount",
    "[sig-auth] ServiceAccounts should run through the lifecycle of a ServiceAccount",
    "[sig-auth] ServiceAccounts should guarantee kube-root-ca.crt exist in any namespace",
    "[sig-auth] ServiceAccounts should create a serviceAccountToken and ensure a successful "
    "TokenReview",
    "[sig-auth] Certificates API [Privileged:ClusterAdmin] should support CSR API operations",
    "[sig-cli] Kubectl client Kubectl version should check is all data is printed",
    "[sig-cli] Kubectl client Kubectl api-versions should check if v1 is in available api versions",
    "[sig-cli] Kubectl client Kubectl cluster-info should check if Kubernetes control plane "
    "services is included in cluster-info",
    "[sig-cli] Kubectl client Kubectl diff should check if kubectl diff finds a difference for "
    "Deployments",
    "[sig-cli] Kubectl client Proxy server should support proxy with --port 0",
    "[sig-cli] Kubectl client Proxy server should support --unix-socket=/path",
    "[sig-instrumentation] Events API should ensure that an event can be fetched, patched, "
    "deleted, and listed",
    "[sig-instrumentation] Events API should delete a collection of events",
    "[sig-instrumentation] Events should manage the lifecycle of an event",
    "[sig-instrumentation] Events should delete a collection of events",
    "[sig-network] IngressClass API should support creating IngressClass API operations",
    "[sig-network] Ingress API should support creating Ingress API operations",
    "[sig-network] EndpointSlice should support creating EndpointSlice API operations",
    "[sig-network] EndpointSlice should have Endpoints and EndpointSlices pointing to API Server",
    "[sig-network] Services should provide secure master service",
    "[sig-network] Services should delete a collection of services",
    "[sig-network] Services should find a service from listing all namespaces",
    "[sig-network] Services should test the lifecycle of an Endpoint",
    "[sig-network] Services should complete a service status lifecycle",
    "[sig-node] PodTemplates should run the lifecycle of PodTemplates",
    "[sig-node] PodTemplates should replace a pod template",
    "[sig-node] PodTemplates should delete a collection of pod templates",
    "[sig-node] Lease lease API should be available",
    "[sig-node] ConfigMap should fail to create ConfigMap with empty key",
    "[sig-node] ConfigMap should run through a ConfigMap lifecycle",
    "[sig-node] Secrets should patch a secret",
    "[sig-node] Secrets should fail to create secret due to empty secret key",
    "[sig-node] RuntimeClass should support RuntimeClasses API operations",
    "[sig-node] RuntimeClass should reject a Pod requesting a non-existent RuntimeClass",
    "[sig-node] RuntimeClass should reject a Pod requesting a deleted RuntimeClass",
    "[sig-node] Node Lifecycle should run through the lifecycle of a node",
    "[sig-storage] Secrets should be immutable if `immutable` field is set",
    "[sig-storage] ConfigMap should be immutable if `immutable` field is set",
    "[sig-scheduling] LimitRange should list, patch and delete a LimitRange by collection",
    "[sig-scheduling] LimitRange should create a LimitRange with defaults and ensure pod has "
    "those defaults applied.",
    "[sig-storage] CSIInlineVolumes should run through the lifecycle of a CSIDriver",
    "[sig-storage] CSIInlineVolumes should support CSIVolumeSource in Pod API",
    "[sig-storage] StorageClasses CSI Conformance should run through the lifecycle of a "
    "StorageClass",
    "[sig-storage] PersistentVolumes CSI Conformance should run through the lifecycle of a PV and "
    "a PVC",
    "[sig-storage] PersistentVolumes CSI Conformance should apply changes to a pv/pvc status",
    "[sig-storage] CSINodes CSI Conformance should run through the lifecycle of a csinode",
    "[sig-storage] CSIStorageCapacity should support CSIStorageCapacities API operations",
]

# Specs that legitimately take long; the rest get the runner's --spec-timeout.
LONG = {
    "Namespaces [Serial] should delete fast enough": 420,
    "API priority and fairness should ensure that requests can't be drowned out": 420,
    "Server request timeout the request should be served with a default timeout": 240,
}


def excluded_tag(name):
    """The reason a spec's tags exclude it, or None."""
    m = _TAG_RE.search(name)
    if not m:
        return None
    tag = m.group(1)
    return EXCLUDED_TAGS["Feature:" if tag.startswith("Feature:") else tag]


def skipped(name):
    """The reason an api-machinery spec is left out, or None."""
    for needle, why in SKIPPED:
        if needle in name:
            return why
    return None


def timeout_for(name, default):
    for needle, secs in LONG.items():
        if needle in name:
            return max(secs, default)
    return default
