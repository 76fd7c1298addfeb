//! What kube-apiserver 1.32 returns for minimal objects of each defaulted kind.

use serde_json::{json, Value};

use super::*;
use crate::registry::Registry;

fn res(group: &str, version: &str, plural: &str) -> ResourceInfo {
    let snap = Registry::new().snapshot();
    let r = snap.get(group, version, plural).map(|r| (**r).clone());
    r.unwrap_or_else(|| panic!("{group}/{version}/{plural} is not served"))
}

fn defaulted(group: &str, version: &str, plural: &str, mut obj: Value) -> Value {
    apply(&res(group, version, plural), &mut obj);
    obj
}

/// The pod spec kube-apiserver returns for one container `c` of image `image`.
fn pod_spec(image: &str, pull: &str) -> Value {
    json!({
        "containers": [{
            "name": "c", "image": image, "imagePullPolicy": pull,
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
        }],
        "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
        "securityContext": {}, "terminationGracePeriodSeconds": 30,
    })
}

fn template(image: &str) -> Value {
    json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": image}]}})
}

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
fn services() {
    let s = defaulted(
        "",
        "v1",
        "services",
        json!({"spec": {"selector": {"app": "web"}, "ports": [{"port": 80}, {"port": 53, "protocol": "UDP", "targetPort": "dns"}]}}),
    );
    assert_eq!(
        s["spec"],
        json!({
            "selector": {"app": "web"},
            "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}, {"port": 53, "protocol": "UDP", "targetPort": "dns"}],
            "sessionAffinity": "None", "type": "ClusterIP",
            "internalTrafficPolicy": "Cluster", "ipFamilyPolicy": "SingleStack",
        })
    );
    assert!(
        s["spec"].get("clusterIP").is_none(),
        "addresses are not allocated here"
    );
    let lb = defaulted(
        "",
        "v1",
        "services",
        json!({"spec": {"type": "LoadBalancer", "sessionAffinity": "ClientIP", "ports": [{"port": 443, "targetPort": 0}]},
               "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}, {"hostname": "lb"}]}}}),
    );
    let spec = &lb["spec"];
    assert_eq!(spec["externalTrafficPolicy"], "Cluster");
    assert_eq!(spec["allocateLoadBalancerNodePorts"], true);
    assert_eq!(
        spec["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"],
        10800
    );
    assert_eq!(spec["ports"][0]["targetPort"], 443);
    assert_eq!(lb["status"]["loadBalancer"]["ingress"][0]["ipMode"], "VIP");
    assert!(lb["status"]["loadBalancer"]["ingress"][1]
        .get("ipMode")
        .is_none());
    let headless = defaulted("", "v1", "services", json!({"spec": {"clusterIP": "None"}}));
    assert_eq!(headless["spec"]["ipFamilyPolicy"], "RequireDualStack");
    let external = defaulted(
        "",
        "v1",
        "services",
        json!({"spec": {"type": "ExternalName", "externalName": "example.com", "sessionAffinityConfig": {}}}),
    );
    assert_eq!(
        external["spec"],
        json!({"type": "ExternalName", "externalName": "example.com", "sessionAffinity": "None"})
    );
    // An update without a policy keeps the stored one.
    let old = json!({"spec": {"ipFamilyPolicy": "PreferDualStack"}});
    let mut new = json!({"spec": {"selector": {"a": "b"}}});
    on_update(&res("", "v1", "services"), &old, &mut new);
    assert_eq!(new["spec"]["ipFamilyPolicy"], "PreferDualStack");
}

#[test]
fn pull_policy_follows_the_tag() {
    for (image, want) in [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("docker.io/library/nginx", "Always"),
        ("localhost:5000/team/app", "Always"),
        ("nginx:1.25", "IfNotPresent"),
        ("registry.example.com:5000/app:v2", "IfNotPresent"),
        (
            "nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "IfNotPresent",
        ),
        (
            "nginx:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "Always",
        ),
        // Unparseable references: the error is ignored and the tag is empty.
        ("", "IfNotPresent"),
        ("Nginx", "IfNotPresent"),
        ("nginx:bad tag", "IfNotPresent"),
    ] {
        assert_eq!(pod::pull_policy(image), want, "{image:?}");
    }
}

#[test]
fn containers_probes_and_volumes() {
    let spec = json!({
        "initContainers": [{"name": "i", "image": "busybox:1", "imagePullPolicy": "Never"}],
        "containers": [{
            "name": "c", "image": "app:1",
            "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}],
            "env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}, {"name": "X", "value": "1"}],
            "livenessProbe": {"httpGet": {"port": 80}},
            "readinessProbe": {"grpc": {"port": 9000}, "periodSeconds": 5},
            "startupProbe": {"exec": {"command": ["true"]}, "failureThreshold": 30},
            "lifecycle": {"preStop": {"httpGet": {"port": 80, "path": "/quit"}}},
        }],
        "volumes": [
            {"name": "scratch"},
            {"name": "s", "secret": {"secretName": "s"}},
            {"name": "cm", "configMap": {"name": "c", "defaultMode": 256}},
            {"name": "d", "downwardAPI": {"items": [{"path": "p", "fieldRef": {"fieldPath": "metadata.labels"}}]}},
            {"name": "p", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
            {"name": "h", "hostPath": {"path": "/var"}},
            {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}},
        ],
    });
    let d = defaulted(
        "apps",
        "v1",
        "deployments",
        json!({"spec": {"template": {"spec": spec}}}),
    );
    let s = &d["spec"]["template"]["spec"];
    assert_eq!(s["initContainers"][0]["imagePullPolicy"], "Never");
    assert_eq!(s["initContainers"][0]["terminationMessagePolicy"], "File");
    let c = &s["containers"][0];
    assert_eq!(
        c["ports"],
        json!([{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 53, "protocol": "UDP"}])
    );
    assert_eq!(c["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
    assert_eq!(
        c["livenessProbe"],
        json!({"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
    );
    assert_eq!(c["readinessProbe"]["grpc"]["service"], "");
    assert_eq!(c["readinessProbe"]["periodSeconds"], 5);
    assert_eq!(c["startupProbe"]["failureThreshold"], 30);
    assert_eq!(
        c["lifecycle"]["preStop"]["httpGet"],
        json!({"port": 80, "path": "/quit", "scheme": "HTTP"})
    );
    let v = &s["volumes"];
    assert_eq!(v[0], json!({"name": "scratch", "emptyDir": {}}));
    assert_eq!(v[1]["secret"]["defaultMode"], 420);
    assert_eq!(v[2]["configMap"]["defaultMode"], 256);
    assert_eq!(v[3]["downwardAPI"]["defaultMode"], 420);
    assert_eq!(
        v[3]["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"],
        "v1"
    );
    assert_eq!(v[4]["projected"]["defaultMode"], 420);
    assert_eq!(
        v[4]["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"],
        3600
    );
    assert_eq!(v[5]["hostPath"]["type"], "");
    assert_eq!(
        v[6]["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"],
        "Filesystem"
    );
}

#[test]
fn small_kinds_and_what_is_left_alone() {
    let mut ns =
        json!({"metadata": {"name": "demo", "labels": {"kubernetes.io/metadata.name": "other"}}});
    on_create(&res("", "v1", "namespaces"), &mut ns);
    assert_eq!(ns["status"]["phase"], "Active");
    assert_eq!(ns["spec"]["finalizers"][0], "kubernetes");
    assert_eq!(
        ns["metadata"]["labels"]["kubernetes.io/metadata.name"],
        "demo"
    );
    let secret = defaulted("", "v1", "secrets", json!({"data": {}}));
    assert_eq!(secret["type"], "Opaque");
    let np = defaulted(
        "networking.k8s.io",
        "v1",
        "networkpolicies",
        json!({"spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}}),
    );
    assert_eq!(np["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    assert_eq!(np["spec"]["egress"][0]["ports"][0]["protocol"], "TCP");
    let rb = defaulted(
        "rbac.authorization.k8s.io",
        "v1",
        "rolebindings",
        json!({"roleRef": {"kind": "Role", "name": "r"}, "subjects": [{"kind": "User", "name": "u"}, {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}]}),
    );
    assert_eq!(rb["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(rb["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");
    assert!(rb["subjects"][1].get("apiGroup").is_none());
    let pvc = defaulted("", "v1", "persistentvolumeclaims", json!({"spec": {}}));
    assert_eq!(
        (
            pvc["spec"]["volumeMode"].as_str(),
            pvc["status"]["phase"].as_str()
        ),
        (Some("Filesystem"), Some("Pending"))
    );
    // Kinds without defaults, and custom resources, are untouched.
    for (g, v, p) in [
        ("", "v1", "configmaps"),
        ("", "v1", "serviceaccounts"),
        ("coordination.k8s.io", "v1", "leases"),
    ] {
        let obj = json!({"metadata": {"name": "x"}, "spec": {}});
        assert_eq!(defaulted(g, v, p, obj.clone()), obj);
    }
    let mut custom = res("apps", "v1", "deployments");
    custom.custom = true;
    let mut obj = json!({"spec": {}});
    apply(&custom, &mut obj);
    assert_eq!(obj, json!({"spec": {}}));
}

#[test]
fn defaulting_twice_changes_nothing() {
    let cases = [
        (
            "apps",
            "v1",
            "deployments",
            json!({"spec": {"template": template("nginx")}}),
        ),
        (
            "apps",
            "v1",
            "statefulsets",
            json!({"spec": {"template": template("nginx")}}),
        ),
        (
            "batch",
            "v1",
            "cronjobs",
            json!({"spec": {"jobTemplate": {"spec": {"template": template("x")}}}}),
        ),
        (
            "",
            "v1",
            "services",
            json!({"spec": {"ports": [{"port": 1}]}}),
        ),
    ];
    for (g, v, p, obj) in cases {
        let once = defaulted(g, v, p, obj);
        assert_eq!(defaulted(g, v, p, once.clone()), once, "{p}");
    }
}

#[test]
fn secret_string_data_is_merged_into_data_and_never_stored() {
    let s = defaulted(
        "",
        "v1",
        "secrets",
        json!({"metadata": {"name": "s"}, "data": {"a": "b2xk", "keep": "eA=="},
               "stringData": {"a": "new", "token": "s3cret"}}),
    );
    assert_eq!(
        s,
        json!({"metadata": {"name": "s"}, "type": "Opaque",
               "data": {"a": "bmV3", "keep": "eA==", "token": "czNjcmV0"}})
    );
    let only = defaulted(
        "",
        "v1",
        "secrets",
        json!({"metadata": {"name": "s"}, "type": "kubernetes.io/basic-auth", "stringData": {"username": "u"}}),
    );
    assert_eq!(only["data"], json!({"username": "dQ=="}));
    assert_eq!(only["type"], "kubernetes.io/basic-auth");
    assert!(only.get("stringData").is_none());
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

#[test]
fn resource_quantities_are_stored_in_canonical_form() {
    let d = defaulted(
        "apps",
        "v1",
        "deployments",
        json!({"spec": {"template": {"spec": {
            "containers": [{"name": "c", "image": "x:1",
                "resources": {"requests": {"cpu": "0.5", "memory": "1.5Gi"},
                              "limits": {"cpu": "1000m", "memory": "2048Mi"}}}],
            "volumes": [{"name": "scratch", "emptyDir": {"sizeLimit": "1024Mi"}}]}}}}),
    );
    let c = &d["spec"]["template"]["spec"]["containers"][0]["resources"];
    assert_eq!(c["requests"], json!({"cpu": "500m", "memory": "1536Mi"}));
    assert_eq!(c["limits"], json!({"cpu": "1", "memory": "2Gi"}));
    assert_eq!(
        d["spec"]["template"]["spec"]["volumes"][0]["emptyDir"]["sizeLimit"],
        "1Gi"
    );
    let pvc = defaulted(
        "",
        "v1",
        "persistentvolumeclaims",
        json!({"spec": {"resources": {"requests": {"storage": "1000Mi"}}}}),
    );
    assert_eq!(pvc["spec"]["resources"]["requests"]["storage"], "1000Mi");
    let pvc = defaulted(
        "",
        "v1",
        "persistentvolumeclaims",
        json!({"spec": {"resources": {"requests": {"storage": "0.5Gi"}}}}),
    );
    assert_eq!(pvc["spec"]["resources"]["requests"]["storage"], "512Mi");
}
