//! A set of `flotilla serve` replicas made by `scripts/ha up`, driven through the script (stop is
//! its SIGKILL, start brings a replica back on its port) and taken down by `scripts/ha down`
//! when dropped — also on panic, after printing the end of each replica's log.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::Client;

/// The binary under test, given to scripts/ha as FLOTILLA_BIN.
const FLOTILLA: &str = env!("CARGO_BIN_EXE_flotilla");

/// scripts/ha of this checkout.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/ha")
}

/// `KEY=value` of an env file written by scripts/ha ("" when absent).
fn env_get(file: &Path, key: &str) -> String {
    let text = std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
    text.lines()
        .filter_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
        .next_back()
        .unwrap_or_default()
        .to_string()
}

/// A fresh database on the PostgreSQL of scripts/test (FLOTILLA_TEST_POSTGRES_URL), or None
/// when it is not set: scripts/ha then starts its own server.
fn fresh_database(tag: &str) -> Option<String> {
    let server = flotilla_testkit::postgres::server()?;
    Some(flotilla_testkit::postgres::create_database(
        &server,
        &format!("ha_{tag}"),
    ))
}

/// Run scripts/ha with `args`; panics with its output when it fails.
fn ha(args: &[&str], env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(script());
    cmd.args(args).env("FLOTILLA_BIN", FLOTILLA);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run scripts/ha: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "scripts/ha {args:?} failed:\n{text}");
    text
}

/// Replicas started by `scripts/ha up N DIR`.
pub struct HaSet {
    pub dir: PathBuf,
    pub replicas: usize,
}

impl HaSet {
    /// `scripts/ha up N` in a new directory, on a fresh database of scripts/test's PostgreSQL
    /// when there is one. The set is taken down if this test process dies (HA_OWNER_PID).
    pub fn up(n: usize, tag: &str) -> HaSet {
        Self::up_with(n, tag, &[])
    }

    /// [`HaSet::up`] with more environment for scripts/ha (e.g. `HA_NO_CONTROLLERS=1`).
    pub fn up_with(n: usize, tag: &str, extra: &[(&str, &str)]) -> HaSet {
        static SETS: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "flotilla-ha-{}-{tag}-{}",
            std::process::id(),
            SETS.fetch_add(1, Ordering::Relaxed)
        ));
        let owner = std::process::id().to_string();
        let mut env = vec![("HA_OWNER_PID", owner)];
        if let Some(db) = fresh_database(tag) {
            env.push(("HA_POSTGRES_URL", db));
        }
        let mut env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        env.extend_from_slice(extra);
        let n_text = n.to_string();
        ha(
            &["up", &n_text, dir.to_str().expect("utf-8 temp dir")],
            &env,
        );
        HaSet { dir, replicas: n }
    }

    fn replica_dir(&self, k: usize) -> PathBuf {
        self.dir.join(format!("replica-{k}"))
    }

    /// The cluster-admin kubeconfig of replica-K.
    pub fn kubeconfig(&self, k: usize) -> PathBuf {
        self.replica_dir(k).join("kubeconfig")
    }

    /// `SERVER` of replica-K (https://127.0.0.1:PORT).
    pub fn server(&self, k: usize) -> String {
        env_get(&self.replica_dir(k).join("env"), "SERVER")
    }

    /// The identity replica-K's controllers hold shard Leases under (kept in its data dir).
    pub fn controller_identity(&self, k: usize) -> String {
        let path = self.replica_dir(k).join("data/controller-identity");
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
            .trim()
            .to_string()
    }

    /// A kube-rs client of replica-K with its own admin kubeconfig.
    pub async fn client(&self, k: usize) -> Client {
        self.client_as(k, k).await
    }

    /// A client of replica-`to` holding replica-`from`'s credentials (its CA and admin token):
    /// with one shared identity, any replica accepts them.
    pub async fn client_as(&self, from: usize, to: usize) -> Client {
        let path = self.replica_dir(from).join("kubeconfig");
        let kc =
            Kubeconfig::read_from(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let mut cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
            .await
            .unwrap_or_else(|e| panic!("kube config of {}: {e}", path.display()));
        cfg.cluster_url = self.server(to).parse().expect("SERVER is a URL");
        Client::try_from(cfg).expect("a kube client")
    }

    /// `scripts/ha stop replica-K`: SIGKILL.
    pub fn kill(&self, k: usize) {
        ha(
            &["stop", &format!("replica-{k}"), self.dir.to_str().unwrap()],
            &[],
        );
    }

    /// `scripts/ha start replica-K`: same port, same arguments; returns once it is ready.
    pub fn start(&self, k: usize) {
        ha(
            &["start", &format!("replica-{k}"), self.dir.to_str().unwrap()],
            &[],
        );
    }

    /// The last `n` lines of every replica's log, for failure messages.
    pub fn log_tails(&self, n: usize) -> String {
        let mut out = String::new();
        for k in 1..=self.replicas {
            let log = std::fs::read_to_string(self.replica_dir(k).join("log")).unwrap_or_default();
            let lines: Vec<&str> = log.lines().collect();
            let from = lines.len().saturating_sub(n);
            out.push_str(&format!("--- replica-{k} log (last {n} lines) ---\n"));
            out.push_str(&lines[from..].join("\n"));
            out.push('\n');
        }
        out
    }

    /// Create namespace `name` through replica 1 and wait until every replica reads it.
    pub async fn namespace(&self, name: &str) {
        let ns: Namespace =
            serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).unwrap();
        Api::<Namespace>::all(self.client(1).await)
            .create(&PostParams::default(), &ns)
            .await
            .unwrap_or_else(|e| panic!("create namespace {name} through replica 1: {e}"));
        for k in 1..=self.replicas {
            let api = Api::<Namespace>::all(self.client(k).await);
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while api.get_opt(name).await.ok().flatten().is_none() {
                assert!(
                    std::time::Instant::now() < deadline,
                    "namespace {name} made through replica 1 is not readable on replica {k} after 30 s"
                );
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    }
}

impl Drop for HaSet {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}", self.log_tails(40));
        }
        let out = Command::new(script())
            .args(["down", self.dir.to_str().unwrap_or_default()])
            .output();
        if let Ok(out) = out {
            if !out.status.success() {
                eprintln!(
                    "scripts/ha down {} failed: {}",
                    self.dir.display(),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
}
