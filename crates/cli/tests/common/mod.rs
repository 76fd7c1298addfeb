//! Hub-in-a-test: start the real `flotilla serve` binary on a free loopback port in a temp dir,
//! wait until it is ready, and stop it (SIGTERM, then kill) when dropped — also on panic.
#![allow(dead_code)]

pub mod fleet;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A running hub.
pub struct Hub {
    child: Option<Child>,
    /// Its data directory (kept for the test's lifetime).
    pub dir: tempfile::TempDir,
    /// Path of admin.kubeconfig.
    pub kubeconfig: PathBuf,
    /// Extra arguments it was started with.
    args: Vec<String>,
}

impl Hub {
    /// Start a hub on SQLite.
    pub fn start() -> Hub {
        Self::start_with(&[])
    }

    /// Start a hub with extra `serve` arguments.
    pub fn start_with(extra: &[&str]) -> Hub {
        let dir = tempfile::tempdir().expect("temp dir");
        let kubeconfig = dir.path().join("admin.kubeconfig");
        let mut hub = Hub {
            child: None,
            dir,
            kubeconfig,
            args: extra.iter().map(|s| s.to_string()).collect(),
        };
        hub.spawn("127.0.0.1:0");
        hub
    }

    fn spawn(&mut self, listen: &str) {
        let _ = std::fs::remove_file(&self.kubeconfig);
        let log = std::fs::File::create(self.dir.path().join("hub.log")).expect("log file");
        let child = Command::new(env!("CARGO_BIN_EXE_flotilla"))
            .arg("serve")
            .arg("--data-dir")
            .arg(self.dir.path())
            .arg("--listen")
            .arg(listen)
            .args(&self.args)
            .env("RUST_LOG", "info")
            .stdout(Stdio::from(log.try_clone().expect("log")))
            .stderr(Stdio::from(log))
            .spawn()
            .expect("start flotilla serve");
        self.child = Some(child);
        self.wait_ready();
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(c) = self.child.as_mut() {
                if let Ok(Some(status)) = c.try_wait() {
                    panic!("flotilla serve exited with {status}; log:\n{}", self.log());
                }
            }
            if self.kubeconfig.exists() {
                let out = self.kubectl(&["get", "--raw", "/readyz"]);
                if out.status.success() {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "hub not ready in 60s; log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The hub's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("hub.log")).unwrap_or_default()
    }

    /// The address the hub serves on (from the kubeconfig).
    pub fn server(&self) -> String {
        let cfg = std::fs::read_to_string(&self.kubeconfig).expect("kubeconfig");
        let line = cfg
            .lines()
            .find(|l| l.trim_start().starts_with("server:"))
            .expect("server line");
        line.trim()
            .trim_start_matches("server:")
            .trim()
            .trim_matches('\'')
            .trim_matches('"')
            .to_string()
    }

    /// Run kubectl (the machine's, which dispatches by server version) against the hub.
    pub fn kubectl(&self, args: &[&str]) -> Output {
        kubectl_bin("kubectl", &self.kubeconfig, args, None)
    }

    /// Run kubectl with stdin.
    pub fn kubectl_stdin(&self, args: &[&str], stdin: &str) -> Output {
        kubectl_bin("kubectl", &self.kubeconfig, args, Some(stdin))
    }

    /// Run kubectl and require success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}\nhub log tail:\n{}",
            String::from_utf8_lossy(&out.stderr),
            tail(&self.log())
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Run kubectl with stdin and require success.
    pub fn ok_stdin(&self, args: &[&str], stdin: &str) -> String {
        let out = self.kubectl_stdin(args, stdin);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}\nhub log tail:\n{}",
            String::from_utf8_lossy(&out.stderr),
            tail(&self.log())
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Run kubectl, require failure; returns stderr.
    pub fn fails(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            !out.status.success(),
            "kubectl {args:?} should have failed; stdout: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// Stop with SIGTERM and wait.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            unsafe_sigterm(c.id());
            let deadline = Instant::now() + Duration::from_secs(15);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = c.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Kill -9 (no chance to flush anything).
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Start again on the same data directory and port (stopping it first if it runs, so no
    /// process is left behind).
    pub fn restart(&mut self) {
        self.stop();
        let server = self.server();
        let addr = server.trim_start_matches("https://").to_string();
        self.spawn(&addr);
    }
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

fn unsafe_sigterm(pid: u32) {
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status();
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Run a specific kubectl binary.
pub fn kubectl_bin(bin: &str, kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    use std::io::Write;
    let mut cmd = Command::new(bin);
    cmd.arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .env_remove("KUBECONFIG");
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| {
        panic!("{bin} is not installed ({e}): install kubectl 1.27-1.33 and re-run")
    });
    if let Some(s) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(s.as_bytes())
            .expect("write stdin");
    }
    child.wait_with_output().expect("kubectl output")
}

/// The versioned kubectl binaries installed beside the dispatcher (kubectl.1.27 …).
pub fn versioned_kubectl(minor: u32) -> PathBuf {
    let dispatcher = which("kubectl").expect("kubectl is not on PATH: install kubectl 1.27-1.33");
    let real = std::fs::canonicalize(&dispatcher).unwrap_or(dispatcher);
    let p = real
        .parent()
        .expect("kubectl dir")
        .join(format!("kubectl.1.{minor}"));
    assert!(p.exists(), "{} is missing: install the kubectl 1.{minor} component (gcloud components install kubectl) and re-run", p.display());
    p
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(name))
            .find(|p| p.exists())
    })
}

// === short forms for table-like suites ===

/// kubectl with whitespace-separated arguments (none of them contains a space); its stdout.
pub fn k(hub: &Hub, args: &str) -> String {
    hub.ok(&args.split_whitespace().collect::<Vec<_>>())
}

/// As [`k`], with `stdin`.
pub fn k_in(hub: &Hub, args: &str, stdin: &str) -> String {
    hub.ok_stdin(&args.split_whitespace().collect::<Vec<_>>(), stdin)
}

/// kubectl that must fail; its stderr.
pub fn k_err(hub: &Hub, args: &str) -> String {
    hub.fails(&args.split_whitespace().collect::<Vec<_>>())
}

/// kubectl that must fail, with `stdin`; its stderr.
pub fn k_in_err(hub: &Hub, args: &str, stdin: &str) -> String {
    let out = hub.kubectl_stdin(&args.split_whitespace().collect::<Vec<_>>(), stdin);
    assert!(!out.status.success(), "kubectl {args} should have failed");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A ConfigMap manifest with data `a: "1"` and `labels` (JSON members, e.g. `"app":"a"`).
pub fn cm(name: &str, ns: &str, labels: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"{ns}","labels":{{{labels}}}}},"data":{{"a":"1"}}}}"#
    )
}

/// `kubectl get -o name` output, sorted.
pub fn names(out: &str) -> Vec<&str> {
    let mut v: Vec<&str> = out.split_whitespace().collect();
    v.sort();
    v
}

/// Parse kubectl's JSON output.
pub fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}
