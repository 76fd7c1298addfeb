//! Service-account tokens (`kubectl create token`) and RBAC: a credential scoped to one
//! namespace and one kind can do exactly that; everything else is a 403 that says why; a token
//! dies with its service account (and with the Secret it is bound to); a bad token is a 401.
//! Tokens are ES256 JWTs that anyone can verify with the keys at `/openid/v1/jwks`, and they
//! survive a restart of the hub.

mod common;

use base64::Engine;
use common::Hub;
use serde_json::Value;

/// The decoded header of a JWT.
fn jwt_header(token: &str) -> Value {
    let header = token.split('.').next().expect("a header");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header)
        .expect("base64url header");
    serde_json::from_slice(&bytes).expect("JSON header")
}

/// Read the key set as `token`'s holder.
fn read_jwks_as(hub: &Hub, token: &str) -> std::process::Output {
    hub.kubectl(&["--token", token, "get", "--raw", "/openid/v1/jwks"])
}

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

#[test]
fn tokens_are_es256_jwts_verifiable_with_the_published_keys() {
    let mut hub = Hub::start();
    hub.ok(&["create", "namespace", "keys"]);
    hub.ok(&["create", "serviceaccount", "bot", "-n", "keys"]);
    let token = hub
        .ok(&["create", "token", "bot", "-n", "keys"])
        .trim()
        .to_string();
    let header = jwt_header(&token);
    assert_eq!(header["alg"], "ES256", "{header}");
    let kid = header["kid"].as_str().expect("a kid").to_string();

    let jwks: Value = serde_json::from_str(&hub.ok(&["get", "--raw", "/openid/v1/jwks"]))
        .expect("a JSON key set");
    let keys = jwks["keys"].as_array().expect("keys");
    assert!(
        keys.iter()
            .any(|k| k["kid"] == kid.as_str() && k["kty"] == "EC" && k["alg"] == "ES256"),
        "the token's key {kid} is published: {jwks}"
    );
    let oidc: Value =
        serde_json::from_str(&hub.ok(&["get", "--raw", "/.well-known/openid-configuration"]))
            .expect("JSON discovery");
    assert_eq!(
        oidc["jwks_uri"],
        format!("{}/openid/v1/jwks", oidc["issuer"].as_str().unwrap_or("")).as_str(),
        "{oidc}"
    );
    // Service accounts may read the discovery documents
    // (system:service-account-issuer-discovery), and nothing else by default.
    let as_bot = read_jwks_as(&hub, &token);
    assert!(
        as_bot.status.success(),
        "{}",
        String::from_utf8_lossy(&as_bot.stderr)
    );
    let denied = hub.kubectl(&["--token", &token, "get", "--raw", "/metrics"]);
    let e = String::from_utf8_lossy(&denied.stderr);
    assert!(
        e.contains("cannot get path \"/metrics\""),
        "a Kubernetes-worded denial: {e}"
    );

    // Wrong requests are refused with Kubernetes' field errors.
    let short = hub.fails(&["create", "token", "bot", "-n", "keys", "--duration=1m"]);
    assert!(
        short.contains("spec.expirationSeconds")
            && short.contains("may not specify a duration less than 10 minutes"),
        "{short}"
    );
    let pod = hub.fails(&[
        "create",
        "token",
        "bot",
        "-n",
        "keys",
        "--bound-object-kind=Pod",
        "--bound-object-name=p",
    ]);
    assert!(pod.contains("bind the token to a Secret"), "{pod}");

    // A token bound to a Secret dies with it.
    hub.ok(&["create", "secret", "generic", "anchor", "-n", "keys"]);
    let bound = hub
        .ok(&[
            "create",
            "token",
            "bot",
            "-n",
            "keys",
            "--bound-object-kind=Secret",
            "--bound-object-name=anchor",
        ])
        .trim()
        .to_string();
    assert!(
        read_jwks_as(&hub, &bound).status.success(),
        "valid while the Secret exists"
    );
    hub.ok(&["delete", "secret", "anchor", "-n", "keys"]);
    let gone = read_jwks_as(&hub, &bound);
    assert!(
        String::from_utf8_lossy(&gone.stderr).contains("Unauthorized"),
        "a bound token dies with its Secret"
    );

    // The signing key is kept in the data directory, private, and reused after a restart.
    let key = hub.dir.path().join("sa-signing-key.pem");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&key).expect("the key file").permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);
    hub.stop();
    hub.restart();
    assert!(
        read_jwks_as(&hub, &token).status.success(),
        "tokens outlive a restart: {}",
        hub.log()
    );
}
