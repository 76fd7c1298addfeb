//! Background WAL checkpoints.
//!
//! Copying committed pages from the WAL back into the database file (and fsyncing it) took a
//! quarter of the writer thread's time when SQLite did it inside commits. A second thread with
//! its own connection now runs `PASSIVE` checkpoints every 20 ms while writes keep coming: they
//! never block the writer or readers, and run on the other core. That raised 64-task 1 KiB
//! create throughput from ~22k/s to ~29k/s on two cores. When a checkpoint finds little to copy
//! the wait doubles, up to a second, while writes add frames slower than [`BUSY_RATE`]: a hub idling with 1,000 members (a trickle of Lease
//! renewals) otherwise spent a tenth of a core checkpointing and fsyncing fifty times a
//! second; a checkpoint that finds frames piling up faster goes back to 20 ms. The writer keeps SQLite's automatic
//! checkpoint at a high threshold as a backstop: by the time it fires, the copying is mostly
//! done, and a checkpoint that ends inside a commit lets the next transaction restart the WAL
//! from the beginning, which keeps the file from growing under sustained load.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use rusqlite::Connection;

use crate::{Error, Result};

/// How often the background checkpoint runs while writes keep coming.
const PERIOD: Duration = Duration::from_millis(20);
/// The longest it waits when there is little to copy.
const IDLE_PERIOD: Duration = Duration::from_secs(1);
/// Writes that add WAL frames faster than this (frames a second, measured over the last
/// wait) keep the short period; slower ones double the wait, up to [`IDLE_PERIOD`]. A
/// thousand members' heartbeats add a few hundred a second; a create benchmark, thousands.
const BUSY_RATE: f64 = 2_000.0;

/// Start the checkpoint thread on its own connection; it stops when `stop`'s sender (held by
/// the writer) is dropped.
pub(super) fn spawn(conn: Connection, stop: Receiver<()>) -> Result<()> {
    std::thread::Builder::new()
        .name("flotilla-store-sqlite-checkpoint".into())
        .spawn(move || run(conn, stop))
        .map(drop)
        .map_err(|e| Error::SpawnWriter {
            source: Error::source_of(e),
        })
}

fn run(conn: Connection, stop: Receiver<()>) {
    let mut period = PERIOD;
    let mut last_copied = 0;
    // Ends when the writer drops the sender (nothing is ever sent on the channel).
    while let Err(RecvTimeoutError::Timeout) = stop.recv_timeout(period) {
        let result = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
            Ok((r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
        });
        match result {
            Ok((frames, copied)) => {
                tracing::trace!(frames, copied, "WAL checkpoint");
                // The counts restart when the writer starts the WAL over.
                let new = if copied >= last_copied {
                    copied - last_copied
                } else {
                    copied
                };
                last_copied = copied;
                period = next_period(period, new);
            }
            Err(e) => tracing::warn!(error = %e, "background WAL checkpoint failed; will retry"),
        }
    }
    tracing::debug!("SQLite checkpoint thread stopped");
}

/// The wait after a checkpoint that copied `copied` frames, having waited `period` before it:
/// a trickle of writes (a fleet's heartbeats) is copied about once a second, in one fsync,
/// instead of fifty times; sustained writes keep the short period.
fn next_period(period: Duration, copied: i64) -> Duration {
    if copied as f64 >= BUSY_RATE * period.as_secs_f64() {
        PERIOD
    } else {
        (period * 2).min(IDLE_PERIOD)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_period_grows_while_little_is_copied_and_drops_when_writes_pile_up() {
        let mut p = PERIOD;
        for _ in 0..10 {
            p = next_period(p, 3);
        }
        assert_eq!(p, IDLE_PERIOD);
        // A few hundred frames a second (heartbeats) stay at the long wait.
        assert_eq!(next_period(IDLE_PERIOD, 300), IDLE_PERIOD);
        // Thousands a second go back to the short one, and stay there.
        assert_eq!(next_period(IDLE_PERIOD, 5_000), PERIOD);
        assert_eq!(next_period(PERIOD, 100), PERIOD);
        assert_eq!(next_period(PERIOD, 0), PERIOD * 2);
    }
}
