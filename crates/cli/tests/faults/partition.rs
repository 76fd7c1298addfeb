//! Partitions and a slow member, on three real member clusters: member-1 joins in pull mode
//! with its agent reaching the hub through a proxy, member-2 in push mode directly, member-3 in
//! push mode with the hub reaching it through a proxy.
//!
//! - A slow member (every byte to and from member-3 held 1 s each way): a template change
//!   still reaches member-1 and member-2 as fast as before.
//! - Both proxies cut (a partition, not a refusal): the members keep their workloads, the hub
//!   stops calling the two clusters Ready after the grace period and moves their replicas to
//!   member-2; a template change made meanwhile is not lost: once the partitions heal and the
//!   failback period passes, every member runs the newest template, each replica once.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use flotilla_testkit::proxy::Proxy;
use flotilla_testkit::Members;

use crate::agent::Agent;
use crate::common::fleet::{condition, eventually, flotilla_ok, kc};
use crate::common::Hub;

const MEMBERS: [&str; 3] = ["member-1", "member-2", "member-3"];

fn deployment(image: &str) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: faults}}
spec:
  replicas: 6
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers: [{{name: web, image: "{image}"}}]
"#
    )
}

const POLICY: &str = r#"apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: faults}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  placement:
    clusterAffinity: {clusterNames: [member-1, member-2, member-3]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [member-1]}, weight: 1}
        - {targetCluster: {clusterNames: [member-2]}, weight: 1}
        - {targetCluster: {clusterNames: [member-3]}, weight: 1}
"#;

/// `replicas image` of Deployment web in a member, read directly (not through a proxy): ""
/// when it is not there, `None` when the member does not answer.
fn member_web(m: &Path) -> Option<String> {
    let (ok, out, err) = kc(
        m,
        &[
            "get",
            "deploy/web",
            "-n",
            "faults",
            "-o",
            "jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image}",
            "--request-timeout=3s",
        ],
    );
    if ok {
        Some(out.trim().to_owned())
    } else if err.contains("NotFound") {
        Some(String::new())
    } else {
        None
    }
}

/// What every member runs, in member order.
fn placement(kubeconfigs: &[PathBuf]) -> Vec<Option<String>> {
    kubeconfigs.iter().map(|m| member_web(m)).collect()
}

/// Applies the template with `image` and times until members `fast` all run it.
fn change_reaches(hub: &Hub, kubeconfigs: &[PathBuf], image: &str, fast: &[usize]) -> Duration {
    hub.ok_stdin(&["apply", "-f", "-"], &deployment(image));
    let started = Instant::now();
    eventually(
        hub,
        Duration::from_secs(60),
        &format!("{image} in members {fast:?}"),
        || {
            fast.iter().all(|&i| {
                member_web(&kubeconfigs[i]).is_some_and(|w| w.ends_with(&format!(" {image}")))
            })
        },
    );
    started.elapsed()
}

