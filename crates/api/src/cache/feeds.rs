//! The live feeds of the watch cache, one per directory someone watches.
//!
//! A change is sent only to the feeds of the directories that hold its key ("/registry/",
//! "/registry/apps/", "/registry/apps/deployments/", "/registry/apps/deployments/demo/"), so a
//! watcher wakes only for changes it would deliver, not for every write to the hub: with a
//! thousand member clusters' push workers each watching the Works of its own namespace, and a
//! thousand Lease renewals between two Work changes, one shared feed woke every watcher for
//! every write and kept both cores busy on an idle hub. Feeds are made when first watched and
//! dropped once nobody watches them.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::broadcast;

use super::Change;

/// The buffer of a feed narrower than a resource (one namespace of it): such a feed carries a
/// fraction of the resource's changes, and there may be several per member cluster (its
/// Works, ServiceExports, EndpointSlices…). A watcher that falls this far behind catches up
/// from the history (or the store's event log) after its last change. The buffer is allocated
/// whole: at 1,024 slots the feeds of 1,000 push members held about 150 MB of an idle hub's
/// memory, at 256 about 40 MB.
pub const NARROW_CAPACITY: usize = 32;

pub(super) struct Feeds {
    by_dir: Mutex<HashMap<String, broadcast::Sender<Arc<Change>>>>,
    /// The buffer of the whole store's and each resource's feed.
    buffer: usize,
}

impl Feeds {
    /// Feeds whose whole-store and per-resource buffers hold `buffer` changes.
    pub fn new(buffer: usize) -> Feeds {
        Feeds {
            by_dir: Mutex::default(),
            buffer: buffer.max(1),
        }
    }

    /// A receiver of the changes under `dir` (a directory: ends with '/').
    pub fn subscribe(&self, dir: &str) -> broadcast::Receiver<Arc<Change>> {
        let mut feeds = self.by_dir.lock();
        if let Some(tx) = feeds.get(dir) {
            return tx.subscribe();
        }
        let (tx, rx) = broadcast::channel(capacity(dir, self.buffer));
        feeds.insert(dir.to_owned(), tx);
        rx
    }

    /// Send `change` to the feeds of every directory holding its key; drop feeds nobody
    /// receives any more.
    pub fn send(&self, change: &Arc<Change>) {
        let key = change.object.key.as_str();
        let mut feeds = self.by_dir.lock();
        let mut unwatched = Vec::new();
        for (i, _) in key.match_indices('/') {
            let dir = &key[..=i];
            if let Some(tx) = feeds.get(dir) {
                if tx.send(change.clone()).is_err() {
                    unwatched.push(dir.to_owned());
                }
            }
        }
        for dir in unwatched {
            feeds.remove(&dir);
        }
    }
}

/// The whole store and each resource get the full `buffer`; narrower directories a small one.
fn capacity(dir: &str, buffer: usize) -> usize {
    // "/registry/" has 2 slashes, "/registry/apps/deployments/" 4.
    if dir.matches('/').count() <= 4 {
        buffer
    } else {
        buffer.min(NARROW_CAPACITY)
    }
}

#[cfg(test)]
mod tests {
    use super::capacity;
    use crate::cache::BROADCAST_CAPACITY;

    #[test]
    fn resources_get_the_full_buffer_and_namespaces_a_small_one() {
        let full = BROADCAST_CAPACITY;
        assert_eq!(capacity("/registry/", full), full);
        assert_eq!(capacity("/registry/apps/deployments/", full), full);
        assert_eq!(
            capacity("/registry/apps/deployments/demo/", full),
            super::NARROW_CAPACITY
        );
        assert_eq!(capacity("/registry/apps/deployments/demo/", 16), 16);
    }
}
