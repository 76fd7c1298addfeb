//! Credentials and files: token lifetimes, data-dir modes, bootstrap RBAC cleanup, revoked tokens,
//! cluster names.
//!
//! - [`tokens`]: `--service-account-max-token-expiration` caps what TokenRequest issues.
//! - [`files`]: the data directory is 0700 and its secrets and database 0600, also when an
//!   earlier start left them open.
//! - [`joins`]: the bootstrap credential's grant goes when the join completes, or with its
//!   Cluster; cluster names that cannot make `flotilla-es-<name>` are refused up front.
//! - [`watches`]: a revoked token ends the watches it opened.

mod files;
mod joins;
mod tokens;
mod watches;

use crate::common::Hub;

/// `token`'s JWT claims (not verified: the hub's own token, read by its holder).
fn jwt_claims(token: &str) -> serde_json::Value {
    use base64::Engine;
    let payload = token.split('.').nth(1).expect("a JWT payload");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .expect("base64url payload");
    serde_json::from_slice(&bytes).expect("JSON claims")
}

/// A kubeconfig for the hub (its server and CA) with `token` as its only credential, written
/// into the hub's directory as `name`.
fn kubeconfig_with_token(hub: &Hub, name: &str, token: &str) -> std::path::PathBuf {
    let admin = std::fs::read_to_string(&hub.kubeconfig).expect("admin kubeconfig");
    let mut cfg: serde_json::Value = serde_yaml::from_str(&admin).expect("kubeconfig YAML");
    cfg["users"] = serde_json::json!([{"name": "holder", "user": {"token": token}}]);
    cfg["contexts"][0]["context"]["user"] = serde_json::json!("holder");
    let path = hub.dir.path().join(name);
    std::fs::write(&path, serde_yaml::to_string(&cfg).expect("YAML")).expect("write kubeconfig");
    path
}
