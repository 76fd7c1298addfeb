//! Replication controllers, and the storage and cluster kinds: defaults, columns, admission
//! plugins (RuntimeClass, default classes) and immutable fields.

use serde_json::Value;

use super::{get, row};
use crate::common::{json, Hub};

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
        row(&hub, &["sc", "fast"])[..5],
        [
            "fast (default)",
            "example.com/fast",
            "Delete",
            "Immediate",
            "false"
        ]
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
