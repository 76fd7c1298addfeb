//! A raw HTTPS client for hostile requests: bytes kubectl would never send (protobuf bodies of
//! the wrong kind, random methods, headers dripped a byte at a time, bare HTTP/2 prefaces),
//! over rustls on a blocking socket so a test controls every byte and every pause.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::Value;

use crate::common::Hub;

/// One TLS connection to the hub.
pub type Tls = rustls::StreamOwned<rustls::ClientConnection, TcpStream>;

/// Where the hub is and how to trust and authenticate to it (from its admin kubeconfig).
pub struct Target {
    /// `host:port`.
    pub addr: String,
    host: String,
    token: String,
    roots: Arc<rustls::RootCertStore>,
}

/// A response read to the end.
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// The body, de-chunked.
    pub body: Vec<u8>,
}

impl Reply {
    /// The body as JSON (a `Status` for errors).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "HTTP {} body is not JSON ({e}): {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// `reason` of the `Status` body.
    pub fn reason(&self) -> String {
        self.json()["reason"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// `(status, reason)`, for one assertion with a readable failure.
    pub fn status_reason(&self) -> (u16, String) {
        (self.status, self.reason())
    }

    /// The body as text, cut short (for failure messages).
    pub fn text(&self) -> String {
        let text = String::from_utf8_lossy(&self.body);
        match text.char_indices().nth(2000) {
            Some((cut, _)) => format!("{}… ({} bytes)", &text[..cut], self.body.len()),
            None => text.into_owned(),
        }
    }
}

impl Target {
    /// The hub's address, CA and admin token.
    pub fn of(hub: &Hub) -> Target {
        let cfg: serde_yaml::Value =
            serde_yaml::from_str(&std::fs::read_to_string(&hub.kubeconfig).expect("kubeconfig"))
                .expect("kubeconfig is YAML");
        let ca = cfg["clusters"][0]["cluster"]["certificate-authority-data"]
            .as_str()
            .expect("certificate-authority-data");
        let ca = base64::engine::general_purpose::STANDARD
            .decode(ca)
            .expect("CA is base64");
        let mut roots = rustls::RootCertStore::empty();
        for cert in rustls_pemfile::certs(&mut &ca[..]) {
            roots.add(cert.expect("CA PEM")).expect("CA certificate");
        }
        let token = cfg["users"][0]["user"]["token"]
            .as_str()
            .expect("the admin kubeconfig holds a token")
            .to_owned();
        let addr = hub.server().trim_start_matches("https://").to_owned();
        let host = addr.rsplit_once(':').expect("host:port").0.to_owned();
        Target {
            addr,
            host,
            token,
            roots: Arc::new(roots),
        }
    }

    /// A TCP connection, no TLS yet.
    pub fn tcp(&self) -> TcpStream {
        let tcp = TcpStream::connect(&self.addr).expect("connect to the hub");
        tcp.set_nodelay(true).expect("nodelay");
        tcp
    }

    /// A TLS connection offering `alpn`, with the handshake done (or failed: `Err`).
    pub fn try_tls(&self, alpn: &[&str], timeout: Duration) -> std::io::Result<Tls> {
        let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(self.roots.clone())
        .with_no_client_auth();
        config.alpn_protocols = alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
        let name = rustls::pki_types::ServerName::try_from(self.host.clone()).expect("server name");
        let conn = rustls::ClientConnection::new(Arc::new(config), name).expect("TLS client");
        let tcp = self.tcp();
        tcp.set_read_timeout(Some(timeout))?;
        tcp.set_write_timeout(Some(timeout))?;
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        while tls.conn.is_handshaking() {
            tls.conn.complete_io(&mut tls.sock)?;
        }
        Ok(tls)
    }

    /// A TLS connection speaking HTTP/1.1.
    pub fn tls(&self) -> Tls {
        self.try_tls(&["http/1.1"], Duration::from_secs(30))
            .expect("TLS handshake with the hub")
    }

    /// An authenticated request with a body; the reply read to the end.
    pub fn send(&self, method: &str, path: &str, content_type: &str, body: &[u8]) -> Reply {
        self.exchange(method, path, Some(content_type), body, true)
    }

    /// An authenticated GET.
    pub fn get(&self, path: &str) -> Reply {
        self.exchange("GET", path, None, b"", true)
    }

    /// An unauthenticated request without a body.
    pub fn anonymous(&self, method: &str, path: &str) -> Reply {
        self.exchange(method, path, None, b"", false)
    }

    fn exchange(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: &[u8],
        authenticated: bool,
    ) -> Reply {
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nAccept: application/json\r\n\
             Connection: close\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        );
        if let Some(ct) = content_type {
            head.push_str(&format!("Content-Type: {ct}\r\n"));
        }
        if authenticated {
            head.push_str(&format!("Authorization: Bearer {}\r\n", self.token));
        }
        head.push_str("\r\n");
        // A reply slower than this is a hub stuck on the request (the bombs this suite sends
        // would otherwise hang the test, not fail it).
        let mut tls = self
            .try_tls(&["http/1.1"], Duration::from_secs(60))
            .expect("TLS handshake with the hub");
        tls.write_all(head.as_bytes()).expect("send request head");
        // The hub may answer before the body is all sent (413 for one too large) and close;
        // its answer is then already on the way, so read it, as Go's client does.
        match tls.write_all(body).and_then(|()| tls.flush()) {
            Ok(()) => {}
            Err(e) if matches!(e.kind(), ErrorKind::BrokenPipe | ErrorKind::ConnectionReset) => {}
            Err(e) => panic!("{method} {path}: sending the request body failed: {e}"),
        }
        let raw = read_reply(&mut tls)
            .unwrap_or_else(|e| panic!("{method} {path}: reading the reply failed: {e}"));
        parse_reply(&raw).unwrap_or_else(|| {
            panic!(
                "{method} {path}: no HTTP reply: {:?}",
                String::from_utf8_lossy(&raw)
            )
        })
    }
}

/// Everything the hub sends until it closes, read without first flushing what is left to
/// write (after a broken pipe that would fail again). The hub closes without close_notify
/// after `Connection: close`, and may reset a connection it did not read to the end; what
/// came before either is whole.
fn read_reply(tls: &mut Tls) -> std::io::Result<Vec<u8>> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    let mut closed = false;
    loop {
        loop {
            match tls.conn.reader().read(&mut buf) {
                Ok(0) => return Ok(raw),
                Ok(n) => raw.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock && !closed => break,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::UnexpectedEof) => {
                    return Ok(raw)
                }
                Err(e) => return Err(e),
            }
        }
        match tls.conn.read_tls(&mut tls.sock) {
            Ok(0) => closed = true,
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => closed = true,
            Err(e) => return Err(e),
        }
        tls.conn
            .process_new_packets()
            .map_err(std::io::Error::other)?;
    }
}

