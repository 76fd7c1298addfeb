//! Bootstrap tokens on the hub, driven with kubectl: a token Secret in `flotilla-system` lets a
//! member's agent ask to join (create its `Cluster`, read it back) and nothing else; the hub
//! rewrites the request to what a join may ask for and records who asked; a token is single-use
//! and may be pinned to one cluster name; an expired or wrong token is a 401; and grants an
//! admin makes to a bootstrap user through RBAC (the agent's first TokenRequest) still work.

mod common;

use std::path::PathBuf;

use common::{json, kubectl_bin, Hub};

/// A token Secret for `<id>.<secret>`, with `extra` stringData members (e.g. `"expiration":"…"`).
fn token_secret(id: &str, secret: &str, extra: &str) -> String {
    let extra = if extra.is_empty() {
        String::new()
    } else {
        format!(",{extra}")
    };
    format!(
        r#"{{"apiVersion":"v1","kind":"Secret","type":"bootstrap.kubernetes.io/token",
            "metadata":{{"name":"bootstrap-token-{id}","namespace":"flotilla-system"}},
            "stringData":{{"token-id":"{id}","token-secret":"{secret}",
                "usage-bootstrap-authentication":"true","description":"test"{extra}}}}}"#
    )
}

/// A Cluster asking for more than a join request may: push mode, a credential, taints, status.
fn greedy_cluster(name: &str) -> String {
    format!(
        r#"{{"apiVersion":"cluster.flotilla.io/v1alpha1","kind":"Cluster",
            "metadata":{{"name":"{name}","labels":{{"env":"prod"}},
                "annotations":{{"cluster.flotilla.io/requested-by":"system:bootstrap:forged"}}}},
            "spec":{{"syncMode":"Push","region":"eu","apiEndpoint":"https://m.example:6443",
                "secretRef":{{"namespace":"flotilla-system","name":"someone-elses"}},
                "taints":[{{"key":"k","effect":"NoSchedule"}}]}}}}"#
    )
}

/// kubectl as the holder of a bootstrap token only: the admin kubeconfig's server and CA, and
/// `token` as the sole credential.
struct Bootstrap<'a> {
    hub: &'a Hub,
    kubeconfig: PathBuf,
}

impl<'a> Bootstrap<'a> {
    fn new(hub: &'a Hub, token: &str) -> Self {
        let admin = std::fs::read_to_string(&hub.kubeconfig).expect("admin kubeconfig");
        let mut cfg: serde_json::Value = serde_yaml::from_str(&admin).expect("kubeconfig YAML");
        cfg["users"] = serde_json::json!([{"name": "bootstrap", "user": {"token": token}}]);
        cfg["contexts"][0]["context"]["user"] = serde_json::json!("bootstrap");
        let id = token.split('.').next().unwrap_or("token");
        let kubeconfig = hub.dir.path().join(format!("bootstrap-{id}.kubeconfig"));
        let text = serde_yaml::to_string(&cfg).expect("kubeconfig YAML");
        assert!(!text.contains(&admin_token(&admin)), "no admin credential");
        std::fs::write(&kubeconfig, text).expect("write kubeconfig");
        Bootstrap { hub, kubeconfig }
    }

