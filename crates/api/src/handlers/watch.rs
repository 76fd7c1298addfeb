//! WATCH: newline-delimited JSON events, served from the watch cache.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use base64::Engine;
use bytes::Bytes;
use futures::stream::{self, StreamExt};
use http::Response;
use serde_json::json;
use tokio::sync::broadcast::{self, error::RecvError};

use super::objects::encode::{output, partial_metadata};
use super::objects::filter::Filter;
use super::objects::lean::as_asked;
use super::{table, Ctx};
use crate::cache::{Change, ChangeKind, Subscription};
use crate::error::{ApiError, Result};
use crate::registry::ResourceInfo;
use crate::request::{Query, Want};
use crate::Api;
use flotilla_store::Revision;

/// How often a watch with `allowWatchBookmarks` gets a BOOKMARK: every minute, as from
/// kube-apiserver's watch cache. Often enough that a client re-watching from its last one
/// finds it in the in-memory history ([`crate::cache::HISTORY_FRESH`], 75 s); a thousand
/// agents with two watches each would get 67 a second at 30 s.
const BOOKMARK_EVERY: Duration = if cfg!(test) {
    Duration::from_secs(1)
} else {
    Duration::from_secs(60)
};

/// The event type this watcher should see for a change, given its filter (an object moving out
/// of a selector is DELETED for that watcher, one moving in is ADDED).
fn visible(filter: &Filter, c: &Change) -> Option<ChangeKind> {
    if filter.is_everything() {
        return Some(c.kind);
    }
    let now = filter.matches(&c.object);
    let before = c.prev.as_ref().map(|p| filter.matches(p)).unwrap_or(false);
    match c.kind {
        ChangeKind::Added => now.then_some(ChangeKind::Added),
        ChangeKind::Deleted => (now || before).then_some(ChangeKind::Deleted),
        ChangeKind::Modified => match (before, now) {
            (true, true) => Some(ChangeKind::Modified),
            (false, true) => Some(ChangeKind::Added),
            (true, false) => Some(ChangeKind::Deleted),
            (false, false) => None,
        },
    }
}

struct Encoder {
    res: ResourceInfo,
    want: Want,
    include_object: Option<String>,
    omit_managed_fields: bool,
}

impl Encoder {
    fn event(&self, kind: ChangeKind, c: &Change) -> Bytes {
        let obj = match self.want {
            Want::Object => as_asked(self.omit_managed_fields, output(&self.res, &c.object)),
            Want::Table => Bytes::from(
                serde_json::to_vec(&table::table_for_watch(
                    &self.res,
                    &c.object,
                    self.include_object.as_deref(),
                ))
                .unwrap_or_default(),
            ),
            Want::Metadata => as_asked(self.omit_managed_fields, partial_metadata(&c.object)),
        };
        let mut buf = Vec::with_capacity(obj.len() + 32);
        buf.extend_from_slice(b"{\"type\":\"");
        buf.extend_from_slice(kind.as_str().as_bytes());
        buf.extend_from_slice(b"\",\"object\":");
        buf.extend_from_slice(&obj);
        buf.extend_from_slice(b"}\n");
        Bytes::from(buf)
    }

    /// The kind and apiVersion of the objects this watch sends.
    fn type_meta(&self) -> (String, String) {
        match self.want {
            Want::Metadata => ("PartialObjectMetadata".into(), "meta.k8s.io/v1".into()),
            _ => (self.res.kind.clone(), self.res.api_version()),
        }
    }

    /// A BOOKMARK at `rv`. The one ending a watch-list's initial events is annotated so, and
    /// carries the empty list those events make up, encoded as the watch is (JSON) and in
    /// base64, as kube-apiserver sends it: client-go's WatchList builds its list from it (and
    /// falls back to a LIST without it).
    fn bookmark(&self, rv: i64, initial_end: bool) -> Bytes {
        let (kind, api_version) = self.type_meta();
        let mut meta = json!({"resourceVersion": rv.to_string()});
        if initial_end {
            let mut blueprint = serde_json::to_vec(&json!({
                "kind": format!("{kind}List"), "apiVersion": api_version,
                "metadata": {}, "items": null,
            }))
            .unwrap_or_default();
            blueprint.push(b'\n');
            meta["annotations"] = json!({
                "k8s.io/initial-events-end": "true",
                "kubernetes.io/initial-events-list-blueprint":
                    base64::engine::general_purpose::STANDARD.encode(blueprint),
            });
        }
        let ev = json!({"type": "BOOKMARK", "object": {"kind": kind, "apiVersion": api_version, "metadata": meta}});
        let mut v = serde_json::to_vec(&ev).unwrap_or_default();
        v.push(b'\n');
        Bytes::from(v)
    }
}

