//! A TCP proxy a fault test puts between two real processes, to cut the network between
//! them or slow it down.
//!
//! [`Proxy::cut`] is a partition as the network makes one: nothing is refused or reset,
//! bytes simply stop flowing in both directions (connections made meanwhile are accepted and
//! hang), so each side learns of it only through its own timeouts. [`Proxy::heal`] lets the
//! held bytes through again, as TCP retransmission would. [`Proxy::delay`] delivers every
//! chunk the given time after it arrived, in each direction, without limiting throughput
//! (a 1 s delay adds about 2 s to each request and answer).
//!
//! TLS passes through untouched: point a kubeconfig at [`Proxy::addr`] with
//! [`Proxy::rewrite_kubeconfig`] and certificates for 127.0.0.1 still match.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// What the proxy does with the bytes it carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Carried at once.
    Open,
    /// Held (a partition).
    Cut,
    /// Carried this long after they arrived, in each direction.
    Delay(Duration),
}

struct Shared {
    mode: Mutex<Mode>,
    changed: Condvar,
    stopping: AtomicBool,
    /// Every socket of every connection, to shut down when the proxy is dropped.
    sockets: Mutex<Vec<TcpStream>>,
}

impl Shared {
    fn mode(&self) -> Mode {
        *self.mode.lock().expect("proxy mode")
    }
}

/// A proxy from a free port on 127.0.0.1 to `target`; stops when dropped.
pub struct Proxy {
    addr: SocketAddr,
    target: SocketAddr,
    shared: Arc<Shared>,
}

impl Proxy {
    /// Listens on a free port of 127.0.0.1 and carries every connection to `target`.
    pub fn start(target: SocketAddr) -> Result<Proxy> {
        let listener = TcpListener::bind("127.0.0.1:0").context("binding the proxy's port")?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            mode: Mutex::new(Mode::Open),
            changed: Condvar::new(),
            stopping: AtomicBool::new(false),
            sockets: Mutex::new(Vec::new()),
        });
        let accepting = shared.clone();
        std::thread::Builder::new()
            .name(format!("proxy-{}", addr.port()))
            .spawn(move || accept(listener, target, accepting))?;
        Ok(Proxy {
            addr,
            target,
            shared,
        })
    }

    /// Where clients connect.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Partition: hold every byte in both directions until [`Proxy::heal`].
    pub fn cut(&self) {
        self.set(Mode::Cut);
    }

    /// End a partition or a delay: carry everything at once again.
    pub fn heal(&self) {
        self.set(Mode::Open);
    }

    /// Carry every byte `by` after it arrived, in each direction.
    pub fn delay(&self, by: Duration) {
        self.set(Mode::Delay(by));
    }

    fn set(&self, mode: Mode) {
        *self.shared.mode.lock().expect("proxy mode") = mode;
        self.shared.changed.notify_all();
    }

    /// Copies the kubeconfig `from` to `to` with its server's address (the proxy's target)
    /// replaced by the proxy's.
    pub fn rewrite_kubeconfig(&self, from: &Path, to: &Path) -> Result<()> {
        let text =
            std::fs::read_to_string(from).with_context(|| format!("reading {}", from.display()))?;
        let port = self.target.port();
        let mut out = text.clone();
        for host in ["127.0.0.1", "localhost"] {
            out = out.replace(&format!("{host}:{port}"), &self.addr.to_string());
        }
        anyhow::ensure!(
            out != text,
            "{} does not name the proxy's target {}",
            from.display(),
            self.target
        );
        std::fs::write(to, out).with_context(|| format!("writing {}", to.display()))
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        self.shared.changed.notify_all();
        // Wake the accepting thread, and end every connection.
        let _ = TcpStream::connect(self.addr);
        for s in self.shared.sockets.lock().expect("proxy sockets").drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

fn accept(listener: TcpListener, target: SocketAddr, shared: Arc<Shared>) {
    for client in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        let shared = shared.clone();
        // Connecting to the target can block (a held connection): one thread per connection.
        std::thread::spawn(move || {
            if let Err(e) = carry(client, target, &shared) {
                eprintln!("proxy to {target}: {e:#}");
            }
        });
    }
}

/// One connection: two directions, each a reader that stamps chunks and a writer that
/// delivers them per the mode.
fn carry(client: TcpStream, target: SocketAddr, shared: &Arc<Shared>) -> Result<()> {
    let server = TcpStream::connect(target).with_context(|| format!("connecting to {target}"))?;
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    {
        let mut sockets = shared.sockets.lock().expect("proxy sockets");
        sockets.push(client.try_clone()?);
        sockets.push(server.try_clone()?);
    }
    direction(client.try_clone()?, server.try_clone()?, shared.clone())?;
    direction(server, client, shared.clone())?;
    Ok(())
}

fn direction(mut from: TcpStream, mut to: TcpStream, shared: Arc<Shared>) -> Result<()> {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::Builder::new().spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if tx.send((Instant::now(), buf[..n].to_vec())).is_err() {
                        return;
                    }
                }
            }
        }
    })?;
    std::thread::Builder::new().spawn(move || {
        // The reader's end closes the channel; the writer then half-closes its side.
        while let Ok((arrived, bytes)) = rx.recv() {
            if !deliverable(&shared, arrived) {
                return;
            }
            if to.write_all(&bytes).is_err() {
                return;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    })?;
    Ok(())
}

/// Waits until a chunk that arrived at `arrived` may go; false when the proxy stops.
fn deliverable(shared: &Shared, arrived: Instant) -> bool {
    loop {
        if shared.stopping.load(Ordering::SeqCst) {
            return false;
        }
        match shared.mode() {
            Mode::Open => return true,
            Mode::Delay(by) => {
                let due = arrived + by;
                let now = Instant::now();
                if now >= due {
                    return true;
                }
                // Woken early by a mode change; otherwise due.
                let guard = shared.mode.lock().expect("proxy mode");
                drop(shared.changed.wait_timeout(guard, due - now));
            }
            Mode::Cut => {
                let guard = shared.mode.lock().expect("proxy mode");
                if *guard == Mode::Cut && !shared.stopping.load(Ordering::SeqCst) {
                    drop(shared.changed.wait(guard));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
