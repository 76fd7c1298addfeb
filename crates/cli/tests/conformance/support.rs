//! Helpers the suite's modules share: polling until the hub has caught up, reading objects as
//! JSON through kubectl, a raw client as the admin, and the cells of kubectl's tables.

use std::time::{Duration, Instant};

use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::Value;

use crate::common::{json, Hub};

/// Polls `f` for up to `secs` seconds until it gives something.
pub(crate) fn within<T>(secs: u64, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `kubectl get <args> -o json`, or `None` while it fails (the object does not exist yet).
pub(crate) fn get_json(hub: &Hub, args: &[&str]) -> Option<Value> {
    let mut all = vec!["get"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "json"]);
    let out = hub.kubectl(&all);
    out.status
        .success()
        .then(|| json(&String::from_utf8_lossy(&out.stdout)))
}

/// The object `what` (`kind/name`) of namespace `ns` as JSON, or `None` while it does not exist.
pub(crate) fn get_in(hub: &Hub, what: &str, ns: &str) -> Option<Value> {
    get_json(hub, &[what, "-n", ns])
}

/// A client as the hub's admin, for raw requests (its kubeconfig's user).
pub(crate) async fn admin_client(hub: &Hub) -> kube::Client {
    let kc = Kubeconfig::read_from(&hub.kubeconfig).expect("read the admin kubeconfig");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("a client config");
    kube::Client::try_from(cfg).expect("a client")
}

/// The cells of line `n` of a kubectl table, split on runs of spaces (line 0 is the header).
pub(crate) fn table_line(table: &str, n: usize) -> Vec<&str> {
    table
        .lines()
        .nth(n)
        .unwrap_or("")
        .split_whitespace()
        .collect()
}
