//! Propagation end to end on three real member clusters: a Deployment and a policy on the hub
//! become Works, replicas divided by weight, overrides per cluster, status summed back on the
//! hub (`kubectl rollout status` works there), policy changes move the workload, and deleting
//! the template removes it everywhere (or leaves it, when orphaned).

mod common;

use std::time::Duration;

use common::fleet::{eventually, flotilla, flotilla_ok, kc};
use common::Hub;
use flotilla_testkit::Members;

const MEMBERS: [&str; 3] = ["member-1", "member-2", "member-3"];

fn deployment(name: &str, replicas: u32, annotations: &str) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: demo
  labels: {{app: {name}}}
  annotations: {{{annotations}}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers: [{{name: app, image: nginx:1.27}}]
"#
    )
}

fn weighted_policy(weights: &[(&str, u32)]) -> String {
    let list: Vec<String> = weights
        .iter()
        .map(|(c, w)| {
            format!("        - targetCluster: {{clusterNames: [{c}]}}\n          weight: {w}")
        })
        .collect();
    let names: Vec<&str> = weights.iter().map(|(c, _)| *c).collect();
    format!(
        r#"apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: web, namespace: demo}}
spec:
  resourceSelectors:
  - {{apiVersion: apps/v1, kind: Deployment, name: web}}
  placement:
    clusterAffinity: {{clusterNames: [{}]}}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
{}
"#,
        names.join(", "),
        list.join("\n")
    )
}

/// A JSONPath `path` of object `what` (e.g. `deploy/web`) in namespace demo of a member; ""
/// when it is not there or the member does not answer within 3 s.
fn member_get(m: &std::path::Path, what: &str, path: &str) -> String {
    let (ok, out, _) = kc(
        m,
        &[
            "get",
            what,
            "-n",
            "demo",
            "-o",
            &format!("jsonpath={path}"),
            "--request-timeout=3s",
        ],
    );
    if ok {
        out.trim().to_owned()
    } else {
        String::new()
    }
}

/// `spec.replicas` of a Deployment in a member ("" when it is not there).
fn member_replicas(m: &std::path::Path, name: &str) -> String {
    member_get(m, &format!("deploy/{name}"), "{.spec.replicas}")
}

/// `data.color` of the ConfigMap `settings` in a member ("" when it is not there).
fn color(m: &std::path::Path) -> String {
    member_get(m, "cm/settings", "{.data.color}")
}