#[test]
fn partitioned_and_slow_members() {
    let _serial = super::serial();
    let members = Members::shared(3).expect("member clusters (scripts/members build)");
    let m: Vec<PathBuf> = MEMBERS
        .iter()
        .map(|c| members.member(c).expect("member").kubeconfig.clone())
        .collect();
    let hub = Hub::start_with(&[
        "--heartbeat-interval",
        "2s",
        "--cluster-grace-period",
        "8s",
        "--failover-toleration",
        "5s",
        "--failback-after",
        "15s",
    ]);
    // member-1: a pull agent whose hub connection goes through a proxy.
    let to_hub = Proxy::start(super::server_addr(&hub.kubeconfig)).expect("proxy to the hub");
    let boot = hub.dir.path().join("boot.kubeconfig");
    flotilla_ok(
        &hub,
        &[
            "token",
            "create",
            "--cluster",
            "member-1",
            "-o",
            boot.to_str().unwrap(),
        ],
    );
    let proxied_boot = hub.dir.path().join("boot-proxied.kubeconfig");
    to_hub
        .rewrite_kubeconfig(&boot, &proxied_boot)
        .expect("rewrite");
    let agent = Agent::start(&hub, "member-1", &m[0], Some(&proxied_boot));
    eventually(
        &hub,
        Duration::from_secs(30),
        "member-1 asks to join",
        || condition(&hub, "cluster/member-1", None, "Joined") == "False",
    );
    flotilla_ok(&hub, &["cluster", "approve", "member-1"]);
    // member-2 directly, member-3 through a proxy, both pushed to by the hub.
    flotilla_ok(
        &hub,
        &[
            "join",
            "member-2",
            "--member-kubeconfig",
            m[1].to_str().unwrap(),
        ],
    );
    let to_m3 = Proxy::start(super::server_addr(&m[2])).expect("proxy to member-3");
    let m3_proxied = hub.dir.path().join("member-3-proxied.kubeconfig");
    to_m3
        .rewrite_kubeconfig(&m[2], &m3_proxied)
        .expect("rewrite");
    flotilla_ok(
        &hub,
        &[
            "join",
            "member-3",
            "--member-kubeconfig",
            m3_proxied.to_str().unwrap(),
        ],
    );
    let ready = |c: &str| condition(&hub, &format!("cluster/{c}"), None, "Ready");
    for c in MEMBERS {
        eventually(&hub, Duration::from_secs(60), &format!("{c} Ready"), || {
            ready(c) == "True"
        });
    }
    hub.ok(&["create", "namespace", "faults"]);
    hub.ok_stdin(&["apply", "-f", "-"], &deployment("nginx:1.27"));
    hub.ok_stdin(&["apply", "-f", "-"], POLICY);
    let all = |image: &str| {
        let want = Some(format!("2 {image}"));
        placement(&m).iter().all(|p| *p == want)
    };
    eventually(&hub, Duration::from_secs(60), "2/2/2 of nginx:1.27", || {
        all("nginx:1.27")
    });

    // A slow member does not slow the others.
    let before = change_reaches(&hub, &m, "nginx:1.28", &[0, 1]);
    eventually(&hub, Duration::from_secs(30), "2/2/2 of nginx:1.28", || {
        all("nginx:1.28")
    });
    to_m3.delay(Duration::from_secs(1));
    let slowed = change_reaches(&hub, &m, "nginx:1.29", &[0, 1]);
    eprintln!("change → member-1 and member-2: {before:?} before, {slowed:?} with member-3 slow");
    assert!(
        slowed < Duration::from_secs(2) && slowed < before + Duration::from_millis(1500),
        "with member-3 2 s slower a change took {slowed:?} to reach member-1 and member-2 \
         ({before:?} before)"
    );
    eventually(
        &hub,
        Duration::from_secs(60),
        "member-3 runs nginx:1.29, slowly",
        || member_web(&m[2]).is_some_and(|w| w.ends_with(" nginx:1.29")),
    );
    to_m3.heal();

    // Partitions: the agent of member-1 from the hub, the hub from member-3.
    to_hub.cut();
    to_m3.cut();
    let cut = Instant::now();
    for c in ["member-1", "member-3"] {
        eventually(
            &hub,
            Duration::from_secs(40),
            &format!("{c} not Ready"),
            || ready(c) != "True",
        );
    }
    eprintln!(
        "both partitioned clusters left Ready {:?} after the cut",
        cut.elapsed()
    );
    eventually(
        &hub,
        Duration::from_secs(90),
        "all 6 replicas on member-2",
        || member_web(&m[1]).as_deref() == Some("6 nginx:1.29"),
    );
    // The members keep what they run: nothing reaches them to say otherwise.
    for i in [0, 2] {
        assert_eq!(
            member_web(&m[i]).as_deref(),
            Some("2 nginx:1.29"),
            "{} lost its workload in the partition",
            MEMBERS[i]
        );
    }
    // A change made during the partition.
    hub.ok_stdin(&["apply", "-f", "-"], &deployment("nginx:1.30"));
    eventually(
        &hub,
        Duration::from_secs(30),
        "member-2 runs nginx:1.30",
        || member_web(&m[1]).as_deref() == Some("6 nginx:1.30"),
    );

    to_hub.heal();
    to_m3.heal();
    let healed = Instant::now();
    for c in ["member-1", "member-3"] {
        eventually(
            &hub,
            Duration::from_secs(60),
            &format!("{c} Ready again"),
            || ready(c) == "True",
        );
    }
    // After the failback period: back to 2/2/2, all of the newest template, each replica once.
    eventually(
        &hub,
        Duration::from_secs(120),
        "2/2/2 of nginx:1.30 after healing",
        || all("nginx:1.30"),
    );
    eprintln!("2/2/2 of nginx:1.30 {:?} after healing", healed.elapsed());
    // And it stays so (nothing replays an older Work when the held bytes arrive).
    let settle = Instant::now() + Duration::from_secs(10);
    while Instant::now() < settle {
        let now = placement(&m);
        assert!(
            now.iter()
                .all(|p| p.is_none() || p.as_deref() == Some("2 nginx:1.30")),
            "after healing the members ran {now:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let log = agent.log();
    assert!(!log.contains("panicked"), "the agent panicked:\n{log}");
}
