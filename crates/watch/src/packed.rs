//! [`Packed`]: a store that keeps each object as its compact JSON text, parsed again when read.
//!
//! A typed object costs several times its JSON text in memory: every map of it (labels,
//! annotations, each object inside a manifest) is an allocation of its own with room to spare,
//! every string another. A Work of 2 KB of JSON held about 11 KB in a reflector store, and
//! the hub keeps every Work of the fleet. For stores that are large and read a few objects at
//! a time (a binding's Works when it is reconciled, one Work when a worker applies it) the
//! text is the better trade: a parse of a few microseconds per read for a third or less of
//! the memory, and less again compressed ([`Text`]).
//!
//! Fed with watch events, as a reflector store is: a relist (`Init` … `InitDone`) replaces
//! the whole set at its end, so objects deleted while the watch was down leave it; the store
//! is ready after its first complete list. Objects are kept as given: make them lean first.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Arc;

use kube::runtime::watcher;
use kube::Resource;
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::sync::watch;

use crate::text::{Dictionary, Text};

/// An object's key: its namespace ("" for cluster-scoped objects) and name.
type Key = (Box<str>, Box<str>);

/// Objects of kind `K` kept as compact JSON [`Text`]. Clones share the store.
pub struct Packed<K> {
    inner: Arc<Inner>,
    _kind: PhantomData<fn() -> K>,
}

struct Inner {
    state: Mutex<State>,
    ready: watch::Sender<bool>,
}

#[derive(Default)]
struct State {
    objects: HashMap<Key, Text>,
    /// The objects of a relist in progress, replacing `objects` at its end.
    relist: Option<HashMap<Key, Text>>,
    /// What the objects' text is compressed against.
    dictionary: Dictionary,
}

impl<K> Clone for Packed<K> {
    fn clone(&self) -> Self {
        Packed {
            inner: self.inner.clone(),
            _kind: PhantomData,
        }
    }
}

impl<K> Default for Packed<K> {
    fn default() -> Self {
        Packed {
            inner: Arc::new(Inner {
                state: Mutex::default(),
                ready: watch::channel(false).0,
            }),
            _kind: PhantomData,
        }
    }
}

impl State {
    /// `json` as kept: compressed against the store's dictionary (learning it from the
    /// first objects).
    fn keep(&mut self, json: &[u8]) -> Text {
        let dict = self.dictionary.learn(json);
        Text::new(json, dict)
    }
}

fn key(namespace: Option<&str>, name: &str) -> Key {
    (namespace.unwrap_or_default().into(), name.into())
}