#[test]
fn templates_and_policies_run_in_the_right_members() {
    let members = Members::up(3).expect("member clusters (scripts/members build)");
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    // Short health and failover timings, so the failover step takes seconds, not minutes.
    let hub = Hub::start_with(&[
        "--heartbeat-interval",
        "2s",
        "--cluster-grace-period",
        "10s",
        "--failover-toleration",
        "5s",
        "--failback-after",
        "20s",
    ]);
    for c in MEMBERS {
        let region = if c == "member-3" { "ap" } else { "eu" };
        flotilla_ok(
            &hub,
            &[
                "join",
                c,
                "--member-kubeconfig",
                m(c).to_str().unwrap(),
                "--region",
                region,
            ],
        );
    }
    for c in MEMBERS {
        eventually(
            &hub,
            Duration::from_secs(60),
            &format!("{c} ready with APIs"),
            || {
                let out = hub.kubectl(&[
                "get",
                &format!("cluster/{c}"),
                "-o",
                "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}/{.status.apiEnablements[*].groupVersion}",
            ]);
                let s = String::from_utf8_lossy(&out.stdout);
                s.starts_with("True/") && s.contains("apps/v1")
            },
        );
    }

    // --- Divided 1:1:1: 2/2/2, and the hub sums the members' status.
    hub.ok(&["create", "namespace", "demo"]);
    hub.ok_stdin(&["apply", "-f", "-"], &deployment("web", 6, ""));
    hub.ok_stdin(
        &["apply", "-f", "-"],
        &weighted_policy(&[("member-1", 1), ("member-2", 1), ("member-3", 1)]),
    );
    eventually(
        &hub,
        Duration::from_secs(60),
        "web 2/2/2 in the members",
        || MEMBERS.iter().all(|c| member_replicas(&m(c), "web") == "2"),
    );
    let binding = hub.ok(&[
        "get",
        "rb",
        "web-deployment",
        "-n",
        "demo",
        "-o",
        "jsonpath={.spec.clusters[*].name}:{.spec.clusters[*].replicas}",
    ]);
    assert_eq!(binding.trim(), "member-1 member-2 member-3:2 2 2");
    eventually(
        &hub,
        Duration::from_secs(90),
        "the hub shows 6 ready replicas",
        || {
            let out = hub.kubectl(&[
                "get",
                "deploy",
                "web",
                "-n",
                "demo",
                "-o",
                "jsonpath={.status.readyReplicas}",
            ]);
            String::from_utf8_lossy(&out.stdout).trim() == "6"
        },
    );
    hub.ok(&[
        "rollout",
        "status",
        "deployment/web",
        "-n",
        "demo",
        "--timeout=60s",
    ]);
    eventually(
        &hub,
        Duration::from_secs(30),
        "the binding is FullyApplied",
        || {
            let out = hub.kubectl(&["get", "rb", "web-deployment", "-n", "demo", "-o",
            "jsonpath={.status.conditions[?(@.type==\"FullyApplied\")].status}/{.status.conditions[?(@.type==\"Scheduled\")].status}"]);
            String::from_utf8_lossy(&out.stdout).trim() == "True/True"
        },
    );
    let explain = flotilla_ok(&hub, &["explain", "placement", "deploy/web", "-n", "demo"]);
    assert!(
        explain.contains("member-1") && explain.contains("selected"),
        "{explain}"
    );

    // --- An image override for member-2 only.
    hub.ok_stdin(
        &["apply", "-f", "-"],
        r#"apiVersion: policy.flotilla.io/v1alpha1
kind: OverridePolicy
metadata: {name: mirror, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  overrideRules:
  - targetCluster: {clusterNames: [member-2]}
    overriders:
      imageOverrider:
      - {component: Registry, operator: replace, value: mirror.example.com}
"#,
    );
    let image = |c: &str| {
        let (_, out, _) = kc(
            &m(c),
            &[
                "get",
                "deploy",
                "web",
                "-n",
                "demo",
                "-o",
                "jsonpath={.spec.template.spec.containers[0].image}",
            ],
        );
        out.trim().to_owned()
    };
    eventually(
        &hub,
        Duration::from_secs(30),
        "member-2 pulls from the mirror",
        || image("member-2") == "mirror.example.com/nginx:1.27",
    );
    assert_eq!(image("member-1"), "nginx:1.27");
    assert_eq!(image("member-3"), "nginx:1.27");

    // --- Weights 2:1 on two clusters: 4/2, and member-3's copy leaves.
    hub.ok_stdin(
        &["apply", "-f", "-"],
        &weighted_policy(&[("member-1", 2), ("member-2", 1)]),
    );
    eventually(
        &hub,
        Duration::from_secs(60),
        "web 4/2/- after the policy change",
        || {
            member_replicas(&m("member-1"), "web") == "4"
                && member_replicas(&m("member-2"), "web") == "2"
                && member_replicas(&m("member-3"), "web").is_empty()
        },
    );
    // A placement applied again after another one (A → B → A → B) takes effect each time: the
    // replicas are divided afresh, not kept where the previous placement put them.
    for (weights, want, what) in [
        (
            &[("member-1", 1), ("member-2", 1), ("member-3", 1)][..],
            ["2", "2", "2"],
            "web 2/2/2 again after the policy is changed back",
        ),
        (
            &[("member-1", 2), ("member-2", 1)][..],
            ["4", "2", ""],
            "web 4/2/- again",
        ),
    ] {
        hub.ok_stdin(&["apply", "-f", "-"], &weighted_policy(weights));
        eventually(&hub, Duration::from_secs(60), what, || {
            MEMBERS
                .iter()
                .zip(want)
                .all(|(c, n)| member_replicas(&m(c), "web") == n)
        });
    }

    // --- Duplicated: the whole object in every cluster.
    hub.ok_stdin(
        &["apply", "-f", "-"],
        r#"apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: demo, labels: {shared: "yes"}}
data: {color: blue}
---
apiVersion: policy.flotilla.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: shared-config}
spec:
  resourceSelectors:
  - apiVersion: v1
    kind: ConfigMap
    labelSelector: {matchLabels: {shared: "yes"}}
  placement:
    replicaScheduling: {replicaSchedulingType: Duplicated}
"#,
    );
    eventually(
        &hub,
        Duration::from_secs(60),
        "settings in every member",
        || MEMBERS.iter().all(|c| color(&m(c)) == "blue"),
    );
    // A template edit reaches the members.
    hub.ok(&[
        "patch",
        "cm",
        "settings",
        "-n",
        "demo",
        "--type=merge",
        "-p",
        r#"{"data":{"color":"green"}}"#,
    ]);
    eventually(
        &hub,
        Duration::from_secs(30),
        "the edit in every member",
        || MEMBERS.iter().all(|c| color(&m(c)) == "green"),
    );

    // --- propagateDeps: what the pods refer to follows the Deployment, and moves and leaves
    // with it.
    hub.ok_stdin(
        &["apply", "-f", "-"],
        r#"apiVersion: v1
kind: ConfigMap
metadata: {name: api-config, namespace: demo}
data: {mode: fast}
---
apiVersion: v1
kind: Secret
metadata: {name: api-secret, namespace: demo}
stringData: {token: s3cret}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: demo}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        envFrom: [{configMapRef: {name: api-config}}]
      volumes:
      - {name: creds, secret: {secretName: api-secret}}
"#,
    );
    let deps_policy = |clusters: &str| {
        format!(
            r#"apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {{name: api, namespace: demo}}
spec:
  propagateDeps: true
  resourceSelectors:
  - {{apiVersion: apps/v1, kind: Deployment, name: api}}
  placement:
    clusterAffinity: {{clusterNames: [{clusters}]}}
"#
        )
    };
    let mode = |c: &str| member_get(&m(c), "cm/api-config", "{.data.mode}");
    let has_secret =
        |c: &str| !member_get(&m(c), "secret/api-secret", "{.metadata.name}").is_empty();
    hub.ok_stdin(&["apply", "-f", "-"], &deps_policy("member-1, member-2"));
    eventually(
        &hub,
        Duration::from_secs(60),
        "api-config and api-secret follow api into member-1 and member-2",
        || {
            ["member-1", "member-2"]
                .iter()
                .all(|c| mode(c) == "fast" && has_secret(c) && member_replicas(&m(c), "api") == "1")
        },
    );
    assert_eq!(
        mode("member-3"),
        "",
        "no dependency where the workload is not"
    );
    let explain = flotilla_ok(
        &hub,
        &["explain", "placement", "cm/api-config", "-n", "demo"],
    );
    assert!(
        explain.contains("needed by binding api-deployment in member-1, member-2"),
        "{explain}"
    );
    let unknown = flotilla(
        &hub,
        &["explain", "placement", "nosuchkind/x", "-n", "demo"],
    );
    assert!(!unknown.status.success());
    assert!(
        String::from_utf8_lossy(&unknown.stderr)
            .contains("the hub serves no kind called \"nosuchkind\""),
        "{}",
        String::from_utf8_lossy(&unknown.stderr)
    );
    hub.ok(&[
        "patch",
        "cm",
        "api-config",
        "-n",
        "demo",
        "--type=merge",
        "-p",
        r#"{"data":{"mode":"safe"}}"#,
    ]);
    eventually(
        &hub,
        Duration::from_secs(30),
        "the dependency's edit reaches its members",
        || mode("member-1") == "safe" && mode("member-2") == "safe",
    );
    // A re-created dependency is attached again.
    hub.ok(&["delete", "cm", "api-config", "-n", "demo"]);
    hub.ok_stdin(
        &["apply", "-f", "-"],
        "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"api-config\", \"namespace\": \"demo\"}, \"data\": {\"mode\": \"anew\"}}",
    );
    eventually(
        &hub,
        Duration::from_secs(60),
        "the re-created dependency reaches its members",
        || mode("member-1") == "anew" && mode("member-2") == "anew",
    );
    // Changing the policy's clusters moves the workload and its dependencies.
    hub.ok_stdin(&["apply", "-f", "-"], &deps_policy("member-3"));
    eventually(
        &hub,
        Duration::from_secs(60),
        "api and its dependencies move to member-3",
        || {
            member_replicas(&m("member-3"), "api") == "1"
                && mode("member-3") == "anew"
                && has_secret("member-3")
                && ["member-1", "member-2"].iter().all(|c| {
                    mode(c).is_empty() && !has_secret(c) && member_replicas(&m(c), "api").is_empty()
                })
        },
    );
    // Deleting the workload takes its dependencies out of the members; the hub keeps them.
    hub.ok(&["delete", "deployment", "api", "-n", "demo"]);
    eventually(
        &hub,
        Duration::from_secs(60),
        "api's dependencies leave member-3 with it",
        || mode("member-3").is_empty() && !has_secret("member-3"),
    );
    hub.ok(&["get", "cm/api-config", "secret/api-secret", "-n", "demo"]);

    // --- Deleting the template removes it everywhere; an orphaned one stays.
    hub.ok_stdin(
        &["apply", "-f", "-"],
        &deployment("keep", 1, "propagation.flotilla.io/orphan: \"true\""),
    );
    hub.ok_stdin(&["apply", "-f", "-"], &deployment("keep2", 1, ""));
    hub.ok_stdin(
        &["apply", "-f", "-"],
        r#"apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {name: keep, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: keep}
  placement:
    clusterAffinity: {clusterNames: [member-3]}
---
apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {name: keep2, namespace: demo}
spec:
  preserveResourcesOnDeletion: true
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: keep2}
  placement:
    clusterAffinity: {clusterNames: [member-3]}
