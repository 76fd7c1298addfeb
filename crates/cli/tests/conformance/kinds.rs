//! Conformance: every built-in resource of Kubernetes 1.32 is served as a stored object, with
//! kube-apiserver's discovery entry, defaults, validation, subresources and `kubectl get`
//! columns. The hub stores and propagates pods, nodes, volumes and the rest; it runs nothing
//! for them. Typed kubectl commands (`run`, `create priorityclass|quota`, `certificate
//! approve`, `scale`) send protobuf, so they also prove the protobuf path for these kinds.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{json, Hub};

/// A certificate request (openssl, P-256, CN e2e.example.com).
const CSR_PEM: &str = "-----BEGIN CERTIFICATE REQUEST-----
MIHTMHwCAQAwGjEYMBYGA1UEAwwPZTJlLmV4YW1wbGUuY29tMFkwEwYHKoZIzj0C
AQYIKoZIzj0DAQcDQgAE+wJ828bMjLor8Uoraxhiz53yR3JAg0E67KWyAoBjp/94
YefNUGr6Y8+Tc9rFlBFHulo2U29Gg6C5QL37W4v6t6AAMAoGCCqGSM49BAMCA0cA
MEQCIHjLEiZLEl4NQizmnl0+9goo5Pd5ieMvPhzDFqhxXw3zAiA30L3d38pb7EuP
EsSdCrtMUTcS8+6mQ1HSGdFFZ+jxcA==
-----END CERTIFICATE REQUEST-----
";

fn get(hub: &Hub, args: &[&str]) -> Value {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "json"]);
    json(&hub.ok(&all))
}

/// The row of `kubectl get` for one object, split on runs of spaces (no header).
fn row(hub: &Hub, args: &[&str]) -> Vec<String> {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    all.push("--no-headers");
    let out = hub.ok(&all);
    out.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(String::from)
        .collect()
}

