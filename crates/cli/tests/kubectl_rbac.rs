//! Service-account tokens (`kubectl create token`) and RBAC: a credential scoped to one
//! namespace and one kind can do exactly that; everything else is a 403 that says why; a token
//! dies with its service account; a bad token is a 401.

mod common;

use common::Hub;

#[test]
fn namespace_scoped_credentials() {
    let hub = Hub::start();
    hub.ok(&["create", "namespace", "team"]);
    hub.ok(&["create", "serviceaccount", "bot", "-n", "team"]);
    hub.ok(&[
        "create",
        "role",
        "cm-writer",
        "-n",
        "team",
        "--verb=get,list,watch,create,update,patch,delete",
        "--resource=configmaps",
    ]);
    hub.ok(&[
        "create",
        "rolebinding",
        "bot-cm",
        "-n",
        "team",
        "--role=cm-writer",
        "--serviceaccount=team:bot",
    ]);
    let token = hub
        .ok(&["create", "token", "bot", "-n", "team", "--duration=15m"])
        .trim()
        .to_string();
    assert_eq!(token.split('.').count(), 3, "a JWT");

    let as_bot = |args: &[&str]| {
        let mut a = vec!["--token", token.as_str()];
        a.extend_from_slice(args);
        hub.kubectl(&a)
    };
    let ok = as_bot(&[
        "create",
        "configmap",
        "mine",
        "-n",
        "team",
        "--from-literal=a=1",
    ]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let ok = as_bot(&["get", "configmaps", "-n", "team", "-o", "name"]);
    assert!(String::from_utf8_lossy(&ok.stdout).contains("configmap/mine"));

    let denied = as_bot(&["get", "secrets", "-n", "team"]);
    let e = String::from_utf8_lossy(&denied.stderr);
    assert!(
        !denied.status.success()
            && e.contains("Forbidden")
            && e.contains("system:serviceaccount:team:bot")
            && e.contains("cannot list resource \"secrets\""),
        "{e}"
    );
    let denied = as_bot(&["get", "configmaps", "-n", "default"]);
    assert!(String::from_utf8_lossy(&denied.stderr).contains("in the namespace \"default\""));
    let denied = as_bot(&["get", "namespaces"]);
    assert!(String::from_utf8_lossy(&denied.stderr).contains("at the cluster scope"));

    let bad = hub.kubectl(&["--token", "not-a-token", "get", "ns"]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("Unauthorized"));

    hub.ok(&["delete", "serviceaccount", "bot", "-n", "team"]);
    let gone = as_bot(&["get", "configmaps", "-n", "team"]);
    assert!(
        String::from_utf8_lossy(&gone.stderr).contains("Unauthorized"),
        "a token dies with its service account"
    );
}

#[test]
fn default_roles_exist_and_aggregate() {
    let hub = Hub::start();
    let roles = hub.ok(&["get", "clusterroles", "-o", "name"]);
    for r in ["cluster-admin", "admin", "edit", "view", "system:discovery"] {
        assert!(
            roles.contains(&format!("clusterrole.rbac.authorization.k8s.io/{r}")),
            "{roles}"
        );
    }
    hub.ok(&["create", "namespace", "t2"]);
    hub.ok(&["create", "serviceaccount", "viewer", "-n", "t2"]);
    hub.ok(&[
        "create",
        "rolebinding",
        "v",
        "-n",
        "t2",
        "--clusterrole=view",
        "--serviceaccount=t2:viewer",
    ]);
    let token = hub
        .ok(&["create", "token", "viewer", "-n", "t2"])
        .trim()
        .to_string();
    let list = hub.kubectl(&["--token", &token, "get", "deployments", "-n", "t2"]);
    assert!(
        list.status.success(),
        "view can list: {}",
        String::from_utf8_lossy(&list.stderr)
    );
    let write = hub.kubectl(&["--token", &token, "create", "configmap", "x", "-n", "t2"]);
    assert!(!write.status.success(), "view cannot write");
}