"#,
    );
    eventually(&hub, Duration::from_secs(60), "keep in member-3", || {
        member_replicas(&m("member-3"), "keep") == "1"
            && member_replicas(&m("member-3"), "keep2") == "1"
    });
    hub.ok(&["delete", "deployment", "web", "keep", "keep2", "-n", "demo"]);
    eventually(
        &hub,
        Duration::from_secs(60),
        "web gone from every member",
        || {
            MEMBERS
                .iter()
                .all(|c| member_replicas(&m(c), "web").is_empty())
        },
    );
    eventually(
        &hub,
        Duration::from_secs(30),
        "the bindings are gone",
        || {
            let out = hub.kubectl(&["get", "rb", "-n", "demo", "-o", "name"]);
            let s = String::from_utf8_lossy(&out.stdout).to_string();
            !s.contains("web-deployment") && !s.contains("keep-deployment")
        },
    );
    assert_eq!(
        member_replicas(&m("member-3"), "keep"),
        "1",
        "an orphaned copy stays"
    );
    assert_eq!(
        member_replicas(&m("member-3"), "keep2"),
        "1",
        "preserveResourcesOnDeletion keeps the copy"
    );

    failover_and_failback(&hub, &members);
}

/// `readyReplicas` of Deployment `name` in a member (0 when absent or unreachable).
fn member_ready(m: &std::path::Path, name: &str) -> u32 {
    member_get(m, &format!("deploy/{name}"), "{.status.readyReplicas}")
        .parse()
        .unwrap_or(0)
}