#[test]
fn api_resources_lists_the_kinds_of_kube_apiserver() {
    let hub = Hub::start();
    let out = hub.ok(&["api-resources", "--no-headers"]);
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    // NAME [SHORTNAMES] APIVERSION NAMESPACED KIND, as kube-apiserver 1.32 lists them.
    let want: &[&[&str]] = &[
        &["pods", "po", "v1", "true", "Pod"],
        &["podtemplates", "v1", "true", "PodTemplate"],
        &[
            "replicationcontrollers",
            "rc",
            "v1",
            "true",
            "ReplicationController",
        ],
        &["limitranges", "limits", "v1", "true", "LimitRange"],
        &["resourcequotas", "quota", "v1", "true", "ResourceQuota"],
        &["nodes", "no", "v1", "false", "Node"],
        &["persistentvolumes", "pv", "v1", "false", "PersistentVolume"],
        &[
            "controllerrevisions",
            "apps/v1",
            "true",
            "ControllerRevision",
        ],
        &[
            "endpointslices",
            "discovery.k8s.io/v1",
            "true",
            "EndpointSlice",
        ],
        &[
            "ingressclasses",
            "networking.k8s.io/v1",
            "false",
            "IngressClass",
        ],
        &[
            "priorityclasses",
            "pc",
            "scheduling.k8s.io/v1",
            "false",
            "PriorityClass",
        ],
        &["runtimeclasses", "node.k8s.io/v1", "false", "RuntimeClass"],
        &[
            "storageclasses",
            "sc",
            "storage.k8s.io/v1",
            "false",
            "StorageClass",
        ],
        &["csidrivers", "storage.k8s.io/v1", "false", "CSIDriver"],
        &["csinodes", "storage.k8s.io/v1", "false", "CSINode"],
        &[
            "csistoragecapacities",
            "storage.k8s.io/v1",
            "true",
            "CSIStorageCapacity",
        ],
        &[
            "volumeattachments",
            "storage.k8s.io/v1",
            "false",
            "VolumeAttachment",
        ],
        &[
            "certificatesigningrequests",
            "csr",
            "certificates.k8s.io/v1",
            "false",
            "CertificateSigningRequest",
        ],
    ];
    for w in want {
        assert!(
            rows.iter().any(|r| r.as_slice() == *w),
            "kubectl api-resources lacks {w:?}:\n{out}"
        );
    }
    let core = json(&hub.ok(&["get", "--raw", "/api/v1"]));
    let eviction = core["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["name"] == "pods/eviction"))
        .unwrap_or_else(|| panic!("no pods/eviction in {core}"));
    assert_eq!(
        (&eviction["group"], &eviction["kind"]),
        (&Value::from("policy"), &Value::from("Eviction"))
    );
    let csr = hub.ok(&["get", "--raw", "/apis/certificates.k8s.io/v1"]);
    for sub in [
        "certificatesigningrequests/approval",
        "certificatesigningrequests/status",
    ] {
        assert!(csr.contains(&format!("\"{sub}\"")), "{sub} missing: {csr}");
    }
}

#[test]
fn a_pod_is_stored_with_kube_defaults_and_runs_nowhere() {
    let hub = Hub::start();
    // kubectl run sends the pod as protobuf.
    hub.ok(&["run", "web", "--image=nginx", "--labels=app=web"]);
    let pod = get(&hub, &["pod", "web"]);
    let spec = &pod["spec"];
    let c = &spec["containers"][0];
    assert_eq!(c["imagePullPolicy"], "Always", "{pod}");
    assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(c["terminationMessagePolicy"], "File");
    for (field, want) in [
        ("restartPolicy", Value::from("Always")),
        ("dnsPolicy", Value::from("ClusterFirst")),
        ("schedulerName", Value::from("default-scheduler")),
        ("terminationGracePeriodSeconds", Value::from(30)),
        ("enableServiceLinks", Value::from(true)),
        ("serviceAccountName", Value::from("default")),
        ("priority", Value::from(0)),
        ("preemptionPolicy", Value::from("PreemptLowerPriority")),
        ("securityContext", serde_json::json!({})),
    ] {
        assert_eq!(spec[field], want, "spec.{field} of {pod}");
    }
    assert_eq!(
        pod["status"],
        serde_json::json!({"phase": "Pending", "qosClass": "BestEffort"})
    );
    assert_eq!(row(&hub, &["pod", "web"])[1..3], ["0/1", "Pending"]);

    // /status changes status (and metadata); the main resource does not.
    hub.ok(&[
        "patch",
        "pod",
        "web",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Running","podIP":"10.1.2.3","podIPs":[{"ip":"10.1.2.3"}]}}"#,
    ]);
    hub.ok(&[
        "patch",
        "pod",
        "web",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Failed"}}"#,
    ]);
    let pod = get(&hub, &["pod", "web"]);
    assert_eq!(pod["status"]["phase"], "Running", "{pod}");
    assert_eq!(pod["spec"]["restartPolicy"], "Always");
    let wide = hub.ok(&["get", "pod", "web", "-o", "wide", "--no-headers"]);
    assert!(wide.contains("10.1.2.3"), "{wide}");

    // Only an image (among what kube allows) changes on an update.
    hub.ok(&["set", "image", "pod/web", "web=nginx:1.27"]);
    let err = hub.fails(&[
        "patch",
        "pod",
        "web",
        "--type=merge",
        "-p",
        r#"{"spec":{"restartPolicy":"Never"}}"#,
    ]);
    assert!(
        err.contains("pod updates may not change fields other than"),
        "{err}"
    );

    // ValidatePodSpec: a container needs an image.
    let imageless = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bad"},
        "spec":{"containers":[{"name":"c"}]}}"#;
    let out = hub.kubectl_stdin(&["create", "-f", "-"], imageless);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("spec.containers[0].image: Required value"),
        "{err}"
    );

    // kubectl debug adds an ephemeral container through pods/ephemeralcontainers; the main
    // resource cannot change them.
    hub.ok(&["debug", "web", "--image=busybox", "--container=debugger"]);
    let pod = get(&hub, &["pod", "web"]);
    assert_eq!(
        pod["spec"]["ephemeralContainers"][0]["name"], "debugger",
        "{pod}"
    );
    let err = hub.fails(&[
        "patch",
        "pod",
        "web",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/spec/ephemeralContainers"}]"#,
    ]);
    assert!(
        err.contains("pod updates may not change fields other than"),
        "{err}"
    );

    // No kubelet: logs and exec say so.
    let err = hub.fails(&["logs", "web"]);
    assert!(err.contains("does not have a host assigned"), "{err}");

    // binding assigns a node once; eviction deletes the pod.
    let binding = r#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"web"},"target":{"kind":"Node","name":"n1"}}"#;
    let path = "/api/v1/namespaces/default/pods/web/binding";
    hub.ok_stdin(&["create", "--raw", path, "-f", "-"], binding);
    assert_eq!(get(&hub, &["pod", "web"])["spec"]["nodeName"], "n1");
    let out = hub.kubectl_stdin(&["create", "--raw", path, "-f", "-"], binding);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("already assigned"),
        "{err}"
    );
    let eviction = r#"{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"web","namespace":"default"}}"#;
    hub.ok_stdin(
        &[
            "create",
            "--raw",
            "/api/v1/namespaces/default/pods/web/eviction",
            "-f",
            "-",
        ],
        eviction,
    );
    let gone = hub.kubectl(&["get", "pod", "web"]);
    assert!(!gone.status.success(), "an evicted pod is deleted");
}

