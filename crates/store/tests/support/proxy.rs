//! A TCP proxy in front of PostgreSQL that loses a connection exactly where the tests need:
//! when a write transaction's COMMIT goes by (before or after handing it to the server), or
//! all at once (the database "goes away" and refuses connections until it "comes back").
//!
//! It reads the plaintext frontend protocol (so stores behind it use `sslmode=disable`): an
//! untyped startup message, then typed messages. A write transaction is one opened with a
//! simple-query `BEGIN` or `START TRANSACTION` that is not `READ ONLY` (the store's writer; its
//! readers' transactions are read-only).
//! Each connection is one task that owns both sockets, so once it decides to cut, not a byte
//! of the server's answer reaches the client.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Where the next write transaction's COMMIT is cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// The server never sees the COMMIT: the transaction rolls back.
    BeforeCommit,
    /// The server gets the COMMIT and commits; the client never hears back.
    AfterCommit,
    /// As AfterCommit, and the proxy goes down at once (connections refused until
    /// [`Proxy::up`]), so the client cannot ask what happened.
    AfterCommitThenDown,
}

struct State {
    upstream: SocketAddr,
    cut: Mutex<Option<Cut>>,
    tripped: AtomicUsize,
    down: AtomicBool,
    /// Bumped by [`Proxy::down`]: every open connection ends.
    generation: watch::Sender<u64>,
}

/// The running proxy; it stops with the test's runtime.
pub struct Proxy {
    addr: SocketAddr,
    state: Arc<State>,
}

impl Proxy {
    /// Listen on a free loopback port and forward to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("proxy listen");
        let addr = listener.local_addr().expect("proxy address");
        let (generation, _) = watch::channel(0);
        let state = Arc::new(State {
            upstream,
            cut: Mutex::new(None),
            tripped: AtomicUsize::new(0),
            down: AtomicBool::new(false),
            generation,
        });
        let accepting = state.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if accepting.down.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let state = accepting.clone();
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(state.upstream).await else {
                        return;
                    };
                    let _ = pump(client, server, &state).await;
                });
            }
        });
        Proxy { addr, state }
    }

    /// `host:port` to put in a store URL.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Cut the next write transaction's COMMIT (one-shot).
    pub fn cut_next_commit(&self, cut: Cut) {
        *self.state.cut.lock() = Some(cut);
    }

    /// How many commits have been cut.
    pub fn tripped(&self) -> usize {
        self.state.tripped.load(Ordering::SeqCst)
    }

    /// Close every connection and refuse new ones.
    pub fn down(&self) {
        self.state.down.store(true, Ordering::SeqCst);
        self.state.generation.send_modify(|g| *g += 1);
    }

    /// Accept connections again.
    pub fn up(&self) {
        self.state.down.store(false, Ordering::SeqCst);
    }
}

/// SSLRequest and GSSENCRequest: untyped, answered with one byte, then the real startup.
const NEGOTIATION_CODES: [i32; 2] = [80_877_103, 80_877_104];

/// The length of the complete message at the start of `buf`, if it is all there.
fn message_len(buf: &[u8], started: bool) -> Option<usize> {
    let (at, extra) = if started { (1, 1) } else { (0, 0) };
    let len = buf.get(at..at + 4)?;
    let len = i32::from_be_bytes([len[0], len[1], len[2], len[3]]);
    let total = usize::try_from(len).ok()? + extra;
    (buf.len() >= total).then_some(total)
}

async fn pump(mut client: TcpStream, mut server: TcpStream, state: &State) -> std::io::Result<()> {
    let mut generation = state.generation.subscribe();
    let mut from_client = Vec::new();
    let mut from_server = vec![0u8; 16 * 1024];
    let mut started = false;
    let mut in_write_tx = false;
    loop {
        tokio::select! {
            n = client.read_buf(&mut from_client) => {
                if n? == 0 {
                    return Ok(());
                }
                while let Some(len) = message_len(&from_client, started) {
                    let msg: Vec<u8> = from_client.drain(..len).collect();
                    if !started {
                        let code = i32::from_be_bytes([msg[4], msg[5], msg[6], msg[7]]);
                        started = !NEGOTIATION_CODES.contains(&code);
                    } else if msg[0] == b'Q' {
                        let query = String::from_utf8_lossy(&msg[5..]).trim().to_uppercase();
                        if query.starts_with("BEGIN") || query.starts_with("START TRANSACTION") {
                            in_write_tx = !query.contains("READ ONLY");
                        } else if query.starts_with("COMMIT") && in_write_tx {
                            in_write_tx = false;
                            let cut = state.cut.lock().take();
                            if let Some(cut) = cut {
                                state.tripped.fetch_add(1, Ordering::SeqCst);
                                return lose(cut, client, server, &msg, state).await;
                            }
                        } else if query.starts_with("ROLLBACK") {
                            in_write_tx = false;
                        }
                    }
                    server.write_all(&msg).await?;
                }
            }
            n = server.read(&mut from_server) => {
                let n = n?;
                if n == 0 {
                    return Ok(());
                }
                client.write_all(&from_server[..n]).await?;
            }
            _ = generation.changed() => return Ok(()),
        }
    }
}

/// Lose the connection at a COMMIT, as `cut` says.
async fn lose(
    cut: Cut,
    client: TcpStream,
    mut server: TcpStream,
    commit: &[u8],
    state: &State,
) -> std::io::Result<()> {
    drop(client);
    if cut == Cut::BeforeCommit {
        // The server sees the connection end inside the transaction and rolls it back.
        return Ok(());
    }
    if cut == Cut::AfterCommitThenDown {
        state.down.store(true, Ordering::SeqCst);
        state.generation.send_modify(|g| *g += 1);
    }
    server.write_all(commit).await?;
    // Read the server's answer (and drop it) before closing: closing with unread data would
    // reset the connection, and a reset may discard the COMMIT before the server reads it.
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), async {
        // Pipelined statements before the COMMIT are answered first, each ending ready: wait
        // for the COMMIT's own completion.
        let done = |a: &[u8]| a.windows(7).any(|w| w == b"COMMIT\0") && ends_with_ready(a);
        while !done(&answer) {
            match server.read_buf(&mut answer).await {
                Ok(n) if n > 0 => {}
                _ => break,
            }
        }
    })
    .await;
    Ok(())
}

/// Whether a server's bytes end with ReadyForQuery ('Z', length 5, status): its answer is whole.
fn ends_with_ready(answer: &[u8]) -> bool {
    answer.len() >= 6 && answer[answer.len() - 6..answer.len() - 1] == *b"Z\0\0\0\x05"
}
