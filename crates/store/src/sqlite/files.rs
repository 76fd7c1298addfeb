//! The database files are private to the hub's user: they hold every object, Secrets included.
//!
//! SQLite creates a database with mode 0644 (less the umask), and its `-wal` and `-shm` files
//! with the database file's mode. So the database file is created here first, empty and 0600
//! (an empty file is an empty SQLite database), and the modes of files an earlier version left
//! readable by others are tightened at open, with a log line saying so.

use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::{Error, Result};

/// The files SQLite keeps beside the database, by suffix.
const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// Create the database at `path` (mode 0600) unless it exists, and take group and other access
/// away from it and its companion files.
pub(super) fn make_private(path: &str) -> Result<()> {
    if path.is_empty() || path == ":memory:" || path.starts_with("file:") {
        // In memory, or a URI whose file SQLite resolves itself.
        return Ok(());
    }
    let created = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path);
    match created {
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => {
            return Err(Error::OpenSqlite {
                path: path.to_owned(),
                source: Error::source_of(e),
            })
        }
    }
    tighten(Path::new(path));
    for suffix in COMPANIONS {
        tighten(Path::new(&format!("{path}{suffix}")));
    }
    Ok(())
}

fn tighten(path: &Path) {
    crate::private::tighten(path, "database file");
}

#[cfg(test)]
mod tests {
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
}
