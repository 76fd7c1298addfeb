//! Watch feeds for the propagation controllers: a watcher that fills a reflector store and,
//! optionally, says "something changed" to the controllers that reconcile everything on it.

use std::fmt::Debug;
use std::hash::Hash;

use futures::StreamExt;
use kube::runtime::reflector::store::Writer;
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::broadcast;

/// Keeps `writer`'s store filled from `api` (with backoff), sending on `notify` after every
/// event; runs until dropped.
pub async fn feed<K>(api: Api<K>, writer: Writer<K>, notify: Option<broadcast::Sender<()>>)
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Send + Sync,
{
    watcher(api, watcher::Config::default())
        .default_backoff()
        .reflect(writer)
        .for_each(|_| {
            if let Some(n) = &notify {
                let _ = n.send(());
            }
            futures::future::ready(())
        })
        .await;
}

/// As [`feed`], but sends on `notify` only when `digest` of an object (by name) changes: the
/// part of it the listening controllers depend on.
pub async fn feed_on_change<K>(
    api: Api<K>,
    writer: Writer<K>,
    notify: broadcast::Sender<()>,
    digest: impl Fn(&K) -> u64,
) where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Send + Sync,
{
    let mut seen: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    watcher(api, watcher::Config::default())
        .default_backoff()
        .reflect(writer)
        .applied_objects()
        .for_each(|o| {
            if let Ok(o) = o {
                let d = digest(&o);
                let name = o.meta().name.clone().unwrap_or_default();
                if seen.insert(name, d) != Some(d) {
                    let _ = notify.send(());
                }
            }
            futures::future::ready(())
        })
        .await;
}
