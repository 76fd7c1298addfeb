use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use flotilla_apis::networking::v1alpha1::ProbeProtocol;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::check::{probe, Check};
use super::opinion::Opinion;

fn now() -> Time {
    Time(Timestamp::now())
}

#[test]
fn the_first_result_sets_the_opinion_then_thresholds_flip_it() {
    let mut o = Opinion::default();
    assert!(o.observe(Ok(()), 2, 1, now()));
    assert_eq!(o.up, Some(true));
    // One failure is not enough with failureThreshold 2.
    assert!(!o.observe(Err("refused".into()), 2, 1, now()));
    assert_eq!(o.up, Some(true));
    // A success in between restarts the count.
    assert!(!o.observe(Ok(()), 2, 1, now()));
    assert!(!o.observe(Err("refused".into()), 2, 1, now()));
    assert!(o.observe(Err("refused".into()), 2, 1, now()));
    assert_eq!(o.up, Some(false));
    assert_eq!(o.message.as_deref(), Some("refused"));
    // successThreshold 2: back up after two successes in a row.
    assert!(!o.observe(Ok(()), 2, 2, now()));
    assert!(o.observe(Ok(()), 2, 2, now()));
    assert_eq!((o.up, o.message.as_deref()), (Some(true), None));
}

#[test]
fn a_first_failure_is_down_at_once() {
    let mut o = Opinion::default();
    assert!(o.observe(Err("timeout".into()), 3, 1, now()));
    assert_eq!(o.up, Some(false));
}

/// A tiny HTTP server: answers 503 to peers from `refuse`, 200 to the others; sends each
/// peer address it saw on the channel.
async fn http_server(
    refuse: Option<IpAddr>,
) -> (SocketAddr, tokio::sync::mpsc::UnboundedReceiver<IpAddr>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            let (mut s, peer) = listener.accept().await.unwrap();
            let _ = tx.send(peer.ip());
            tokio::spawn(async move {
                let mut buf = [0u8; 1024];
                let _ = s.read(&mut buf).await;
                let status = if Some(peer.ip()) == refuse {
                    "503 Service Unavailable"
                } else {
                    "200 OK"
                };
                let answer = format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\n\r\n");
                let _ = s.write_all(answer.as_bytes()).await;
            });
        }
    });
    (addr, rx)
}

fn check(addr: SocketAddr, protocol: ProbeProtocol) -> Check {
    Check {
        addr,
        protocol,
        path: "/healthz".into(),
        timeout: Duration::from_secs(2),
    }
}

#[tokio::test]
async fn http_probes_come_from_the_source_and_503_is_down() {
    let refused = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3));
    let (addr, mut seen) = http_server(Some(refused)).await;
    let from_2 = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
    probe(&check(addr, ProbeProtocol::Http), Some(from_2))
        .await
        .expect("up from 127.0.0.2");
    assert_eq!(
        seen.recv().await,
        Some(from_2),
        "the probe came from its source"
    );
    let err = probe(&check(addr, ProbeProtocol::Http), Some(refused))
        .await
        .unwrap_err();
    assert!(err.contains("503"), "{err}");
    assert_eq!(seen.recv().await, Some(refused));
}

#[tokio::test]
async fn tcp_probes_see_a_closed_port_down() {
    let (addr, _seen) = http_server(None).await;
    probe(&check(addr, ProbeProtocol::Tcp), None)
        .await
        .expect("open port is up");
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let err = probe(&check(closed, ProbeProtocol::Tcp), None)
        .await
        .unwrap_err();
    assert!(err.contains("connecting"), "{err}");
}

#[tokio::test]
async fn a_silent_endpoint_times_out() {
    // Accepts, never answers: an HTTP probe gives up after its timeout.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let _keep = tokio::spawn(async move {
        let mut held = Vec::new();
        loop {
            held.push(listener.accept().await.unwrap());
        }
    });
    let mut c = check(addr, ProbeProtocol::Http);
    c.timeout = Duration::from_millis(300);
    let err = probe(&c, None).await.unwrap_err();
    assert!(err.contains("no answer"), "{err}");
}
