//! Typed reads from one JSON object of a Swagger document, with errors that name the JSON path.

use serde_json::{Map, Value};

use super::model::{Any, NamedAny};
use crate::protobuf::yaml::to_yaml;
use crate::protobuf::ProtoError;

/// One JSON object of the document and where it sits (`#/definitions/io.k8s.api.core.v1.Pod`).
pub(super) struct At<'a> {
    pub map: &'a Map<String, Value>,
    pub path: String,
}

impl<'a> At<'a> {
    /// Views `value` as an object, or fails naming `path`.
    pub fn new(value: &'a Value, path: String) -> Result<Self, ProtoError> {
        match value {
            Value::Object(map) => Ok(At { map, path }),
            other => Err(ProtoError::ReadOpenApi {
                path,
                reason: format!("expected an object, found {}", kind_of(other)),
            }),
        }
    }

    /// The object under `key`, if present.
    pub fn child(&self, key: &str) -> Result<Option<At<'a>>, ProtoError> {
        self.map
            .get(key)
            .map(|v| At::new(v, self.sub(key)))
            .transpose()
    }

    /// The JSON path of `key` inside this object.
    pub fn sub(&self, key: &str) -> String {
        // JSON pointer escaping keeps paths like `/api/v1/pods` readable in error messages.
        format!(
            "{}/{}",
            self.path,
            key.replace('~', "~0").replace('/', "~1")
        )
    }

    /// An error about `key` of this object.
    pub fn error(&self, key: &str, reason: impl Into<String>) -> ProtoError {
        ProtoError::ReadOpenApi {
            path: self.sub(key),
            reason: reason.into(),
        }
    }

    /// A string field; empty when absent.
    pub fn string(&self, key: &str) -> Result<String, ProtoError> {
        match self.map.get(key) {
            None => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => {
                Err(self.error(key, format!("expected a string, found {}", kind_of(other))))
            }
        }
    }

    /// A boolean field; false when absent.
    pub fn boolean(&self, key: &str) -> Result<bool, ProtoError> {
        match self.map.get(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => {
                Err(self.error(key, format!("expected a boolean, found {}", kind_of(other))))
            }
        }
    }

    /// A number field; zero when absent.
    pub fn number(&self, key: &str) -> Result<f64, ProtoError> {
        match self.map.get(key) {
            None => Ok(0.0),
            Some(Value::Number(n)) => n
                .as_f64()
                .ok_or_else(|| self.error(key, "number out of range")),
            Some(other) => {
                Err(self.error(key, format!("expected a number, found {}", kind_of(other))))
            }
        }
    }

    /// An integer field; zero when absent.
    pub fn integer(&self, key: &str) -> Result<i64, ProtoError> {
        match self.map.get(key) {
            None => Ok(0),
            Some(Value::Number(n)) => n
                .as_i64()
                .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
                .ok_or_else(|| self.error(key, format!("expected an integer, found {n}"))),
            Some(other) => Err(self.error(
                key,
                format!("expected an integer, found {}", kind_of(other)),
            )),
        }
    }

    /// A schema's `type`: one name or a list of them.
    pub fn types(&self, key: &str) -> Result<Vec<String>, ProtoError> {
        match self.map.get(key) {
            Some(Value::String(s)) => Ok(vec![s.clone()]),
            _ => self.strings(key),
        }
    }

    /// A list of strings; empty when absent.
    pub fn strings(&self, key: &str) -> Result<Vec<String>, ProtoError> {
        match self.map.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(s) => Ok(s.clone()),
                    other => {
                        Err(self.error(key, format!("expected strings, found {}", kind_of(other))))
                    }
                })
                .collect(),
            Some(other) => Err(self.error(
                key,
                format!("expected a list of strings, found {}", kind_of(other)),
            )),
        }
    }

    /// Any value under `key`, as YAML.
    pub fn any(&self, key: &str) -> Option<Any> {
        self.map.get(key).map(any)
    }

    /// The members of an `enum` list, each as YAML.
    pub fn any_list(&self, key: &str) -> Result<Vec<Any>, ProtoError> {
        match self.map.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => Ok(items.iter().map(any).collect()),
            Some(other) => {
                Err(self.error(key, format!("expected a list, found {}", kind_of(other))))
            }
        }
    }

    /// Every `x-` key of this object, in document order.
    pub fn vendor_extensions(&self) -> Vec<NamedAny> {
        named_anys(self.map.iter().filter(|(key, _)| key.starts_with("x-")))
    }

    /// The entries of a map-valued field (`properties`, `definitions`, ...), each viewed as an
    /// object.
    pub fn entries(&self, key: &str) -> Result<Vec<(String, At<'a>)>, ProtoError> {
        let Some(map) = self.child(key)? else {
            return Ok(Vec::new());
        };
        map.map
            .iter()
            .map(|(name, value)| Ok((name.clone(), At::new(value, map.sub(name))?)))
            .collect()
    }

    /// The objects of the map under `key`, each read by `read` and paired with its name by
    /// `named` (one of gnostic's `Named*` messages), in document order; empty when absent.
    pub fn named<T, N>(
        &self,
        key: &str,
        read: impl Fn(&At<'a>) -> Result<T, ProtoError>,
        named: impl Fn(String, Option<T>) -> N,
    ) -> Result<Vec<N>, ProtoError> {
        self.entries(key)?
            .into_iter()
            .map(|(name, at)| Ok(named(name, Some(read(&at)?))))
            .collect()
    }
}

/// A value as gnostic's `Any`.
pub(super) fn any(value: &Value) -> Any {
    Any {
        yaml: to_yaml(value),
    }
}

/// Name/value pairs as gnostic's `NamedAny` list.
pub(super) fn named_anys<'v>(
    pairs: impl Iterator<Item = (&'v String, &'v Value)>,
) -> Vec<NamedAny> {
    pairs
        .map(|(name, value)| NamedAny {
            name: name.clone(),
            value: Some(any(value)),
        })
        .collect()
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