    fn run(&self, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
        let out = kubectl_bin("kubectl", &self.kubeconfig, args, stdin);
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn ok(&self, args: &[&str], stdin: Option<&str>) -> String {
        let (ok, stdout, stderr) = self.run(args, stdin);
        assert!(
            ok,
            "kubectl {args:?} failed: {stderr}\nhub log:\n{}",
            self.hub.log()
        );
        stdout
    }

    fn fails(&self, args: &[&str], stdin: Option<&str>) -> String {
        let (ok, stdout, stderr) = self.run(args, stdin);
        assert!(!ok, "kubectl {args:?} should have failed; stdout: {stdout}");
        stderr
    }

    fn forbidden(&self, args: &[&str], stdin: Option<&str>) -> String {
        let e = self.fails(args, stdin);
        assert!(e.contains("is forbidden"), "{args:?}: {e}");
        e
    }

    /// A GET of `cluster` is refused with 401 and the server's `Unauthorized` Status. The
    /// request is raw: kubectl's parallel discovery would otherwise decide, by which of its
    /// requests fails first, whether the Status reason or client-go's own wording is shown.
    fn unauthorized(&self, cluster: &str) {
        let path = format!("/apis/cluster.flotilla.io/v1alpha1/clusters/{cluster}");
        let args = ["get", "--raw", path.as_str()];
        let e = self.fails(&args, None);
        assert!(e.contains("Unauthorized"), "{args:?}: {e}");
    }
}

fn admin_token(kubeconfig: &str) -> String {
    let cfg: serde_json::Value = serde_yaml::from_str(kubeconfig).expect("kubeconfig YAML");
    cfg["users"][0]["user"]["token"]
        .as_str()
        .expect("admin token")
        .to_string()
}

#[test]
fn a_bootstrap_token_may_only_ask_to_join() {
    let hub = Hub::start();
    hub.ok_stdin(
        &["apply", "-f", "-"],
        &token_secret("abcdef", "0123456789abcdef", ""),
    );
    hub.ok_stdin(
        &["create", "-f", "-"],
        r#"{"apiVersion":"cluster.flotilla.io/v1alpha1","kind":"Cluster","metadata":{"name":"other"},"spec":{}}"#,
    );
    let agent = Bootstrap::new(&hub, "abcdef.0123456789abcdef");

    agent.ok(&["create", "-f", "-"], Some(&greedy_cluster("m1")));
    let stored = json(&hub.ok(&["get", "cluster", "m1", "-o", "json"]));
    let annotations = &stored["metadata"]["annotations"];
    assert_eq!(
        annotations["cluster.flotilla.io/requested-by"], "system:bootstrap:abcdef",
        "{stored}"
    );
    assert_eq!(stored["metadata"]["labels"]["env"], "prod");
    assert_eq!(
        stored["spec"],
        serde_json::json!({"syncMode": "Pull", "region": "eu", "apiEndpoint": "https://m.example:6443"}),
        "pull mode, no secretRef, no taints"
    );

    // The agent polls its own request; nothing else is visible or writable.
    let own = json(&agent.ok(&["get", "cluster", "m1", "-o", "json"], None));
    assert_eq!(own["metadata"]["name"], "m1");
    let e = agent.forbidden(&["get", "clusters"], None);
    assert!(
        e.contains("User \"system:bootstrap:abcdef\" cannot list resource \"clusters\""),
        "{e}"
    );
    agent.forbidden(&["get", "cluster", "other"], None);
    agent.forbidden(&["get", "secrets", "-n", "flotilla-system"], None);
    agent.forbidden(&["get", "namespaces"], None);
    agent.forbidden(&["create", "configmap", "x", "-n", "default"], None);
    agent.forbidden(&["label", "cluster", "m1", "x=y"], None);
    agent.forbidden(&["delete", "cluster", "m1"], None);

    // One join request per token.
    let e = agent.forbidden(&["create", "-f", "-"], Some(&greedy_cluster("m2")));
    assert!(
        e.contains(
            "clusters.cluster.flotilla.io \"m2\" is forbidden: this bootstrap token was already \
             used to ask to join as cluster \"m1\"; create a new one with flotilla token create"
        ),
        "{e}"
    );

    // Only the hub records who asked: an admin's forged annotation is dropped, and an edit
    // cannot change the recorded one.
    hub.ok_stdin(&["create", "-f", "-"], &greedy_cluster("a1"));
    let a1 = json(&hub.ok(&["get", "cluster", "a1", "-o", "json"]));
    assert!(
        a1["metadata"]["annotations"]
            .get("cluster.flotilla.io/requested-by")
            .is_none(),
        "{a1}"
    );
    hub.ok(&[
        "annotate",
        "--overwrite",
        "cluster",
        "m1",
        "cluster.flotilla.io/requested-by=system:bootstrap:zzzzzz",
    ]);
    let m1 = json(&hub.ok(&["get", "cluster", "m1", "-o", "json"]));
    assert_eq!(
        m1["metadata"]["annotations"]["cluster.flotilla.io/requested-by"],
        "system:bootstrap:abcdef"
    );

    // Approval is RBAC: a binding lets the bootstrap user fetch its agent's first token.
    let ns = "flotilla-es-m1";
    hub.ok(&["create", "namespace", ns]);
    hub.ok(&["create", "serviceaccount", "flotilla-agent", "-n", ns]);
    agent.forbidden(&["create", "token", "flotilla-agent", "-n", ns], None);
    hub.ok(&[
        "create",
        "role",
        "flotilla-agent-bootstrap",
        "-n",
        ns,
        "--verb=create",
        "--resource=serviceaccounts/token",
        "--resource-name=flotilla-agent",
    ]);
    hub.ok(&[
        "create",
        "rolebinding",
        "flotilla-agent-bootstrap",
        "-n",
        ns,
        "--role=flotilla-agent-bootstrap",
        "--user=system:bootstrap:abcdef",
    ]);
    let token = agent.ok(&["create", "token", "flotilla-agent", "-n", ns], None);
    assert_eq!(token.trim().split('.').count(), 3, "a JWT: {token}");
}

#[test]
fn bad_tokens_are_refused_and_pinned_tokens_ask_only_as_their_cluster() {
    let hub = Hub::start();
    hub.ok_stdin(
        &["apply", "-f", "-"],
        &token_secret(
            "old000",
            "0123456789abcdef",
            r#""expiration":"2000-01-01T00:00:00Z""#,
        ),
    );
    hub.ok_stdin(
        &["apply", "-f", "-"],
        &token_secret("pin000", "0123456789abcdef", r#""flotilla-cluster":"m3""#),
    );
    Bootstrap::new(&hub, "old000.0123456789abcdef").unauthorized("x");
    Bootstrap::new(&hub, "pin000.0123456789abcdeX").unauthorized("x");
    Bootstrap::new(&hub, "pin000.0123456789abcdee").unauthorized("x");
    Bootstrap::new(&hub, "nosuch.0123456789abcdef").unauthorized("x");

    let pinned = Bootstrap::new(&hub, "pin000.0123456789abcdef");
    let e = pinned.forbidden(&["create", "-f", "-"], Some(&greedy_cluster("m4")));
    assert!(
        e.contains("this bootstrap token may only ask to join as cluster \"m3\""),
        "{e}"
    );
    pinned.ok(&["create", "-f", "-"], Some(&greedy_cluster("m3")));
    pinned.ok(&["get", "cluster", "m3"], None);

    // Deleting the Secret revokes the token at once.
    hub.ok(&[
        "delete",
        "secret",
        "bootstrap-token-pin000",
        "-n",
        "flotilla-system",
    ]);
    pinned.unauthorized("m3");
}
