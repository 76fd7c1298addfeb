//! kill -9 of a replica in the middle of a stream of concurrent writes spread over all three
//! (about 500/s asked; what the machine acknowledges is measured, not asserted): every
//! acknowledged write is readable afterwards from the survivors with the revision it was
//! acknowledged at, watchers on the survivors deliver every object that exists exactly once in
//! revision order, and a watcher connected to the killed replica resumes on another from its
//! last resourceVersion without 410 Gone, missing or repeating nothing. The killed replica then
//! comes back on its port (`scripts/ha start`) and reads the same objects.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};

use crate::cross::config_map;
use crate::feed::{self, rv_of};
use crate::set::HaSet;

const NS: &str = "ha-crash";
const SELECTOR: &str = "ha-e2e=crash";
/// Writes per second asked of all writers together.
const RATE: u64 = 500;
const WRITERS: u64 = 16;
/// The replica killed (1-based).
const VICTIM: usize = 2;
const BEFORE_KILL: Duration = Duration::from_secs(3);
const AFTER_KILL: Duration = Duration::from_secs(4);

/// What the writers did.
#[derive(Default)]
struct Writes {
    /// (name, acknowledged resourceVersion, replica, acknowledged after the kill).
    acked: Vec<(String, u64, usize, bool)>,
    /// (name, replica, error): outcome unknown, the write may or may not have committed.
    failed: Vec<(String, usize, String)>,
}

/// One writer: a create every WRITERS/RATE seconds, through the replicas in turn, skipping the
/// victim once it is known dead, until `stop`.
async fn writer(
    w: u64,
    apis: Vec<Api<ConfigMap>>,
    dead: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    writes: Arc<Mutex<Writes>>,
) {
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 * WRITERS / RATE));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut i: u64 = 0;
    while !stop.load(Ordering::Relaxed) {
        tick.tick().await;
        let killed = dead.load(Ordering::Relaxed);
        // Round-robin over the live replicas.
        let live: Vec<usize> = (1..=apis.len())
            .filter(|k| !(killed && *k == VICTIM))
            .collect();
        let k = live[((w + i) % live.len() as u64) as usize];
        let name = format!("w{w:02}-{i:05}");
        i += 1;
        let result = apis[k - 1]
            .create(&PostParams::default(), &config_map(&name, "crash"))
            .await;
        let mut writes = writes.lock().unwrap();
        match result {
            Ok(made) => {
                let rv = rv_of(&made.metadata.resource_version.unwrap_or_default());
                writes.acked.push((name, rv, k, killed));
            }
            Err(e) => writes.failed.push((name, k, e.to_string())),
        }
    }
}