/// Stopping a member moves its replicas to the others (and the hub still counts 6 ready);
/// starting it brings them back after the failback period, never with fewer than 6 ready.
fn failover_and_failback(hub: &Hub, members: &Members) {
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    hub.ok_stdin(&["apply", "-f", "-"], &deployment("ha", 6, ""));
    hub.ok_stdin(
        &["apply", "-f", "-"],
        &weighted_policy(&[("member-1", 1), ("member-2", 1), ("member-3", 1)])
            .replace("name: web", "name: ha"),
    );
    let hub_ready = || {
        let out = hub.kubectl(&[
            "get",
            "deploy",
            "ha",
            "-n",
            "demo",
            "-o",
            "jsonpath={.status.readyReplicas}",
        ]);
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    eventually(hub, Duration::from_secs(60), "ha 2/2/2 and 6 ready", || {
        MEMBERS.iter().all(|c| member_ready(&m(c), "ha") == 2) && hub_ready() == "6"
    });

    let stopped = std::time::Instant::now();
    members.stop("member-3").expect("stop member-3");
    eventually(
        hub,
        Duration::from_secs(120),
        "member-3's replicas move to member-1 and member-2",
        || {
            member_ready(&m("member-1"), "ha") == 3
                && member_ready(&m("member-2"), "ha") == 3
                && hub_ready() == "6"
        },
    );
    eprintln!("failover took {:?} from the stop", stopped.elapsed());
    let binding = |path: &str| {
        let out = hub.kubectl(&[
            "get",
            "rb",
            "ha-deployment",
            "-n",
            "demo",
            "-o",
            &format!("jsonpath={path}"),
        ]);
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    assert_eq!(binding("{.spec.clusters[*].name}"), "member-1 member-2");
    assert_eq!(binding("{.status.failedOver[*].name}"), "member-3");
    // The eviction was graceful: a task kept member-3's Work until the replacement was ready
    // (not the 10-minute timeout), then ended.
    eventually(
        hub,
        Duration::from_secs(30),
        "the eviction task ends",
        || binding("{.spec.gracefulEvictionTasks[*].fromCluster}").is_empty(),
    );
    assert!(
        hub.log().contains("graceful eviction done"),
        "no graceful eviction task was ended; hub log:\n{}",
        tail(&hub.log())
    );

    let started = std::time::Instant::now();
    members.start("member-3").expect("start member-3");
    eprintln!("member-3 started in {:?}", started.elapsed());
    let deadline = started + Duration::from_secs(150);
    let mut lowest = u32::MAX;
    loop {
        let ready: Vec<u32> = MEMBERS.iter().map(|c| member_ready(&m(c), "ha")).collect();
        let sum: u32 = ready.iter().sum();
        lowest = lowest.min(sum);
        if ready == [2, 2, 2] {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no failback to 2/2/2 within 150 s of member-3's return (ready {ready:?}); hub log:\n{}",
            tail(&hub.log())
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    let took = started.elapsed();
    eprintln!("failback took {took:?}");
    assert!(
        took >= Duration::from_secs(20),
        "failback came before the 20 s stable period: {took:?}"
    );
    assert!(
        lowest >= 6,
        "the ready replicas in the members dropped to {lowest} during failback"
    );
    assert_eq!(binding("{.status.failedOver[*].name}"), "");
    eventually(
        hub,
        Duration::from_secs(30),
        "the hub counts 6 ready",
        || hub_ready() == "6",
    );
    // /metrics counts what happened.
    let metrics = hub.ok(&["get", "--raw", "/metrics"]);
    let value = |name: &str| -> f64 {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
            .unwrap_or(0.0)
    };
    for name in [
        "flotilla_failover_evictions_total",
        "flotilla_failbacks_total",
        "flotilla_graceful_evictions_ended_total",
        "flotilla_controller_reconcile_total{controller=\"scheduler\",result=\"ok\"}",
    ] {
        assert!(value(name) >= 1.0, "{name} not counted:\n{metrics}");
    }
}

/// The last 60 lines of a log.
fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(60)..].join("\n")
}
