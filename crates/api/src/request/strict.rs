//! Duplicate fields in a request body, found as kube-apiserver's strict decoders find them.
//!
//! A JSON library keeps the last of two equal keys without a word, so the body is read a second
//! time by a visitor that remembers the keys of every object it walks. JSON duplicates are
//! named by their path in Go's notation (`spec.replicas`, `spec.containers[0].name`) and
//! worded `duplicate field "spec.replicas"`; YAML duplicates by their line, worded as the YAML
//! library kube-apiserver uses words them (`line 9: key "foo" already set in map`, under
//! `yaml: unmarshal errors:`).

mod quick;

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The heading of a YAML strict decoding error.
pub const YAML_ERRORS: &str = "yaml: unmarshal errors:";

/// Kube-apiserver's decoders stop collecting strict errors at this many.
const MAX_ERRORS: usize = 100;

/// A YAML duplicate's line costs a reading of the body: a body with more duplicates than this
/// has the first ones listed (no client sends so many; a hostile body must not cost a hundred
/// readings).
const MAX_YAML_LINES: usize = 16;

/// The duplicates of a JSON body: each `duplicate field "<path>"`, in the order they come.
/// Empty for a body that is not JSON (its decoding error is the decoder's to report).
pub fn json_duplicates(bytes: &[u8]) -> Vec<String> {
    if !quick::has_json_duplicates(bytes) {
        return Vec::new();
    }
    let mut found = Found::default();
    let mut d = serde_json::Deserializer::from_slice(bytes);
    let _ = Walk {
        path: String::new(),
        found: &mut found,
    }
    .deserialize(&mut d);
    found
        .paths
        .into_iter()
        .map(|p| format!("duplicate field {p:?}"))
        .collect()
}

/// Every key path of a JSON body in the order the body has them, repeats included (to put
/// other findings in the body's order).
pub fn json_key_order(bytes: &[u8]) -> Vec<String> {
    let mut found = Found {
        every: Some(Vec::new()),
        ..Found::default()
    };
    let mut d = serde_json::Deserializer::from_slice(bytes);
    let _ = Walk {
        path: String::new(),
        found: &mut found,
    }
    .deserialize(&mut d);
    found.every.unwrap_or_default()
}

/// The duplicates of a YAML body as one error in the YAML library's words
/// (`yaml: unmarshal errors:\n  line 9: key "foo" already set in map`), or `None`.
pub fn yaml_duplicates(text: &str) -> Option<String> {
    // Most YAML bodies are JSON (kubectl and the client libraries send server-side applies
    // so), and a JSON document repeats a key for YAML exactly when it does for JSON: the JSON
    // pass is far cheaper than the YAML parser, which then only reads bodies that repeat one.
    if quick::json_verdict(text.as_bytes()) == Some(false) {
        return None;
    }
    let mut found = Found::default();
    let _ = walk_yaml(text, &mut found);
    if found.paths.is_empty() {
        return None;
    }
    let mut lines = Vec::new();
    for (i, key) in found.keys.iter().enumerate().take(MAX_YAML_LINES) {
        // The parser's position is known only from its errors: walk again, stopping at the
        // i-th duplicate, and read where the stop was.
        let mut stop = Found {
            stop_at: Some(i),
            ..Found::default()
        };
        let line = match walk_yaml(text, &mut stop) {
            Err(e) => e.location().map(|l| l.line()).unwrap_or(0),
            Ok(()) => 0,
        };
        lines.push(format!("  line {line}: key {key} already set in map"));
    }
    Some(format!("{YAML_ERRORS}\n{}", lines.join("\n")))
}

/// The lines of a YAML strict decoding error, each a warning of its own as kube-apiserver
/// sends them (`line 9: key "foo" already set in map`).
pub fn yaml_warnings(error: &str) -> Vec<String> {
    let body = error
        .strip_prefix("error converting YAML to JSON: ")
        .unwrap_or(error);
    match body.strip_prefix(YAML_ERRORS) {
        Some(rest) => rest
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect(),
        None => vec![error.to_string()],
    }
}

