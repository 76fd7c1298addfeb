//! Watches that time deliveries: a [`Tracker`] watches one kind through one API (the hub's
//! Works or bindings, or a member's ConfigMaps or Deployments) and records, per key, the instant
//! the event in which the key first met a condition was received — `Applied=True` for a Work,
//! existing at all for a ConfigMap. A key is usually the object's `namespace/name`; a tracker
//! may derive several keys from one object (a version it shows, whether it runs). It also
//! keeps, for keys that have not met it yet, why (the condition's message), so a stalled run can
//! say what is wrong.

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use flotilla_apis::work::v1alpha1::{Work, CONDITION_APPLIED};
use futures::StreamExt;
use kube::runtime::watcher::{self, watcher, Event};
use kube::runtime::WatchStreamExt;
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;

/// The label every object of a benchmark run carries, valued with the run's name.
pub const RUN_LABEL: &str = "bench.flotilla.io/run";

/// `bench.flotilla.io/run=RUN`: the objects of one run.
pub fn selector(run: &str) -> String {
    format!("{RUN_LABEL}={run}")
}

/// How long a watch gets to list what exists before the benchmark gives up on it.
const SYNC_TIMEOUT: Duration = Duration::from_secs(30);

/// `namespace/name`.
pub type Key = String;

/// What a tracker's judge says of an object in an event.
pub enum Verdict {
    /// The condition is met.
    Met,
    /// Not yet, and perhaps why.
    Pending(Option<String>),
}

#[derive(Default)]
struct Seen {
    /// When each object was first seen meeting the condition.
    met: HashMap<Key, Instant>,
    /// Why objects that have not met it yet have not (their latest word).
    pending: HashMap<Key, String>,
    /// The latest watch error, if the watch is failing.
    error: Option<String>,
    /// Whether the initial list is done.
    synced: bool,
}

/// One running watch; stopped when dropped.
pub struct Tracker {
    /// What it watches (`member-2`), to say where a key is missing; may be empty.
    name: String,
    seen: Arc<Mutex<Seen>>,
    task: tokio::task::JoinHandle<()>,
}

impl Tracker {
    /// Watch `api`'s objects with label `selector` and judge each event with `judge`, keyed by
    /// the object's `namespace/name`; returns once the initial list is done, so nothing created
    /// afterwards is missed.
    pub async fn start<K>(
        api: Api<K>,
        selector: &str,
        judge: impl Fn(&K) -> Verdict + Send + 'static,
    ) -> Result<Tracker>
    where
        K: Resource + Clone + Debug + DeserializeOwned + Send + 'static,
        K::DynamicType: Default,
    {
        Tracker::start_keyed(api, selector, move |o: &K| vec![(key(o), judge(o))]).await
    }

