//! A ledger of every Work event on the hub, from before the first Work exists to the end of
//! the test, to show that no Work was written by two controller processes: two writers would
//! leave a spec that comes back after being replaced (the old owner's write landing after the
//! new owner's), or generations that do not count the spec changes.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, WatchEvent};
use kube::Client;

/// One ADDED, MODIFIED or DELETED event of a Work.
#[derive(Clone, Debug)]
pub struct Seen {
    pub kind: &'static str,
    pub generation: i64,
    /// The Work's spec as JSON text.
    pub spec: String,
}

#[derive(Default)]
struct Ledger {
    /// "namespace/name" → its events in watch order.
    works: BTreeMap<String, Vec<Seen>>,
    errors: Vec<String>,
}

/// A watch of all Works on one replica, recording every event until dropped.
pub struct WorkWatch {
    ledger: Arc<Mutex<Ledger>>,
    task: tokio::task::JoinHandle<()>,
}

fn works_api(client: Client) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("work.flotilla.io", "v1alpha1", "Work");
    Api::all_with(client, &ApiResource::from_gvk_with_plural(&gvk, "works"))
}

impl WorkWatch {
    /// Lists the Works (none yet, normally) and watches from that list's resourceVersion;
    /// a watch connection that ends is reopened from the last event seen.
    pub async fn start(client: Client) -> WorkWatch {
        let api = works_api(client);
        let list = api
            .list(&ListParams::default())
            .await
            .expect("list Works on the hub");
        let ledger = Arc::new(Mutex::new(Ledger::default()));
        for w in &list.items {
            ledger
                .lock()
                .unwrap()
                .works
                .insert(key(w), vec![seen("LISTED", w)]);
        }
        let mut rv = list.metadata.resource_version.unwrap_or_default();
        let log = ledger.clone();
        let task = tokio::spawn(async move {
            loop {
                let params = kube::api::WatchParams::default().timeout(240);
                let stream = match api.watch(&params, &rv).await {
                    Ok(s) => s,
                    Err(e) => {
                        log.lock()
                            .unwrap()
                            .errors
                            .push(format!("watch Works from {rv}: {e}"));
                        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                        continue;
                    }
                };
                futures::pin_mut!(stream);
                while let Some(item) = stream.next().await {
                    let (kind, work) = match item {
                        Ok(WatchEvent::Added(w)) => ("ADDED", w),
                        Ok(WatchEvent::Modified(w)) => ("MODIFIED", w),
                        Ok(WatchEvent::Deleted(w)) => ("DELETED", w),
                        Ok(WatchEvent::Bookmark(b)) => {
                            rv = b.metadata.resource_version;
                            continue;
                        }
                        Ok(WatchEvent::Error(s)) => {
                            log.lock().unwrap().errors.push(format!(
                                "error event after {rv}: {} {} {}",
                                s.code, s.reason, s.message
                            ));
                            return;
                        }
                        Err(_) => break,
                    };
                    rv = work.metadata.resource_version.clone().unwrap_or_default();
                    let mut ledger = log.lock().unwrap();
                    ledger
                        .works
                        .entry(key(&work))
                        .or_default()
                        .push(seen(kind, &work));
                }
            }
        });
        WorkWatch { ledger, task }
    }

    /// Works whose name contains `part`, with their events so far.
    pub fn works(&self, part: &str) -> BTreeMap<String, Vec<Seen>> {
        let ledger = self.ledger.lock().unwrap();
        ledger
            .works
            .iter()
            .filter(|(k, _)| k.contains(part))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// Panics unless every Work's history is that of one writer at a time: the watch never
    /// failed, generations never go back, a generation always carries one spec, every spec
    /// change raises the generation by exactly one (so the last generation is 1 + the changes
    /// seen), and no spec replaced by another comes back. Returns "key: generations" lines.
    pub fn assert_single_writer(&self) -> Vec<String> {
        let ledger = self.ledger.lock().unwrap();
        assert!(
            ledger.errors.is_empty(),
            "the watch of Works failed: {:?}",
            ledger.errors
        );
        let mut report = Vec::new();
        for (work, events) in &ledger.works {
            // A Work deleted and made again starts a new life: judge each on its own.
            for life in events.split(|e| e.kind == "DELETED") {
                let Some(first) = life.first() else { continue };
                let mut replaced: Vec<&str> = Vec::new();
                let mut changes = 0;
                let mut prev = first;
                for e in &life[1..] {
                    assert!(
                        e.generation >= prev.generation,
                        "{work}: generation went back from {} to {}: {life:#?}",
                        prev.generation,
                        e.generation
                    );
                    if e.spec == prev.spec {
                        assert_eq!(
                            e.generation, prev.generation,
                            "{work}: the generation changed with no spec change: {life:#?}"
                        );
                    } else {
                        assert_eq!(
                            e.generation,
                            prev.generation + 1,
                            "{work}: a spec change not raising the generation by one: {life:#?}"
                        );
                        assert!(
                            !replaced.contains(&e.spec.as_str()),
                            "{work}: a replaced spec was written again (two writers?): {life:#?}"
                        );
                        replaced.push(&prev.spec);
                        changes += 1;
                    }
                    prev = e;
                }
                if first.kind == "ADDED" {
                    assert_eq!(
                        prev.generation,
                        1 + changes,
                        "{work}: last generation is not 1 + the {changes} spec changes: {life:#?}"
                    );
                }
                let gens: Vec<String> = life
                    .iter()
                    .map(|e| format!("{}:{}", e.kind, e.generation))
                    .collect();
                report.push(format!("{work}: {}", gens.join(" ")));
            }
        }
        report
    }
}

impl Drop for WorkWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn key(w: &DynamicObject) -> String {
    format!(
        "{}/{}",
        w.metadata.namespace.as_deref().unwrap_or_default(),
        w.metadata.name.as_deref().unwrap_or_default()
    )
}

fn seen(kind: &'static str, w: &DynamicObject) -> Seen {
    Seen {
        kind,
        generation: w.metadata.generation.unwrap_or_default(),
        spec: w
            .data
            .get("spec")
            .map(|s| s.to_string())
            .unwrap_or_default(),
    }
}
