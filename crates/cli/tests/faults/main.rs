//! Faults with real processes (issue 19): a pull agent and a push member cut off from the hub
//! by a TCP proxy, a member made slow, the hub's disk full, the hub killed while 1,000
//! Deployments propagate, and members whose clocks are five minutes off. Each says what it
//! needs when a prerequisite is missing (libfaketime, root for a tmpfs mount).

#[path = "../fleet/agent.rs"]
#[allow(dead_code)]
mod agent;
#[path = "../common/mod.rs"]
mod common;

mod clock;
mod crash;
mod disk;
mod partition;

use std::ffi::OsStr;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use flotilla_testkit::process::Proc;

use common::Hub;

/// Held by each test for its whole run: the tests run one at a time, so the timings the
/// slow-member and clock tests look at are not those of a machine busy with another test.
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The `host:port` of a kubeconfig's server.
fn server_addr(kubeconfig: &Path) -> SocketAddr {
    let text = std::fs::read_to_string(kubeconfig).expect("kubeconfig");
    let server = text
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("server:"))
        .expect("a server line")
        .trim()
        .trim_matches(|c| c == '"' || c == '\'');
    let hostport = server.trim_start_matches("https://");
    hostport
        .replace("localhost", "127.0.0.1")
        .parse()
        .unwrap_or_else(|e| panic!("server {server}: {e}"))
}

/// `flotilla sim` serving `count` clusters named `PREFIX-K` that join `hub` (pull mode: one
/// agent per cluster, heartbeats every 2 s), with `env` added to its environment; returns
/// once the last cluster answers.
fn sim(hub: &Hub, prefix: &str, count: usize, env: &[(&str, &str)]) -> (Proc, PathBuf) {
    let dir = hub.dir.path().join(format!("sim-{prefix}"));
    let count_text = count.to_string();
    let args = [
        "sim",
        "--count",
        &count_text,
        "--prefix",
        prefix,
        "--out",
        dir.to_str().unwrap(),
        "--hub-kubeconfig",
        hub.kubeconfig.to_str().unwrap(),
        "--mode",
        "pull",
        "--heartbeat-interval",
        "2s",
    ];
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    let log = hub.dir.path().join(format!("sim-{prefix}.log"));
    let mut proc =
        Proc::start_with_env("sim", Path::new(common::FLOTILLA), &args, "info", &log, env)
            .expect("start flotilla sim");
    let last = dir.join(format!("{prefix}-{count}.kubeconfig"));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !last.exists() {
        proc.check_alive().expect("flotilla sim is running");
        assert!(
            Instant::now() < deadline,
            "flotilla sim did not serve {prefix}-{count} in 60 s: {}",
            proc.log_tail(30)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    (proc, dir)
}