#[test]
fn priority_classes_are_judged_as_kube_apiserver_judges_them() {
    let hub = Hub::start();
    let deadline = Instant::now() + Duration::from_secs(10);
    while hub
        .kubectl(&["get", "pc", "system-node-critical"])
        .status
        .code()
        != Some(0)
    {
        assert!(Instant::now() < deadline, "no system priority classes");
        std::thread::sleep(Duration::from_millis(100));
    }
    let node_critical = get(&hub, &["pc", "system-node-critical"]);
    assert_eq!(node_critical["value"], 2_000_001_000);
    assert_eq!(node_critical["preemptionPolicy"], "PreemptLowerPriority");
    let err = hub.fails(&["delete", "pc", "system-cluster-critical"]);
    assert!(
        err.contains("this is a system priority class and cannot be deleted"),
        "{err}"
    );

    // OpenAPI v3 has the group (kubectl explain reads it).
    let explained = hub.ok(&["explain", "priorityclass.preemptionPolicy"]);
    assert!(explained.contains("PreemptLowerPriority"), "{explained}");
    let v3 = hub.ok(&["get", "--raw", "/openapi/v3"]);
    for gv in [
        "apis/scheduling.k8s.io/v1",
        "apis/storage.k8s.io/v1",
        "apis/certificates.k8s.io/v1",
    ] {
        assert!(v3.contains(&format!("\"{gv}\"")), "{gv} missing from {v3}");
    }

    // kubectl create priorityclass sends protobuf.
    hub.ok(&[
        "create",
        "priorityclass",
        "high",
        "--value=1000",
        "--description=d",
    ]);
    assert_eq!(row(&hub, &["pc", "high"])[1..3], ["1000", "false"]);
    let err = hub.fails(&[
        "patch",
        "pc",
        "high",
        "--type=merge",
        "-p",
        r#"{"value":10000}"#,
    ]);
    assert!(
        err.contains("value: Forbidden: may not be changed in an update."),
        "{err}"
    );
    hub.ok(&[
        "patch",
        "pc",
        "high",
        "--type=merge",
        "-p",
        r#"{"description":"updated"}"#,
    ]);
    let err = hub.fails(&["create", "priorityclass", "system-mine", "--value=1"]);
    assert!(err.contains("reserved for system use only"), "{err}");

    hub.ok(&[
        "create",
        "priorityclass",
        "fallback",
        "--value=7",
        "--global-default",
    ]);
    let err = hub.fails(&[
        "create",
        "priorityclass",
        "other",
        "--value=8",
        "--global-default",
    ]);
    assert!(
        err.contains(
            "PriorityClass fallback is already marked as default. Only one default can exist"
        ),
        "{err}"
    );

    // Pods take their priority from their class, or the global default one.
    hub.ok(&["run", "plain", "--image=nginx:1"]);
    let plain = get(&hub, &["pod", "plain"]);
    assert_eq!(
        (
            &plain["spec"]["priorityClassName"],
            &plain["spec"]["priority"]
        ),
        (&Value::from("fallback"), &Value::from(7))
    );
    let pod = |name: &str, class: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}"}},
                "spec":{{"priorityClassName":"{class}","containers":[{{"name":"c","image":"nginx:1"}}]}}}}"#
        )
    };
    hub.ok_stdin(&["create", "-f", "-"], &pod("urgent", "high"));
    assert_eq!(get(&hub, &["pod", "urgent"])["spec"]["priority"], 1000);
    let out = hub.kubectl_stdin(&["create", "-f", "-"], &pod("lost", "nope"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("pods \"lost\" is forbidden: no PriorityClass with name nope was found"),
        "{err}"
    );
}

