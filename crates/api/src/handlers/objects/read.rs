//! GET and LIST.

mod paging;

use std::sync::Arc;

use axum::body::Body;
use bytes::{BufMut, Bytes, BytesMut};
use http::Response;
use serde_json::{json, Value};

use super::encode::partial_metadata;
use super::lean::as_asked;
use super::{not_found, object_key, output, Ctx, Filter};
use crate::cache::CachedObject;
use crate::error::{ApiError, Result};
use crate::handlers::{response, table};
use crate::registry::ResourceInfo;
use crate::request::Want;
use crate::Api;
#[cfg(test)]
use paging::ContinueToken;
use paging::{decode_continue, encode_continue};

/// Wait until the cache is as fresh as a read at `resourceVersion` must be, as kube-apiserver
/// answers GET and LIST: unset → the most recent state (every write acknowledged so far is
/// visible: read-your-writes); `"0"` → any state the cache holds; `N` → at least as fresh as N
/// (504 Timeout when N is not reached in time).
pub(crate) async fn fresh_enough(api: &Api, resource_version: Option<&str>) -> Result<()> {
    let want = match resource_version {
        Some("0") => return Ok(()),
        Some(rv) if !rv.is_empty() => crate::meta::parse_rv(rv)
            .ok_or_else(|| ApiError::bad_request(format!("invalid resourceVersion {rv:?}")))?,
        _ => api.store.current_revision().await?,
    };
    api.cache.wait_for(want).await
}

/// GET one object.
pub(super) async fn get(api: &Arc<Api>, ctx: &Ctx, res: &ResourceInfo) -> Result<Response<Body>> {
    let key = object_key(ctx, res)?;
    fresh_enough(api, ctx.query.resource_version.as_deref()).await?;
    let o = api.cache.get(&key).ok_or_else(|| not_found(ctx, res))?;
    Ok(match ctx.want {
        Want::Object => response::raw(200, output(res, &o)),
        Want::Table => response::json(200, &table::table(res, &[o], ctx, None)),
        Want::Metadata => response::raw(200, partial_metadata(&o)),
    })
}

/// One page of a list.
struct Page {
    items: Vec<Arc<CachedObject>>,
    /// The snapshot revision.
    rv: i64,
    /// Do more objects follow this page?
    more: bool,
    /// How many, when the list is not filtered (kube-apiserver's `remainingItemCount`).
    remaining: Option<u64>,
}

