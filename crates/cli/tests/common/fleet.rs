//! Helpers for tests on member clusters: the flotilla CLI, kubectl on any kubeconfig, polling.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use super::{kubectl_bin, Hub};

/// Runs the flotilla CLI against the hub.
pub fn flotilla(hub: &Hub, args: &[&str]) -> Output {
    Command::new(super::FLOTILLA)
        .args(args)
        .env("KUBECONFIG", &hub.kubeconfig)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run flotilla")
}

pub fn flotilla_ok(hub: &Hub, args: &[&str]) -> String {
    let out = flotilla(hub, args);
    assert!(
        out.status.success(),
        "flotilla {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// kubectl against a member (or any kubeconfig); (success, stdout, stderr).
pub fn kc(kubeconfig: &Path, args: &[&str]) -> (bool, String, String) {
    let out = kubectl_bin("kubectl", kubeconfig, args, None);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Polls `probe` until it returns true, or fails with `what` and the hub's log tail.
pub fn eventually(hub: &Hub, within: Duration, what: &str, mut probe: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !probe() {
        if Instant::now() > deadline {
            let log = hub.log();
            let tail: Vec<&str> = log.lines().rev().take(25).collect();
            panic!(
                "not within {within:?}: {what}\nhub log (newest first):\n{}",
                tail.join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

pub fn condition(hub: &Hub, kind_name: &str, ns: Option<&str>, type_: &str) -> String {
    let path = format!("jsonpath={{.status.conditions[?(@.type==\"{type_}\")].status}}");
    let mut args = vec!["get", kind_name, "-o", path.as_str()];
    if let Some(ns) = ns {
        args.extend(["-n", ns]);
    }
    let out = hub.kubectl(&args);
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}
