//! `flotilla controllers` processes of the test, each logging to a file in the set's
//! directory, killed by PID (SIGKILL) when dropped.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command};

use crate::set::HaSet;

use super::FLOTILLA;

/// `flotilla controllers` processes of this test, killed by PID when dropped.
pub struct Controllers {
    procs: BTreeMap<&'static str, Child>,
    logs: BTreeMap<&'static str, PathBuf>,
}

impl Controllers {
    pub fn new() -> Controllers {
        Controllers {
            procs: BTreeMap::new(),
            logs: BTreeMap::new(),
        }
    }

    /// Starts `flotilla controllers --identity NAME` on the kubeconfig of replica `k`.
    pub fn start(&mut self, set: &HaSet, name: &'static str, k: usize) {
        let log = set.dir.join(format!("controllers-{name}.log"));
        let file = std::fs::File::create(&log).expect("controllers log file");
        let child = Command::new(FLOTILLA)
            .args(["controllers", "--kubeconfig"])
            .arg(set.kubeconfig(k))
            .args(["--identity", name, "--heartbeat-interval", "2s"])
            .env("RUST_LOG", "info")
            .stdout(file.try_clone().expect("controllers log file"))
            .stderr(file)
            .spawn()
            .expect("start flotilla controllers");
        self.procs.insert(name, child);
        self.logs.insert(name, log);
    }

    /// SIGKILL of process `name`.
    pub fn kill(&mut self, name: &str) {
        let mut child = self.procs.remove(name).expect("a running process");
        child.kill().expect("SIGKILL a controllers process");
        child.wait().expect("reap it");
    }

    /// `kill -SIG PID` of process `name` (e.g. STOP, CONT).
    pub fn signal(&self, name: &str, sig: &str) {
        let pid = self.procs[name].id().to_string();
        let ok = Command::new("kill")
            .args([&format!("-{sig}"), &pid])
            .status()
            .expect("run kill");
        assert!(ok.success(), "kill -{sig} {pid} ({name}) failed");
    }

    pub fn log(&self, name: &str) -> String {
        std::fs::read_to_string(&self.logs[name]).unwrap_or_default()
    }

    /// The last lines of each process's log, for failure messages.
    pub fn tails(&self) -> String {
        let mut out = String::new();
        for name in self.logs.keys() {
            let log = self.log(name);
            let lines: Vec<&str> = log.lines().collect();
            out.push_str(&format!("--- controllers {name} (last 30 lines) ---\n"));
            out.push_str(&lines[lines.len().saturating_sub(30)..].join("\n"));
            out.push('\n');
        }
        out
    }
}

impl Drop for Controllers {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}", self.tails());
        }
        for child in self.procs.values_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