/// LIST, from the cache (latest) or from the store (a continue page or an exact old revision),
/// with kube-apiserver's `resourceVersion` semantics: unset → the latest state; `"0"` → any
/// state the cache holds; `N` → at least as fresh as N, or exactly N with
/// `resourceVersionMatch=Exact` (and, as kube-apiserver's storage reads it, with a `limit`
/// but no match given). A revision the store compacted is 410 Expired.
pub(super) async fn list(api: &Arc<Api>, ctx: &Ctx, res: &ResourceInfo) -> Result<Response<Body>> {
    // The name a field selector pins was authorized (RBAC resourceNames): serve that one only.
    let filter = Filter::parse(res, &ctx.query)?.named(ctx.info.name.as_deref());
    let prefix = res.key_prefix(ctx.info.object_namespace());
    let limit = ctx.query.limit;
    let rv = ctx.query.resource_version.as_deref();
    let page = if let Some(tok) = &ctx.query.continue_token {
        if rv.is_some_and(|rv| rv != "0") {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        let t = decode_continue(tok)?;
        if !t.start.starts_with(&prefix) {
            return Err(ApiError::bad_request(
                "invalid continue token: continue key is not valid: it is for another list",
            ));
        }
        if t.rv == paging::LATEST {
            // An inconsistent continuation: the rest at the latest revision (its own pages
            // are then consistent with each other again).
            api.cache.sync_current().await?;
            from_cache(api, &prefix, Some(&t.start), limit, &filter)
        } else {
            match from_store(api, &prefix, t.rv, Some(t.start.clone()), limit, &filter).await {
                Ok(page) => page,
                Err(e) => return paging::expired(e, Some(&t.start)),
            }
        }
    } else if let Some(at) = exact_revision(ctx)? {
        match from_store(api, &prefix, at, None, limit, &filter).await {
            Ok(page) => page,
            Err(e) => return paging::expired(e, None),
        }
    } else {
        fresh_enough(api, rv).await?;
        from_cache(api, &prefix, None, limit, &filter)
    };
    if limit.is_none_or(|l| l == 0) {
        let max = api.config.max_unpaged_list_items;
        crate::limits::unpaged_list(&res.plural, page.items.len(), max)?;
    }
    let cont = if page.more {
        page.items.last().map(|o| encode_continue(page.rv, &o.key))
    } else {
        None
    };
    let meta = list_meta(
        page.rv,
        cont.as_deref(),
        page.remaining.filter(|_| page.more),
    );
    let items = page.items;
    Ok(match ctx.want {
        Want::Table => response::json(200, &table::table(res, &items, ctx, Some(meta))),
        Want::Metadata => response::raw(
            200,
            list_bytes(
                ("PartialObjectMetadataList", "meta.k8s.io/v1"),
                &items,
                meta,
                0,
                |o| as_asked(ctx.omit_managed_fields, partial_metadata(o)),
            ),
        ),
        Want::Object => response::raw(
            200,
            list_bytes(
                (&format!("{}List", res.kind), &res.api_version()),
                &items,
                meta,
                items.iter().map(|o| o.raw_len() + 1).sum(),
                |o| as_asked(ctx.omit_managed_fields, output(res, o)),
            ),
        ),
    })
}

/// The revision a LIST must be read at exactly, if any: `resourceVersionMatch=Exact`, or a
/// `resourceVersion` other than "0" with a `limit` and no match (the first page of a paged
/// list at a revision a client already saw).
fn exact_revision(ctx: &Ctx) -> Result<Option<i64>> {
    let Some(rv) = ctx.query.resource_version.as_deref() else {
        return Ok(None);
    };
    let exact = match ctx.query.resource_version_match.as_deref() {
        Some(m) => m == super::super::list_options::EXACT,
        None => ctx.query.limit.is_some() && rv != "0",
    };
    if !exact {
        return Ok(None);
    }
    crate::meta::parse_rv(rv)
        .map(Some)
        .ok_or_else(|| ApiError::bad_request(format!("invalid resourceVersion {rv:?}")))
}

/// A list's `metadata` (`ListMeta`).
fn list_meta(rv: i64, cont: Option<&str>, remaining: Option<u64>) -> Value {
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if let Some(c) = cont {
        meta["continue"] = json!(c);
    }
    if let Some(n) = remaining {
        meta["remainingItemCount"] = json!(n);
    }
    meta
}

/// A page from the watch cache. An unfiltered page counts what follows it in the same pass
/// over the cache (as etcd counts the rest of the range); a filtered one stops at the limit,
/// since kube-apiserver gives no count for it.
fn from_cache(
    api: &Api,
    prefix: &str,
    start_after: Option<&str>,
    limit: Option<usize>,
    filter: &Filter,
) -> Page {
    match limit {
        Some(l) if filter.is_everything() => {
            let mut seen = 0usize;
            let (items, rv, _) = api.cache.list(prefix, start_after, None, |_| {
                seen += 1;
                seen <= l
            });
            let rest = seen.saturating_sub(items.len()) as u64;
            Page {
                items,
                rv,
                more: rest > 0,
                remaining: Some(rest),
            }
        }
        _ => {
            let (items, rv, more) = api
                .cache
                .list(prefix, start_after, limit, |o| filter.matches(o));
            Page {
                items,
                rv,
                more,
                remaining: None,
            }
        }
    }
}

/// A page from the store at revision `rv` (continue pages and exact old revisions).
async fn from_store(
    api: &Arc<Api>,
    prefix: &str,
    rv: i64,
    mut start: Option<String>,
    limit: Option<usize>,
    filter: &Filter,
) -> Result<Page> {
    let count = filter.is_everything();
    let mut out = Vec::new();
    loop {
        let page = api
            .store
            .list(
                prefix,
                flotilla_store::ListOptions {
                    revision: Some(rv),
                    start_after: start.clone(),
                    limit: Some(limit.unwrap_or(1000).max(100)),
                },
            )
            .await?;
        let in_page = page.records.len();
        for (i, r) in page.records.into_iter().enumerate() {
            start = Some(r.key.clone());
            if let Some(l) = limit {
                if out.len() >= l {
                    // This record and the rest of the page, then what the store counts after.
                    let rest = (in_page - i) as u64 + page.remaining;
                    return Ok(Page {
                        items: out,
                        rv,
                        more: true,
                        remaining: count.then_some(rest),
                    });
                }
            }
            let value = api.cache.open(&r.key, r.value)?;
            let o = CachedObject::new(r.key, value, r.mod_revision)
                .map_err(|e| ApiError::internal(format!("stored object is not JSON: {e}")))?;
            if filter.matches(&o) {
                out.push(Arc::new(o));
            }
        }
        if !page.more {
            return Ok(Page {
                items: out,
                rv,
                more: false,
                remaining: None,
            });
        }
    }
}

/// `{"kind":…,"apiVersion":…,"metadata":…,"items":[…]}` with each item as `encode` gives it,
/// without re-encoding the items: (kind, apiVersion) is the list's own; `items_size` what the
/// items will take, when known.
fn list_bytes(
    (kind, api_version): (&str, &str),
    items: &[Arc<CachedObject>],
    meta: Value,
    items_size: usize,
    encode: impl Fn(&CachedObject) -> Bytes,
) -> Bytes {
    let head = json!({"kind": kind, "apiVersion": api_version, "metadata": meta});
    let head = serde_json::to_vec(&head).unwrap_or_default();
    let mut buf = BytesMut::with_capacity(head.len() + items_size + 16);
    buf.put_slice(&head[..head.len() - 1]); // drop the closing brace
    buf.put_slice(b",\"items\":[");
    for (i, o) in items.iter().enumerate() {
        if i > 0 {
            buf.put_u8(b',');
        }
        buf.put_slice(&encode(o));
    }
    buf.put_slice(b"]}");
    buf.freeze()
}

#[cfg(test)]
mod tests;
