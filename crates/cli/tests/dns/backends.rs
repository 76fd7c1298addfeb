//! The members' "load balancers": one small HTTP server per cluster on a loopback address
//! (127.0.0.11, .12, .13), all on the Service's port, which the test kills, restarts, or makes
//! answer 503 to chosen probe sources (a voter's `--probe-source`) only. [`three_tls`] serves
//! the same over TLS, with a self-signed certificate made for the run.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// One endpoint's HTTP server.
pub(crate) struct Backend {
    pub(crate) addr: SocketAddr,
    refuse: Arc<Mutex<Vec<IpAddr>>>,
    /// Serves HTTPS with this configuration; plain HTTP without.
    tls: Option<Arc<rustls::ServerConfig>>,
    running: Option<(Arc<AtomicBool>, JoinHandle<()>)>,
}

impl Backend {
    /// Serves on `addr` (which must be free).
    fn start(listener: TcpListener, tls: Option<Arc<rustls::ServerConfig>>) -> Backend {
        let addr = listener.local_addr().expect("backend address");
        let mut backend = Backend {
            addr,
            refuse: Arc::default(),
            tls,
            running: None,
        };
        backend.run(listener);
        backend
    }

    fn run(&mut self, listener: TcpListener) {
        listener
            .set_nonblocking(true)
            .expect("nonblocking listener");
        let stop = Arc::new(AtomicBool::new(false));
        let refuse = self.refuse.clone();
        let tls = self.tls.clone();
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, peer)) => {
                        let fail = refuse.lock().expect("refuse list").contains(&peer.ip());
                        let tls = tls.clone();
                        std::thread::spawn(move || serve(stream, tls, fail));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
            // The listener is dropped here: connections are refused from now on.
        });
        self.running = Some((stop, thread));
    }

    /// Stops listening: probes see "connection refused".
    pub(crate) fn kill(&mut self) {
        if let Some((stop, thread)) = self.running.take() {
            stop.store(true, Ordering::SeqCst);
            let _ = thread.join();
        }
    }

    /// Listens again on the same address.
    pub(crate) fn restart(&mut self) {
        if self.running.is_none() {
            let listener = TcpListener::bind(self.addr).expect("rebind the backend");
            self.run(listener);
        }
    }

    /// Answers 503 to requests from these source addresses only (empty: 200 to everyone).
    pub(crate) fn fail_for(&self, sources: &[&str]) {
        *self.refuse.lock().expect("refuse list") = sources
            .iter()
            .map(|s| s.parse().expect("source address"))
            .collect();
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        self.kill();
    }
}

fn serve(stream: TcpStream, tls: Option<Arc<rustls::ServerConfig>>, fail: bool) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    match tls {
        None => answer(stream, fail),
        Some(config) => {
            let Ok(conn) = rustls::ServerConnection::new(config) else {
                return;
            };
            let mut tls = rustls::StreamOwned::new(conn, stream);
            answer(&mut tls, fail);
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
    }
}

/// Reads one request's head and answers 200, or 503 when `fail`.
fn answer(mut stream: impl Read + Write, fail: bool) {
    let mut request = Vec::new();
    let mut buf = [0u8; 1024];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    let (status, body) = if fail {
        ("503 Service Unavailable", "down\n")
    } else {
        ("200 OK", "ok\n")
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// Three backends on 127.0.0.11, .12 and .13, sharing one free port.
pub(crate) fn three() -> (u16, Vec<Backend>) {
    three_with(None)
}

/// Three HTTPS backends on 127.0.0.11, .12 and .13, sharing one free port, with one
/// self-signed certificate for the three addresses (the voters do not verify it).
pub(crate) fn three_tls() -> (u16, Vec<Backend>) {
    let key = rcgen::generate_simple_self_signed(
        crate::ALL
            .iter()
            .map(|ip| ip.to_string())
            .collect::<Vec<_>>(),
    )
    .expect("a self-signed certificate");
    let der = rustls::pki_types::PrivatePkcs8KeyDer::from(key.signing_key.serialize_der());
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_no_client_auth()
    .with_single_cert(vec![key.cert.der().clone()], der.into())
    .expect("the TLS server configuration");
    three_with(Some(Arc::new(config)))
}

fn three_with(tls: Option<Arc<rustls::ServerConfig>>) -> (u16, Vec<Backend>) {
    for _ in 0..50 {
        let first = TcpListener::bind("127.0.0.11:0").expect("bind 127.0.0.11");
        let port = first.local_addr().expect("address").port();
        let others: Vec<_> = ["127.0.0.12", "127.0.0.13"]
            .iter()
            .filter_map(|ip| TcpListener::bind((*ip, port)).ok())
            .collect();
        if others.len() == 2 {
            let backends = std::iter::once(first)
                .chain(others)
                .map(|l| Backend::start(l, tls.clone()))
                .collect();
            return (port, backends);
        }
    }
    panic!("no port free on 127.0.0.11, .12 and .13 at once");
}

/// A port free for both UDP and TCP on 127.0.0.1 (for a DNS server).
pub(crate) fn free_dns_port() -> u16 {
    for _ in 0..50 {
        let tcp = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = tcp.local_addr().expect("address").port();
        if std::net::UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no port free for both UDP and TCP on 127.0.0.1");
}
