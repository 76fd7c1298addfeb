//! The DNS server: UDP on one socket per worker thread (SO_REUSEPORT, the kernel spreads queries),
//! TCP on tokio, all answering from the current snapshot of the zone a question falls in
//! ([`Zones`]: one [`SnapshotHandle`](crate::snapshot::SnapshotHandle) per zone).

mod metrics;
mod tcp;
mod udp;

use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use socket2::{Domain, Protocol, Socket, Type};
use tracing::info;

pub use metrics::{Metrics, MetricsSnapshot};

use crate::zones::Zones;
use crate::{Error, Result};

/// A bound, not yet running, DNS server.
pub struct Server {
    udp: Vec<UdpSocket>,
    tcp: TcpListener,
    local: SocketAddr,
    zones: Zones,
    metrics: Arc<Metrics>,
}

/// Number of UDP worker threads: one per core, at most 8.
fn worker_count() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
}

fn udp_socket(addr: SocketAddr) -> std::io::Result<UdpSocket> {
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    #[cfg(all(unix, not(any(target_os = "solaris", target_os = "illumos"))))]
    socket.set_reuse_port(true)?;
    if addr.is_ipv6() {
        socket.set_only_v6(true)?;
    }
    // a burst of queries waits in the kernel rather than being dropped
    let _ = socket.set_recv_buffer_size(4 << 20);
    let _ = socket.set_send_buffer_size(4 << 20);
    socket.bind(&addr.into())?;
    Ok(socket.into())
}

fn tcp_listener(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    if addr.is_ipv6() {
        socket.set_only_v6(true)?;
    }
    socket.bind(&addr.into())?;
    socket.listen(1024)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

impl Server {
    /// Binds UDP and TCP on `addr` (port 0: a free port, the same for both; see [`Server::local_addr`])
    /// to answer `zones`: a [`SnapshotHandle`](crate::snapshot::SnapshotHandle) for one zone, or [`Zones`] for several.
    pub fn bind(addr: SocketAddr, zones: impl Into<Zones>) -> Result<Server> {
        let zones = zones.into();
        let workers = worker_count();
        let mut last_error = None;
        // with port 0 the UDP port the kernel picks may be taken for TCP: try a few
        for _ in 0..if addr.port() == 0 { 8 } else { 1 } {
            let first = udp_socket(addr).map_err(|source| Error::Bind {
                protocol: "udp",
                addr,
                source,
            })?;
            let local = first.local_addr().map_err(|source| Error::Bind {
                protocol: "udp",
                addr,
                source,
            })?;
            let tcp = match tcp_listener(local) {
                Ok(tcp) => tcp,
                Err(source) => {
                    last_error = Some(Error::Bind {
                        protocol: "tcp",
                        addr: local,
                        source,
                    });
                    continue;
                }
            };
            let mut udp = vec![first];
            for _ in 1..workers {
                udp.push(udp_socket(local).map_err(|source| Error::Bind {
                    protocol: "udp",
                    addr: local,
                    source,
                })?);
            }
            let metrics = Arc::new(Metrics::new(udp.len() + 1));
            return Ok(Server {
                udp,
                tcp,
                local,
                zones: zones.clone(),
                metrics,
            });
        }
        Err(last_error.unwrap_or(Error::Bind {
            protocol: "tcp",
            addr,
            source: std::io::Error::other("no port free for both UDP and TCP"),
        }))
    }

    /// The address bound (with the real port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Query counters, readable while the server runs.
    pub fn metrics(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// Serves until the returned future is dropped (UDP workers stop within a quarter second) or
    /// accepting TCP connections fails.
    pub async fn run(self) -> Result<()> {
        let stop = StopOnDrop(Arc::new(AtomicBool::new(false)));
        info!(addr = %self.local, zones = ?self.zones.names(), udp_workers = self.udp.len(), "DNS server listening");
        for (index, socket) in self.udp.into_iter().enumerate() {
            udp::spawn(
                index,
                socket,
                self.zones.clone(),
                self.metrics.clone(),
                stop.0.clone(),
            )?;
        }
        let workers = self.metrics.worker_slots() - 1;
        tcp::serve(self.tcp, self.zones, self.metrics, workers).await
    }
}

/// Tells the UDP threads to stop when `run` ends or is dropped.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}
