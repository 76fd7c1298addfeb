use serde_json::json;

use super::computed;

#[test]
fn cells_as_kubectl_prints_them() {
    let pod = json!({
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1"},
        "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.1"}], "containerStatuses": [
            {"name": "a", "ready": true, "restartCount": 2, "state": {"running": {}}},
            {"name": "b", "ready": false, "restartCount": 1, "state": {"waiting": {"reason": "CrashLoopBackOff"}}},
        ]},
    });
    let node = json!({
        "metadata": {"labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "edge"}},
        "spec": {"unschedulable": true},
        "status": {"conditions": [{"type": "Ready", "status": "False"}],
                   "addresses": [{"type": "InternalIP", "address": "192.168.0.2"}]},
    });
    let quota = json!({"status": {
        "hard": {"pods": "10", "limits.cpu": "2", "configmaps": "5"},
        "used": {"pods": "1", "limits.cpu": "500m"},
    }});
    let slice = json!({"ports": [{"port": 80}, {"name": "http"}, {}, {"port": 9}],
                       "endpoints": [{"addresses": ["10.0.0.1", "10.0.0.2"]}]});
    let revision = json!({"metadata": {"ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "controller": true}]}});
    let csr = json!({"spec": {"expirationSeconds": 3600},
                     "status": {"conditions": [{"type": "Approved"}], "certificate": "Zm9v"}});
    let cases = [
        ("@podready", &pod, json!("1/2")),
        ("@podstatus", &pod, json!("CrashLoopBackOff")),
        ("@podrestarts", &pod, json!("3")),
        ("@podip", &pod, json!("10.0.0.1")),
        ("@podnominated", &pod, json!("<none>")),
        ("@nodestatus", &node, json!("NotReady,SchedulingDisabled")),
        ("@noderoles", &node, json!("control-plane,edge")),
        ("@nodeinternalip", &node, json!("192.168.0.2")),
        ("@nodeexternalip", &node, json!("<none>")),
        (
            "@quotarequest",
            &quota,
            json!("configmaps: 0/5, pods: 1/10"),
        ),
        ("@quotalimit", &quota, json!("limits.cpu: 500m/2")),
        ("@sliceports", &slice, json!("80,http,* + 1 more...")),
        ("@sliceendpoints", &slice, json!("10.0.0.1,10.0.0.2")),
        ("@revisioncontroller", &revision, json!("daemonset.apps/ds")),
        ("@csrcondition", &csr, json!("Approved,Issued")),
        ("@csrduration", &csr, json!("60m")),
        ("@globaldefault", &csr, json!(false)),
        ("@reclaimpolicy", &csr, json!("Delete")),
    ];
    for (name, obj, want) in cases {
        assert_eq!(computed(name, obj), Some(want), "{name}");
    }
    assert_eq!(computed("@nonsense", &pod), None);
}

#[test]
fn a_deleted_running_pod_is_terminating() {
    let pod = json!({"metadata": {"deletionTimestamp": "2024-01-01T00:00:00Z"},
                     "status": {"phase": "Running"}});
    assert_eq!(computed("@podstatus", &pod), Some(json!("Terminating")));
    let pending = json!({"status": {"phase": "Pending"}});
    assert_eq!(computed("@podstatus", &pending), Some(json!("Pending")));
}