fn parse_reply(raw: &[u8]) -> Option<Reply> {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..split]).ok()?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    let rest = &raw[split + 4..];
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    let body = if chunked {
        dechunk(rest)?
    } else {
        rest.to_vec()
    };
    Some(Reply { status, body })
}

fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = rest.windows(2).position(|w| w == b"\r\n")?;
        let size = std::str::from_utf8(&rest[..line_end]).ok()?;
        let size = usize::from_str_radix(size.split(';').next()?.trim(), 16).ok()?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(rest.get(..size)?);
        rest = rest.get(size + 2..)?;
    }
}

/// Whether the peer has closed `stream`: a read that ends (EOF or a reset) rather than timing
/// out. `stream` must have a short read timeout.
pub fn closed(stream: &mut impl Read) -> bool {
    let mut buf = [0u8; 512];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            // Something was sent (an error response, a GOAWAY): keep reading until it ends.
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return false
            }
            Err(_) => return true,
        }
    }
}

/// Call `step` until the hub closes `stream` or `within` passes; whether it closed.
pub fn closes_within<S: Read>(
    stream: &mut S,
    within: Duration,
    mut step: impl FnMut(&mut S) -> bool,
) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        // A failed write means the hub is gone from the other end too.
        if !step(stream) || closed(stream) {
            return true;
        }
    }
    false
}
