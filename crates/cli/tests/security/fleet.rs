//! Delivery: what a namespace user can (not) make the members apply through bindings, overrides
//! and push members.
//!
//! Delivery writes with cluster-admin in every member, so a namespace user's bindings and
//! policies must reach that namespace only (issue 18, item 3). The user here is `alice`, a
//! service account that is `admin` of namespace `team` and may write the propagation kinds there
//! (policies, overrides, bindings: the most a namespace admin realistically gets). She tries to
//! copy the hub's push credential Secret and a cluster-scoped ClusterRole into a member, and to
//! move a copy into another namespace with an override; the member never gets any of them, while
//! her own ConfigMap does arrive (so the refusals are not an idle pipeline). Push credentials:
//! a Cluster's secretRef stays in flotilla-system, and exec plugins and file references in a
//! member kubeconfig are refused at `flotilla join` and in the hub's push worker — nothing runs.

use std::path::Path;
use std::time::Duration;

use flotilla_testkit::Members;
use kube::api::{Api, DynamicObject, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{json, Value};

use crate::common::fleet::{eventually, flotilla_ok, kc};
use crate::common::Hub;

const MEMBER: &str = "member-1";

/// The hub's refusal of a create: HTTP code, `Status` reason and message.
#[derive(Debug)]
struct Refusal {
    code: u16,
    reason: String,
    message: String,
}

/// Creates `body` through the API as `token`'s holder (the admin when `None`): the stored object,
/// or the hub's refusal.
fn create(hub: &Hub, token: Option<&str>, body: &Value) -> Result<Value, Refusal> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(async {
        let kc = Kubeconfig::read_from(&hub.kubeconfig).expect("the admin kubeconfig");
        let mut cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
            .await
            .expect("a client config");
        if let Some(t) = token {
            cfg.auth_info = serde_json::from_value(json!({ "token": t })).expect("auth info");
        }
        let client = kube::Client::try_from(cfg).expect("a client");
        let api_version = body["apiVersion"].as_str().unwrap_or_default();
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let kind = body["kind"].as_str().unwrap_or_default();
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let lower = kind.to_lowercase();
        let plural = match lower.strip_suffix('y') {
            Some(stem) => format!("{stem}ies"),
            None => format!("{lower}s"),
        };
        let ar = ApiResource::from_gvk_with_plural(&gvk, &plural);
        let api: Api<DynamicObject> = match body["metadata"]["namespace"].as_str() {
            Some(ns) => Api::namespaced_with(client, ns, &ar),
            None => Api::all_with(client, &ar),
        };
        let obj: DynamicObject = serde_json::from_value(body.clone()).expect("an object");
        match api.create(&PostParams::default(), &obj).await {
            Ok(o) => Ok(serde_json::to_value(o).expect("JSON")),
            Err(kube::Error::Api(s)) => Err(Refusal {
                code: s.code,
                reason: s.reason.clone(),
                message: s.message.clone(),
            }),
            Err(e) => panic!("creating {kind}: {e}"),
        }
    })
}

/// Asserts `body` is refused as 422 Invalid naming `field`.
fn refused(hub: &Hub, token: Option<&str>, body: &Value, field: &str) {
    let kind = body["kind"].as_str().unwrap_or_default();
    match create(hub, token, body) {
        Err(r) => {
            assert_eq!(
                (r.code, r.reason.as_str()),
                (422, "Invalid"),
                "{kind}: {r:?}"
            );
            assert!(r.message.contains(field), "{kind}: {}", r.message);
        }
        Ok(o) => panic!("{kind} was stored: {o}"),
    }
}

/// Namespace `team` and its admin `alice`, who may also write the propagation kinds there; her
/// token.
fn team_admin(hub: &Hub) -> String {
    hub.ok(&["create", "namespace", "team"]);
    hub.ok(&["create", "serviceaccount", "alice", "-n", "team"]);
    hub.ok_stdin(
        &["apply", "-f", "-"],
        r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: flotilla-propagation-editor}
rules:
- apiGroups: [policy.flotilla.io]
  resources: [propagationpolicies, overridepolicies]
  verbs: ["*"]
- apiGroups: [work.flotilla.io]
  resources: [resourcebindings]
  verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-admin, namespace: team}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}
subjects: [{kind: ServiceAccount, name: alice, namespace: team}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: alice-propagation, namespace: team}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: flotilla-propagation-editor}
subjects: [{kind: ServiceAccount, name: alice, namespace: team}]
"#,
    );
    hub.ok(&["create", "token", "alice", "-n", "team"])
        .trim()
        .to_owned()
}

/// A ResourceBinding in `team` for `resource`, placed on the member.
fn binding(name: &str, resource: Value) -> Value {
    json!({"apiVersion": "work.flotilla.io/v1alpha1", "kind": "ResourceBinding",
        "metadata": {"name": name, "namespace": "team"},
        "spec": {"resource": resource,
            "placement": {"clusterAffinity": {"clusterNames": [MEMBER]}}}})
}

