//! Encryption at rest through the real binary: by default a Secret's data never appears in the
//! database files (SQLite and its WAL), yet kubectl reads it, also after a restart; with an
//! `--encryption-provider-config`, a key rotated by listing a new one first reads the old
//! Secrets and rewrites them under the new key; a configuration that cannot be used stops the
//! hub at start with a line saying what to fix.

mod common;

use std::path::Path;
use std::process::Command;

use base64::Engine;
use common::{Hub, FLOTILLA};

const VALUE: &str = "correct-horse-battery-staple-7f3a";

/// Every file of the database (the file, its WAL) holds `needle` somewhere.
fn database_holds(dir: &Path, needle: &[u8]) -> bool {
    ["flotilla.db", "flotilla.db-wal"].iter().any(|f| {
        std::fs::read(dir.join(f))
            .map(|bytes| bytes.windows(needle.len()).any(|w| w == needle))
            .unwrap_or(false)
    })
}

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

fn secret_value(hub: &Hub, name: &str) -> String {
    let out = hub.ok(&["get", "secret", name, "-o", "jsonpath={.data.password}"]);
    String::from_utf8(
        base64::engine::general_purpose::STANDARD
            .decode(out.trim())
            .expect("base64 data"),
    )
    .expect("utf-8")
}

fn create_secret(hub: &Hub) {
    hub.ok(&[
        "create",
        "secret",
        "generic",
        "db",
        &format!("--from-literal=password={VALUE}"),
    ]);
}

#[test]
fn secrets_are_encrypted_at_rest_by_default() {
    let mut hub = Hub::start();
    let dir = hub.dir.path().to_path_buf();
    create_secret(&hub);
    hub.ok(&[
        "create",
        "configmap",
        "plain",
        &format!("--from-literal=v={VALUE}"),
    ]);
    assert_eq!(secret_value(&hub, "db"), VALUE);
    // The ConfigMap is stored in clear (only Secrets are sealed by default): the search works.
    assert!(
        database_holds(&dir, VALUE.as_bytes()),
        "the ConfigMap is in the database"
    );
    assert!(
        !database_holds(&dir, b64(VALUE).as_bytes()),
        "the Secret's data is in the database in clear"
    );
    let key = std::fs::metadata(dir.join("encryption.key")).expect("the hub's key file");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(key.permissions().mode() & 0o777, 0o600);
    hub.restart();
    assert_eq!(secret_value(&hub, "db"), VALUE, "read back after a restart");
}

/// An EncryptionConfiguration for Secrets with aesgcm keys `keys` (name, byte), the first
/// writing.
fn config(dir: &Path, keys: &[(&str, u8)]) -> String {
    let keys: String = keys
        .iter()
        .map(|(name, b)| {
            let secret = base64::engine::general_purpose::STANDARD.encode([*b; 32]);
            format!("          - name: {name}\n            secret: {secret}\n")
        })
        .collect();
    let text = format!(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n  \
         - resources: [secrets]\n    providers:\n      - aesgcm:\n          keys:\n{keys}      \
         - identity: {{}}\n"
    );
    let path = dir.join("encryption.yaml");
    std::fs::write(&path, text).expect("write the configuration");
    path.display().to_string()
}

#[test]
fn a_configured_key_rotates_and_a_bad_configuration_stops_the_hub() {
    let conf = tempfile::tempdir().expect("temp dir");
    let first = config(conf.path(), &[("k1", 1)]);
    let mut hub = Hub::start_with(&["--encryption-provider-config", first.as_str()]);
    let dir = hub.dir.path().to_path_buf();
    create_secret(&hub);
    assert!(database_holds(&dir, b"k8s:enc:aesgcm:v1:k1:"));
    assert!(!database_holds(&dir, b64(VALUE).as_bytes()));

    // Rotation: the new key first, the old one still listed; the old Secret reads, and a
    // rewrite seals it under the new key.
    let rotated = config(conf.path(), &[("k2", 2), ("k1", 1)]);
    hub.restart_with(&["--encryption-provider-config", rotated.as_str()]);
    assert_eq!(secret_value(&hub, "db"), VALUE);
    let all = hub.ok(&["get", "secrets", "-o", "json"]);
    hub.ok_stdin(&["replace", "-f", "-"], &all);
    assert!(database_holds(&dir, b"k8s:enc:aesgcm:v1:k2:"));
    // Only the new key now: the rewritten Secret opens.
    let only_new = config(conf.path(), &[("k2", 2)]);
    hub.restart_with(&["--encryption-provider-config", only_new.as_str()]);
    assert_eq!(secret_value(&hub, "db"), VALUE, "rewritten under k2");
    hub.stop();

    // A key of the wrong size: the hub does not start, and says which entry to fix.
    std::fs::write(
        conf.path().join("bad.yaml"),
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n  - \
         resources: [secrets]\n    providers:\n      - aesgcm: {keys: [{name: k, secret: \
         AAAA}]}\n",
    )
    .expect("write");
    let out = Command::new(FLOTILLA)
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(conf.path().join("bad-hub"))
        .arg("--encryption-provider-config")
        .arg(conf.path().join("bad.yaml"))
        .output()
        .expect("run flotilla serve");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("resources[0].providers[0]") && err.contains("it must be 16 or 32"),
        "{err}"
    );
}
