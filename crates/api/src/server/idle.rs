//! Whether a connection is in use: requests in flight, and since when it has had none.
//!
//! A request counts from the moment its headers are whole until its response body is done,
//! so a watch streaming for minutes keeps its connection, and a connection that has sent no
//! request (a client that stalls after the TLS handshake, or drips its headers, or keeps an
//! HTTP/2 connection open without streams) does not.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

/// The requests of one connection.
#[derive(Debug)]
pub(super) struct Activity {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    in_flight: usize,
    /// When the last request ended, or the connection opened.
    idle_since: Instant,
    /// Whether any request has arrived.
    served: bool,
}

impl Default for Activity {
    fn default() -> Self {
        Activity {
            state: Mutex::new(State {
                in_flight: 0,
                idle_since: Instant::now(),
                served: false,
            }),
        }
    }
}

/// One request in flight; it ends when this is dropped.
pub(super) struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        let mut state = self.0.state.lock();
        state.in_flight -= 1;
        if state.in_flight == 0 {
            state.idle_since = Instant::now();
        }
    }
}

impl Activity {
    /// A request has begun.
    pub fn begin(self: &Arc<Self>) -> Busy {
        let mut state = self.state.lock();
        state.in_flight += 1;
        state.served = true;
        Busy(self.clone())
    }

    /// Completes once the connection has had no request in flight for `first` since it opened
    /// (before any request) or for `idle` since its last request ended.
    pub async fn expired(&self, first: Duration, idle: Duration) {
        loop {
            let wait = {
                let state = self.state.lock();
                if state.in_flight > 0 {
                    // Checked again later; a busy connection is not watched more closely.
                    idle
                } else {
                    let limit = if state.served { idle } else { first };
                    let deadline = state.idle_since + limit;
                    let now = Instant::now();
                    if now >= deadline {
                        return;
                    }
                    deadline - now
                }
            };
            tokio::time::sleep(wait).await;
        }
    }
}

#[cfg(test)]
mod tests;
