//! The write engine: create, update, patch, delete and server-side apply of one object with
//! Kubernetes semantics — system fields, compare-and-swap retries, finalizers, dry run — and
//! no HTTP.
//!
//! A handler decodes a request into a [`Write`] and a body, calls the engine and encodes the
//! [`Written`] it gets back; startup and the in-server loops ([`crate::lifecycle`]) call the
//! same engine ([`commit_create`], [`guaranteed_update`] as [`Writer::Server`],
//! [`delete_object`]) without a request.

mod apply;
mod create;
mod delete;
mod subresource;
mod update;

use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

use crate::auth::UserInfo;
use crate::cache::CachedObject;
use crate::error::{ApiError, Result, Target};
use crate::meta::set_meta;
use crate::registry::ResourceInfo;
use crate::request::{Query, RequestInfo};
use crate::Api;

pub(crate) use apply::apply;
pub(crate) use create::{commit_create, create};
pub(crate) use delete::{delete_object, has_spec_finalizers, DeleteOptions};
pub(crate) use update::{guaranteed_update, patch, update, Writer};

/// What a write ended in.
pub(crate) enum Outcome {
    /// A new revision was written.
    Written(flotilla_store::Record),
    /// Nothing changed; the current object stands.
    Unchanged(Arc<CachedObject>),
    /// The update removed the last finalizer of a terminating object, so it was deleted.
    Deleted(flotilla_store::Record),
    /// dryRun: what would have been written.
    DryRun(Value),
}

/// A client's write, as parsed from its request: what it addresses, who asks, with which options.
pub(crate) struct Write<'a> {
    /// The resource written.
    pub res: &'a ResourceInfo,
    /// The subresource (`status`, `finalize`), if any.
    pub sub: Option<&'a str>,
    /// The parsed path: verb, namespace, name (authorization and escalation checks use it).
    pub info: &'a RequestInfo,
    /// The parsed query: dryRun, fieldValidation, fieldManager, force.
    pub query: &'a Query,
    /// Who writes.
    pub user: &'a UserInfo,
    /// The field manager of a non-apply write (`fieldManager`, else the client's program name).
    pub manager: String,
    /// What strict decoding found wrong with the body itself (a patch's duplicate fields), to
    /// report with the unknown fields of the object it makes.
    pub body_errors: Vec<String>,
}

impl Write<'_> {
    /// The name the URL gives (empty for a create).
    fn name(&self) -> String {
        self.info.name.clone().unwrap_or_default()
    }

    /// The storage key of the object the URL names.
    fn key(&self) -> Result<String> {
        object_key(self.info, self.res)
    }
}

/// What the engine answers a client's write with.
pub(crate) struct Written {
    /// The object as stored (or as it would be, for a dry run).
    pub outcome: Outcome,
    /// Did the write bring the object into being (201)?
    pub created: bool,
    /// Warnings for the client (unknown fields under fieldValidation=Warn).
    pub warnings: Vec<String>,
}

/// The storage key of the object a request names.
pub(crate) fn object_key(info: &RequestInfo, res: &ResourceInfo) -> Result<String> {
    let name = info
        .name
        .as_deref()
        .ok_or_else(|| ApiError::bad_request("the request names no object"))?;
    Ok(res.key(info.object_namespace(), name))
}

/// The store's rendering of `obj` at the revision it is written at: its JSON around the value
/// of `metadata.resourceVersion`, so that the store's writer only splices the revision's digits
/// in (no serializing in the one writer), and a hub replica can hand the write to the replica
/// that commits for all of them.
pub(crate) fn render(obj: Value) -> flotilla_store::Render {
    split(obj).0
}

/// As [`render`], for a write the cache will see come back: it leaves the cache whether the
/// resource's read defaults change the object (see `cache::hints`), worked out here on the
/// object already parsed instead of from its bytes again.
pub(crate) fn render_stored(
    api: &Api,
    res: &ResourceInfo,
    key: &str,
    obj: Value,
) -> flotilla_store::Render {
    if api.cache.seals(key) {
        return render_at(api, key, obj);
    }
    let asked = res
        .read_defaults
        .as_ref()
        .filter(|_| res.custom)
        .map(|d| (d.clone(), d.changes(&obj)));
    let (render, parts) = split(obj);
    if let (Some((defaults, changed)), Some(parts)) = (asked, parts) {
        api.cache.hint(key, parts, defaults, changed);
    }
    render
}

/// [`render`] of the object at storage key `key`, sealed there when the encryption
/// configuration says so (see [`crate::encryption`]): the seal is made in the store's writer,
/// once the revision is in the JSON.
pub(crate) fn render_at(api: &Api, key: &str, mut obj: Value) -> flotilla_store::Render {
    if !api.cache.seals(key) {
        return render(obj);
    }
    let cache = api.cache.clone();
    let key = key.to_owned();
    // Serialized in the writer: sealed resources (Secrets) are small and seldom written.
    flotilla_store::Render::with(move |rev| {
        set_meta(&mut obj, "resourceVersion", Value::String(rev.to_string()));
        cache.seal(
            &key,
            Bytes::from(serde_json::to_vec(&obj).unwrap_or_default()),
        )
    })
}

/// The record the store gave back for a write, its value in clear.
pub(crate) fn opened(api: &Api, mut r: flotilla_store::Record) -> Result<flotilla_store::Record> {
    r.value = api.cache.open(&r.key, r.value)?;
    Ok(r)
}

/// [`render`], and the bytes around the revision when it splices.
fn split(mut obj: Value) -> (flotilla_store::Render, Option<(Bytes, Bytes)>) {
    let mark = &*RV_MARK;
    set_meta(&mut obj, "resourceVersion", Value::String(mark.clone()));
    let json = serde_json::to_vec(&obj).unwrap_or_default();
    let finder = &*RV_MARK_FINDER;
    let quoted = finder.needle();
    let mut found = finder.find_iter(&json);
    match (found.next(), found.next()) {
        (Some(at), None) => {
            let json = Bytes::from(json);
            // The quotes stay around the digits: resourceVersion is a string.
            let head = json.slice(..at + 1);
            let tail = json.slice(at + quoted.len() - 1..);
            let parts = (head.clone(), tail.clone());
            (flotilla_store::Render::splice(head, tail), Some(parts))
        }
        // The mark is a secret of this process, so no object holds it; should one, stamp it
        // the slow way.
        _ => {
            let render = flotilla_store::Render::with(move |rev| {
                set_meta(&mut obj, "resourceVersion", Value::String(rev.to_string()));
                Bytes::from(serde_json::to_vec(&obj).unwrap_or_default())
            });
            (render, None)
        }
    }
}

/// What [`render`] puts in place of the revision: random per process.
static RV_MARK: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| format!("flotilla-rv-{:032x}", rand::random::<u128>()));

/// The search for [`RV_MARK`] in quotes, as it appears in a rendered object: built once, as
/// building it costs more than a search through an object of a few KB.
static RV_MARK_FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| {
        memchr::memmem::Finder::new(format!("\"{}\"", *RV_MARK).as_bytes()).into_owned()
    });

fn target<'a>(res: &'a ResourceInfo, name: &'a str) -> Target<'a> {
    Target {
        group: &res.group,
        resource: &res.plural,
        name,
    }
}

#[cfg(test)]
mod tests;
