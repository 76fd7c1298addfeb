//! Whether a JSON body has a duplicate key at all, without naming it: every create and update
//! at the default `fieldValidation` (Warn) asks, and almost no body has one, so this pass
//! builds no paths and copies no keys that need no unescaping; only a body that has one is
//! walked again to name its duplicates.

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// Maps with more keys than this remember them in a hash set, smaller ones in a list.
const LINEAR: usize = 16;

/// Does the JSON `bytes` repeat a key in some object? False for a body that is not JSON up to
/// its first duplicate (the walk that names duplicates would find none there either).
pub(super) fn has_json_duplicates(bytes: &[u8]) -> bool {
    json_verdict(bytes) == Some(true)
}

/// Is `bytes` one JSON value without a repeated key (`Some(false)`), or with one
/// (`Some(true)`)? `None` for a body that is not JSON.
pub(super) fn json_verdict(bytes: &[u8]) -> Option<bool> {
    let found = Cell::new(false);
    let mut d = serde_json::Deserializer::from_slice(bytes);
    // The first duplicate ends the walk with an error; `found` tells it from a bad body.
    let walked = Quick(&found).deserialize(&mut d);
    if found.get() {
        return Some(true);
    }
    (walked.is_ok() && d.end().is_ok()).then_some(false)
}

/// A visitor that sets its flag, and stops, at the first duplicate below where it starts.
#[derive(Clone, Copy)]
struct Quick<'a>(&'a Cell<bool>);

impl<'de> DeserializeSeed<'de> for Quick<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Quick<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut few: Vec<Cow<'de, str>> = Vec::new();
        let mut many: std::collections::HashSet<Cow<'de, str>> = Default::default();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let repeated = if many.is_empty() && few.len() < LINEAR {
                let seen = few.contains(&key);
                few.push(key);
                seen
            } else {
                many.extend(few.drain(..));
                !many.insert(key)
            };
            if repeated {
                self.0.set(true);
                return Err(de::Error::custom("duplicate key"));
            }
            map.next_value_seed(self)?;
        }
        Ok(())
    }
}

/// An object key, borrowed from the body unless it had escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(v)))
    }
}

#[cfg(test)]
mod tests;
