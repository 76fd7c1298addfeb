//! `--metrics-listen`: the controller process's Prometheus metrics over plain HTTP/1.1 (`GET
//! /metrics`), one request per connection. (In `serve` the hub's own `/metrics` carries them.)

use anyhow::Result;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Answers on `listener` until dropped.
pub async fn serve(listener: TcpListener) {
    loop {
        match listener.accept().await {
            Ok((conn, _)) => {
                tokio::spawn(async move {
                    if let Err(e) = answer(conn).await {
                        tracing::debug!(error = %e, "metrics request");
                    }
                });
            }
            Err(e) => {
                tracing::warn!(error = %e, "accepting a metrics connection");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    }
}

async fn answer(mut conn: TcpStream) -> Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    let read = async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
            let n = conn.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        anyhow::Ok(())
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), read).await??;
    let line = String::from_utf8_lossy(&head);
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next(), parts.next());
    let (status, kind, body) = match (method, path) {
        (Some("GET"), Some("/metrics")) => (
            "200 OK",
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            flotilla_controllers::metrics::exposition(),
        ),
        (Some("GET"), _) => ("404 Not Found", "text/plain", "only /metrics\n".into()),
        _ => (
            "405 Method Not Allowed",
            "text/plain",
            "GET /metrics\n".into(),
        ),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    conn.write_all(response.as_bytes()).await?;
    conn.shutdown().await?;
    Ok(())
}
