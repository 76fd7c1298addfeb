//! A watch of one namespace's ConfigMaps that records every event with the instant it arrived,
//! and that, when its stream breaks (its replica was killed), reconnects to the next replica of
//! its list from the last resourceVersion it saw — what client-go's reflector does behind a
//! balancer — recording when it broke, each attempt, any 410 Gone, and when it resumed (the
//! first event or bookmark on the new connection). [`check`] then holds the events against the
//! acknowledged creates: each exactly once, in resourceVersion order.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures::StreamExt;
use http_body_util::BodyExt;
use serde_json::Value;

use super::super::client::Client;
use super::load::{rv_of, Created};

/// How long to wait between failed attempts to (re)open a watch.
const RETRY: Duration = Duration::from_millis(100);

/// One event as received.
#[derive(Clone, Debug)]
pub struct Event {
    /// `ADDED`, `MODIFIED`, `DELETED` or `BOOKMARK`.
    pub kind: String,
    /// The object's name (empty for a bookmark).
    pub name: String,
    /// Its resourceVersion.
    pub rv: u64,
    /// When the chunk holding it arrived.
    pub at: Instant,
}

/// Everything a watcher saw.
#[derive(Debug, Default)]
pub struct Log {
    /// The events, in arrival order.
    pub events: Vec<Event>,
    /// When the first stream broke, and why.
    pub broke: Option<(Instant, String)>,
    /// The first event or bookmark after the first break.
    pub resumed: Option<Instant>,
    /// Which replica (index into the watcher's list) it resumed on.
    pub resumed_on: Option<usize>,
    /// Attempts to open a watch after the first, and the errors among them.
    pub reopen_attempts: usize,
    /// 410 Gone answers (as an HTTP status or an ERROR event).
    pub gone: usize,
    /// The first error of any kind (failed open, ERROR event, broken stream).
    pub first_error: Option<String>,
}

/// A running watch; stopped by [`Watcher::stop`] or when dropped.
pub struct Watcher {
    log: Arc<Mutex<Log>>,
    task: tokio::task::JoinHandle<()>,
}

impl Watcher {
    /// Watch `ns` from resourceVersion `from` on `targets[0]`, reconnecting to the next of
    /// `targets` (wrapping around) whenever a stream breaks or cannot be opened.
    pub fn start(targets: Vec<Client>, ns: &str, from: u64) -> Watcher {
        let log = Arc::new(Mutex::new(Log::default()));
        let task = tokio::spawn(follow(targets, ns.to_string(), from, log.clone()));
        Watcher { log, task }
    }

    /// Events received so far.
    pub fn events(&self) -> usize {
        lock(&self.log).events.len()
    }

    /// Whether it has resumed after a break.
    pub fn resumed(&self) -> bool {
        lock(&self.log).resumed.is_some()
    }

    /// Stop watching and hand over what it saw.
    pub fn stop(self) -> Log {
        self.task.abort();
        std::mem::take(&mut *lock(&self.log))
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn lock(log: &Mutex<Log>) -> MutexGuard<'_, Log> {
    log.lock().unwrap_or_else(|e| e.into_inner())
}

/// The watch loop: open, read until the stream ends, move on to the next target.
async fn follow(targets: Vec<Client>, ns: String, from: u64, log: Arc<Mutex<Log>>) {
    let mut rv = from;
    let mut target = 0;
    let mut conn = 0;
    loop {
        let path = format!(
            "/api/v1/namespaces/{ns}/configmaps?watch=true&resourceVersion={rv}&allowWatchBookmarks=true"
        );
        if conn > 0 {
            lock(&log).reopen_attempts += 1;
        }
        let body = match targets[target].stream(&path).await {
            Ok(body) => body,
            Err(e) => {
                failed_open(&log, format!("{e:#}"));
                target = (target + 1) % targets.len();
                conn += 1;
                tokio::time::sleep(RETRY).await;
                continue;
            }
        };
        let why = read(body, &mut rv, target, conn, &log).await;
        broke(&log, why);
        target = (target + 1) % targets.len();
        conn += 1;
    }
}

/// Record a failed attempt to open a watch.
fn failed_open(log: &Mutex<Log>, text: String) {
    let mut l = lock(log);
    if text.contains("HTTP 410") {
        l.gone += 1;
    }
    l.first_error.get_or_insert(text);
}

/// Record a stream's end.
fn broke(log: &Mutex<Log>, why: String) {
    let mut l = lock(log);
    if l.broke.is_none() {
        l.broke = Some((Instant::now(), why.clone()));
    }
    l.first_error.get_or_insert(why);
}

/// Read one stream to its end, recording its events and advancing `rv`; returns why it ended.
async fn read(
    body: hyper::body::Incoming,
    rv: &mut u64,
    target: usize,
    conn: usize,
    log: &Mutex<Log>,
) -> String {
    let mut body = body.into_data_stream();
    let mut partial = Vec::new();
    loop {
        let chunk = match body.next().await {
            Some(Ok(chunk)) => chunk,
            Some(Err(e)) => return format!("the watch stream broke: {e}"),
            None => return "the server ended the watch".into(),
        };
        let at = Instant::now();
        partial.extend_from_slice(&chunk);
        while let Some(nl) = partial.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = partial.drain(..=nl).collect();
            let Ok(v) = serde_json::from_slice::<Value>(&line) else {
                continue;
            };
            let kind = v["type"].as_str().unwrap_or_default().to_string();
            if kind == "ERROR" {
                let mut l = lock(log);
                if v["object"]["code"].as_u64() == Some(410) {
                    l.gone += 1;
                }
                let text: String = String::from_utf8_lossy(&line).chars().take(300).collect();
                return format!("ERROR event: {text}");
            }
            let meta = &v["object"]["metadata"];
            let Some(event_rv) = rv_of(meta) else {
                continue;
            };
            *rv = event_rv;
            let mut l = lock(log);
            if l.broke.is_some() && l.resumed.is_none() && conn > 0 {
                l.resumed = Some(at);
                l.resumed_on = Some(target);
            }
            l.events.push(Event {
                kind,
                name: meta["name"].as_str().unwrap_or_default().to_string(),
                rv: event_rv,
                at,
            });
        }
    }
}

