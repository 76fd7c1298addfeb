//! Hubs for tests and benchmarks: [`Serve`] starts a `flotilla serve` process (the one launcher
//! the end-to-end suites and `flotilla bench` share), and [`Hub`] is the hub-in-a-test: on a free
//! loopback port in a temporary directory, ready when returned, stopped (SIGTERM, then kill) when
//! dropped — also on panic.
//!
//! The binary is always given by the caller, never guessed: a suite passes the one Cargo built
//! for it (`env!("CARGO_BIN_EXE_flotilla")`), a benchmark its own executable, so neither can
//! run a stale `flotilla` from somewhere else.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::kubectl::kubectl_bin;
use crate::process::{last_lines, Proc};

/// How to start a hub: `BINARY serve --data-dir DIR --listen ADDR ARGS…`, logging to a file.
#[derive(Clone, Debug)]
pub struct Serve {
    binary: PathBuf,
    data_dir: PathBuf,
    listen: String,
    args: Vec<OsString>,
    log: PathBuf,
    rust_log: String,
}

impl Serve {
    /// A hub of `binary` keeping its data in `data_dir`, on a free loopback port, logging at
    /// `warn` to `DATA_DIR/hub.log`.
    pub fn new(binary: &Path, data_dir: &Path) -> Serve {
        Serve {
            binary: binary.to_path_buf(),
            data_dir: data_dir.to_path_buf(),
            listen: "127.0.0.1:0".into(),
            args: Vec::new(),
            log: data_dir.join("hub.log"),
            rust_log: "warn".into(),
        }
    }

    /// Listen on `addr` (e.g. the port of a hub being restarted).
    pub fn listen(mut self, addr: &str) -> Serve {
        self.listen = addr.to_string();
        self
    }

    /// More `serve` arguments, after the others.
    pub fn args<S: AsRef<OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Serve {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    /// Log to `path` instead of `DATA_DIR/hub.log`.
    pub fn log(mut self, path: &Path) -> Serve {
        self.log = path.to_path_buf();
        self
    }

    /// The `RUST_LOG` filter of the hub.
    pub fn rust_log(mut self, filter: &str) -> Serve {
        self.rust_log = filter.to_string();
        self
    }

    /// Where the hub writes its admin kubeconfig once it listens.
    pub fn kubeconfig(&self) -> PathBuf {
        self.data_dir.join("admin.kubeconfig")
    }

    /// Start the hub. A kubeconfig left by an earlier run in the data directory is removed
    /// first, so its appearance means this hub is up. The caller waits for readiness its own
    /// way (its own client, or kubectl).
    pub fn start(&self) -> Result<Proc> {
        match std::fs::remove_file(self.kubeconfig()) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(anyhow::Error::new(e).context("cannot remove the old kubeconfig"))
            }
            _ => {}
        }
        let mut args: Vec<&OsStr> = vec![
            OsStr::new("serve"),
            OsStr::new("--data-dir"),
            self.data_dir.as_os_str(),
            OsStr::new("--listen"),
            OsStr::new(&self.listen),
        ];
        args.extend(self.args.iter().map(OsString::as_os_str));
        Proc::start("hub", &self.binary, &args, &self.rust_log, &self.log)
    }
}

/// The hub-in-a-test. Its methods panic with the hub's log on failure, as a test wants.
pub struct Hub {
    /// Declared first: the process stops before its data directory is removed.
    process: Option<Proc>,
    serve: Serve,
    /// Its data directory (kept for the test's lifetime).
    pub dir: tempfile::TempDir,
    /// Path of admin.kubeconfig.
    pub kubeconfig: PathBuf,
}

impl Hub {
    /// Start `binary`'s hub on SQLite with extra `serve` arguments, and wait until `/readyz`
    /// answers through kubectl.
    pub fn start(binary: &Path, extra: &[&str]) -> Hub {
        let dir = tempfile::tempdir().expect("temp dir");
        let serve = Serve::new(binary, dir.path()).args(extra).rust_log("info");
        let mut hub = Hub {
            process: None,
            kubeconfig: serve.kubeconfig(),
            serve,
            dir,
        };
        hub.spawn();
        hub
    }

    fn spawn(&mut self) {
        let process = self
            .serve
            .start()
            .unwrap_or_else(|e| panic!("start flotilla serve: {e:#}"));
        self.process = Some(process);
        self.wait_ready();
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(p) = self.process.as_mut() {
                if let Err(e) = p.check_alive() {
                    panic!("flotilla serve has stopped: {e:#}\nlog:\n{}", self.log());
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
        self.require_success(args, &out);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Run kubectl with stdin and require success.
    pub fn ok_stdin(&self, args: &[&str], stdin: &str) -> String {
        let out = self.kubectl_stdin(args, stdin);
        self.require_success(args, &out);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn require_success(&self, args: &[&str], out: &Output) {
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}\nhub log tail:\n{}",
            String::from_utf8_lossy(&out.stderr),
            last_lines(&self.log(), 30)
        );
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

    /// Stop with SIGTERM and wait (killed after 15 s).
    pub fn stop(&mut self) {
        if let Some(mut p) = self.process.take() {
            // A hub that had to be killed is stopped all the same; the tests that care about a
            // clean drain look at what the restarted hub finds.
            let _ = p.stop();
        }
    }

    /// Kill -9 (no chance to flush anything).
    pub fn kill9(&mut self) {
        if let Some(mut p) = self.process.take() {
            let _ = p.kill();
        }
    }

    /// Start again on the same data directory and port (stopping it first if it runs, so no
    /// process is left behind).
    pub fn restart(&mut self) {
        let extra = self.serve.args.clone();
        self.restart_with(&extra);
    }

    /// [`Hub::restart`] with `extra` as its `serve` arguments instead of those it had.
    pub fn restart_with<S: AsRef<OsStr>>(&mut self, extra: &[S]) {
        self.stop();
        let server = self.server();
        let addr = server.trim_start_matches("https://").to_string();
        let mut serve = self.serve.clone().listen(&addr);
        serve.args = extra.iter().map(|a| a.as_ref().to_os_string()).collect();
        self.serve = serve;
        self.spawn();
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.stop();
    }
}
