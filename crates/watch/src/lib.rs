//! Watch feeds shared by the hub's controllers and the member agent.
//!
//! A feed keeps a kube-runtime reflector store filled from one API (hub or member) and wakes
//! whoever reconciles from that store after every event, so a controller that recomputes
//! everything from its stores needs no per-object queue. Stores keep objects [`lean`]: no
//! reader needs `metadata.managedFields`, and with several field managers per object they are
//! a large part of what a store holds. [`coalesce`] gathers wake-ups that can wait a moment
//! (a parent's children reporting status) so one reconcile answers a burst. Large stores read
//! a few objects at a time keep them as JSON text instead ([`Packed`]; [`Compact`] and
//! [`PackedObject`] for objects of a typed kind or any kind in a reflector store).
//!
//! Between `flotilla-apis` (types, no I/O) and the crates that run loops: the agent and the
//! controllers both depend on it, neither on the other.
#![deny(missing_docs)]

use std::fmt::Debug;
use std::hash::Hash;
use std::sync::Arc;

mod coalesce;
mod compact;
mod fanout;
mod informer;
mod meta;
mod packed;
mod packed_object;
mod part;
pub mod quiet;
mod text;

pub use coalesce::coalesce;
pub use compact::Compact;
pub use fanout::{Events, Fanout};
pub use informer::{Change, Informer};
pub use packed::Packed;
pub use packed_object::PackedObject;
pub use part::{feed_part, Part, Sieve};
pub use text::Dictionary;

use futures::StreamExt;
use kube::runtime::reflector::store::Writer;
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::Notify;

/// Keeps `writer`'s store filled with `api`'s objects that `config` selects (watching with
/// kube's default backoff, so a lost connection is retried), kept [`lean`], and wakes `changed`
/// after every event. Runs until dropped.
pub async fn feed<K>(api: Api<K>, config: watcher::Config, writer: Writer<K>, changed: Arc<Notify>)
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone,
{
    feed_events(watcher(api, config).default_backoff(), writer, changed).await
}

/// As [`feed`], from `events` a watcher (or a [`Fanout`]'s reader) gives.
pub async fn feed_events<K, S>(events: S, writer: Writer<K>, changed: Arc<Notify>)
where
    K: Resource + Clone + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone,
    S: futures::Stream<Item = watcher::Result<watcher::Event<K>>>,
{
    events
        .modify(lean::<K>)
        .reflect(writer)
        .for_each(|event| {
            if event.is_ok() {
                changed.notify_one();
            }
            futures::future::ready(())
        })
        .await;
}

/// The events of `events`, a watch's, with its errors logged (as `watch`'s) and skipped: the
/// watch's own backoff retries after them.
pub(crate) fn ok_events<K, S>(
    events: S,
    watch: &'static str,
) -> impl futures::Stream<Item = watcher::Event<K>>
where
    K: Resource,
    K::DynamicType: Default,
    S: futures::Stream<Item = watcher::Result<watcher::Event<K>>>,
{
    events.filter_map(move |event| {
        futures::future::ready(match event {
            Ok(event) => Some(event),
            Err(e) => {
                tracing::warn!(kind = %K::kind(&Default::default()), error = %e, watch, "a watch failed; retrying");
                None
            }
        })
    })
}

/// Drops what no reader of a store needs from an object kept there: its managedFields.
pub fn lean<K: Resource>(o: &mut K) {
    o.meta_mut().managed_fields = None;
}
