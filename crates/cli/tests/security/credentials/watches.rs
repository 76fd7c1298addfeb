//! A revoked token closes its open watches: when a service-account token stops being valid —
//! its ServiceAccount deleted, the Secret it is bound to deleted, `flotilla cluster remove`
//! revoking an agent — every watch opened with it ends within seconds, the last event an ERROR
//! with a 401 Status. (kube-apiserver lets such watches run to their timeout; the hub promises
//! more. Expiry is covered by the API crate's unit tests: a token lives ten minutes at least.)

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::fleet::flotilla_ok;
use crate::common::Hub;

/// How long a revoked watch may stay open.
const PROMPTLY: Duration = Duration::from_secs(15);

/// kubectl running a watch as `token`, its output collected as it comes.
struct Watch {
    child: Child,
    output: Arc<Mutex<String>>,
}

impl Watch {
    fn start(kubeconfig: &Path, token: &str, args: &[&str]) -> Watch {
        let mut child = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["--token", token])
            .args(args)
            .env_remove("KUBECONFIG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start kubectl");
        let output = Arc::new(Mutex::new(String::new()));
        let mut stdout = child.stdout.take().expect("stdout");
        let sink = output.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                sink.lock().expect("output").push_str(&text);
            }
        });
        Watch { child, output }
    }

    fn output(&self) -> String {
        self.output.lock().expect("output").clone()
    }

    /// Waits until the output contains `text`.
    fn saw(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !self.output().contains(text) {
            assert!(
                Instant::now() < deadline,
                "the watch never showed {text:?}; it showed:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The exit status, if the watch ended within `within`.
    fn ended_within(&mut self, within: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        None
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `kubectl get -w` and a raw watch on `path`, both as `token`, shown to be open: `probe`
/// (which creates `name`) writes an object each watches, created after each had listed.
fn open_watches(
    hub: &Hub,
    token: &str,
    get: &[&str],
    path: &str,
    mut probe: impl FnMut(&str),
) -> (Watch, Watch) {
    let mut args = vec!["get"];
    args.extend_from_slice(get);
    args.extend(["-w", "-o", "name"]);
    let kubectl = Watch::start(&hub.kubeconfig, token, &args);
    let raw = Watch::start(&hub.kubeconfig, token, &["get", "--raw", path]);
    // The first object may come in kubectl's list; the second, created after it was seen, can
    // only come through the watch.
    probe("probe-1");
    kubectl.saw("probe-1");
    raw.saw("probe-1");
    probe("probe-2");
    kubectl.saw("probe-2");
    raw.saw("probe-2");
    (kubectl, raw)
}

/// Both watches end promptly, the raw one with an ERROR event carrying a 401 Status; the token
/// no longer authenticates.
fn assert_revoked(hub: &Hub, token: &str, mut kubectl: Watch, mut raw: Watch, what: &str) {
    assert!(
        kubectl.ended_within(PROMPTLY).is_some(),
        "kubectl get -w still runs {PROMPTLY:?} after {what}"
    );
    assert!(
        raw.ended_within(PROMPTLY).is_some(),
        "the raw watch still runs {PROMPTLY:?} after {what}"
    );
    let output = raw.output();
    let last = output.lines().last().unwrap_or_default();
    let event: serde_json::Value = serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("last line is no watch event ({e}): {last:?}"));
    assert_eq!(event["type"], "ERROR", "{last}");
    assert_eq!(event["object"]["code"], 401, "{last}");
    assert_eq!(event["object"]["reason"], "Unauthorized", "{last}");
    let again = hub.kubectl(&["--token", token, "get", "--raw", "/api"]);
    assert!(
        !again.status.success(),
        "the token still works after {what}"
    );
}

fn configmap<'a>(hub: &'a Hub, ns: &str) -> impl FnMut(&str) + 'a {
    let ns = ns.to_string();
    move |name| {
        hub.ok(&["create", "configmap", name, "-n", &ns]);
    }
}

/// Service account `sa` in `ns`, allowed to read and watch ConfigMaps there.
fn reader(hub: &Hub, ns: &str, sa: &str) {
    hub.ok(&["create", "serviceaccount", sa, "-n", ns]);
    let role = format!("{sa}-reads");
    hub.ok(&[
        "create",
        "role",
        &role,
        "-n",
        ns,
        "--verb=get,list,watch",
        "--resource=configmaps",
    ]);
    let subject = format!("--serviceaccount={ns}:{sa}");
    hub.ok(&[
        "create",
        "rolebinding",
        &role,
        "-n",
        ns,
        "--role",
        &role,
        &subject,
    ]);
}

#[test]
fn deleting_the_service_account_ends_its_watches() {
    let hub = Hub::start();
    hub.ok(&["create", "namespace", "team"]);
    reader(&hub, "team", "bot");
    let token = hub.ok(&["create", "token", "bot", "-n", "team"]);
    let token = token.trim();
    let path = "/api/v1/namespaces/team/configmaps?watch=1";
    let get = ["configmaps", "-n", "team"];
    let (kubectl, raw) = open_watches(&hub, token, &get, path, configmap(&hub, "team"));
    hub.ok(&["delete", "serviceaccount", "bot", "-n", "team"]);
    assert_revoked(&hub, token, kubectl, raw, "its ServiceAccount was deleted");
}

#[test]
fn deleting_the_bound_secret_ends_its_watches() {
    let hub = Hub::start();
    hub.ok(&["create", "namespace", "team"]);
    reader(&hub, "team", "bot");
    hub.ok(&["create", "secret", "generic", "anchor", "-n", "team"]);
    let token = hub.ok(&[
        "create",
        "token",
        "bot",
        "-n",
        "team",
        "--bound-object-kind=Secret",
        "--bound-object-name=anchor",
    ]);
    let token = token.trim();
    // A token of the same account, not bound to the Secret, is not revoked with it.
    let unbound = hub.ok(&["create", "token", "bot", "-n", "team"]);
    let path = "/api/v1/namespaces/team/configmaps?watch=1";
    let get = ["configmaps", "-n", "team"];
    let (kubectl, raw) = open_watches(&hub, token, &get, path, configmap(&hub, "team"));
    let mut other = Watch::start(
        &hub.kubeconfig,
        unbound.trim(),
        &["get", "--raw", "/api/v1/namespaces/team/configmaps?watch=1"],
    );
    other.saw("probe-2");
    hub.ok(&["delete", "secret", "anchor", "-n", "team"]);
    assert_revoked(&hub, token, kubectl, raw, "its bound Secret was deleted");
    assert!(
        other.ended_within(Duration::from_secs(2)).is_none(),
        "a watch of a token that is still valid ended"
    );
}

#[test]
fn removing_a_cluster_ends_its_agents_watches() {
    let hub = Hub::start();
    let cluster = r#"{"apiVersion":"cluster.flotilla.io/v1alpha1","kind":"Cluster",
        "metadata":{"name":"m1"},"spec":{"syncMode":"Pull"}}"#;
    hub.ok_stdin(&["create", "-f", "-"], cluster);
    flotilla_ok(&hub, &["cluster", "approve", "m1"]);
    let es = "flotilla-es-m1";
    let token = hub.ok(&["create", "token", "flotilla-agent", "-n", es]);
    let token = token.trim();
    let work = |name: &str| {
        let w = format!(
            r#"{{"apiVersion":"work.flotilla.io/v1alpha1","kind":"Work",
                "metadata":{{"name":"{name}","namespace":"{es}"}},"spec":{{}}}}"#
        );
        hub.ok_stdin(&["create", "-f", "-"], &w);
    };
    let path = format!("/apis/work.flotilla.io/v1alpha1/namespaces/{es}/works?watch=1");
    let get = ["works.work.flotilla.io", "-n", es];
    let (kubectl, raw) = open_watches(&hub, token, &get, &path, work);
    flotilla_ok(&hub, &["cluster", "remove", "m1"]);
    assert_revoked(&hub, token, kubectl, raw, "flotilla cluster remove");
}
