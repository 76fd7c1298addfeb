//! The audit log file: one JSON line per event, written by a thread of its own so a request
//! never waits on the disk, rotated by size as kube-apiserver's (`PATH` → `PATH.1` … keeping
//! `max_backups`). `-` writes to standard output.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

/// Lines waiting to be written; past this, events are dropped (and counted in the log) rather
/// than holding requests up.
const QUEUE: usize = 100_000;

/// Where the audit events go.
pub struct Sink {
    tx: mpsc::SyncSender<Vec<u8>>,
    dropped: std::sync::atomic::AtomicU64,
}

/// How the file is kept.
#[derive(Debug, Clone)]
pub struct Rotation {
    /// Rotate when the file passes this many bytes (0: never).
    pub max_bytes: u64,
    /// Rotated files kept (`PATH.1` is the newest).
    pub max_backups: usize,
}

impl Sink {
    /// Open `path` (created 0600, appended to) and start the writer thread.
    pub fn open(path: &Path, rotation: Rotation) -> std::io::Result<Sink> {
        let out: Box<dyn Write + Send> = if path == Path::new("-") {
            Box::new(std::io::stdout())
        } else {
            Box::new(open_file(path)?)
        };
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(QUEUE);
        let path = (path != Path::new("-")).then(|| path.to_path_buf());
        std::thread::Builder::new()
            .name("flotilla-audit".into())
            .spawn(move || write_all(rx, out, path, size, rotation))?;
        Ok(Sink {
            tx,
            dropped: Default::default(),
        })
    }

    /// Queue one event (a JSON object, without the newline).
    pub fn send(&self, mut line: Vec<u8>) {
        line.push(b'\n');
        if self.tx.try_send(line).is_err() {
            let n = self
                .dropped
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if n.is_power_of_two() {
                tracing::error!(
                    dropped = n + 1,
                    "audit log writer is behind; events dropped"
                );
            }
        }
    }
}

fn open_file(path: &Path) -> std::io::Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
}

fn write_all(
    rx: mpsc::Receiver<Vec<u8>>,
    out: Box<dyn Write + Send>,
    path: Option<PathBuf>,
    mut size: u64,
    rotation: Rotation,
) {
    let mut out = BufWriter::new(out);
    while let Ok(line) = rx.recv() {
        let mut batch = vec![line];
        batch.extend(rx.try_iter());
        for line in batch {
            if let Some(p) = &path {
                if rotation.max_bytes > 0
                    && size > 0
                    && size + line.len() as u64 > rotation.max_bytes
                {
                    let _ = out.flush();
                    match rotate(p, rotation.max_backups) {
                        Ok(f) => {
                            out = BufWriter::new(Box::new(f));
                            size = 0;
                        }
                        Err(e) => {
                            tracing::error!(path = %p.display(), error = %e, "rotating the audit log")
                        }
                    }
                }
            }
            if let Err(e) = out.write_all(&line) {
                tracing::error!(error = %e, "writing the audit log");
            }
            size += line.len() as u64;
        }
        if let Err(e) = out.flush() {
            tracing::error!(error = %e, "writing the audit log");
        }
    }
}

/// `PATH.(n-1)` → `PATH.n` … `PATH` → `PATH.1` (the oldest beyond `backups` removed), then a new
/// `PATH`.
fn rotate(path: &Path, backups: usize) -> std::io::Result<File> {
    let numbered = |n: usize| PathBuf::from(format!("{}.{n}", path.display()));
    if backups == 0 {
        std::fs::remove_file(path)?;
    } else {
        let _ = std::fs::remove_file(numbered(backups));
        for n in (1..backups).rev() {
            let _ = std::fs::rename(numbered(n), numbered(n + 1));
        }
        std::fs::rename(path, numbered(1))?;
    }
    open_file(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_rotates_by_size_keeping_the_newest_backups() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("audit.log");
        let rotation = Rotation {
            max_bytes: 1000,
            max_backups: 2,
        };
        let sink = Sink::open(&path, rotation).expect("open");
        for i in 0..100 {
            sink.send(format!("{{\"n\":\"{i:03}\",\"pad\":\"{}\"}}", "x".repeat(80)).into_bytes());
        }
        drop(sink);
        // The writer ends when the sender is gone; wait for the last line to land.
        let last = "\"n\":\"099\"";
        for _ in 0..200 {
            if std::fs::read_to_string(&path).is_ok_and(|t| t.contains(last)) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        let current = read(&path);
        assert!(current.contains(last), "{current}");
        assert!(current.len() <= 1000, "{} bytes", current.len());
        let one = read(&dir.path().join("audit.log.1"));
        let two = read(&dir.path().join("audit.log.2"));
        assert!(!one.is_empty() && !two.is_empty(), "two backups kept");
        assert!(!dir.path().join("audit.log.3").exists(), "no third backup");
        // Every line is whole JSON, and the backups hold older lines than the file.
        for line in current.lines().chain(one.lines()).chain(two.lines()) {
            serde_json::from_str::<serde_json::Value>(line).expect("a whole JSON line");
        }
        assert!(one < current && two < one);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
