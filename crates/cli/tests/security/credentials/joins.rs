//! Joining: the grant that lets a bootstrap credential fetch its agent's first token is taken
//! back once the join completes (the agent renews its Lease with its own credential), and goes
//! with the Cluster when that is deleted before; a cluster name that cannot make the namespace
//! `flotilla-es-<name>` is refused at once — by the hub (422 on `metadata.name`) and by
//! `flotilla join`, `flotilla agent --cluster` and `flotilla token create --cluster` in one line
//! before they do anything. An agent approved by an older hub gets the rules added to the
//! agent's Role since when the hub restarts, without a new approval.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::kubeconfig_with_token;
use crate::common::fleet::{eventually, flotilla_ok, kc};
use crate::common::Hub;

/// The grant approval gives a bootstrap credential, in the cluster's execution namespace.
const GRANT: &str = "flotilla-agent-bootstrap";

/// A bootstrap token `<id>.0123456789abcdef` stored on the hub; a kubeconfig holding only it.
fn bootstrap(hub: &Hub, id: &str) -> std::path::PathBuf {
    let secret = format!(
        r#"{{"apiVersion":"v1","kind":"Secret","type":"bootstrap.kubernetes.io/token",
            "metadata":{{"name":"bootstrap-token-{id}","namespace":"flotilla-system"}},
            "stringData":{{"token-id":"{id}","token-secret":"0123456789abcdef",
                "usage-bootstrap-authentication":"true"}}}}"#
    );
    hub.ok_stdin(&["create", "-f", "-"], &secret);
    kubeconfig_with_token(
        hub,
        &format!("{id}.kubeconfig"),
        &format!("{id}.0123456789abcdef"),
    )
}

/// Asks to join as `name` with `boot`, and has the admin approve it.
fn ask_and_approve(hub: &Hub, boot: &Path, name: &str) {
    let cluster = format!(
        r#"{{"apiVersion":"cluster.flotilla.io/v1alpha1","kind":"Cluster",
            "metadata":{{"name":"{name}"}},"spec":{{"syncMode":"Pull"}}}}"#
    );
    let out = crate::common::kubectl_bin("kubectl", boot, &["create", "-f", "-"], Some(&cluster));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    flotilla_ok(hub, &["cluster", "approve", name]);
}

/// Does the grant (Role and RoleBinding) exist for cluster `name`? (Both or neither.)
fn granted(hub: &Hub, name: &str) -> bool {
    let ns = format!("flotilla-es-{name}");
    let out = hub.ok(&["get", "role,rolebinding", "-n", &ns, "-o", "name"]);
    let found = out
        .lines()
        .filter(|l| l.ends_with(&format!("/{GRANT}")))
        .count();
    assert!(found == 0 || found == 2, "half a grant: {out}");
    found == 2
}

/// A token for `name`'s agent as the bootstrap credential would fetch it.
fn fetch_agent_token(boot: &Path, name: &str) -> (bool, String, String) {
    let ns = format!("flotilla-es-{name}");
    kc(boot, &["create", "token", "flotilla-agent", "-n", &ns])
}