/// Whether the member has `what` (`kind/name`, in `ns` when given).
fn member_has(member: &Path, what: &str, ns: Option<&str>) -> bool {
    let mut args = vec!["get", what, "--request-timeout=5s", "-o", "name"];
    if let Some(ns) = ns {
        args.extend(["-n", ns]);
    }
    kc(member, &args).0
}

#[test]
fn a_namespace_user_delivers_nothing_outside_its_namespace() {
    let members = Members::up(1).expect("a member cluster (scripts/members build)");
    let member = members.member(MEMBER).expect("member-1").kubeconfig.clone();
    let hub = Hub::start();
    // Push mode: the member's credential is a Secret in flotilla-system, the prize.
    flotilla_ok(
        &hub,
        &[
            "join",
            MEMBER,
            "--member-kubeconfig",
            member.to_str().unwrap(),
        ],
    );
    let credential = format!("cluster-{MEMBER}-kubeconfig");
    eventually(&hub, Duration::from_secs(60), "the member is ready", || {
        let out = hub.kubectl(&["get", &format!("cluster/{MEMBER}"), "-o",
            "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}/{.status.apiEnablements[*].groupVersion}"]);
        let s = String::from_utf8_lossy(&out.stdout);
        s.starts_with("True/") && s.contains("v1")
    });
    let token = team_admin(&hub);
    let alice = Some(token.as_str());
    let as_alice = |args: &[&str], yaml: &str| {
        let mut all = vec!["--token", token.as_str()];
        all.extend_from_slice(args);
        hub.ok_stdin(&all, yaml)
    };

    // What she may do arrives: her ConfigMap, by her policy.
    as_alice(
        &["apply", "-f", "-"],
        r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team}
data: {color: blue}
---
apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {name: settings, namespace: team}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: settings}]
  placement: {clusterAffinity: {clusterNames: [member-1]}}
"#,
    );
    eventually(
        &hub,
        Duration::from_secs(60),
        "team/settings in the member",
        || member_has(&member, "configmap/settings", Some("team")),
    );

    // A binding naming another namespace's object: refused at once, stored nowhere.
    let steal = binding(
        "steal",
        json!({"apiVersion": "v1", "kind": "Secret", "namespace": "flotilla-system", "name": credential}),
    );
    refused(&hub, alice, &steal, "spec.resource");
    let elsewhere = binding(
        "elsewhere",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default", "name": "kube-root-ca.crt"}),
    );
    refused(&hub, alice, &elsewhere, "spec.resource.namespace");
    // A cluster-scoped object with no namespace: refused too.
    hub.ok(&[
        "create",
        "clusterrole",
        "hub-only",
        "--verb=get",
        "--resource=secrets",
    ]);
    let cluster_scoped = binding(
        "hub-only",
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "name": "hub-only"}),
    );
    refused(&hub, alice, &cluster_scoped, "spec.resource.namespace");
    // The same ClusterRole with her namespace written in: admission cannot tell the kind's
    // scope, the binding controller can. No Work, and the binding says why.
    let disguised = binding(
        "disguised",
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "namespace": "team", "name": "hub-only"}),
    );
    create(&hub, alice, &disguised).expect("stored: its namespace is hers");
    eventually(
        &hub,
        Duration::from_secs(30),
        "the binding is refused as OutOfScope",
        || {
            let out = hub.kubectl(&[
                "get",
                "rb",
                "disguised",
                "-n",
                "team",
                "-o",
                "jsonpath={.status.conditions[?(@.type==\"FullyApplied\")].reason}",
            ]);
            String::from_utf8_lossy(&out.stdout).trim() == "OutOfScope"
        },
    );
    let works = hub.ok(&["get", "works", "-A", "-o", "name"]);
    assert_eq!(
        works.lines().count(),
        1,
        "only team/settings has a Work: {works}"
    );

    // Overrides that move the copy or change what it is: refused at once.
    as_alice(
        &["apply", "-f", "-"],
        r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: moved, namespace: team}
data: {a: "1"}
---
apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {name: moved, namespace: team}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: moved}]
  placement: {clusterAffinity: {clusterNames: [member-1]}}
"#,
    );
    for (path, value, field) in [
        (
            "/metadata/namespace",
            json!("kube-system"),
            "plaintext[0].path",
        ),
        ("/kind", json!("Secret"), "plaintext[0].path"),
        (
            "/metadata",
            json!({"name": "moved", "namespace": "kube-system"}),
            "plaintext[0].path",
        ),
    ] {
        let policy = json!({"apiVersion": "policy.flotilla.io/v1alpha1", "kind": "OverridePolicy",
            "metadata": {"name": "move", "namespace": "team"},
            "spec": {"resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "moved"}],
                "overrideRules": [{"overriders": {"plaintext": [
                    {"path": path, "operator": "replace", "value": value}]}}]}});
        refused(&hub, alice, &policy, field);
    }
    let by_image = json!({"apiVersion": "policy.flotilla.io/v1alpha1", "kind": "OverridePolicy",
        "metadata": {"name": "rename", "namespace": "team"},
        "spec": {"overrideRules": [{"overriders": {"imageOverrider": [{"predicate":
            {"path": "/metadata/name"}, "component": "Registry", "operator": "add", "value": "x"}]}}]}});
    refused(&hub, alice, &by_image, "imageOverrider[0].predicate.path");
    eventually(
        &hub,
        Duration::from_secs(60),
        "team/moved in the member, unmoved",
        || member_has(&member, "configmap/moved", Some("team")),
    );

    // The member got none of it.
    assert!(!member_has(
        &member,
        &format!("secret/{credential}"),
        Some("flotilla-system")
    ));
    assert!(!member_has(&member, "clusterrole/hub-only", None));
    assert!(!member_has(&member, "configmap/moved", Some("kube-system")));
    assert!(!member_has(&member, "secret/moved", Some("team")));
}

