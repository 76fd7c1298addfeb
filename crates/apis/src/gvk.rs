//! Groups and kinds read from `apiVersion` and `kind`, as every flotilla component reads them
//! from objects it knows only as JSON.

use serde_json::Value;

/// `(group, version)` of an `apiVersion`; the group is "" for the core group (`v1`).
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

/// `group` of an `apiVersion` ("" for the core group).
pub fn group_of(api_version: &str) -> &str {
    split_api_version(api_version).0
}

/// `(group, kind)` of an object, from its `apiVersion` and `kind`; missing or mistyped fields
/// read as "".
pub fn group_kind(object: &Value) -> (&str, &str) {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    (
        group_of(api_version),
        object["kind"].as_str().unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests;