impl<K> Packed<K>
where
    K: Resource + Serialize + DeserializeOwned,
{
    /// Applies one watch event.
    pub fn apply(&self, event: &watcher::Event<K>) {
        // Serialized before the lock is taken; compressed under it (a few microseconds).
        let json = |o: &K| -> Option<(Key, Vec<u8>)> {
            let meta = o.meta();
            let name = meta.name.as_deref()?;
            match serde_json::to_vec(o) {
                Ok(json) => Some((key(meta.namespace.as_deref(), name), json)),
                Err(e) => {
                    tracing::error!(name, error = %e, "cannot keep an object: it does not serialize");
                    None
                }
            }
        };
        match event {
            watcher::Event::Init => self.inner.state.lock().relist = Some(HashMap::new()),
            watcher::Event::InitApply(o) => {
                if let Some((k, json)) = json(o) {
                    let mut st = self.inner.state.lock();
                    let text = st.keep(&json);
                    st.relist.get_or_insert_with(HashMap::new).insert(k, text);
                }
            }
            watcher::Event::InitDone => {
                let mut st = self.inner.state.lock();
                if let Some(listed) = st.relist.take() {
                    st.objects = listed;
                }
                drop(st);
                self.inner.ready.send_replace(true);
            }
            watcher::Event::Apply(o) => {
                if let Some((k, json)) = json(o) {
                    let mut st = self.inner.state.lock();
                    let text = st.keep(&json);
                    st.objects.insert(k, text);
                }
            }
            watcher::Event::Delete(o) => {
                let meta = o.meta();
                if let Some(name) = meta.name.as_deref() {
                    let k = key(meta.namespace.as_deref(), name);
                    self.inner.state.lock().objects.remove(&k);
                }
            }
        }
    }

    /// The object `name` in `namespace` (`None` for a cluster-scoped one), parsed.
    pub fn get(&self, namespace: Option<&str>, name: &str) -> Option<K> {
        let k = key(namespace, name);
        // Parsed outside the lock: the watch feeding the store does not wait for readers.
        let text = self.inner.state.lock().objects.get(&k)?.clone();
        match serde_json::from_slice(&text.json()) {
            Ok(o) => Some(o),
            Err(e) => {
                // Text this store wrote from a `K`: only a type whose serialization does not
                // round-trip gets here.
                tracing::error!(namespace = %k.0, name, error = %e, "a kept object does not parse back");
                None
            }
        }
    }

    /// Whether the object `name` in `namespace` is kept (without parsing it).
    pub fn contains(&self, namespace: Option<&str>, name: &str) -> bool {
        self.inner
            .state
            .lock()
            .objects
            .contains_key(&key(namespace, name))
    }

    /// The namespace ("" when cluster-scoped) and name of every object kept.
    pub fn keys(&self) -> Vec<(String, String)> {
        let st = self.inner.state.lock();
        st.objects
            .keys()
            .map(|(ns, name)| (ns.to_string(), name.to_string()))
            .collect()
    }

    /// The names of the objects kept in `namespace`.
    pub fn names_in(&self, namespace: &str) -> Vec<String> {
        let st = self.inner.state.lock();
        st.objects
            .keys()
            .filter(|(ns, _)| &**ns == namespace)
            .map(|(_, name)| name.to_string())
            .collect()
    }

    /// How many objects are kept.
    pub fn len(&self) -> usize {
        self.inner.state.lock().objects.len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waits until the store has been filled by a complete list once.
    pub async fn ready(&self) {
        let mut rx = self.inner.ready.subscribe();
        // The sender lives as long as `self`.
        let _ = rx.wait_for(|ready| *ready).await;
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};

    use super::*;

    fn cm(ns: &str, name: &str, v: &str) -> ConfigMap {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns, "labels": {"app": "x"}},
            "data": {"v": v},
        }))
        .expect("a ConfigMap")
    }

    fn value(p: &Packed<ConfigMap>, ns: &str, name: &str) -> Option<String> {
        p.get(Some(ns), name)
            .and_then(|c| c.data.and_then(|d| d.get("v").cloned()))
    }

    #[tokio::test]
    async fn keeps_what_the_watch_says_and_a_relist_replaces_it_at_its_end() {
        let p = Packed::<ConfigMap>::default();
        let ready = {
            let p = p.clone();
            tokio::spawn(async move { p.ready().await })
        };
        p.apply(&watcher::Event::Init);
        p.apply(&watcher::Event::InitApply(cm("a", "one", "1")));
        assert!(
            !ready.is_finished() && p.is_empty(),
            "not before the list ends"
        );
        p.apply(&watcher::Event::InitDone);
        ready.await.expect("ready after the first list");
        assert_eq!(value(&p, "a", "one").as_deref(), Some("1"));

        p.apply(&watcher::Event::Apply(cm("a", "one", "2")));
        p.apply(&watcher::Event::Apply(cm("b", "one", "3")));
        assert_eq!(value(&p, "a", "one").as_deref(), Some("2"), "changed");
        assert_eq!(value(&p, "b", "one").as_deref(), Some("3"), "by namespace");
        let back = p.get(Some("a"), "one").expect("kept");
        assert_eq!(back, cm("a", "one", "2"), "whole, as given");
        p.apply(&watcher::Event::Delete(cm("a", "one", "2")));
        assert!(!p.contains(Some("a"), "one"));

        // "b/one" was deleted while the watch was down, "c/two" created.
        p.apply(&watcher::Event::Init);
        p.apply(&watcher::Event::InitApply(cm("c", "two", "4")));
        assert!(
            p.contains(Some("b"), "one"),
            "kept until the relist is done"
        );
        assert!(!p.contains(Some("c"), "two"));
        p.apply(&watcher::Event::InitDone);
        assert_eq!(p.keys(), vec![("c".to_owned(), "two".to_owned())]);
        assert_eq!(p.len(), 1);
    }

    #[test]
    fn cluster_scoped_objects_have_no_namespace() {
        let p = Packed::<Namespace>::default();
        let ns: Namespace = serde_json::from_value(serde_json::json!({
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"},
        }))
        .expect("a Namespace");
        p.apply(&watcher::Event::Apply(ns.clone()));
        assert_eq!(p.get(None, "shop"), Some(ns));
        assert_eq!(p.keys(), vec![(String::new(), "shop".to_owned())]);
    }
}
