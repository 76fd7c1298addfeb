//! What an unauthenticated client can make the hub hold: metrics series named after its
//! made-up methods, connections it never finishes a request on, more connections than the hub
//! serves at once, and the HTTP/2 streams each connection may carry.

use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

use rand::Rng;

use super::raw::{closed, closes_within, Target};
use crate::common::Hub;

/// The distinct `verb` labels of `apiserver_request_total` in a `/metrics` page.
fn request_verbs(metrics: &str) -> std::collections::BTreeSet<String> {
    metrics
        .lines()
        .filter(|l| l.starts_with("apiserver_request_total{"))
        .filter_map(|l| l.split("verb=\"").nth(1))
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn made_up_methods_share_one_metrics_label() {
    let hub = Hub::start();
    let hub_api = Target::of(&hub);
    let mut rng = rand::thread_rng();
    let mut sent = Vec::new();
    for _ in 0..200 {
        let method: String = (0..10)
            .map(|_| char::from(b'A' + rng.gen_range(0..26u8)))
            .collect();
        let reply = hub_api.anonymous(&method, "/api/v1/namespaces");
        assert!(reply.status >= 400, "{method}: {}", reply.status);
        sent.push(method);
    }
    let metrics = hub_api.get("/metrics");
    assert_eq!(metrics.status, 200, "{}", metrics.text());
    let verbs = request_verbs(&metrics.text());
    assert!(
        sent.iter().all(|m| !verbs.contains(m)),
        "a made-up method became a label: {verbs:?}"
    );
    assert!(verbs.len() <= 10, "{} verb labels: {verbs:?}", verbs.len());
    assert!(verbs.contains("other"), "{verbs:?}");
}

#[test]
fn slow_and_silent_connections_are_cut_off() {
    let hub = Hub::start_with(&["--header-read-timeout", "2s"]);
    let hub_api = Target::of(&hub);
    let within = Duration::from_secs(30);

    // Headers dripped a byte at a time, never finished.
    let mut tls = hub_api.tls();
    tls.write_all(b"GET /readyz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .expect("start the request");
    tls.sock
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let dripped = closes_within(&mut tls, within, |tls| {
        tls.write_all(b"a").and_then(|_| tls.flush()).is_ok()
    });
    assert!(dripped, "a connection dripping its headers stayed open");

    // TLS done, then nothing at all.
    let mut tls = hub_api.tls();
    tls.sock
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    assert!(
        closes_within(&mut tls, within, |_| true),
        "a connection that sends no request stayed open"
    );

    // TCP only: the TLS handshake never starts.
    let mut tcp = hub_api.tcp();
    tcp.set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    assert!(
        closes_within(&mut tcp, within, |_| true),
        "a connection that never starts TLS stayed open"
    );

    // Requests that arrive whole are served as before.
    assert_eq!(hub_api.get("/api/v1/namespaces").status, 200);
}

/// A kept-alive HTTP/1.1 connection idle for longer than the header timeout is still open
/// and serves the next request: clients' pools keep idle connections 90 s, and one the hub
/// closed as a request went out on it was a reset request.
#[test]
fn kept_alive_connections_outlive_the_header_timeout() {
    let hub = Hub::start_with(&["--header-read-timeout", "2s"]);
    let hub_api = Target::of(&hub);
    let mut tls = hub_api.tls();
    tls.sock
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let request = b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n";
    tls.write_all(request).expect("the first request");
    assert!(
        answer(&mut tls).starts_with("HTTP/1.1 200"),
        "the first request"
    );
    std::thread::sleep(Duration::from_secs(4));
    assert!(
        !closed(&mut tls),
        "the hub closed a kept-alive connection idle for twice the header timeout"
    );
    tls.write_all(request).expect("the second request");
    assert!(
        answer(&mut tls).starts_with("HTTP/1.1 200"),
        "the second request"
    );
}

/// What the hub answered on `tls` within 10 s, up to the end of its headers.
fn answer(tls: &mut super::raw::Tls) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline && !got.windows(4).any(|w| w == b"\r\n\r\n") {
        match tls.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

#[test]
fn connections_beyond_the_limit_wait_for_a_free_slot() {
    // Without the in-process controllers, whose own connection would take a slot.
    let hub = Hub::start_with(&["--max-connections", "2", "--no-controllers"]);
    let hub_api = Target::of(&hub);
    let first = hub_api.tls();
    let second = hub_api.tls();
    // A third is accepted by the kernel but not served: its handshake gets no answer.
    let third = std::thread::spawn({
        let hub_api = Target::of(&hub);
        move || {
            hub_api
                .try_tls(&["http/1.1"], Duration::from_secs(60))
                .map(|_| std::time::Instant::now())
        }
    });
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        !third.is_finished(),
        "a third connection was served past --max-connections 2"
    );
    let freed = std::time::Instant::now();
    drop(first);
    let served = third
        .join()
        .expect("third")
        .expect("served once a slot is free");
    assert!(served >= freed);
    drop(second);
    assert_eq!(hub_api.get("/api/v1/namespaces").status, 200);
}

/// The `SETTINGS_MAX_CONCURRENT_STREAMS` the hub announces on a new HTTP/2 connection.
fn announced_max_streams(hub_api: &Target) -> Option<u32> {
    use std::io::Read;
    let mut tls = hub_api
        .try_tls(&["h2"], Duration::from_secs(10))
        .expect("TLS with h2");
    assert_eq!(tls.conn.alpn_protocol(), Some(&b"h2"[..]));
    tls.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        .expect("preface");
    loop {
        let mut head = [0u8; 9];
        tls.read_exact(&mut head).expect("frame header");
        let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
        let mut payload = vec![0u8; len];
        tls.read_exact(&mut payload).expect("frame payload");
        // The server's first SETTINGS frame (type 4, not an ACK) holds its limits.
        if head[3] == 4 && head[4] & 1 == 0 {
            return payload.chunks_exact(6).find_map(|s| {
                (u16::from_be_bytes([s[0], s[1]]) == 3)
                    .then(|| u32::from_be_bytes([s[2], s[3], s[4], s[5]]))
            });
        }
    }
}

#[test]
fn http2_streams_per_connection_are_bounded() {
    let hub = Hub::start();
    assert_eq!(announced_max_streams(&Target::of(&hub)), Some(250));
    let hub = Hub::start_with(&["--http2-max-streams-per-connection", "40"]);
    assert_eq!(announced_max_streams(&Target::of(&hub)), Some(40));
}