    /// Like [`Tracker::start`], but `judge` names the keys an event is about and judges each;
    /// an empty `selector` watches every object of `api`.
    pub async fn start_keyed<K>(
        api: Api<K>,
        selector: &str,
        judge: impl Fn(&K) -> Vec<(Key, Verdict)> + Send + 'static,
    ) -> Result<Tracker>
    where
        K: Resource + Clone + Debug + DeserializeOwned + Send + 'static,
    {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let mut config = watcher::Config::default();
        if !selector.is_empty() {
            config = config.labels(selector);
        }
        let stream = watcher(api, config).default_backoff();
        let task = {
            let seen = seen.clone();
            tokio::spawn(async move {
                futures::pin_mut!(stream);
                while let Some(event) = stream.next().await {
                    // The receive time, before anything else: this is what latencies end at.
                    let now = Instant::now();
                    let mut s = lock(&seen);
                    match event {
                        Ok(Event::Apply(o) | Event::InitApply(o)) => {
                            for (key, verdict) in judge(&o) {
                                match verdict {
                                    Verdict::Met => {
                                        s.pending.remove(&key);
                                        s.met.entry(key).or_insert(now);
                                    }
                                    Verdict::Pending(why) => {
                                        if !s.met.contains_key(&key) {
                                            s.pending.insert(key, why.unwrap_or_default());
                                        }
                                    }
                                }
                            }
                            s.error = None;
                        }
                        Ok(Event::InitDone) => s.synced = true,
                        Ok(Event::Init | Event::Delete(_)) => {}
                        Err(e) => s.error = Some(e.to_string()),
                    }
                }
            })
        };
        let tracker = Tracker {
            name: String::new(),
            seen,
            task,
        };
        let deadline = Instant::now() + SYNC_TIMEOUT;
        while !lock(&tracker.seen).synced {
            if Instant::now() > deadline {
                bail!(
                    "a watch with labelSelector {selector} did not list within {} s ({})",
                    SYNC_TIMEOUT.as_secs(),
                    lock(&tracker.seen)
                        .error
                        .clone()
                        .unwrap_or_else(|| "no error reported".into())
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(tracker)
    }

    /// The tracker, named after what it watches (`member-2`) in what it says is missing.
    pub fn named(mut self, name: &str) -> Tracker {
        self.name = name.to_string();
        self
    }

    /// A tracker of Works that records when each is first seen `Applied=True`.
    pub async fn applied_works(api: Api<Work>, selector: &str) -> Result<Tracker> {
        Tracker::start(api, selector, |w: &Work| {
            let applied = w
                .status
                .as_ref()
                .and_then(|s| s.conditions.iter().find(|c| c.type_ == CONDITION_APPLIED));
            match applied {
                Some(c) if c.status == "True" => Verdict::Met,
                Some(c) => Verdict::Pending(Some(format!(
                    "Applied={} {}: {}",
                    c.status, c.reason, c.message
                ))),
                None => Verdict::Pending(Some("no Applied condition yet".into())),
            }
        })
        .await
    }

    /// When `key` was first seen meeting the condition.
    pub fn met_at(&self, key: &str) -> Option<Instant> {
        lock(&self.seen).met.get(key).copied()
    }

    /// Up to `n` of `keys` that have not met the condition, each with why (when known).
    pub fn why_not<'a>(&self, keys: impl IntoIterator<Item = &'a Key>, n: usize) -> Vec<String> {
        let s = lock(&self.seen);
        let at = if self.name.is_empty() {
            String::new()
        } else {
            format!("{}: ", self.name)
        };
        keys.into_iter()
            .filter(|k| !s.met.contains_key(*k))
            .take(n)
            .map(|k| match s.pending.get(k) {
                Some(why) if !why.is_empty() => format!("{at}{k} ({why})"),
                Some(_) => format!("{at}{k} (not met yet)"),
                None => format!("{at}{k} (never seen by the watch)"),
            })
            .collect()
    }

    /// The watch's latest error, if it is failing.
    pub fn error(&self) -> Option<String> {
        lock(&self.seen).error.clone()
    }

    /// Which of `keys` have met the condition.
    fn met_flags(&self, keys: &[Key]) -> Vec<bool> {
        let s = lock(&self.seen);
        keys.iter().map(|k| s.met.contains_key(k)).collect()
    }
}

/// When `key` had met the condition in every one of `trackers` (the latest of their times).
pub fn met_in_all(trackers: &[&Tracker], key: &str) -> Option<Instant> {
    let mut latest = None;
    for t in trackers {
        let at = t.met_at(key)?;
        latest = Some(latest.map_or(at, |l: Instant| l.max(at)));
    }
    latest
}

/// How many of `keys` have met the condition in every one of `trackers`.
fn count_met_in_all(trackers: &[&Tracker], keys: &[Key]) -> usize {
    let mut all = vec![true; keys.len()];
    for t in trackers {
        for (a, met) in all.iter_mut().zip(t.met_flags(keys)) {
            *a &= met;
        }
    }
    all.into_iter().filter(|a| *a).count()
}

impl Drop for Tracker {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `namespace/name` of an object.
pub fn key<K: Resource>(o: &K) -> Key {
    format!("{}/{}", o.namespace().unwrap_or_default(), o.name_any())
}

fn lock(seen: &Mutex<Seen>) -> MutexGuard<'_, Seen> {
    // A panic in the watch task cannot leave `Seen` half-updated in a way that matters for
    // figures; keep going with what it holds.
    seen.lock().unwrap_or_else(|e| e.into_inner())
}

/// How waiting for `keys` ended.
pub struct Waited {
    /// How many met the condition.
    pub met: usize,
    /// Up to 5 that did not, with why.
    pub missing: Vec<String>,
}

/// Wait until every one of `keys` has met the condition in each of `trackers`, counting them on
/// `bar`, or until none has for `stall`; `check` is called on every round (to fail early when a
/// process died, or to add keys that are still being created — it returns whether more may
/// come).
pub async fn wait_met(
    trackers: &[&Tracker],
    keys: impl Fn() -> Vec<Key>,
    bar: &indicatif::ProgressBar,
    stall: Duration,
    mut check: impl FnMut() -> Result<bool>,
) -> Result<Waited> {
    let mut last = (0, Instant::now());
    loop {
        let more = check()?;
        let keys = keys();
        let met = count_met_in_all(trackers, &keys);
        bar.set_position(met as u64);
        if met != last.0 {
            last = (met, Instant::now());
        }
        if !more && met == keys.len() {
            return Ok(Waited {
                met,
                missing: Vec::new(),
            });
        }
        if !more && last.1.elapsed() > stall {
            let mut missing = Vec::new();
            for t in trackers {
                missing.extend(t.why_not(&keys, 5 - missing.len().min(5)));
                if let Some(e) = t.error() {
                    let on = if t.name.is_empty() {
                        "the hub"
                    } else {
                        &t.name
                    };
                    missing.push(format!("the watch on {on} fails: {e}"));
                }
            }
            return Ok(Waited { met, missing });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