/// Events held against the acknowledged creates.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Check {
    /// Acknowledged creates never delivered as ADDED.
    pub missed: usize,
    /// ADDED events beyond the first for a name.
    pub duplicated: usize,
    /// Events whose resourceVersion was not above the one before.
    pub out_of_order: usize,
    /// ADDED events whose resourceVersion differs from the create's answer.
    pub rv_mismatch: usize,
    /// ADDED events of names no acknowledged create returned (a create that committed but
    /// whose answer was lost with its replica): allowed, counted.
    pub unacknowledged: usize,
}

impl Check {
    /// Whether every acknowledged create arrived once, in order, as answered.
    pub fn clean(&self) -> bool {
        self.missed == 0 && self.duplicated == 0 && self.out_of_order == 0 && self.rv_mismatch == 0
    }
}

/// Hold `events` against `acked`: each acknowledged create delivered exactly once as ADDED with
/// the resourceVersion it was answered with, and resourceVersions rising from event to event
/// (bookmarks included: one may repeat the last event's).
pub fn check(events: &[Event], acked: &[Created]) -> Check {
    let want: HashMap<&str, u64> = acked.iter().map(|c| (c.name.as_str(), c.rv)).collect();
    let mut c = Check::default();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut last = 0u64;
    for e in events {
        let bookmark = e.kind == "BOOKMARK";
        if e.rv < last || (e.rv == last && !bookmark) {
            c.out_of_order += 1;
        }
        last = last.max(e.rv);
        if e.kind != "ADDED" {
            continue;
        }
        if !seen.insert(&e.name) {
            c.duplicated += 1;
            continue;
        }
        match want.get(e.name.as_str()) {
            Some(rv) if *rv != e.rv => c.rv_mismatch += 1,
            Some(_) => {}
            None => c.unacknowledged += 1,
        }
    }
    c.missed = want.keys().filter(|n| !seen.contains(*n)).count();
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn created(name: &str, rv: u64) -> Created {
        Created {
            name: name.into(),
            rv,
            acked: Instant::now(),
        }
    }

    fn event(kind: &str, name: &str, rv: u64) -> Event {
        Event {
            kind: kind.into(),
            name: name.into(),
            rv,
            at: Instant::now(),
        }
    }

    #[test]
    fn a_clean_feed_passes_and_each_fault_is_counted() {
        let acked = [created("a", 5), created("b", 7), created("c", 9)];
        let clean = [
            event("ADDED", "a", 5),
            event("BOOKMARK", "", 5),
            event("ADDED", "x", 6),
            event("ADDED", "b", 7),
            event("ADDED", "c", 9),
        ];
        let c = check(&clean, &acked);
        assert!(c.clean(), "{c:?}");
        assert_eq!(c.unacknowledged, 1);

        let faulty = [
            event("ADDED", "b", 7),
            event("ADDED", "a", 5),
            event("ADDED", "b", 8),
        ];
        let c = check(&faulty, &acked);
        assert_eq!(
            c,
            Check {
                missed: 1,
                duplicated: 1,
                out_of_order: 1,
                rv_mismatch: 0,
                unacknowledged: 0
            }
        );
        let c = check(&[event("ADDED", "a", 6)], &acked[..1]);
        assert_eq!(c.rv_mismatch, 1);
    }
}
