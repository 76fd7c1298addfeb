//! The hub's disk full: its database on a 32 MiB tmpfs filled to the last byte. Writes are
//! refused with a 507 Status that says so, nothing refused is half-written, reads go on, and
//! writes succeed again once space returns; a restart finds every acknowledged object.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::Hub;

/// A tmpfs mounted on a temporary directory, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Tmpfs {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .expect("run mount");
        assert!(
            out.status.success(),
            "mounting a {size} tmpfs for the hub's database failed ({}): the disk-full test needs \
             root (CI and scripts/test run as root); run it as root",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        Tmpfs { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// Fills the file system holding `path` with it, to the last byte.
fn fill(path: &Path) {
    let mut f = std::fs::File::create(path).expect("filler");
    let chunk = vec![0u8; 64 * 1024];
    while f.write_all(&chunk).is_ok() {}
    // The last partial chunk: byte by byte.
    while f.write_all(&[0]).is_ok() {}
    let _ = f.sync_all();
}

/// A ConfigMap of about 20 KiB named `name`, as a manifest.
fn configmap(name: &str) -> String {
    let data: String = (0..20 * 1024)
        .map(|i| char::from(b'a' + ((i * 7 + name.len()) % 26) as u8))
        .collect();
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: disk}}\ndata: {{blob: {data}}}\n"
    )
}

/// The ConfigMaps of namespace disk, sorted.
fn listed(hub: &Hub) -> Vec<String> {
    let out = hub.ok(&["get", "cm", "-n", "disk", "-o", "name"]);
    let mut names: Vec<String> = out
        .lines()
        .filter_map(|l| l.strip_prefix("configmap/"))
        .filter(|n| n.starts_with("cm-"))
        .map(str::to_owned)
        .collect();
    names.sort();
    names
}

#[test]
fn a_full_disk_refuses_writes_and_loses_nothing() {
    let _serial = super::serial();
    let tmpfs = Tmpfs::mount("32m");
    let db = tmpfs.path().join("flotilla.db");
    let store = format!("sqlite:{}", db.display());
    let mut hub = Hub::start_with(&["--store", &store]);
    hub.ok(&["create", "namespace", "disk"]);
    let mut acknowledged: Vec<String> = Vec::new();
    for i in 0..10 {
        let name = format!("cm-{i:03}");
        hub.ok_stdin(&["create", "-f", "-"], &configmap(&name));
        acknowledged.push(name);
    }

    let filler: PathBuf = tmpfs.path().join("filler");
    fill(&filler);
    // Writes go on while SQLite reuses its log's pages; then the disk refuses them.
    let mut refused = Vec::new();
    for i in 10..400 {
        let name = format!("cm-{i:03}");
        let out = hub.kubectl_stdin(&["create", "-f", "-", "-v=6"], &configmap(&name));
        if out.status.success() {
            acknowledged.push(name);
            continue;
        }
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            err.contains(" 507 ") && err.contains("disk is full"),
            "a write on a full disk: {err}"
        );
        refused.push(name);
        if refused.len() == 5 {
            break;
        }
    }
    assert_eq!(refused.len(), 5, "the full disk refused no write");
    // Reads go on, and show exactly what was acknowledged.
    assert_eq!(listed(&hub), acknowledged);
    assert!(hub.ok(&["get", "--raw", "/readyz"]).contains("ok"));

    // Space returns: writes succeed again, without a restart.
    std::fs::remove_file(&filler).expect("remove the filler");
    for name in &refused {
        hub.ok_stdin(&["create", "-f", "-"], &configmap(name));
        acknowledged.push(name.clone());
    }
    acknowledged.sort();
    assert_eq!(listed(&hub), acknowledged);

    // A restart finds the database whole: every acknowledged object, with its data.
    hub.restart();
    assert_eq!(listed(&hub), acknowledged);
    let first = &acknowledged[0];
    let blob = hub.ok(&[
        "get",
        "cm",
        first,
        "-n",
        "disk",
        "-o",
        "jsonpath={.data.blob}",
    ]);
    assert_eq!(
        blob.len(),
        20 * 1024,
        "{first} came back with {} bytes",
        blob.len()
    );
}