/// Where the watch starts, as kube-apiserver's watch cache decides from `resourceVersion` and
/// `sendInitialEvents` (already defaulted by [`super::list_options`]):
/// - initial events: the state at least as fresh as `resourceVersion` (unset: every write
///   acknowledged so far; `"0"`: whatever the cache holds) replayed as ADDED;
/// - none asked (`sendInitialEvents=false`): changes after `resourceVersion`, or after now when
///   it is unset or `"0"`;
/// - a bare `resourceVersion`: the changes after it (410 once compacted away).
async fn start(api: &Arc<Api>, q: &Query, prefix: &str) -> Result<Subscription> {
    let rv = match q.resource_version.as_deref() {
        None | Some("") => None,
        Some(rv) => Some(
            crate::meta::parse_rv(rv)
                .ok_or_else(|| ApiError::bad_request(format!("invalid resourceVersion {rv:?}")))?,
        ),
    };
    match (q.send_initial_events, rv) {
        (Some(true), None) => {
            api.cache.sync_current().await?;
            api.cache.subscribe(prefix, None)
        }
        (Some(true), Some(rv)) => {
            api.cache.wait_for(rv).await?;
            api.cache.subscribe(prefix, None)
        }
        (Some(false), None) => {
            api.cache.sync_current().await?;
            api.cache.subscribe(prefix, Some(api.cache.revision()))
        }
        (Some(false), Some(0)) => api.cache.subscribe(prefix, Some(api.cache.revision())),
        // Not defaulted to initial events: a watch from a revision, or an old-style
        // `/watch/` path, which kube-apiserver does not default either.
        (_, None | Some(0)) => api.cache.subscribe(prefix, None),
        (_, Some(rv)) => {
            // A revision this replica has not applied yet (a client resuming here a watch
            // another hub replica served) is waited for briefly, as kube-apiserver waits for
            // its cache; past that, "Too large resource version".
            api.cache.wait_for(rv).await?;
            api.cache.subscribe_replaying(prefix, Some(rv)).await
        }
    }
}

/// Serve a watch.
pub(super) async fn watch(api: &Arc<Api>, ctx: &Ctx, res: &ResourceInfo) -> Result<Response<Body>> {
    // A watch on one named object (`…/secrets/db?watch=1`, or a field selector pinning the name
    // as `kubectl get secret db -w` sends) watches its collection for exactly that name: never
    // the object's key as a prefix, which would also match `db-admin`.
    let filter = Arc::new(Filter::parse(res, &ctx.query)?.named(ctx.info.name.as_deref()));
    let prefix = res.key_prefix(ctx.info.object_namespace());
    let send_initial = ctx.query.send_initial_events == Some(true);
    // Counted as open until the response stream is dropped.
    let ticket = api.watches.open(&ctx.user)?;
    let sub = match start(api, &ctx.query, &prefix).await {
        Ok(sub) => sub,
        // As kube-apiserver: the watch starts (200), then says 410 (or, for a watch-list whose
        // resourceVersion the cache does not reach in time, 504) in an ERROR event and ends.
        // Clients (client-go reflectors, kube-rs watchers) re-list on that event; kube-rs does
        // not on an HTTP 410 answer to the watch request itself.
        Err(e) if e.code == 410 || (send_initial && e.code == 504) => return Ok(error_only(&e)),
        Err(e) => return Err(e),
    };
    let enc = Arc::new(Encoder {
        res: res.clone(),
        want: ctx.want,
        include_object: ctx.query.include_object.clone(),
        omit_managed_fields: ctx.omit_managed_fields,
    });
    let bookmarks = ctx.query.allow_bookmarks;
    let start_rv = sub.revision;
    // `timeoutSeconds` ends the watch (0 or unset: the server's default, as kube-apiserver).
    // `?timeout=` does not: a watch is a long-running request, which kube-apiserver's request
    // deadline leaves alone.
    let timeout = ctx.query.timeout_seconds.filter(|t| *t > 0).unwrap_or(1800);
    let timeout = Duration::from_secs(timeout.min(3600));

    let replay: Vec<Bytes> = sub
        .replay
        .iter()
        .filter_map(|c| visible(&filter, c).map(|k| enc.event(k, c)))
        .collect();
    let mut head: Vec<Bytes> = replay;
    if send_initial && bookmarks {
        head.push(enc.bookmark(start_rv, true));
    }
    let live = Live {
        api: api.clone(),
        rx: sub.live,
        filter,
        enc: enc.clone(),
        prefix,
        skip_upto: start_rv,
        last_rv: start_rv,
        pending: VecDeque::new(),
        bookmarks,
        next_bm: tokio::time::Instant::now() + BOOKMARK_EVERY,
        ended: false,
    };
    let live = stream::unfold(live, |mut live| async move {
        let event = live.next().await?;
        Some((event, live))
    });
    let events = stream::iter(head)
        .chain(live)
        .take_until(tokio::time::sleep(timeout))
        .take_until(api.stopping());
    let revoked = api.access.until_revoked(&api.cache, &ctx.credential);
    let body = end_when_revoked(events, revoked).map(move |b| {
        let _open = &ticket;
        Ok::<Bytes, std::convert::Infallible>(b)
    });
    let mut r = Response::new(Body::from_stream(body));
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    Ok(r)
}

