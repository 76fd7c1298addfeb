//! Members whose clocks are five minutes off (libfaketime on the simulator, so its agents
//! write their heartbeats with a skewed clock) are judged as members with a right clock:
//! one behind stays Ready while it beats, one ahead turns Unknown within the grace period of
//! its silence.

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use k8s_openapi::jiff::Timestamp;

use crate::common::fleet::{condition, eventually};
use crate::common::Hub;

/// libfaketime's preload library, or a failure saying how to install it.
fn libfaketime() -> PathBuf {
    let found = std::fs::read_dir("/usr/lib")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("faketime/libfaketime.so.1"))
        .chain([PathBuf::from("/usr/lib/faketime/libfaketime.so.1")])
        .find(|p| p.exists());
    found.unwrap_or_else(|| {
        panic!(
            "libfaketime is not installed: the clock-skew test runs the simulator with its clock \
             five minutes off through it; install it with `apt-get install faketime` (scripts/test \
             does) and re-run"
        )
    })
}

/// How far the Lease `cluster` was renewed from the hub's now, in seconds (positive: ahead).
fn lease_skew(hub: &Hub, cluster: &str) -> i64 {
    let out = hub.ok(&[
        "get",
        "lease",
        cluster,
        "-n",
        "flotilla-system",
        "-o",
        "jsonpath={.spec.renewTime}",
    ]);
    let renewed: Timestamp = out.trim().parse().unwrap_or_else(|e| panic!("{out}: {e}"));
    let now = Timestamp::try_from(SystemTime::now()).unwrap();
    renewed.duration_since(now).as_secs()
}

#[test]
fn members_with_skewed_clocks_are_judged_by_the_hub_clock() {
    let _serial = super::serial();
    let preload = libfaketime();
    let preload = preload.to_str().unwrap();
    let grace = 8;
    let hub = Hub::start_with(&[
        "--heartbeat-interval",
        "2s",
        "--cluster-grace-period",
        &format!("{grace}s"),
    ]);
    let skewed = |offset: &'static str| {
        [
            ("LD_PRELOAD", preload),
            ("FAKETIME", offset),
            ("FAKETIME_DONT_FAKE_MONOTONIC", "1"),
        ]
    };
    let (mut ahead, _) = super::sim(&hub, "ahead", 1, &skewed("+5m"));
    let (mut behind, _) = super::sim(&hub, "behind", 1, &skewed("-5m"));
    let ready = |c: &str| condition(&hub, &format!("cluster/{c}"), None, "Ready");
    for c in ["ahead-1", "behind-1"] {
        eventually(&hub, Duration::from_secs(60), &format!("{c} Ready"), || {
            ready(c) == "True"
        });
    }
    // The skew is real: each agent renews its Lease with its own clock.
    let (a, b) = (lease_skew(&hub, "ahead-1"), lease_skew(&hub, "behind-1"));
    assert!(
        a > 240 && b < -240,
        "Lease renewTime vs hub: ahead {a} s, behind {b} s"
    );

    // Three grace periods: the member whose heartbeats look five minutes old stays Ready.
    let until = Instant::now() + Duration::from_secs(3 * grace);
    while Instant::now() < until {
        for c in ["ahead-1", "behind-1"] {
            assert_eq!(ready(c), "True", "{c} left Ready while its agent beats");
        }
        std::thread::sleep(Duration::from_millis(500));
    }

    // Silenced, each turns Unknown after the grace period (not five minutes later).
    for (name, sim) in [("ahead-1", &mut ahead), ("behind-1", &mut behind)] {
        sim.kill().expect("kill the simulator");
        let silenced = Instant::now();
        eventually(
            &hub,
            Duration::from_secs(grace + 20),
            &format!("{name} Unknown"),
            || ready(name) == "Unknown",
        );
        let took = silenced.elapsed();
        assert!(
            took >= Duration::from_secs(grace - 2),
            "{name} turned Unknown {took:?} after its agent stopped, before the {grace} s grace period"
        );
    }
}
