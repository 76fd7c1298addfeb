//! The members' "load balancers": one small HTTP server per cluster on a loopback address
//! (127.0.0.11, .12, .13), all on the Service's port, which the test kills, restarts, or makes
//! answer 503 to chosen probe sources (a voter's `--probe-source`) only.

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
    running: Option<(Arc<AtomicBool>, JoinHandle<()>)>,
}

impl Backend {
    /// Serves on `addr` (which must be free).
    fn start(listener: TcpListener) -> Backend {
        let addr = listener.local_addr().expect("backend address");
        let mut backend = Backend {
            addr,
            refuse: Arc::default(),
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
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, peer)) => {
                        let fail = refuse.lock().expect("refuse list").contains(&peer.ip());
                        std::thread::spawn(move || answer(stream, fail));
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

fn answer(mut stream: TcpStream, fail: bool) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
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
                .map(Backend::start)
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