fn walk_yaml(text: &str, found: &mut Found) -> Result<(), serde_yaml::Error> {
    // One document: a body of several is refused by the decoder before this matters.
    match serde_yaml::Deserializer::from_str(text).next() {
        Some(doc) => Walk {
            path: String::new(),
            found,
        }
        .deserialize(doc)
        .map(|_| ()),
        None => Ok(()),
    }
}

/// What a walk found.
#[derive(Default)]
struct Found {
    /// Paths of the duplicates, in order.
    paths: Vec<String>,
    /// Each duplicate's key as Go's `%#v` prints it (`"foo"`, `9`).
    keys: Vec<String>,
    /// Stop with an error at this duplicate (to learn the YAML parser's position there).
    stop_at: Option<usize>,
    /// Every key path met, when asked for.
    every: Option<Vec<String>>,
}

/// A visitor that walks a value, remembering the keys of each object it meets.
struct Walk<'a> {
    path: String,
    found: &'a mut Found,
}

impl Walk<'_> {
    fn child(&mut self, segment: &str) -> Walk<'_> {
        Walk {
            path: format!("{}{segment}", self.path),
            found: self.found,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
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
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        while seq
            .next_element_seed(self.child(&format!("[{i}]")))?
            .is_some()
        {
            i += 1;
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<Key>()? {
            let segment = if self.path.is_empty() {
                key.text.clone()
            } else {
                format!(".{}", key.text)
            };
            let path = format!("{}{segment}", self.path);
            if let Some(every) = self.found.every.as_mut() {
                every.push(path.clone());
            }
            // Equal errors are reported once, as kube-apiserver's decoder does.
            if !seen.insert(key.text.clone())
                && !self.found.paths.contains(&path)
                && self.found.paths.len() < MAX_ERRORS
            {
                if self.found.stop_at == Some(self.found.paths.len()) {
                    // The YAML library names the line of the duplicate's value.
                    return map.next_value_seed(Stop);
                }
                self.found.paths.push(path);
                self.found.keys.push(key.go);
            }
            map.next_value_seed(self.child(&segment))?;
        }
        Ok(())
    }
}

/// A value that stops the walk with an error where it starts.
struct Stop;

impl<'de> DeserializeSeed<'de> for Stop {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(Stop)
    }
}

impl<'de> Visitor<'de> for Stop {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("nothing: the walk stops here")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Err(E::custom("stop"))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Err(E::custom("stop"))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Err(E::custom("stop"))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Err(E::custom("stop"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Err(E::custom("stop"))
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Err(E::custom("stop"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(de::Error::custom("stop"))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(de::Error::custom("stop"))
    }
}

/// A map key: its text, and how Go's `%#v` shows it (quoted if a string).
struct Key {
    text: String,
    go: String,
}

impl<'de> de::Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        d.deserialize_any(KeyVisitor)
    }
}

struct KeyVisitor;

impl KeyVisitor {
    fn plain<E>(text: String) -> Result<Key, E> {
        Ok(Key {
            go: text.clone(),
            text,
        })
    }
}

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map key")
    }

    fn visit_str<E>(self, v: &str) -> Result<Key, E> {
        Ok(Key {
            text: v.to_string(),
            go: format!("{v:?}"),
        })
    }
    fn visit_bool<E>(self, v: bool) -> Result<Key, E> {
        Self::plain(v.to_string())
    }
    fn visit_i64<E>(self, v: i64) -> Result<Key, E> {
        Self::plain(v.to_string())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Key, E> {
        Self::plain(v.to_string())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Key, E> {
        Self::plain(v.to_string())
    }
    fn visit_unit<E>(self) -> Result<Key, E> {
        Self::plain("<nil>".into())
    }
    // A key that is itself a list or a map (YAML allows it): no JSON object has one, so it
    // is the decoder's to refuse; here it only must not stop the walk.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Key, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Self::plain("[...]".into())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Key, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Self::plain("{...}".into())
    }
}

#[cfg(test)]
mod tests;
