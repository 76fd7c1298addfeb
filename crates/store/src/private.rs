//! Keeping files private to the hub's user: the database (every object, Secrets included) and,
//! for the binary, the data directory's keys and tokens.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Remove group and other permissions from `path` (a `what`, for the log line) if it exists and
/// has any. What the hub cannot change (someone else's file) is left as it is, with a warning.
pub fn tighten(path: &Path, what: &str) {
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
            "tightened the mode of a {what}: it was open to other users"
        ),
        Err(e) => tracing::warn!(
            path = %path.display(),
            mode = format!("{mode:o}"),
            error = %e,
            "a {what} is open to other users and its mode cannot be changed"
        ),
    }
}