/// The live part of a watch: the changes its feed brings, filtered and encoded. A watch whose
/// feed ran past it (its client reads slower than the hub writes) catches up from the history
/// (or the store's event log) after the last change it took, and goes on: its client sees
/// neither a gap nor an end, and the feeds' buffers stay small.
struct Live {
    api: Arc<Api>,
    rx: broadcast::Receiver<Arc<Change>>,
    filter: Arc<Filter>,
    enc: Arc<Encoder>,
    prefix: String,
    /// Changes up to this revision were in the subscription's replay: skipped when live.
    skip_upto: Revision,
    /// The revision of the last change taken from the feed.
    last_rv: Revision,
    /// Changes caught up after a lag, not sent yet.
    pending: VecDeque<Arc<Change>>,
    bookmarks: bool,
    next_bm: tokio::time::Instant,
    /// An ERROR event was sent: nothing follows it.
    ended: bool,
}

impl Live {
    /// The next event to send, or `None` when the watch ends.
    async fn next(&mut self) -> Option<Bytes> {
        if self.ended {
            return None;
        }
        loop {
            let change = match self.pending.pop_front() {
                Some(c) => c,
                None => match self.recv().await? {
                    Ok(c) => c,
                    Err(bookmark) => return Some(bookmark),
                },
            };
            if change.revision <= self.skip_upto {
                continue;
            }
            self.last_rv = self.last_rv.max(change.revision);
            if !change.object.key.starts_with(&self.prefix) {
                continue;
            }
            if let Some(k) = visible(&self.filter, &change) {
                return Some(self.enc.event(k, &change));
            }
        }
    }

    /// The newest revision this watch has seen everything up to, for a bookmark: the cache's
    /// own revision when the feed holds nothing unread (every change up to it was sent to the
    /// feed before the revision was published), else the last change taken. A watch on a quiet
    /// namespace thus carries a recent revision, and its client re-watching after a timeout
    /// resumes from the in-memory history instead of replaying the store's event log from when
    /// the watch began (a thousand agents doing that at once kept a hub busy for minutes).
    fn progress(&mut self) -> Revision {
        let applied = self.api.cache.revision();
        if self.pending.is_empty() && self.rx.is_empty() {
            self.last_rv = self.last_rv.max(applied);
        }
        self.last_rv
    }

    /// The next change of the feed (`Err`: a bookmark is due), after catching up when the
    /// feed ran past this watch; `None` when the watch ends.
    async fn recv(&mut self) -> Option<std::result::Result<Arc<Change>, Bytes>> {
        loop {
            let received = if self.bookmarks {
                tokio::select! {
                    r = self.rx.recv() => r,
                    _ = tokio::time::sleep_until(self.next_bm) => {
                        self.next_bm = tokio::time::Instant::now() + BOOKMARK_EVERY;
                        let rv = self.progress();
                        return Some(Err(self.enc.bookmark(rv, false)));
                    }
                }
            } else {
                self.rx.recv().await
            };
            match received {
                Ok(c) => return Some(Ok(c)),
                Err(RecvError::Lagged(missed)) => {
                    tracing::debug!(missed, prefix = %self.prefix, "a watch fell behind its feed; catching up");
                    match self
                        .api
                        .cache
                        .subscribe_replaying(&self.prefix, Some(self.last_rv))
                        .await
                    {
                        Ok(sub) => {
                            self.rx = sub.live;
                            self.skip_upto = self.last_rv;
                            self.pending.extend(sub.replay);
                            if let Some(c) = self.pending.pop_front() {
                                return Some(Ok(c));
                            }
                        }
                        // Compacted past it: the client re-lists, as after any 410.
                        Err(e) => {
                            self.ended = true;
                            return Some(Err(error_event(&e)));
                        }
                    }
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }
}

/// `events` until `revoked` completes (the credential the watch was opened with is no longer
/// valid); then one ERROR event with a 401 Status, so the client knows to authenticate again
/// rather than re-watch.
fn end_when_revoked(
    events: impl futures::Stream<Item = Bytes> + Send + 'static,
    revoked: impl std::future::Future<Output = ()> + Send + 'static,
) -> impl futures::Stream<Item = Bytes> + Send + 'static {
    let ended = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mark = ended.clone();
    let until = async move {
        revoked.await;
        mark.store(true, std::sync::atomic::Ordering::SeqCst);
    };
    let last = stream::once(async move {
        ended
            .load(std::sync::atomic::Ordering::SeqCst)
            .then(|| error_event(&ApiError::unauthorized()))
    })
    .filter_map(std::future::ready);
    events.take_until(until).chain(last)
}

/// A watch `ERROR` event carrying `e`'s Status.
fn error_event(e: &ApiError) -> Bytes {
    let mut line =
        serde_json::to_vec(&json!({"type": "ERROR", "object": e.to_status()})).unwrap_or_default();
    line.push(b'\n');
    Bytes::from(line)
}

/// A watch that only reports why it cannot be served (its resourceVersion is too old).
fn error_only(e: &ApiError) -> Response<Body> {
    let mut r = Response::new(Body::from(error_event(e)));
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}