#[test]
fn certificate_signing_requests_change_approval_only_through_approval() {
    use base64::Engine as _;
    let hub = Hub::start();
    let request = base64::engine::general_purpose::STANDARD.encode(CSR_PEM);
    let csr = format!(
        r#"{{"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest",
            "metadata":{{"name":"c1"}},
            "spec":{{"request":"{request}","signerName":"example.com/e2e","username":"mallory",
                     "expirationSeconds":3600,"usages":["digital signature","server auth"]}}}}"#
    );
    hub.ok_stdin(&["create", "-f", "-"], &csr);
    let stored = get(&hub, &["csr", "c1"]);
    let user = stored["spec"]["username"].as_str().unwrap_or_default();
    assert!(
        !user.is_empty() && user != "mallory",
        "requester is the creator: {stored}"
    );
    assert_eq!(
        row(&hub, &["csr", "c1"]).last().map(String::as_str),
        Some("Pending")
    );

    // The main resource keeps spec and status; /status cannot approve.
    hub.ok(&[
        "patch",
        "csr",
        "c1",
        "--type=merge",
        "-p",
        r#"{"spec":{"signerName":"example.com/other"}}"#,
    ]);
    assert_eq!(
        get(&hub, &["csr", "c1"])["spec"]["signerName"],
        "example.com/e2e"
    );
    let err = hub.fails(&[
        "patch",
        "csr",
        "c1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"conditions":[{"type":"Approved","status":"True"}]}}"#,
    ]);
    assert!(err.contains("Approved"), "{err}");

    // kubectl certificate approve writes /approval (as protobuf).
    hub.ok(&["certificate", "approve", "c1"]);
    let approved = get(&hub, &["csr", "c1"]);
    assert_eq!(
        approved["status"]["conditions"][0]["type"], "Approved",
        "{approved}"
    );
    assert!(approved["status"]["conditions"][0]["lastUpdateTime"].is_string());
    assert_eq!(
        row(&hub, &["csr", "c1"]).last().map(String::as_str),
        Some("Approved")
    );
    // Approving takes `approve` on the signer, not only update on /approval.
    hub.ok_stdin(
        &["create", "-f", "-"],
        &csr.replace(r#""name":"c1""#, r#""name":"c2""#),
    );
    hub.ok(&["create", "serviceaccount", "approver"]);
    hub.ok(&[
        "create",
        "clusterrole",
        "csr-approver",
        "--verb=get,list,update",
        "--resource=certificatesigningrequests,certificatesigningrequests/approval",
    ]);
    hub.ok(&[
        "create",
        "clusterrolebinding",
        "csr-approver",
        "--clusterrole=csr-approver",
        "--serviceaccount=default:approver",
    ]);
    let token = hub.ok(&["create", "token", "approver"]);
    let approve =
        |hub: &Hub| hub.kubectl(&["--token", token.trim(), "certificate", "approve", "c2"]);
    let out = approve(&hub);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains(
                "user not permitted to approve requests with signerName \"example.com/e2e\""
            ),
        "{err}"
    );
    let role = r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole",
        "metadata":{"name":"signer-approver"},
        "rules":[{"apiGroups":["certificates.k8s.io"],"resources":["signers"],
                  "resourceNames":["example.com/*"],"verbs":["approve"]}]}"#;
    hub.ok_stdin(&["create", "-f", "-"], role);
    hub.ok(&[
        "create",
        "clusterrolebinding",
        "signer-approver",
        "--clusterrole=signer-approver",
        "--serviceaccount=default:approver",
    ]);
    let out = approve(&hub);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A request is never both approved and denied, even through /approval.
    let mut denied = approved.clone();
    denied["status"]["conditions"]
        .as_array_mut()
        .expect("conditions")
        .push(serde_json::json!({"type": "Denied", "status": "True", "reason": "e2e"}));
    let out = hub.kubectl_stdin(
        &[
            "replace",
            "--raw",
            "/apis/certificates.k8s.io/v1/certificatesigningrequests/c1/approval",
            "-f",
            "-",
        ],
        &denied.to_string(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("mutually exclusive"),
        "{err}"
    );
}

