//! Failover and failback with a member stopped and started again.

use std::time::Duration;

use crate::common::fleet::{eventually, kc};
use crate::common::Hub;
use flotilla_testkit::process::last_lines;
use flotilla_testkit::Members;

use super::{deployment, member_get, weighted_policy, MEMBERS};

/// `readyReplicas` of Deployment `name` in a member (0 when absent or unreachable).
fn member_ready(m: &std::path::Path, name: &str) -> u32 {
    member_get(m, &format!("deploy/{name}"), "{.status.readyReplicas}")
        .parse()
        .unwrap_or(0)
}

/// `readyReplicas` of Deployment `name` in a member: 0 when it is not there, `None` when the
/// member could not be read.
fn sampled_ready(m: &std::path::Path, name: &str) -> Option<u32> {
    let (ok, out, err) = kc(
        m,
        &[
            "get",
            &format!("deploy/{name}"),
            "-n",
            "demo",
            "-o",
            "jsonpath={.status.readyReplicas}",
            "--request-timeout=3s",
        ],
    );
    if ok {
        Some(out.trim().parse().unwrap_or(0))
    } else if err.contains("NotFound") {
        Some(0)
    } else {
        None
    }
}

/// Stopping a member moves its replicas to the others (and the hub still counts 6 ready);
/// starting it brings them back after the failback period, never with fewer than 6 ready.
pub(super) fn failover_and_failback(hub: &Hub, members: &Members) {
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
        last_lines(&hub.log(), 60)
    );

    let started = std::time::Instant::now();
    members.start("member-3").expect("start member-3");
    eprintln!("member-3 started in {:?}", started.elapsed());
    let deadline = started + Duration::from_secs(150);
    let mut lowest = u32::MAX;
    // Each change of the members' ready counts, with when it was seen: the evidence if the
    // count drops.
    let mut timeline: Vec<(Duration, Vec<u32>)> = Vec::new();
    loop {
        // A member that cannot be read right now (a slow or restarting API server) gives no
        // sample; that is not a drop of its ready replicas.
        let ready: Option<Vec<u32>> = MEMBERS.iter().map(|c| sampled_ready(&m(c), "ha")).collect();
        let Some(ready) = ready else {
            std::thread::sleep(Duration::from_millis(300));
            continue;
        };
        if timeline.last().map(|(_, r)| r) != Some(&ready) {
            timeline.push((started.elapsed(), ready.clone()));
        }
        let sum: u32 = ready.iter().sum();
        lowest = lowest.min(sum);
        if ready == [2, 2, 2] {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no failback to 2/2/2 within 150 s of member-3's return (ready {ready:?}); hub log:\n{}",
            last_lines(&hub.log(), 60)
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    let took = started.elapsed();
    eprintln!("failback took {took:?}; ready per member: {timeline:?}");
    assert!(
        took >= Duration::from_secs(20),
        "failback came before the 20 s stable period: {took:?}"
    );
    assert!(
        lowest >= 6,
        "the ready replicas in the members dropped to {lowest} during failback; ready per \
         member after the start: {timeline:?}; hub log:\n{}",
        last_lines(&hub.log(), 80)
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
