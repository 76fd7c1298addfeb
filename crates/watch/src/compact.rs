//! [`Compact`]: an object of a typed kind kept with its metadata typed and the rest as JSON
//! [`Text`], a `Resource` like the kind itself, so a kube-runtime `Controller` and a reflector
//! store run over it and a reconciler [`unpack`](Compact::unpack)s the object it is given.
//!
//! A typed object costs several times its JSON: a ResourceBinding is 1.4 KB before any of its
//! strings, maps and lists, each an allocation of its own, and about 4 KB in all in a store.
//! The process keeps every binding of the fleet in one [`Informer`](crate::Informer) and its
//! readers parse one when they reconcile it (a few tens of microseconds), so the text (a few
//! hundred bytes compressed against the store's [`Dictionary`]) is the better trade.

use std::borrow::Cow;
use std::marker::PhantomData;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::runtime::watcher;
use kube::Resource;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::meta::{self, Typed};
use crate::text::{Dictionary, Text};

/// An object of kind `K`: its identity and annotations typed (its [`Resource::meta`] has
/// nothing else), the rest of it — labels, owners, finalizers, spec, status — as JSON text.
pub struct Compact<K> {
    metadata: ObjectMeta,
    rest: Text,
    _kind: PhantomData<fn() -> K>,
}

impl<K> Clone for Compact<K> {
    fn clone(&self) -> Self {
        Compact {
            metadata: self.metadata.clone(),
            rest: self.rest.clone(),
            _kind: PhantomData,
        }
    }
}

impl<K> std::fmt::Debug for Compact<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compact")
            .field("metadata", &self.metadata)
            .field("rest", &self.rest)
            .finish()
    }
}

impl<K> Compact<K>
where
    K: Resource + Serialize + DeserializeOwned,
{
    /// Packs `o` as it is (make it lean first), compressed against `dictionary` (kept by whoever
    /// packs the objects of one store, learned from the first ones).
    pub fn pack(mut o: K, dictionary: &mut Dictionary) -> Compact<K> {
        let whole = std::mem::take(o.meta_mut());
        let mut rest = match serde_json::to_value(&o) {
            Ok(Value::Object(map)) => map,
            // A Kubernetes object serializes to a JSON object.
            _ => serde_json::Map::new(),
        };
        let metadata = meta::split(whole, Typed::WithAnnotations, &mut rest);
        // A map of JSON values always serializes.
        let text = serde_json::to_vec(&rest).unwrap_or_default();
        Compact {
            metadata,
            rest: Text::new(&text, dictionary.learn(&text)),
            _kind: PhantomData,
        }
    }

    /// The object, parsed again.
    pub fn unpack(&self) -> serde_json::Result<K> {
        let mut rest: serde_json::Map<String, Value> = serde_json::from_slice(&self.rest.json())?;
        meta::join(&self.metadata, &mut rest)?;
        serde_json::from_value(Value::Object(rest))
    }

    /// As [`Compact::pack`], for every object of a watch event.
    pub fn pack_event(
        event: watcher::Event<K>,
        dictionary: &mut Dictionary,
    ) -> watcher::Event<Self> {
        use watcher::Event::*;
        match event {
            Apply(o) => Apply(Self::pack(o, dictionary)),
            Delete(o) => Delete(Self::pack(o, dictionary)),
            InitApply(o) => InitApply(Self::pack(o, dictionary)),
            Init => Init,
            InitDone => InitDone,
        }
    }
}

/// As `K`, packed (a kube-runtime `Controller` asks for it; the informer packs what it
/// watches itself, against its store's dictionary).
impl<'de, K> Deserialize<'de> for Compact<K>
where
    K: Resource + Serialize + DeserializeOwned,
{
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // One object alone: nothing to learn a dictionary from.
        K::deserialize(d).map(|o| Compact::pack(o, &mut Dictionary::default()))
    }
}

/// Of kind `K`.
impl<K> Resource for Compact<K>
where
    K: Resource<DynamicType = ()>,
{
    type DynamicType = ();
    type Scope = K::Scope;

    fn kind(dt: &()) -> Cow<'_, str> {
        K::kind(dt)
    }

    fn group(dt: &()) -> Cow<'_, str> {
        K::group(dt)
    }

    fn version(dt: &()) -> Cow<'_, str> {
        K::version(dt)
    }

    fn api_version(dt: &()) -> Cow<'_, str> {
        K::api_version(dt)
    }

    fn plural(dt: &()) -> Cow<'_, str> {
        K::plural(dt)
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[cfg(test)]
mod tests;
