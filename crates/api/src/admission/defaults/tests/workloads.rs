//! Workload kinds: Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob and
//! HorizontalPodAutoscaler.

use serde_json::json;

use super::*;

#[test]
fn deployment_as_kubectl_create_deployment_reads_back() {
    let d = defaulted(
        "apps",
        "v1",
        "deployments",
        json!({"metadata": {"name": "web"}, "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template("nginx")}}),
    );
    assert_eq!(
        d["spec"],
        json!({
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod_spec("nginx", "Always")},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
        })
    );
    // Recreate gets no rollingUpdate; what the client set stays.
    let r = defaulted(
        "apps",
        "v1",
        "deployments",
        json!({"spec": {"replicas": 0, "strategy": {"type": "Recreate"}, "revisionHistoryLimit": 2}}),
    );
    assert_eq!(r["spec"]["strategy"], json!({"type": "Recreate"}));
    assert_eq!(
        (
            r["spec"]["replicas"].as_i64(),
            r["spec"]["revisionHistoryLimit"].as_i64()
        ),
        (Some(0), Some(2))
    );
}

#[test]
fn stateful_set_daemon_set_and_replica_set() {
    let s = defaulted(
        "apps",
        "v1",
        "statefulsets",
        json!({"spec": {"serviceName": "db", "template": template("postgres:16"),
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}]}}),
    );
    let spec = &s["spec"];
    assert_eq!(spec["podManagementPolicy"], "OrderedReady");
    assert_eq!(
        spec["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    );
    assert_eq!(
        spec["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
    );
    assert_eq!(
        (
            spec["replicas"].as_i64(),
            spec["revisionHistoryLimit"].as_i64()
        ),
        (Some(1), Some(10))
    );
    assert_eq!(
        spec["template"]["spec"],
        pod_spec("postgres:16", "IfNotPresent")
    );
    assert_eq!(
        spec["volumeClaimTemplates"][0]["spec"]["volumeMode"],
        "Filesystem"
    );
    assert_eq!(
        spec["volumeClaimTemplates"][0]["status"],
        json!({"phase": "Pending"})
    );
    // OnDelete: no rollingUpdate appears.
    let s = defaulted(
        "apps",
        "v1",
        "statefulsets",
        json!({"spec": {"updateStrategy": {"type": "OnDelete"}}}),
    );
    assert_eq!(s["spec"]["updateStrategy"], json!({"type": "OnDelete"}));

    let d = defaulted(
        "apps",
        "v1",
        "daemonsets",
        json!({"spec": {"template": template("fluentd:v1")}}),
    );
    assert_eq!(
        d["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
    );
    assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
    assert!(d["spec"].get("replicas").is_none());

    let r = defaulted(
        "apps",
        "v1",
        "replicasets",
        json!({"spec": {"template": template("nginx:latest")}}),
    );
    assert_eq!(r["spec"]["replicas"], 1);
    assert_eq!(
        r["spec"]["template"]["spec"],
        pod_spec("nginx:latest", "Always")
    );
    assert!(r["spec"].get("revisionHistoryLimit").is_none());
}

#[test]
fn job_and_cron_job() {
    let mut t = template("busybox:1.36");
    t["spec"]["restartPolicy"] = json!("Never");
    let j = defaulted(
        "batch",
        "v1",
        "jobs",
        json!({"metadata": {"name": "j"}, "spec": {"template": t.clone()}}),
    );
    let spec = &j["spec"];
    let want = json!({"completions": 1, "parallelism": 1, "backoffLimit": 6,
        "completionMode": "NonIndexed", "suspend": false, "podReplacementPolicy": "TerminatingOrFailed",
        "manualSelector": false});
    for (k, v) in want.as_object().unwrap() {
        assert_eq!(&spec[k], v, "{k}");
    }
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Never");
    assert_eq!(spec["template"]["spec"]["dnsPolicy"], "ClusterFirst");
    // The job takes its template's labels when it has none.
    assert_eq!(j["metadata"]["labels"], json!({"app": "web"}));
    // Parallel jobs keep completions unset; a pod failure policy changes the replacement policy.
    let p = defaulted(
        "batch",
        "v1",
        "jobs",
        json!({"metadata": {"labels": {"mine": "x"}}, "spec": {"parallelism": 3, "backoffLimitPerIndex": 1, "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}}}),
    );
    assert!(p["spec"].get("completions").is_none());
    assert_eq!(p["spec"]["backoffLimit"], i32::MAX);
    assert_eq!(p["spec"]["podReplacementPolicy"], "Failed");
    assert_eq!(
        p["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"],
        "True"
    );
    assert_eq!(p["metadata"]["labels"], json!({"mine": "x"}));

    let c = defaulted(
        "batch",
        "v1",
        "cronjobs",
        json!({"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": t}}}}),
    );
    let spec = &c["spec"];
    assert_eq!(spec["concurrencyPolicy"], "Allow");
    assert_eq!(spec["suspend"], false);
    assert_eq!(
        (
            spec["successfulJobsHistoryLimit"].as_i64(),
            spec["failedJobsHistoryLimit"].as_i64()
        ),
        (Some(3), Some(1))
    );
    let job = &spec["jobTemplate"]["spec"];
    assert_eq!(
        job["template"]["spec"]["schedulerName"],
        "default-scheduler"
    );
    assert!(
        job.get("backoffLimit").is_none() && job.get("completions").is_none(),
        "{job}"
    );
}

#[test]
fn hpa_gets_min_replicas_cpu_metric_and_completed_behavior() {
    let h = defaulted(
        "autoscaling",
        "v2",
        "horizontalpodautoscalers",
        json!({"spec": {"maxReplicas": 5,
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}}),
    );
    assert_eq!(h["spec"]["minReplicas"], 1);
    assert_eq!(
        h["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}])
    );
    assert!(
        h["spec"].get("behavior").is_none(),
        "no behavior stays none"
    );

    let h = defaulted(
        "autoscaling",
        "v2",
        "horizontalpodautoscalers",
        json!({"spec": {"minReplicas": 2, "maxReplicas": 5,
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}}),
    );
    assert_eq!(h["spec"]["minReplicas"], 2);
    assert_eq!(
        h["spec"]["behavior"],
        json!({
            "scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max",
                "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]},
            "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
                {"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        })
    );
}
