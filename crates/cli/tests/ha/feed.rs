//! A raw watch of the suite's ConfigMaps as a client that survives its replica: it watches one
//! replica from a resourceVersion and, when the stream breaks and that replica no longer
//! answers, resumes on the next one from the last resourceVersion it saw (an event's or a
//! bookmark's) — never relisting. What it saw is kept for [`check`]: every event with its
//! revision, every resume, and any 410 Gone or other watch error.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, WatchEvent, WatchParams};

/// A resourceVersion as the number flotilla's store gives (the test compares them).
pub fn rv_of(rv: &str) -> u64 {
    rv.parse()
        .unwrap_or_else(|_| panic!("resourceVersion {rv:?} is not a number"))
}

/// One event a watcher received.
#[derive(Clone, Debug)]
pub struct Seen {
    /// ADDED, MODIFIED or DELETED.
    pub kind: &'static str,
    pub name: String,
    pub rv: u64,
    /// The replica (1-based) whose stream delivered it.
    pub replica: usize,
    pub at: Instant,
}

/// Everything a watcher saw so far.
#[derive(Default, Debug)]
pub struct Log {
    pub events: Vec<Seen>,
    /// (from replica, to replica, resourceVersion resumed from).
    pub resumes: Vec<(usize, usize, String)>,
    /// 410 Gone and other error events or refused watches (the test fails on any).
    pub errors: Vec<String>,
}

