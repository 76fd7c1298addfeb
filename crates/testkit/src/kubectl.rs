//! kubectl for tests: a given kubectl binary on a kubeconfig, the versioned kubectl binaries
//! installed beside the dispatcher, and short forms for table-like suites on a [`Hub`].

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::hub::Hub;

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
