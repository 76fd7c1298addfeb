//! [`PackedObject`]: an object of any kind, kept in a reflector store with its metadata typed
//! and the rest as JSON [`Text`].
//!
//! A `DynamicObject` holds its body as a `serde_json::Value`: every map and string of it an
//! allocation of its own, so a Deployment of 3 KB of JSON costs about 8 KB in a store. A
//! controller that watches every object of a kind, looks at each one's metadata on every
//! event and reads its body only when it does its work (the detector, for every template a
//! policy names) keeps this instead, and parses the body when it reads it.

use std::borrow::Cow;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::DynamicObject;
use kube::core::DynamicResourceScope;
use kube::discovery::ApiResource;
use kube::runtime::watcher;
use kube::Resource;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::meta::{self, Typed};
use crate::text::{Dictionary, Text};

/// An object with its identity typed (name, namespace, uid, resourceVersion, generation,
/// deletionTimestamp) and the rest of it (labels, annotations, owners, `spec`, …; not its
/// managedFields) kept as compact, possibly compressed, JSON text: [`PackedObject::to_value`]
/// has it all.
#[derive(Clone, Debug)]
pub struct PackedObject {
    /// The object's identity; its other metadata is in [`PackedObject::to_value`].
    pub metadata: ObjectMeta,
    rest: Text,
}

impl PackedObject {
    /// Packs `o`, leaving out its managedFields and the top-level fields `without` names
    /// (`status`, for a reader that never looks at it), compressed against `dictionary` (kept
    /// by whoever packs the objects of one kind, learned from the first ones).
    pub fn pack(o: DynamicObject, without: &[&str], dictionary: &mut Dictionary) -> PackedObject {
        let DynamicObject {
            types,
            mut metadata,
            mut data,
        } = o;
        metadata.managed_fields = None;
        let mut rest = match data.as_object_mut() {
            Some(map) => std::mem::take(map),
            None => serde_json::Map::new(),
        };
        let metadata = meta::split(metadata, Typed::Identity, &mut rest);
        for field in without {
            rest.remove(*field);
        }
        if let Some(t) = types {
            rest.insert("apiVersion".into(), t.api_version.into());
            rest.insert("kind".into(), t.kind.into());
        }
        // A map of JSON values always serializes.
        let text = serde_json::to_vec(&rest).unwrap_or_default();
        PackedObject {
            metadata,
            rest: Text::new(&text, dictionary.learn(&text)),
        }
    }

    /// The whole object as JSON: its metadata and the fields kept.
    pub fn to_value(&self) -> serde_json::Result<Value> {
        let mut v: Value = serde_json::from_slice(&self.rest.json())?;
        if let Some(map) = v.as_object_mut() {
            meta::join(&self.metadata, map)?;
        }
        Ok(v)
    }

    /// As [`PackedObject::pack`], for every object of a watch event.
    pub fn pack_event(
        event: watcher::Event<DynamicObject>,
        without: &[&str],
        dictionary: &mut Dictionary,
    ) -> watcher::Event<PackedObject> {
        use watcher::Event::*;
        match event {
            Apply(o) => Apply(Self::pack(o, without, dictionary)),
            Delete(o) => Delete(Self::pack(o, without, dictionary)),
            InitApply(o) => InitApply(Self::pack(o, without, dictionary)),
            Init => Init,
            InitDone => InitDone,
        }
    }
}

impl<'de> Deserialize<'de> for PackedObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // One object alone: nothing to learn a dictionary from.
        DynamicObject::deserialize(d)
            .map(|o| PackedObject::pack(o, &[], &mut Dictionary::default()))
    }
}

/// Of whatever kind its [`ApiResource`] says, as a `DynamicObject` (shared: every key in a
/// store carries it).
impl Resource for PackedObject {
    type DynamicType = Arc<ApiResource>;
    type Scope = DynamicResourceScope;

    fn group(dt: &Arc<ApiResource>) -> Cow<'_, str> {
        dt.group.as_str().into()
    }

    fn version(dt: &Arc<ApiResource>) -> Cow<'_, str> {
        dt.version.as_str().into()
    }

    fn kind(dt: &Arc<ApiResource>) -> Cow<'_, str> {
        dt.kind.as_str().into()
    }

    fn api_version(dt: &Arc<ApiResource>) -> Cow<'_, str> {
        dt.api_version.as_str().into()
    }

    fn plural(dt: &Arc<ApiResource>) -> Cow<'_, str> {
        dt.plural.as_str().into()
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