#[test]
fn replication_controllers_scale_and_keep_their_status() {
    let hub = Hub::start();
    let rc = r#"{"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"rc1"},
        "spec":{"template":{"metadata":{"labels":{"app":"rc1"}},
                "spec":{"containers":[{"name":"c","image":"nginx:1"}]}}}}"#;
    hub.ok_stdin(&["create", "-f", "-"], rc);
    let stored = get(&hub, &["rc", "rc1"]);
    assert_eq!(
        stored["spec"]["selector"],
        serde_json::json!({"app": "rc1"})
    );
    assert_eq!(
        stored["metadata"]["labels"],
        serde_json::json!({"app": "rc1"})
    );
    assert_eq!(stored["spec"]["replicas"], 1);
    assert_eq!(stored["status"]["replicas"], 0);
    hub.ok(&["scale", "rc", "rc1", "--replicas=3"]);
    let scale = json(&hub.ok(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/replicationcontrollers/rc1/scale",
    ]));
    assert_eq!(scale["spec"]["replicas"], 3, "{scale}");
    assert_eq!(scale["status"]["selector"], "app=rc1", "{scale}");
    assert_eq!(row(&hub, &["rc", "rc1"])[1..4], ["3", "0", "0"]);
}

#[test]
fn storage_and_cluster_kinds_get_their_defaults_columns_and_immutable_fields() {
    let hub = Hub::start();
    let objects = r#"
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: example.com/fast
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: csi.example.com}
spec: {}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
  annotations: {ingressclass.kubernetes.io/is-default-class: "true"}
spec:
  controller: example.com/ingress
  parameters: {kind: Params, name: p}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-1}
addressType: IPv4
ports: [{port: 80}]
endpoints: [{addresses: [10.0.0.5]}]
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /data}
---
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {node-role.kubernetes.io/worker: ""}
status:
  capacity: {cpu: "4", memory: 8Gi}
  conditions: [{type: Ready, status: "True"}]
  nodeInfo: {kubeletVersion: v1.32.2}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va1}
spec:
  attacher: csi.example.com
  nodeName: n1
  source: {persistentVolumeName: pv1}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: kata}
handler: kata
overhead: {podFixed: {cpu: 10m, memory: 1Mi}}
scheduling: {nodeSelector: {sandbox: "true"}}
---
apiVersion: v1
kind: LimitRange
metadata: {name: lr}
spec:
  limits: [{type: Container, max: {cpu: 500m}}]
