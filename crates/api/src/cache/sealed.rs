//! The cache's side of encryption at rest (see [`crate::encryption`]): the store holds some
//! objects sealed, the cache holds every object in clear. Values are opened as they are read
//! from the store, and the keys whose stored value is not as a write would store it now (sealed
//! under an older key, or clear where it would be sealed) are remembered, so that an update
//! rewrites them even when it changes nothing (kube-apiserver's way to re-encrypt after a key
//! rotation: `kubectl get secrets -A -o json | kubectl replace -f -`).

use std::collections::HashSet;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;

use crate::encryption::Encryption;
use crate::error::{ApiError, Result};

/// The encryption configuration, and the stale keys.
pub(super) struct Sealed {
    encryption: Arc<Encryption>,
    stale: Mutex<HashSet<String>>,
}

impl Sealed {
    pub(super) fn new(encryption: Arc<Encryption>) -> Sealed {
        Sealed {
            encryption,
            stale: Mutex::default(),
        }
    }

    /// `stored` at `key` in clear, noting whether it is stale (`written`: a value the store
    /// holds now, not a past one from its log); a value that does not open is a 500 naming the
    /// key, never the data.
    pub(super) fn open(&self, key: &str, stored: Bytes, written: bool) -> Result<Bytes> {
        if written {
            if self.encryption.is_stale(key, &stored) {
                self.stale.lock().insert(key.to_owned());
            } else {
                // One lock; removing from an empty set costs nothing.
                self.stale.lock().remove(key);
            }
        }
        self.encryption
            .open(key, stored)
            .map_err(|e| ApiError::internal(format!("cannot decrypt the stored object: {e}")))
    }

    /// `key` was deleted: nothing of it is stale any more.
    pub(super) fn forget(&self, key: &str) {
        self.stale.lock().remove(key);
    }

    /// Whether the value stored at `key` should be rewritten even by an update that changes
    /// nothing.
    pub(super) fn is_stale(&self, key: &str) -> bool {
        self.stale.lock().contains(key)
    }

    /// Whether writes at `key` are stored sealed.
    pub(super) fn seals(&self, key: &str) -> bool {
        self.encryption.seals(key)
    }

    /// `plain`, as the store keeps it at `key`.
    pub(super) fn seal(&self, key: &str, plain: Bytes) -> Bytes {
        self.encryption.seal(key, plain)
    }
}
