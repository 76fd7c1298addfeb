//! DNS over TCP: two-byte length-prefixed messages, several per connection (RFC 7766).

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tracing::debug;

use super::Metrics;
use crate::respond::{respond, Worker};
use crate::zones::Zones;
use crate::{Error, Result};

/// A connection idle this long is closed.
const IDLE: Duration = Duration::from_secs(10);

pub(super) async fn serve(
    listener: std::net::TcpListener,
    zones: Zones,
    metrics: Arc<Metrics>,
    slot: usize,
) -> Result<()> {
    let listener = TcpListener::from_std(listener).map_err(Error::Accept)?;
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            // out of descriptors and the like: wait and go on, the server stays up
            Err(e) if is_transient(&e) => {
                debug!(error = %e, "DNS TCP accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            Err(e) => return Err(Error::Accept(e)),
        };
        let (zones, metrics) = (zones.clone(), metrics.clone());
        tokio::spawn(async move {
            if let Err(e) = connection(stream, peer.ip(), zones, metrics, slot).await {
                debug!(error = %e, %peer, "DNS TCP connection ended");
            }
        });
    }
}

fn is_transient(e: &std::io::Error) -> bool {
    !matches!(
        e.kind(),
        std::io::ErrorKind::InvalidInput | std::io::ErrorKind::Unsupported
    )
}

async fn connection(
    mut stream: TcpStream,
    peer: std::net::IpAddr,
    zones: Zones,
    metrics: Arc<Metrics>,
    slot: usize,
) -> std::io::Result<()> {
    let _ = stream.set_nodelay(true);
    let mut worker = Worker::new();
    let mut buf = Vec::new();
    loop {
        let mut len = [0u8; 2];
        match tokio::time::timeout(IDLE, stream.read_exact(&mut len)).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Ok(Err(e)) => return Err(e),
            Err(_) => return Ok(()),
        }
        buf.resize(u16::from_be_bytes(len) as usize, 0);
        tokio::time::timeout(IDLE, stream.read_exact(&mut buf))
            .await
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "query body"))??;
        let outcome = respond(&zones, &buf, peer, true, &mut worker);
        metrics.record(slot, true, outcome);
        if outcome.is_some() {
            let mut framed = Vec::with_capacity(worker.out.len() + 2);
            framed.extend_from_slice(&(worker.out.len() as u16).to_be_bytes());
            framed.extend_from_slice(&worker.out);
            stream.write_all(&framed).await?;
        }
    }
}
