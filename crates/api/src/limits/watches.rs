//! How many watches one user may hold open (`serve --max-watches-per-user`).
//!
//! kube-apiserver has no such bound and leaves watches out of priority and fairness, so one
//! client opening watches in a loop holds memory and a broadcast receiver per watch until the
//! server runs short. The hub counts open watches per user name and refuses the next one past
//! the bound with 429 `TooManyRequests` (`Retry-After: 1`), as it refuses any request it
//! cannot take now. Members of `system:masters` (the admin, the hub's own controllers) are
//! not counted.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::auth::UserInfo;
use crate::error::{ApiError, Result};

/// Open watches per user, and the bound.
#[derive(Debug)]
pub struct Watches {
    /// 0: no bound.
    max: usize,
    open: Mutex<HashMap<String, usize>>,
}

/// One open watch, counted until dropped (with the watch's response stream).
#[derive(Debug)]
pub struct Ticket {
    watches: Arc<Watches>,
    user: String,
}

impl Watches {
    /// At most `max` open watches per user (0: no bound).
    pub fn new(max: usize) -> Arc<Watches> {
        Arc::new(Watches {
            max,
            open: Mutex::default(),
        })
    }

    /// Counts a watch `user` opens; `None` when the user is not counted; 429 past the bound.
    pub fn open(self: &Arc<Self>, user: &UserInfo) -> Result<Option<Ticket>> {
        if self.max == 0 || user.is_privileged() {
            return Ok(None);
        }
        let mut open = self.open.lock();
        let n = open.entry(user.name.clone()).or_default();
        if *n >= self.max {
            let max = self.max;
            return Err(ApiError {
                message: format!(
                    "Too many requests: user {:?} has {max} watches open, the most the hub \
                     allows one user (--max-watches-per-user); close some before opening more",
                    user.name
                ),
                ..crate::flowcontrol::dispatch::too_many()
            });
        }
        *n += 1;
        Ok(Some(Ticket {
            watches: self.clone(),
            user: user.name.clone(),
        }))
    }

    /// How many watches `user` holds open.
    pub fn open_by(&self, user: &str) -> usize {
        self.open.lock().get(user).copied().unwrap_or(0)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut open = self.watches.open.lock();
        if let Some(n) = open.get_mut(&self.user) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.user);
            }
        }
    }
}