#[test]
fn the_bootstrap_grant_goes_when_the_join_completes_or_with_its_cluster() {
    let hub = Hub::start();
    let boot = bootstrap(&hub, "aaaaaa");
    ask_and_approve(&hub, &boot, "m1");
    assert!(
        granted(&hub, "m1"),
        "approval lets the bootstrap credential fetch a token"
    );
    let (ok, agent_token, err) = fetch_agent_token(&boot, "m1");
    assert!(ok, "{err}");
    // The agent renews its Lease with its own credential, as its heartbeat does.
    let agent = kubeconfig_with_token(&hub, "agent.kubeconfig", agent_token.trim());
    let renew = r#"{"spec":{"holderIdentity":"flotilla-agent/test","leaseDurationSeconds":40}}"#;
    let args = [
        "patch",
        "lease",
        "m1",
        "-n",
        "flotilla-system",
        "--type=merge",
        "-p",
        renew,
    ];
    let (ok, _, err) = kc(&agent, &args);
    assert!(ok, "{err}");
    eventually(
        &hub,
        Duration::from_secs(20),
        "the grant taken back",
        || !granted(&hub, "m1"),
    );
    let (ok, _, err) = fetch_agent_token(&boot, "m1");
    assert!(
        !ok && err.contains("forbidden"),
        "the bootstrap credential still fetches: {err}"
    );
    // The Lease says so, and the completion controller's watch leaves it (and its renewals).
    eventually(
        &hub,
        Duration::from_secs(20),
        "the Lease labelled join-complete",
        || {
            hub.ok(&[
                "get",
                "leases",
                "-n",
                "flotilla-system",
                "-l",
                "cluster.flotilla.io/join-complete=true",
                "-o",
                "name",
            ])
            .contains("lease.coordination.k8s.io/m1")
        },
    );
    // The agent is not hurt, and approving again does not give the grant back.
    let (ok, _, err) = kc(
        &agent,
        &["get", "works.work.flotilla.io", "-n", "flotilla-es-m1"],
    );
    assert!(ok, "{err}");
    flotilla_ok(&hub, &["cluster", "approve", "m1"]);
    assert!(
        !granted(&hub, "m1"),
        "approving a joined cluster again re-granted"
    );

    // A Cluster deleted before its agent came takes the grant with it.
    let boot = bootstrap(&hub, "bbbbbb");
    ask_and_approve(&hub, &boot, "m2");
    assert!(granted(&hub, "m2"));
    hub.ok(&[
        "delete",
        "cluster.cluster.flotilla.io",
        "m2",
        "--wait=false",
    ]);
    eventually(
        &hub,
        Duration::from_secs(20),
        "the grant gone with its Cluster",
        || !granted(&hub, "m2"),
    );
}

/// The agent's Role as a hub before HealthReports and multi-cluster services wrote it.
const OLD_AGENT_ROLE: &str = r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role",
  "metadata":{"name":"flotilla-agent","namespace":"flotilla-es-m3"},
  "rules":[
    {"apiGroups":["work.flotilla.io"],"resources":["works"],"verbs":["get","list","watch","update","patch"]},
    {"apiGroups":["work.flotilla.io"],"resources":["works/status"],"verbs":["get","update","patch"]},
    {"apiGroups":["","events.k8s.io"],"resources":["events"],"verbs":["create","update","patch"]},
    {"apiGroups":[""],"resources":["serviceaccounts/token"],"resourceNames":["flotilla-agent"],"verbs":["create"]}]}"#;

#[test]
fn a_restarted_hub_gives_agents_approved_before_the_rules_added_since() {
    let mut hub = Hub::start();
    let boot = bootstrap(&hub, "cccccc");
    ask_and_approve(&hub, &boot, "m3");
    let (ok, token, err) = fetch_agent_token(&boot, "m3");
    assert!(ok, "{err}");
    let agent = kubeconfig_with_token(&hub, "agent-m3.kubeconfig", token.trim());
    let reads: [&[&str]; 4] = [
        &[
            "get",
            "healthreports.networking.flotilla.io",
            "-n",
            "flotilla-es-m3",
        ],
        &[
            "get",
            "serviceexports.multicluster.x-k8s.io",
            "-n",
            "flotilla-es-m3",
        ],
        &[
            "get",
            "endpointslices.discovery.k8s.io",
            "-n",
            "flotilla-es-m3",
        ],
        &["get", "works.work.flotilla.io", "-n", "flotilla-es-m3"],
    ];
    // What the agent may read, per read above.
    let allowed = |agent: &Path| -> Vec<bool> { reads.iter().map(|r| kc(agent, r).0).collect() };
    assert_eq!(allowed(&agent), [true; 4], "approval grants the agent all");

    // The cluster as an older hub approved it.
    hub.ok_stdin(&["replace", "-f", "-"], OLD_AGENT_ROLE);
    eventually(
        &hub,
        Duration::from_secs(20),
        "the old Role in force",
        || allowed(&agent) == [false, false, false, true],
    );

    // The upgraded hub starts: no approval, and the agent's same token reads them again.
    hub.restart();
    eventually(
        &hub,
        Duration::from_secs(30),
        "the agent's Role re-applied at start",
        || allowed(&agent) == [true; 4],
    );
    let role = hub.ok(&[
        "get",
        "role",
        "flotilla-agent",
        "-n",
        "flotilla-es-m3",
        "-o",
        "json",
    ]);
    let role: serde_json::Value = serde_json::from_str(&role).expect("Role JSON");
    assert_eq!(
        role["rules"].as_array().map(Vec::len),
        Some(8),
        "the Role as approval writes it: {role}"
    );
}

