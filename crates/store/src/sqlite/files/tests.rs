use std::fs;
use std::os::unix::fs::PermissionsExt;

use super::*;

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn created_private_and_loose_files_tightened() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("new.db");
    let db = db.to_str().unwrap();
    make_private(db).unwrap();
    assert_eq!(mode(Path::new(db)), 0o600);

    let old = dir.path().join("old.db");
    let old_str = old.to_str().unwrap();
    for (file, loose) in [
        (old.clone(), 0o644),
        (dir.path().join("old.db-wal"), 0o664),
        (dir.path().join("old.db-shm"), 0o604),
    ] {
        fs::write(&file, b"").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(loose)).unwrap();
    }
    make_private(old_str).unwrap();
    for suffix in ["", "-wal", "-shm"] {
        let p = format!("{old_str}{suffix}");
        assert_eq!(mode(Path::new(&p)), 0o600, "{p}");
    }
    assert!(!Path::new(&format!("{old_str}-journal")).exists());
}
