//! A UDP worker: a dedicated thread in a tight receive → answer → send loop on its own socket.

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tracing::{debug, warn};

use super::Metrics;
use crate::respond::{respond, Worker};
use crate::zones::Zones;
use crate::{Error, Result};

/// How often an idle worker looks at the stop flag.
const POLL: Duration = Duration::from_millis(250);

pub(super) fn spawn(
    index: usize,
    socket: UdpSocket,
    zones: Zones,
    metrics: Arc<Metrics>,
    stop: Arc<AtomicBool>,
) -> Result<()> {
    socket
        .set_read_timeout(Some(POLL))
        .map_err(Error::SpawnWorker)?;
    std::thread::Builder::new()
        .name(format!("dns-udp-{index}"))
        .spawn(move || serve(index, socket, zones, metrics, stop))
        .map_err(Error::SpawnWorker)?;
    Ok(())
}

fn serve(
    index: usize,
    socket: UdpSocket,
    zones: Zones,
    metrics: Arc<Metrics>,
    stop: Arc<AtomicBool>,
) {
    let mut worker = Worker::new();
    let mut buf = [0u8; 4096];
    while !stop.load(Ordering::Relaxed) {
        let (len, peer) = match socket.recv_from(&mut buf) {
            Ok(got) => got,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                        | std::io::ErrorKind::ConnectionRefused
                ) =>
            {
                continue
            }
            Err(e) => {
                warn!(error = %e, "DNS UDP receive failed");
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        let outcome = respond(&zones, &buf[..len], peer.ip(), false, &mut worker);
        metrics.record(index, false, outcome);
        if outcome.is_some() {
            if let Err(e) = socket.send_to(&worker.out, peer) {
                debug!(error = %e, %peer, "DNS UDP send failed");
            }
        }
    }
}