"#;
    hub.ok_stdin(&["create", "-f", "-"], objects);
    assert_eq!(
        row(&hub, &["sc", "fast"])[1..5],
        ["example.com/fast", "Delete", "Immediate", "false"]
    );
    let driver = get(&hub, &["csidriver", "csi.example.com"]);
    assert_eq!(driver["spec"]["attachRequired"], true, "{driver}");
    assert_eq!(
        driver["spec"]["volumeLifecycleModes"],
        serde_json::json!(["Persistent"])
    );
    assert_eq!(
        get(&hub, &["ingressclass", "nginx"])["spec"]["parameters"]["scope"],
        "Cluster"
    );
    assert_eq!(
        row(&hub, &["endpointslice", "web-1"])[1..4],
        ["IPv4", "80", "10.0.0.5"]
    );
    let pv = get(&hub, &["pv", "pv1"]);
    assert_eq!(
        (
            &pv["spec"]["persistentVolumeReclaimPolicy"],
            &pv["status"]["phase"]
        ),
        (&Value::from("Retain"), &Value::from("Pending"))
    );
    assert_eq!(
        row(&hub, &["pv", "pv1"])[1..5],
        ["1Gi", "RWO", "Retain", "Pending"]
    );
    // A node is registered with its status (allocatable defaults to capacity).
    let node = get(&hub, &["node", "n1"]);
    assert_eq!(node["status"]["allocatable"]["memory"], "8Gi", "{node}");
    assert_eq!(row(&hub, &["node", "n1"])[1..3], ["Ready", "worker"]);
    let lr = get(&hub, &["limits", "lr"]);
    assert_eq!(lr["spec"]["limits"][0]["default"]["cpu"], "500m", "{lr}");

    // The RuntimeClass admission plugin: the class must exist; its overhead and node
    // selector become the pod's.
    let pod = |name: &str, class: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}"}},
                "spec":{{"runtimeClassName":"{class}","containers":[{{"name":"c","image":"nginx:1"}}]}}}}"#
        )
    };
    hub.ok_stdin(&["create", "-f", "-"], &pod("sandboxed", "kata"));
    let sandboxed = get(&hub, &["pod", "sandboxed"]);
    assert_eq!(
        sandboxed["spec"]["overhead"],
        serde_json::json!({"cpu": "10m", "memory": "1Mi"})
    );
    assert_eq!(sandboxed["spec"]["nodeSelector"]["sandbox"], "true");
    let out = hub.kubectl_stdin(&["create", "-f", "-"], &pod("orphan", "gone"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("pod rejected: RuntimeClass \"gone\" not found"),
        "{err}"
    );

    // New ingresses and claims that name no class get the default one.
    hub.ok(&["create", "ingress", "site", "--rule=example.com/=web:80"]);
    assert_eq!(
        get(&hub, &["ingress", "site"])["spec"]["ingressClassName"],
        "nginx"
    );
    let claim = r#"{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"data"},
        "spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}"#;
    hub.ok_stdin(&["create", "-f", "-"], claim);
    assert_eq!(
        get(&hub, &["pvc", "data"])["spec"]["storageClassName"],
        "fast"
    );

    // kubectl create quota sends protobuf; its status is the quota controller's.
    hub.ok(&["create", "quota", "q", "--hard=pods=4"]);
    assert_eq!(get(&hub, &["quota", "q"])["spec"]["hard"]["pods"], "4");

    // VolumeAttachment status through /status only.
    hub.ok(&[
        "patch",
        "volumeattachment",
        "va1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"attached":true}}"#,
    ]);
    assert_eq!(
        row(&hub, &["volumeattachment", "va1"])[1..5],
        ["csi.example.com", "pv1", "n1", "true"]
    );

    for (what, patch, want) in [
        (
            "sc/fast",
            r#"{"provisioner":"example.com/slow"}"#,
            "provisioner: Forbidden: updates to provisioner are forbidden.",
        ),
        (
            "runtimeclass/gvisor",
            r#"{"handler":"runc"}"#,
            "handler: Invalid value: \"runc\": field is immutable",
        ),
        (
            "ingressclass/nginx",
            r#"{"spec":{"controller":"x.io/y"}}"#,
            "spec.controller: Invalid value: \"x.io/y\": field is immutable",
        ),
        (
            "endpointslice/web-1",
            r#"{"addressType":"IPv6"}"#,
            "addressType: Invalid value: \"IPv6\": field is immutable",
        ),
    ] {
        let err = hub.fails(&["patch", what, "--type=merge", "-p", patch]);
        assert!(err.contains(want), "{what}: {err}");
    }
}
