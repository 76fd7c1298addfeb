//! The database files are private to the hub's user: they hold every object, Secrets included.
//!
//! SQLite creates a database with mode 0644 (less the umask), and its `-wal` and `-shm` files
//! with the database file's mode. So the database file is created here first, empty and 0600
//! (an empty file is an empty SQLite database), and the modes of files an earlier version left
//! readable by others are tightened at open, with a log line saying so.

use std::fs::{self, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
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

/// Remove group and other permissions from `path` if it exists and has any. A file the hub
/// cannot change (someone else's) is left as it is, with a warning.
fn tighten(path: &Path) {
    let Ok(meta) = fs::metadata(path) else {
        return;
    };
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 == 0 {
        return;
    }
    let private = mode & 0o700;
    match fs::set_permissions(path, fs::Permissions::from_mode(private)) {
        Ok(()) => tracing::info!(
            path = %path.display(),
            from = format!("{mode:o}"),
            to = format!("{private:o}"),
            "tightened the mode of a database file: it was readable by other users"
        ),
        Err(e) => tracing::warn!(
            path = %path.display(),
            mode = format!("{mode:o}"),
            error = %e,
            "a database file is readable by other users and its mode cannot be changed"
        ),
    }
}

#[cfg(test)]
mod tests {
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
