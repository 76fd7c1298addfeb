//! End to end on three real member clusters: two join in pull mode (agents asking with bootstrap
//! credentials, approved on the hub), one in push mode; Works land in each and report back;
//! drift is undone; removed manifests leave the member; a pre-existing object is not
//! overwritten; health follows stopped members and agents; credentials reach only what they
//! should; removal revokes an agent at once.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::fleet::{condition, eventually, flotilla, flotilla_ok, kc};
use common::Hub;
use flotilla_testkit::Members;

/// A `flotilla agent` process, killed when dropped.
struct Agent {
    child: Child,
    log: PathBuf,
    state: PathBuf,
}

impl Agent {
    fn start(hub: &Hub, cluster: &str, member_kubeconfig: &Path, boot: Option<&Path>) -> Agent {
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

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits for the agent to exit on its own; its exit status.
    fn wait_exit(&mut self, within: Duration) -> std::process::ExitStatus {
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

fn taints(hub: &Hub, cluster: &str) -> String {
    let out = hub.kubectl(&[
        "get",
        &format!("cluster/{cluster}"),
        "-o",
        "jsonpath={.spec.taints[*].key}",
    ]);
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn demo_work(es: &str, with_configmap: bool) -> String {
    let cm = if with_configmap {
        r#"
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: settings, namespace: demo}
    data: {color: blue}"#
    } else {
        ""
    };
    format!(
        r#"apiVersion: work.flotilla.io/v1alpha1
kind: Work
metadata: {{name: demo, namespace: {es}}}
spec:
  manifests:
  - apiVersion: v1
    kind: Namespace
    metadata: {{name: demo}}{cm}
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {{name: web, namespace: demo}}
    spec:
      replicas: 2
      selector: {{matchLabels: {{app: web}}}}
      template:
        metadata: {{labels: {{app: web}}}}
        spec:
          containers: [{{name: web, image: nginx}}]
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {{name: autoscaled, namespace: demo}}
    spec:
      selector: {{matchLabels: {{app: autoscaled}}}}
      template:
        metadata: {{labels: {{app: autoscaled}}}}
        spec:
          containers: [{{name: app, image: nginx}}]
"#
    )
}

#[test]
fn three_members_join_receive_work_and_stay_healthy() {
    let members = Members::shared(3).expect("member clusters (scripts/members build)");
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    let mut hub = Hub::start_with(&["--cluster-grace-period", "8s", "--heartbeat-interval", "2s"]);

    // --- Joining: two pull agents ask, the admin approves; one member joins by push.
    let boot1 = hub.dir.path().join("boot-1.kubeconfig");
    let boot2 = hub.dir.path().join("boot-2.kubeconfig");
    flotilla_ok(
        &hub,
        &[
            "token",
            "create",
            "--cluster",
            "member-1",
            "-o",
            boot1.to_str().unwrap(),
        ],
    );
    flotilla_ok(&hub, &["token", "create", "-o", boot2.to_str().unwrap()]);
    // The bootstrap credential reads nothing.
    for args in [
        &["get", "namespaces"][..],
        &["get", "works", "-A"],
        &["get", "secrets", "-n", "flotilla-system"],
        &["get", "clusters"],
    ] {
        let (ok, _, err) = kc(&boot1, args);
        assert!(
            !ok && err.contains("forbidden"),
            "bootstrap {args:?}: {err}"
        );
    }
    let mut agent1 = Agent::start(&hub, "member-1", &m("member-1"), Some(&boot1));
    let _agent2 = Agent::start(&hub, "member-2", &m("member-2"), Some(&boot2));
    eventually(
        &hub,
        Duration::from_secs(30),
        "member-1 pending approval",
        || {
            let out = hub.kubectl(&[
                "get",
                "cluster/member-1",
                "-o",
                "jsonpath={.status.conditions[?(@.type==\"Joined\")].reason}",
            ]);
            String::from_utf8_lossy(&out.stdout).trim() == "PendingApproval"
        },
    );
    assert_eq!(condition(&hub, "cluster/member-1", None, "Joined"), "False");
    flotilla_ok(&hub, &["cluster", "approve", "member-1"]);
    flotilla_ok(&hub, &["cluster", "approve", "member-2"]);
    let joined = flotilla_ok(
        &hub,
        &[
            "join",
            "member-3",
            "--member-kubeconfig",
            m("member-3").to_str().unwrap(),
            "--labels",
            "tier=edge",
            "--region",
            "ap",
        ],
    );
    assert!(joined.contains("Push"), "{joined}");
    for c in ["member-1", "member-2", "member-3"] {
        eventually(&hub, Duration::from_secs(60), &format!("{c} Ready"), || {
            condition(&hub, &format!("cluster/{c}"), None, "Ready") == "True"
        });
    }
    let table = hub.ok(&["get", "clusters"]);
    assert!(
        table.contains("Push") && table.contains("v1.32.2"),
        "{table}"
    );
    // No member credential for pull clusters on the hub; the push one is in a Secret.
    let secrets = hub.ok(&["get", "secrets", "-n", "flotilla-system", "-o", "name"]);
    assert!(secrets.contains("cluster-member-3-kubeconfig"), "{secrets}");
    assert!(!secrets.contains("member-1-kubeconfig"), "{secrets}");

    // --- Credentials: an agent reaches its own namespace only.
    let own = agent1.state.join("hub.kubeconfig");
    let (ok, _, err) = kc(&own, &["get", "works", "-n", "flotilla-es-member-1"]);
    assert!(ok, "own works: {err}");
    for args in [
        &["get", "works", "-n", "flotilla-es-member-2"][..],
        &["get", "secrets", "-n", "flotilla-system"],
        &["get", "cluster", "member-2"],
        &["get", "configmaps", "-n", "default"],
    ] {
        let (ok, _, err) = kc(&own, args);
        assert!(!ok && err.contains("forbidden"), "agent {args:?}: {err}");
    }

    // --- Delivery: the Work lands in every member and reports Available.
    for c in ["member-1", "member-2", "member-3"] {
        hub.ok_stdin(
            &["apply", "-f", "-"],
            &demo_work(&format!("flotilla-es-{c}"), true),
        );
    }
    for c in ["member-1", "member-2", "member-3"] {
        let es = format!("flotilla-es-{c}");
        eventually(
            &hub,
            Duration::from_secs(60),
            &format!("Work in {c} Available"),
            || condition(&hub, "work/demo", Some(&es), "Available") == "True",
        );
        assert_eq!(condition(&hub, "work/demo", Some(&es), "Applied"), "True");
        let (ok, out, err) = kc(
            &m(c),
            &[
                "get",
                "deploy",
                "web",
                "-n",
                "demo",
                "-o",
                "jsonpath={.status.readyReplicas}",
            ],
        );
        assert!(ok && out == "2", "{c}: {out} {err}");
    }
    let feedback = hub.ok(&[
        "get", "work/demo", "-n", "flotilla-es-member-2", "-o",
        "jsonpath={.status.manifestStatuses[2].feedback.values[?(@.name==\"readyReplicas\")].value.integer}",
    ]);
    assert_eq!(feedback.trim(), "2");

    // --- What the members are: nodes, capacity, APIs (for placement).
    let summary = hub.ok(&[
        "get", "cluster/member-1", "-o",
        "jsonpath={.status.nodeSummary.readyNum} {.status.resourceSummary.replicaEstimates[0].replicas} {.status.apiEnablements[*].groupVersion}",
    ]);
    let mut fields = summary.split_whitespace();
    let ready_nodes: i64 = fields.next().unwrap_or("0").parse().unwrap_or(0);
    let estimate: i64 = fields.next().unwrap_or("0").parse().unwrap_or(0);
    assert!(ready_nodes >= 1 && estimate > 0, "{summary}");
    assert!(summary.contains("apps/v1"), "{summary}");

    // --- A hub restart loses nothing: agents and push workers resume their watches, and a
    // large manifest (900 kB) written afterwards lands.
    hub.restart();
    let big = "x".repeat(900_000);
    hub.ok_stdin(
        &["create", "-f", "-"],
        &format!(
            r#"apiVersion: work.flotilla.io/v1alpha1
kind: Work
metadata: {{name: large, namespace: flotilla-es-member-2}}
spec:
  manifests:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {{name: large, namespace: demo}}
    data: {{blob: {big}}}
"#
        ),
    );
    eventually(
        &hub,
        Duration::from_secs(60),
        "large Work applied after a hub restart",
        || condition(&hub, "work/large", Some("flotilla-es-member-2"), "Applied") == "True",
    );
    let size = kc(
        &m("member-2"),
        &[
            "get",
            "cm",
            "large",
            "-n",
            "demo",
            "-o",
            "jsonpath={.data.blob}",
        ],
    )
    .1
    .len();
    assert_eq!(size, 900_000);

    // --- Drift: a managed field changed in the member is put back; unmanaged fields stay.
    let m1 = m("member-1");
    kc(
        &m1,
        &[
            "patch",
            "configmap",
            "settings",
            "-n",
            "demo",
            "--type",
            "merge",
            "-p",
            r#"{"data":{"color":"red"}}"#,
        ],
    );
    eventually(&hub, Duration::from_secs(15), "drift corrected", || {
        kc(
            &m1,
            &[
                "get",
                "cm",
                "settings",
                "-n",
                "demo",
                "-o",
                "jsonpath={.data.color}",
            ],
        )
        .1 == "blue"
    });
    // `replicas` of `autoscaled` is not in the manifest, so an HPA (here: kubectl scale) owns it.
    let (ok, _, err) = kc(
        &m1,
        &[
            "scale",
            "deploy",
            "autoscaled",
            "-n",
            "demo",
            "--replicas",
            "3",
        ],
    );
    assert!(ok, "{err}");
    std::thread::sleep(Duration::from_secs(5));
    let replicas = kc(
        &m1,
        &[
            "get",
            "deploy",
            "autoscaled",
            "-n",
            "demo",
            "-o",
            "jsonpath={.spec.replicas}",
        ],
    )
    .1;
    assert_eq!(
        replicas, "3",
        "flotilla fought the autoscaler over replicas"
    );

    // --- A manifest removed from the Work leaves the member.
    hub.ok_stdin(
        &["apply", "-f", "-"],
        &demo_work("flotilla-es-member-1", false),
    );
    eventually(
        &hub,
        Duration::from_secs(15),
        "removed manifest pruned",
        || {
            let (ok, _, err) = kc(&m1, &["get", "cm", "settings", "-n", "demo"]);
            !ok && err.contains("NotFound")
        },
    );

    // --- Abort: an object flotilla did not create is not overwritten.
    let m2 = m("member-2");
    let (ok, _, err) = kc(
        &m2,
        &[
            "create",
            "configmap",
            "taken",
            "-n",
            "demo",
            "--from-literal=owner=someone",
        ],
    );
    assert!(ok, "{err}");
    hub.ok_stdin(
        &["apply", "-f", "-"],
        r#"apiVersion: work.flotilla.io/v1alpha1
kind: Work
metadata: {name: clash, namespace: flotilla-es-member-2}
spec:
  manifests:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: taken, namespace: demo}
    data: {owner: flotilla}
"#,
    );
    eventually(&hub, Duration::from_secs(20), "conflict reported", || {
        let out = hub.kubectl(&[
            "get",
            "work/clash",
            "-n",
            "flotilla-es-member-2",
            "-o",
            "jsonpath={.status.manifestStatuses[0].conditions[?(@.type==\"Applied\")].reason}",
        ]);
        String::from_utf8_lossy(&out.stdout).trim() == "Conflict"
    });
    assert_eq!(
        condition(&hub, "work/clash", Some("flotilla-es-member-2"), "Applied"),
        "False"
    );
    let data = kc(
        &m2,
        &[
            "get",
            "cm",
            "taken",
            "-n",
            "demo",
            "-o",
            "jsonpath={.data.owner}",
        ],
    )
    .1;
    assert_eq!(data, "someone");

    // --- Deleting a Work (push member) removes what it applied.
    hub.ok(&[
        "delete",
        "work/demo",
        "-n",
        "flotilla-es-member-3",
        "--wait=true",
        "--timeout=30s",
    ]);
    let (ok, _, err) = kc(&m("member-3"), &["get", "deploy", "web", "-n", "demo"]);
    assert!(!ok && err.contains("NotFound"), "{err}");

    // --- Health: a stopped member turns NotReady and tainted, and Ready again when it starts.
    members.stop("member-2").expect("stop member-2");
    eventually(&hub, Duration::from_secs(30), "member-2 not ready", || {
        condition(&hub, "cluster/member-2", None, "Ready") == "False"
    });
    eventually(&hub, Duration::from_secs(10), "member-2 tainted", || {
        taints(&hub, "member-2").contains("cluster.flotilla.io/not-ready")
    });
    members.start("member-2").expect("start member-2");
    eventually(
        &hub,
        Duration::from_secs(60),
        "member-2 ready again",
        || {
            condition(&hub, "cluster/member-2", None, "Ready") == "True"
                && taints(&hub, "member-2").is_empty()
        },
    );

    // --- A silent agent: Unknown and unreachable after the grace period; back when it returns.
    drop(agent1);
    eventually(&hub, Duration::from_secs(30), "member-1 unknown", || {
        condition(&hub, "cluster/member-1", None, "Ready") == "Unknown"
            && taints(&hub, "member-1").contains("cluster.flotilla.io/unreachable")
    });
    // Restarted without a bootstrap credential: it still holds its own.
    agent1 = Agent::start(&hub, "member-1", &m1, None);
    eventually(&hub, Duration::from_secs(30), "member-1 back", || {
        condition(&hub, "cluster/member-1", None, "Ready") == "True"
            && taints(&hub, "member-1").is_empty()
    });

    // --- Removal revokes the agent at once; it says so and exits non-zero.
    flotilla_ok(&hub, &["cluster", "remove", "member-1"]);
    let status = agent1.wait_exit(Duration::from_secs(30));
    assert!(!status.success());
    let log = agent1.log();
    assert!(
        log.lines()
            .any(|l| l.starts_with("Error: ") && l.contains("credential")),
        "no one-line reason in the agent's output:\n{log}"
    );
    let (ok, _, err) = kc(&own, &["get", "works", "-n", "flotilla-es-member-1"]);
    assert!(
        !ok && (err.contains("Unauthorized") || err.contains("must be logged in")),
        "{err}"
    );
    // The member keeps what it runs.
    let (ok, _, err) = kc(&m1, &["get", "deploy", "web", "-n", "demo"]);
    assert!(ok, "{err}");
}

#[test]
fn a_denied_join_request_ends_the_agent_with_one_clear_line() {
    let members = Members::shared(3).expect("member clusters (scripts/members build)");
    let member = members
        .member("member-1")
        .expect("member")
        .kubeconfig
        .clone();
    let hub = Hub::start();
    let boot = hub.dir.path().join("boot.kubeconfig");
    flotilla_ok(&hub, &["token", "create", "-o", boot.to_str().unwrap()]);
    let mut agent = Agent::start(&hub, "intruder", &member, Some(&boot));
    eventually(&hub, Duration::from_secs(30), "join request", || {
        condition(&hub, "cluster/intruder", None, "Joined") == "False"
    });
    flotilla_ok(&hub, &["cluster", "remove", "intruder"]);
    let status = agent.wait_exit(Duration::from_secs(20));
    assert!(!status.success());
    let log = agent.log();
    assert!(
        log.lines()
            .any(|l| l.starts_with("Error: ") && l.contains("denied")),
        "no one-line reason in the agent's output:\n{log}"
    );
    // An agent without credential or bootstrap kubeconfig says what to pass.
    let out = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["agent", "--cluster", "x", "--state-dir"])
        .arg(hub.dir.path().join("empty"))
        .arg("--kubeconfig")
        .arg(&member)
        .output()
        .expect("agent");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--bootstrap-kubeconfig"), "{err}");
    // An expired bootstrap credential is refused in one line.
    let expired = hub.dir.path().join("expired.kubeconfig");
    let zero = flotilla(&hub, &["token", "create", "--ttl", "0s"]);
    assert!(!zero.status.success());
    assert!(String::from_utf8_lossy(&zero.stderr).contains("--ttl must be more than 0"));
    let path = expired.to_str().unwrap();
    flotilla_ok(&hub, &["token", "create", "--ttl", "1s", "-o", path]);
    std::thread::sleep(Duration::from_millis(1500));
    let out = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["agent", "--cluster", "late", "--state-dir"])
        .arg(hub.dir.path().join("late"))
        .arg("--kubeconfig")
        .arg(&member)
        .arg("--bootstrap-kubeconfig")
        .arg(&expired)
        .output()
        .expect("agent");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("flotilla token create"), "{err}");
}
