//! A `flotilla agent` process for the fleet tests.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::Hub;

/// A `flotilla agent` process, killed when dropped.
pub(super) struct Agent {
    child: Child,
    log: PathBuf,
    pub(super) state: PathBuf,
}

impl Agent {
    pub(super) fn start(
        hub: &Hub,
        cluster: &str,
        member_kubeconfig: &Path,
        boot: Option<&Path>,
    ) -> Agent {
        let state = hub.dir.path().join(format!("agent-{cluster}"));
        let log = hub.dir.path().join(format!("agent-{cluster}.log"));
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .expect("agent log");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_flotilla"));
        cmd.args(["agent", "--cluster", cluster, "--heartbeat-interval", "2s"])
            .arg("--kubeconfig")
            .arg(member_kubeconfig)
            .arg("--state-dir")
            .arg(&state)
            .env("RUST_LOG", "info")
            .env_remove("KUBECONFIG")
            .stdout(Stdio::from(out.try_clone().expect("log")))
            .stderr(Stdio::from(out));
        if let Some(b) = boot {
            cmd.arg("--bootstrap-kubeconfig").arg(b);
        }
        let child = cmd.spawn().expect("start flotilla agent");
        Agent { child, log, state }
    }

    pub(super) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits for the agent to exit on its own; its exit status.
    pub(super) fn wait_exit(&mut self, within: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the agent did not exit within {within:?}; log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