/// A member kubeconfig whose user runs `command` (an exec plugin) or names `token_file`.
fn member_kubeconfig(user: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: m\n\
         contexts: [{{name: m, context: {{cluster: m, user: u}}}}]\n\
         clusters: [{{name: m, cluster: {{server: 'https://127.0.0.1:9', insecure-skip-tls-verify: true}}}}]\n\
         users: [{{name: u, user: {user}}}]\n"
    )
}

fn exec_user(marker: &Path) -> String {
    format!(
        "{{exec: {{apiVersion: client.authentication.k8s.io/v1, command: sh, \
         args: [-c, 'touch {}; exit 1'], interactiveMode: Never}}}}",
        marker.display()
    )
}

#[test]
fn push_credentials_are_inline_and_kept_in_the_system_namespace() {
    let hub = Hub::start();
    let dir = hub.dir.path();

    // secretRef outside flotilla-system: refused at admission.
    let cluster = |name: &str, ns: &str, secret: &str| {
        json!({"apiVersion": "cluster.flotilla.io/v1alpha1", "kind": "Cluster",
            "metadata": {"name": name},
            "spec": {"syncMode": "Push", "apiEndpoint": "https://127.0.0.1:9",
                "secretRef": {"namespace": ns, "name": secret}}})
    };
    hub.ok(&["create", "namespace", "team"]);
    refused(
        &hub,
        None,
        &cluster("elsewhere", "team", "db"),
        "spec.secretRef.namespace",
    );

    // `flotilla join` with an exec plugin: one line saying what to do, nothing run or stored.
    let joined_marker = dir.join("join-ran-the-plugin");
    let path = dir.join("exec.kubeconfig");
    std::fs::write(&path, member_kubeconfig(&exec_user(&joined_marker))).expect("write");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args([
            "join",
            "plugin",
            "--member-kubeconfig",
            path.to_str().unwrap(),
        ])
        .env("KUBECONFIG", &hub.kubeconfig)
        // As a user sees it: no backtrace under the line.
        .env("RUST_BACKTRACE", "0")
        .env("RUST_LIB_BACKTRACE", "0")
        .output()
        .expect("run flotilla join");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "join succeeded: {stderr}");
    assert!(
        stderr.contains("exec plugin") && stderr.contains("inline"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    assert!(!joined_marker.exists(), "join ran the exec plugin");
    assert!(!hub.kubectl(&["get", "cluster", "plugin"]).status.success());

    // Written by hand into the hub: the push worker refuses them, runs and reads nothing.
    let hub_marker = dir.join("hub-ran-the-plugin");
    let secret_file = dir.join("hub-local-token");
    std::fs::write(&secret_file, "hub-local-secret").expect("write");
    let cases = [
        ("plugin", exec_user(&hub_marker)),
        (
            "tokenfile",
            format!("{{tokenFile: {}}}", secret_file.display()),
        ),
    ];
    for (name, user) in &cases {
        let secret = format!("cluster-{name}-kubeconfig");
        hub.ok(&[
            "create",
            "secret",
            "generic",
            &secret,
            "-n",
            "flotilla-system",
            &format!("--from-literal=kubeconfig={}", member_kubeconfig(user)),
        ]);
        create(&hub, None, &cluster(name, "flotilla-system", &secret)).expect("a Cluster");
        flotilla_ok(&hub, &["cluster", "approve", name]);
    }
    for (name, _) in &cases {
        eventually(
            &hub,
            Duration::from_secs(30),
            &format!("{name}: CredentialRefused"),
            || {
                let out = hub.kubectl(&[
                    "get",
                    "cluster",
                    name,
                    "-o",
                    "jsonpath={.status.conditions[?(@.type==\"CredentialAccepted\")].reason}",
                ]);
                String::from_utf8_lossy(&out.stdout).trim() == "CredentialRefused"
            },
        );
    }
    let message = hub.ok(&[
        "get",
        "cluster",
        "tokenfile",
        "-o",
        "jsonpath={.status.conditions[?(@.type==\"CredentialAccepted\")].message}",
    ]);
    assert!(message.contains("tokenFile"), "{message}");
    assert!(!message.contains("hub-local-secret"), "{message}");
    assert!(!hub_marker.exists(), "the hub ran the exec plugin");
}