#[test]
fn a_cluster_name_that_cannot_make_a_namespace_is_refused_at_join() {
    let hub = Hub::start();
    let longest = "a".repeat(51);
    let too_long = "a".repeat(52);
    for name in ["eu.west-1", too_long.as_str(), "Member-1"] {
        let cluster = format!(
            r#"{{"apiVersion":"cluster.flotilla.io/v1alpha1","kind":"Cluster",
                "metadata":{{"name":"{name}"}},"spec":{{"syncMode":"Pull"}}}}"#
        );
        let out = hub.kubectl_stdin(&["create", "-f", "-", "-o", "json"], &cluster);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{name} accepted");
        assert!(
            err.contains("is invalid")
                && err.contains(&format!("metadata.name: Invalid value: \"{name}\"")),
            "{name}: {err}"
        );
    }
    // The hub's own answer, whatever the client: the Status names the field.
    let raw = hub.kubectl_stdin(
        &["create", "--raw", "/apis/cluster.flotilla.io/v1alpha1/clusters", "-f", "-"],
        r#"{"apiVersion":"cluster.flotilla.io/v1alpha1","kind":"Cluster","metadata":{"name":"a.b"},"spec":{}}"#,
    );
    let err = String::from_utf8_lossy(&raw.stderr);
    assert!(
        !raw.status.success() && err.contains("metadata.name: Invalid value: \"a.b\""),
        "{err}"
    );
    assert_eq!(
        hub.ok(&["get", "clusters.cluster.flotilla.io", "-o", "name"]),
        ""
    );
    // The longest name that still makes a namespace name is fine.
    let cluster = format!(
        r#"{{"apiVersion":"cluster.flotilla.io/v1alpha1","kind":"Cluster",
            "metadata":{{"name":"{longest}"}},"spec":{{"syncMode":"Pull"}}}}"#
    );
    hub.ok_stdin(&["create", "-f", "-"], &cluster);

    // The CLI says so in one line before it touches anything.
    let state = hub.dir.path().join("agent-state");
    let missing = hub.dir.path().join("missing.kubeconfig");
    let missing = missing.to_str().expect("path");
    let state_arg = state.to_str().expect("path");
    let commands: [&[&str]; 3] = [
        &["join", "eu.west-1", "--member-kubeconfig", missing],
        &["token", "create", "--cluster", "eu.west-1"],
        &[
            "agent",
            "--cluster",
            "eu.west-1",
            "--state-dir",
            state_arg,
            "--kubeconfig",
            missing,
            "--bootstrap-kubeconfig",
            missing,
        ],
    ];
    for args in commands {
        // As a user runs it: no backtrace asked for (anyhow would append one).
        let out = Command::new(env!("CARGO_BIN_EXE_flotilla"))
            .args(args)
            .env("KUBECONFIG", &hub.kubeconfig)
            .env_remove("RUST_BACKTRACE")
            .env_remove("RUST_LIB_BACKTRACE")
            .env_remove("RUST_LOG")
            .output()
            .expect("run flotilla");
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(!out.status.success(), "flotilla {args:?} accepted the name");
        assert_eq!(lines.len(), 1, "flotilla {args:?}: not one line:\n{err}");
        assert!(
            lines[0].contains("\"eu.west-1\"") && lines[0].contains("cluster name"),
            "flotilla {args:?}: {err}"
        );
    }
    assert!(!state.exists(), "the agent created its state directory");
    let tokens = hub.ok(&[
        "get",
        "secrets",
        "-n",
        "flotilla-system",
        "--field-selector=type=bootstrap.kubernetes.io/token",
        "-o",
        "name",
    ]);
    assert_eq!(tokens, "", "a bootstrap token was created");
}