/// A running watcher; aborted when dropped.
pub struct Watcher {
    pub log: Arc<Mutex<Log>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The resourceVersion of a list of `selector` in `api` (where a watch starts).
pub async fn list_rv(api: &Api<ConfigMap>, selector: &str) -> String {
    api.list(&ListParams::default().labels(selector).limit(1))
        .await
        .expect("list ConfigMaps to start a watch")
        .metadata
        .resource_version
        .expect("a list has a resourceVersion")
}

/// Watch `selector` from `rv` on `targets` in order: (replica number, its API). The watcher
/// stays on a replica while it answers and moves on to the next when it does not.
pub fn watch(targets: Vec<(usize, Api<ConfigMap>)>, selector: &str, rv: String) -> Watcher {
    let log = Arc::new(Mutex::new(Log::default()));
    let task = tokio::spawn(run(targets, selector.to_string(), rv, log.clone()));
    Watcher { log, task }
}

async fn run(
    targets: Vec<(usize, Api<ConfigMap>)>,
    selector: String,
    mut rv: String,
    log: Arc<Mutex<Log>>,
) {
    let wp = WatchParams::default().labels(&selector).timeout(280);
    let mut at = 0;
    // The replica whose stream broke, until a watch is open again.
    let mut broken: Option<usize> = None;
    loop {
        let (replica, api) = &targets[at];
        let stream = match api.watch(&wp, &rv).await {
            Ok(s) => s,
            Err(kube::Error::Api(status)) => {
                log.lock().unwrap().errors.push(format!(
                    "watch from {rv} refused by replica {replica}: {} {} {}",
                    status.code, status.reason, status.message
                ));
                return;
            }
            Err(_) => {
                if at + 1 < targets.len() {
                    // This replica does not answer: resume on the next one.
                    at += 1;
                } else {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                continue;
            }
        };
        if let Some(from) = broken.take() {
            log.lock()
                .unwrap()
                .resumes
                .push((from, *replica, rv.clone()));
        }
        futures::pin_mut!(stream);
        while let Some(item) = stream.next().await {
            let (kind, cm) = match item {
                Ok(WatchEvent::Added(cm)) => ("ADDED", cm),
                Ok(WatchEvent::Modified(cm)) => ("MODIFIED", cm),
                Ok(WatchEvent::Deleted(cm)) => ("DELETED", cm),
                Ok(WatchEvent::Bookmark(b)) => {
                    rv = b.metadata.resource_version;
                    continue;
                }
                Ok(WatchEvent::Error(status)) => {
                    log.lock().unwrap().errors.push(format!(
                        "error event on replica {replica} after {rv}: {} {} {}",
                        status.code, status.reason, status.message
                    ));
                    return;
                }
                // The connection broke (the replica died?): reopen, here or on the next.
                Err(_) => break,
            };
            let name = cm.metadata.name.unwrap_or_default();
            let event_rv = cm.metadata.resource_version.unwrap_or_default();
            log.lock().unwrap().events.push(Seen {
                kind,
                name,
                rv: rv_of(&event_rv),
                replica: *replica,
                at: Instant::now(),
            });
            rv = event_rv;
        }
        broken = Some(*replica);
    }
}

impl Watcher {
    /// How many events it saw, its resumes and errors (for failure messages).
    pub fn describe(&self) -> String {
        let log = self.log.lock().unwrap();
        format!(
            "{} events (the last: {:?}), resumes {:?}, errors {:?}",
            log.events.len(),
            log.events.last().map(|e| (&e.name, e.rv, e.replica)),
            log.resumes,
            log.errors
        )
    }

    /// Wait until this watcher has seen `name` (or `within` passes); false on timeout.
    pub async fn wait_for(&self, name: &str, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            {
                let log = self.log.lock().unwrap();
                if log.events.iter().any(|e| e.name == name) || !log.errors.is_empty() {
                    return log.events.iter().any(|e| e.name == name);
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }
}

/// What is wrong with `log` of watcher `who`, given the acknowledged writes (`acked`: name →
/// resourceVersion, each must be delivered with it) and every object that exists afterwards
/// (`committed`, acknowledged or not: nothing else may be delivered, and all of it must be).
/// Checks revision order, exactly-once delivery and errors. Empty when all is well.
pub fn check(
    who: &str,
    log: &Log,
    acked: &BTreeMap<String, u64>,
    committed: &BTreeMap<String, u64>,
) -> Vec<String> {
    let mut problems: Vec<String> = log.errors.iter().map(|e| format!("{who}: {e}")).collect();
    let mut delivered: BTreeMap<&str, u64> = BTreeMap::new();
    let mut last = 0;
    for e in &log.events {
        if e.rv <= last {
            problems.push(format!(
                "{who}: {} {} at rv {} (replica {}) came after rv {last}: not in resourceVersion order",
                e.kind, e.name, e.rv, e.replica
            ));
        }
        last = last.max(e.rv);
        if e.kind != "ADDED" {
            problems.push(format!("{who}: unexpected {} of {}", e.kind, e.name));
        }
        if let Some(rv) = delivered.insert(&e.name, e.rv) {
            problems.push(format!(
                "{who}: {} delivered twice (rv {rv}, then rv {} from replica {})",
                e.name, e.rv, e.replica
            ));
        }
    }
    for (name, rv) in acked {
        match delivered.get(name.as_str()) {
            None => problems.push(format!(
                "{who}: acknowledged {name} (rv {rv}) never delivered"
            )),
            Some(d) if d != rv => problems.push(format!(
                "{who}: {name} acknowledged at rv {rv}, delivered at rv {d}"
            )),
            _ => {}
        }
    }
    for (name, rv) in committed {
        if !delivered.contains_key(name.as_str()) {
            problems.push(format!(
                "{who}: {name} (rv {rv}) exists but was never delivered"
            ));
        }
    }
    for name in delivered.keys() {
        if !committed.contains_key(*name) {
            problems.push(format!(
                "{who}: {name} delivered but does not exist afterwards"
            ));
        }
    }
    problems
}

/// The objects of `selector` as a list on `api` reads them: name → resourceVersion.
pub async fn read_all(api: &Api<ConfigMap>, selector: &str) -> BTreeMap<String, u64> {
    api.list(&ListParams::default().labels(selector))
        .await
        .expect("list the written ConfigMaps")
        .items
        .into_iter()
        .map(|cm| {
            (
                cm.metadata.name.unwrap_or_default(),
                rv_of(&cm.metadata.resource_version.unwrap_or_default()),
            )
        })
        .collect()
}

/// "N problems, the first: …" for an assertion message.
pub fn summary(problems: &[String]) -> String {
    let first: Vec<&str> = problems.iter().take(15).map(String::as_str).collect();
    format!(
        "{} problem(s); the first:\n  {}",
        problems.len(),
        first.join("\n  ")
    )
}
