//! How large and how deep what clients send, and what the hub stores, may be.
//!
//! One set of bounds for every way in (JSON, YAML and protobuf bodies, patches, server-side
//! apply) and for what is written, so nothing is accepted that the hub could not read back:
//! objects are kept as JSON and read with serde_json, whose recursion limit decides the depth
//! ([`MAX_DEPTH`]). kube-apiserver's decoders allow 10,000 levels (Go grows its stacks); the
//! hub's handlers recurse over objects on fixed-size thread stacks, so it keeps serde_json's
//! bound everywhere instead, which no real object comes near (the deepest CRD schemas are a few
//! dozen levels).
//!
//! Sizes follow kube-apiserver: a request body is at most 3 MiB ([`MAX_BODY`]), a JSON patch has
//! at most 10,000 operations whose `copy`s add at most 3 MiB (its `JSONPatchMaxCopyBytes`), and
//! a stored object is at most [`MAX_OBJECT`], as etcd bounds kube-apiserver's objects (1.5 MiB
//! by default) whatever the request that produced them.

use serde_json::Value;

use crate::error::{ApiError, Result};

pub mod watches;

/// The default of `serve --max-watches-per-user` ([`watches`]).
pub const DEFAULT_MAX_WATCHES_PER_USER: usize = 1000;

/// The default of `serve --max-unpaged-list-items`: the most items a LIST without `limit`
/// returns ([`unpaged_list`]).
pub const DEFAULT_MAX_UNPAGED_LIST_ITEMS: usize = 100_000;

/// A LIST without `limit` that would hold `items` items of `resource`, past `max` (0: no
/// bound): 413 saying how to page. One response that large would hold the whole collection in
/// memory twice (objects and encoding) for one client; pages of 500 (what kubectl, client-go
/// and kube-rs ask for) never reach the bound.
pub fn unpaged_list(resource: &str, items: usize, max: usize) -> Result<()> {
    if max == 0 || items <= max {
        return Ok(());
    }
    Err(ApiError::new(
        413,
        "RequestEntityTooLarge",
        format!(
            "the list of {resource} holds {items} items, more than the hub returns in one \
             response without a limit ({max}, --max-unpaged-list-items): ask for pages with \
             ?limit=500 and follow metadata.continue (kubectl, client-go and kube-rs do)"
        ),
    ))
}

/// The largest request body accepted (kube-apiserver's `--max-request-bytes` default, 3 MiB).
pub const MAX_BODY: usize = 3 * 1024 * 1024;

/// The largest object the hub stores, as serialized JSON. As large as a body may be, so every
/// object a client can send is storable; patches and applies that grow an object past it are
/// refused (413).
pub const MAX_OBJECT: usize = 3 * 1024 * 1024;

/// The deepest nesting of arrays and objects accepted anywhere: `{}` is depth 1, `{"a": []}`
/// depth 2. serde_json refuses the 128th level, so this is the deepest it reads back.
pub const MAX_DEPTH: usize = 127;

/// The most operations one JSON patch may have (kube-apiserver's `maxJSONPatchOperations`).
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// How many bytes the `copy` operations of one JSON patch may add in all (kube-apiserver's
/// `JSONPatchMaxCopyBytes`): `copy` is the one operation that grows a document beyond what the
/// patch itself carries, doubling it each time it copies a value into itself.
pub const MAX_JSON_PATCH_COPY_BYTES: usize = 3 * 1024 * 1024;

/// The depth of `value` if it is at most `limit`, else `None`. Iterative, so any depth is safe
/// to measure; every node up to `limit` deep is visited.
pub fn depth_within(value: &Value, limit: usize) -> Option<usize> {
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((node, depth)) = stack.pop() {
        let containers = |v: &&Value| v.is_array() || v.is_object();
        match node {
            Value::Array(items) if depth <= limit => {
                stack.extend(items.iter().filter(containers).map(|c| (c, depth + 1)));
            }
            Value::Object(members) if depth <= limit => {
                stack.extend(members.values().filter(containers).map(|c| (c, depth + 1)));
            }
            Value::Array(_) | Value::Object(_) => return None,
            _ => continue,
        }
        deepest = deepest.max(depth);
    }
    Some(deepest)
}

/// The length of `value` as compact JSON if it is at most `limit` bytes, else `None`. Stops
/// writing at the limit, so measuring a huge value costs no more than `limit` bytes of work.
pub fn json_len_within(value: &Value, limit: usize) -> Option<usize> {
    struct Counter {
        written: usize,
        limit: usize,
    }
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.written += buf.len();
            if self.written > self.limit {
                return Err(std::io::Error::other("over the limit"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter { written: 0, limit };
    serde_json::to_writer(&mut counter, value).ok()?;
    Some(counter.written)
}

/// A decoded body nested deeper than [`MAX_DEPTH`]: 400, as a body serde_json refuses.
pub fn check_body_depth(value: &Value) -> Result<()> {
    match depth_within(value, MAX_DEPTH) {
        Some(_) => Ok(()),
        None => Err(ApiError::bad_request(format!(
            "the request body is nested more than {MAX_DEPTH} levels deep"
        ))),
    }
}

/// Refuses an object the hub could not keep or read back: larger than [`MAX_OBJECT`] (413, as
/// kube-apiserver answers a request too large) or deeper than [`MAX_DEPTH`] (422). Checked on
/// the final object of every write, whatever produced it.
pub fn check_storable(obj: &Value) -> Result<()> {
    if json_len_within(obj, MAX_OBJECT).is_none() {
        return Err(ApiError::too_large(format!(
            "Request entity too large: the resulting object would be larger than the limit of \
             {MAX_OBJECT} bytes"
        )));
    }
    if depth_within(obj, MAX_DEPTH).is_none() {
        return Err(ApiError::new(
            422,
            "Invalid",
            format!(
                "the resulting object (with its metadata.managedFields, which mirror its \
                 fields one level deeper) is nested more than {MAX_DEPTH} levels deep"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
