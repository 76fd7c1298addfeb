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
mod tests;
