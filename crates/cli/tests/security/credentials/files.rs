//! File modes: the data directory is 0700; its secrets (CA key, admin token and kubeconfig,
//! service-account signing key) and the SQLite database with its `-wal` and `-shm` are 0600.
//! A new directory is created so; one an earlier start (or a hand) left open is tightened at
//! start.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::Hub;

/// Files that must be private once the hub has started (the database's `-wal` and `-shm` exist
/// while it runs, in WAL mode).
const PRIVATE: &[&str] = &[
    "ca.key",
    "admin.token",
    "admin.kubeconfig",
    "sa-signing-key.pem",
    "flotilla.db",
    "flotilla.db-wal",
    "flotilla.db-shm",
];

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// Every file of [`PRIVATE`] is 0600 and the directory 0700.
fn assert_private(dir: &Path) {
    assert_eq!(mode(dir), 0o700, "{}", dir.display());
    for name in PRIVATE {
        assert_eq!(mode(&dir.join(name)), 0o600, "{name}");
    }
}

#[test]
fn the_data_directory_secrets_and_database_are_private() {
    let mut hub = Hub::start();
    let dir = hub.dir.path().to_path_buf();
    assert_private(&dir);

    // Left open by an earlier version (or a hand): tightened at the next start.
    hub.stop();
    set_mode(&dir, 0o755);
    for name in PRIVATE {
        if dir.join(name).exists() {
            set_mode(&dir.join(name), 0o644);
        }
    }
    hub.restart();
    assert_private(&dir);
    hub.ok(&["get", "namespaces"]);
}

#[test]
fn a_new_data_directory_is_created_private() {
    let root = tempfile::tempdir().expect("temp dir");
    let dir = root.path().join("data");
    let mut serve = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .arg("--data-dir")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start flotilla serve");
    let deadline = Instant::now() + Duration::from_secs(60);
    // The kubeconfig is written before the store opens; the write-ahead log once it has.
    while !dir.join("flotilla.db-wal").exists() {
        if Instant::now() > deadline || serve.try_wait().ok().flatten().is_some() {
            let _ = serve.kill();
            panic!("flotilla serve did not open its store in {}", dir.display());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let modes = (mode(&dir), mode(&dir.join("flotilla.db")));
    let _ = serve.kill();
    let _ = serve.wait();
    assert_eq!(modes, (0o700, 0o600), "data directory, database");
}
