//! Subscriptions to the watch cache: the changes under a directory from a resourceVersion
//! (replayed from the history kept in memory, or from the store's event log when older), then
//! the live ones.

use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use tokio::sync::broadcast;

use flotilla_store::Revision;

use super::{sealed, successor, Cache, CachedObject, Change, ChangeKind};
use crate::error::{ApiError, Result};

/// A subscription: changes to replay first, then live ones.
pub struct Subscription {
    /// Changes already past, in order.
    pub replay: Vec<Arc<Change>>,
    /// Live changes after the replay.
    pub live: broadcast::Receiver<Arc<Change>>,
    /// Revision the replay ends at.
    pub revision: Revision,
}

impl Cache {
    /// Subscribe to changes under `prefix`, a directory as for [`Cache::list`]: `from = Some(rv)`
    /// replays history after `rv` (410 Gone when it is no longer kept); `None` replays the
    /// current state as additions.
    pub fn subscribe(&self, prefix: &str, from: Option<Revision>) -> Result<Subscription> {
        debug_assert!(prefix.ends_with('/'), "not a directory: {prefix}");
        let st = self.state.read();
        let replay = match from {
            Some(rv) if rv < st.history_start => {
                return Err(ApiError::gone(format!(
                    "too old resource version: {rv} ({})",
                    st.history_start + 1
                )))
            }
            Some(rv) => {
                // The history is in revision order: start past `rv` rather than scan it all
                // (a watch that fell behind its feed resumes from here, mid-history).
                let first = st.history.partition_point(|(_, c)| c.revision <= rv);
                st.history
                    .range(first..)
                    .map(|(_, c)| c)
                    .filter(|c| c.object.key.starts_with(prefix))
                    .cloned()
                    .collect()
            }
            None => {
                let end = successor(prefix);
                st.objects
                    .range(prefix.to_string()..end)
                    .map(|(_, o)| {
                        Arc::new(Change {
                            revision: o.mod_revision,
                            kind: ChangeKind::Added,
                            object: o.clone(),
                            prev: None,
                        })
                    })
                    .collect()
            }
        };
        Ok(Subscription {
            replay,
            live: self.feeds.subscribe(prefix),
            revision: st.revision,
        })
    }

    /// As [`Cache::subscribe`], but a resourceVersion older than the history kept in memory
    /// (for instance from before the hub restarted) is replayed from the store's event log, as
    /// etcd serves a watch from any revision it has not compacted: informers resume instead of
    /// re-listing. 410 Gone only for revisions the store has compacted.
    pub async fn subscribe_replaying(
        &self,
        prefix: &str,
        from: Option<Revision>,
    ) -> Result<Subscription> {
        let rv = match (from, self.subscribe(prefix, from)) {
            (Some(rv), Err(e)) if e.code == 410 => rv,
            (_, r) => return r,
        };
        let gone = |compacted: Revision| {
            ApiError::gone(format!(
                "too old resource version: {rv} ({})",
                compacted + 1
            ))
        };
        if rv < self.store.compacted_revision() {
            return Err(gone(self.store.compacted_revision()));
        }
        // The live feed and the in-memory history are taken together under the lock (every
        // change is sent under it), so the log only has to fill (rv, history_start].
        let (mut sub, upto) = {
            let st = self.state.read();
            let sub = Subscription {
                replay: st
                    .history
                    .iter()
                    .map(|(_, c)| c)
                    .filter(|c| c.object.key.starts_with(prefix))
                    .cloned()
                    .collect(),
                live: self.feeds.subscribe(prefix),
                revision: st.revision,
            };
            (sub, st.history_start)
        };
        let mut older = Vec::new();
        let mut events = self.store.watch(rv);
        while let Some(ev) = events.next().await {
            let ev = match ev {
                Ok(ev) => ev,
                Err(flotilla_store::Error::Compacted { .. }) => {
                    return Err(gone(self.store.compacted_revision()))
                }
                Err(e) => {
                    return Err(ApiError::internal(format!(
                        "replaying the event log from {rv}: {e}"
                    )))
                }
            };
            let revision = ev.revision;
            if revision > upto {
                break;
            }
            if ev.key.starts_with(prefix) {
                older.push(Arc::new(logged_change(&self.sealed, ev)?));
            }
            if revision == upto {
                break;
            }
        }
        older.append(&mut sub.replay);
        sub.replay = older;
        Ok(sub)
    }
}

/// A change read back from the store's event log, as [`Cache::apply`] would have made it.
fn logged_change(sealed: &sealed::Sealed, ev: flotilla_store::Event) -> Result<Change> {
    let decode = |raw: Bytes, revision: Revision| {
        let raw = sealed.open(&ev.key, raw, false)?;
        CachedObject::new(ev.key.clone(), raw, revision)
            .map_err(|e| ApiError::internal(format!("logged object {} is not JSON: {e}", ev.key)))
    };
    let kind = ChangeKind::of(ev.kind, ev.prev_value.is_some());
    // The previous state's own revision is not in the event; it is only read by selectors.
    let prev = match ev.prev_value.clone() {
        Some(raw) => Some(Arc::new(decode(raw, ev.revision)?)),
        None => None,
    };
    Ok(Change {
        revision: ev.revision,
        kind,
        object: Arc::new(decode(ev.value.clone(), ev.revision)?),
        prev,
    })
}
