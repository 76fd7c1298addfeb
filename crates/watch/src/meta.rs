//! How [`Compact`](crate::Compact) and [`PackedObject`](crate::PackedObject) keep an object's
//! metadata: the identity a reflector store and a kube-runtime `Controller` read stays typed,
//! the rest travels with the packed text.
//!
//! Typed metadata is dear: every map (labels, annotations) is a B-tree node of room for eleven
//! entries, about 550 bytes whatever it holds, and every list and string an allocation of its
//! own; an annotation such as kubectl's `last-applied-configuration` is the whole object again,
//! uncompressed. In the packed text they cost what they compress to.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Map, Value};

/// What of an object's metadata stays typed besides its identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Typed {
    /// The identity only: name, namespace, uid, resourceVersion, generation and
    /// deletionTimestamp.
    Identity,
    /// The identity and the annotations, for readers that look at an annotation of every
    /// object without parsing it.
    WithAnnotations,
}

/// Splits `meta` into its typed part, as `typed` says, which it returns, and the rest, which
/// becomes the `metadata` field of the object's other fields `packed` (none when nothing is
/// left).
pub(crate) fn split(meta: ObjectMeta, typed: Typed, packed: &mut Map<String, Value>) -> ObjectMeta {
    let (kept, rest) = divide(meta, typed);
    packed.remove("metadata");
    if !rest.is_empty() {
        packed.insert("metadata".into(), Value::Object(rest));
    }
    kept
}

/// Puts the whole metadata back into `packed` (what [`split`] left there): `typed` with the
/// `metadata` field merged in.
pub(crate) fn join(typed: &ObjectMeta, packed: &mut Map<String, Value>) -> serde_json::Result<()> {
    let mut meta = match serde_json::to_value(typed)? {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    if let Some(Value::Object(rest)) = packed.remove("metadata") {
        meta.extend(rest);
    }
    packed.insert("metadata".into(), Value::Object(meta));
    Ok(())
}

/// `meta`'s typed part, as `typed` says, and the rest as JSON fields.
fn divide(mut meta: ObjectMeta, typed: Typed) -> (ObjectMeta, Map<String, Value>) {
    let kept = ObjectMeta {
        name: meta.name.take(),
        namespace: meta.namespace.take(),
        uid: meta.uid.take(),
        resource_version: meta.resource_version.take(),
        generation: meta.generation.take(),
        deletion_timestamp: meta.deletion_timestamp.take(),
        annotations: match typed {
            Typed::WithAnnotations => meta.annotations.take(),
            Typed::Identity => None,
        },
        ..ObjectMeta::default()
    };
    let rest = match serde_json::to_value(&meta) {
        Ok(Value::Object(map)) => map,
        // Metadata serializes to a JSON object.
        _ => Map::new(),
    };
    (kept, rest)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    use super::*;

    fn meta() -> ObjectMeta {
        ObjectMeta {
            name: Some("web".into()),
            namespace: Some("shop".into()),
            uid: Some("u-1".into()),
            resource_version: Some("42".into()),
            generation: Some(3),
            labels: Some(BTreeMap::from([("app".into(), "web".into())])),
            annotations: Some(BTreeMap::from([("a".into(), "1".into())])),
            finalizers: Some(vec!["f".into()]),
            owner_references: Some(vec![OwnerReference {
                api_version: "apps/v1".into(),
                kind: "Deployment".into(),
                name: "web".into(),
                uid: "u-0".into(),
                ..OwnerReference::default()
            }]),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn identity_stays_typed_and_the_rest_joins_back_whole() {
        for typed in [Typed::Identity, Typed::WithAnnotations] {
            let mut packed = Map::new();
            packed.insert("spec".into(), Value::from(1));
            let kept = split(meta(), typed, &mut packed);
            assert_eq!(kept.name.as_deref(), Some("web"));
            assert_eq!(kept.namespace.as_deref(), Some("shop"));
            assert_eq!(kept.resource_version.as_deref(), Some("42"));
            assert_eq!(kept.generation, Some(3));
            assert!(kept.labels.is_none() && kept.owner_references.is_none());
            assert!(kept.finalizers.is_none());
            assert_eq!(
                kept.annotations.is_some(),
                typed == Typed::WithAnnotations,
                "{typed:?}"
            );
            let rest = &packed["metadata"];
            assert!(rest.get("labels").is_some() && rest.get("name").is_none());
            join(&kept, &mut packed).unwrap();
            assert_eq!(packed["spec"], Value::from(1), "{typed:?}");
            let whole: ObjectMeta = serde_json::from_value(packed["metadata"].clone()).unwrap();
            assert_eq!(whole, meta(), "{typed:?}");
        }
    }
}