pub async fn kill_during_writes(set: &HaSet) {
    set.namespace(NS).await;
    let mut apis = Vec::new();
    for k in 1..=set.replicas {
        apis.push(Api::<ConfigMap>::namespaced(set.client(k).await, NS));
    }
    let start = feed::list_rv(&apis[0], SELECTOR).await;
    let watchers = [
        (
            "replica 1's watch",
            feed::watch(vec![(1, apis[0].clone())], SELECTOR, start.clone()),
        ),
        (
            "replica 3's watch",
            feed::watch(vec![(3, apis[2].clone())], SELECTOR, start.clone()),
        ),
        (
            "the watch that starts on replica 2",
            feed::watch(
                vec![(2, apis[1].clone()), (3, apis[2].clone())],
                SELECTOR,
                start,
            ),
        ),
    ];
    // Every watch is open (on its replica) once each has delivered this.
    apis[0]
        .create(&PostParams::default(), &config_map("first", "crash"))
        .await
        .expect("create the first ConfigMap");
    for (who, w) in &watchers {
        assert!(
            w.wait_for("first", Duration::from_secs(60)).await,
            "{who} did not deliver the first ConfigMap within 60 s: {}\n{}",
            w.describe(),
            set.log_tails(20)
        );
    }

    let dead = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let writes = Arc::new(Mutex::new(Writes::default()));
    let tasks: Vec<_> = (0..WRITERS)
        .map(|w| {
            tokio::spawn(writer(
                w,
                apis.clone(),
                dead.clone(),
                stop.clone(),
                writes.clone(),
            ))
        })
        .collect();
    let begun = Instant::now();
    tokio::time::sleep(BEFORE_KILL).await;
    tokio::task::block_in_place(|| set.kill(VICTIM));
    dead.store(true, Ordering::Relaxed);
    tokio::time::sleep(AFTER_KILL).await;
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.expect("a writer task");
    }
    let took = begun.elapsed();

    // Written last, through a survivor: once a watch delivers it, it has delivered every
    // earlier revision.
    apis[0]
        .create(&PostParams::default(), &config_map("last", "crash"))
        .await
        .expect("create the last ConfigMap through replica 1");
    for (who, w) in &watchers {
        assert!(
            w.wait_for("last", Duration::from_secs(120)).await,
            "{who} did not deliver the last ConfigMap within 120 s: {}\n{}",
            w.describe(),
            set.log_tails(30)
        );
    }

    let writes = std::mem::take(&mut *writes.lock().unwrap());
    let acked: BTreeMap<String, u64> = writes
        .acked
        .iter()
        .map(|(n, rv, _, _)| (n.clone(), *rv))
        .collect();
    let committed = feed::read_all(&apis[0], SELECTOR).await;
    let on3 = feed::read_all(&apis[2], SELECTOR).await;
    let after_kill = writes.acked.iter().filter(|a| a.3).count();
    let failed_committed = writes
        .failed
        .iter()
        .filter(|f| committed.contains_key(&f.0))
        .count();
    // Acknowledged per replica: (before the kill, after).
    let mut per_replica = vec![(0, 0); set.replicas];
    for (_, _, k, after) in &writes.acked {
        let counts = &mut per_replica[k - 1];
        if *after {
            counts.1 += 1;
        } else {
            counts.0 += 1;
        }
    }
    eprintln!(
        "ha: {} writes acknowledged in {took:.1?} ({:.0}/s asked {RATE}/s), {after_kill} after the kill of replica {VICTIM}; per replica (before, after): {per_replica:?}; {} failed ({failed_committed} of them committed all the same){}",
        writes.acked.len(),
        writes.acked.len() as f64 / took.as_secs_f64(),
        writes.failed.len(),
        writes.failed.first().map(|f| format!("; the first failure: {} on replica {}: {}", f.0, f.1, f.2)).unwrap_or_default()
    );
    assert!(
        per_replica[VICTIM - 1].0 > 0,
        "replica {VICTIM} acknowledged no write before it was killed: {per_replica:?}"
    );
    assert!(
        writes.acked.len() > after_kill && after_kill > 0,
        "the test needs writes acknowledged before and after the kill: {} and {after_kill}",
        writes.acked.len() - after_kill
    );
    let mut problems = Vec::new();
    for (name, rv) in &acked {
        match committed.get(name) {
            None => problems.push(format!(
                "acknowledged {name} (rv {rv}) is lost: replica 1 does not list it"
            )),
            Some(c) if c != rv => problems.push(format!(
                "acknowledged {name} at rv {rv}, replica 1 lists rv {c}"
            )),
            _ => {}
        }
    }
    if on3 != committed {
        problems.push(format!(
            "replica 3 lists {} ConfigMaps, replica 1 {}",
            on3.len(),
            committed.len()
        ));
    }
    for (who, w) in &watchers {
        problems.extend(feed::check(who, &w.log.lock().unwrap(), &acked, &committed));
    }
    let resumes = watchers[2].1.log.lock().unwrap().resumes.clone();
    if !resumes.iter().any(|r| r.0 == VICTIM && r.1 != VICTIM) {
        problems.push(format!(
            "the watch on replica {VICTIM} never resumed on another replica: {resumes:?}"
        ));
    }
    assert!(
        problems.is_empty(),
        "{}\n{}",
        feed::summary(&problems),
        set.log_tails(30)
    );
    eprintln!("ha: the watch on replica {VICTIM} resumed: {resumes:?}");

    tokio::task::block_in_place(|| set.start(VICTIM));
    let back = feed::read_all(
        &Api::<ConfigMap>::namespaced(set.client(VICTIM).await, NS),
        SELECTOR,
    )
    .await;
    assert!(
        back == committed,
        "replica {VICTIM}, started again, lists {} ConfigMaps; replica 1 lists {}",
        back.len(),
        committed.len()
    );
}
