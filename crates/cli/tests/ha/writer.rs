//! kill -9 of the writer of record (the replica the others hand their writes to): writes
//! through the survivors go on — committed by the survivors themselves at once, then by the
//! survivor that takes the writer-of-record lock — and nothing acknowledged is lost.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use kube::Client;

use crate::cross::config_map;
use crate::feed::{self, rv_of};
use crate::set::HaSet;

const NS: &str = "ha-writer";
const SELECTOR: &str = "ha-e2e=writer";
const WRITERS: u64 = 8;
/// The gauge that is 1 on the writer of record.
const WRITER: &str = "flotilla_store_writer_of_record";
/// Writes per second asked of each writer.
const PER_WRITER: u64 = 25;
const BEFORE_KILL: Duration = Duration::from_secs(3);
const AFTER_KILL: Duration = Duration::from_secs(5);

/// A counter or gauge of replica `client`'s `/metrics`.
async fn metric(client: &Client, name: &str) -> Option<f64> {
    let req = http::Request::get("/metrics")
        .body(Vec::new())
        .expect("a request");
    let text = client.request_text(req).await.ok()?;
    text.lines()
        .filter_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .find_map(|v| v.trim().parse().ok())
}

/// The replicas among `among` whose gauge `role` is 1.
async fn holders(set: &HaSet, among: &[usize], role: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for k in among {
        let client = set.client(*k).await;
        if metric(&client, role).await == Some(1.0) {
            out.push(*k);
        }
    }
    out
}

/// Wait until exactly one of `among` holds `role` (a gauge of `/metrics`, 1 on the holder).
pub async fn one_holder(set: &HaSet, among: &[usize], within: Duration, role: &str) -> usize {
    let deadline = Instant::now() + within;
    loop {
        let h = holders(set, among, role).await;
        if h.len() == 1 {
            return h[0];
        }
        assert!(
            Instant::now() < deadline,
            "after {within:?} the holders of {role} among replicas {among:?} are {h:?}\n{}",
            set.log_tails(20)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

pub async fn kill_the_writer_of_record(set: &HaSet) {
    set.namespace(NS).await;
    let all: Vec<usize> = (1..=set.replicas).collect();
    let holder = one_holder(set, &all, Duration::from_secs(20), WRITER).await;
    let others: Vec<usize> = all.iter().copied().filter(|k| *k != holder).collect();
    let mut apis = Vec::new();
    for k in &others {
        apis.push((*k, Api::<ConfigMap>::namespaced(set.client(*k).await, NS)));
    }

    let stop = Arc::new(AtomicBool::new(false));
    let killed = Arc::new(AtomicBool::new(false));
    // (name, rv, after the kill) acknowledged; (name, error) failed.
    let acked = Arc::new(Mutex::new(Vec::<(String, u64, bool)>::new()));
    let failed = Arc::new(Mutex::new(Vec::<(String, String)>::new()));
    let tasks: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (apis, stop, killed) = (apis.clone(), stop.clone(), killed.clone());
            let (acked, failed) = (acked.clone(), failed.clone());
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / PER_WRITER));
                let mut i = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    tick.tick().await;
                    let after = killed.load(Ordering::Relaxed);
                    let api = &apis[(w as usize + i) % apis.len()].1;
                    let name = format!("w{w}-{i:04}");
                    i += 1;
                    match api
                        .create(&PostParams::default(), &config_map(&name, "writer"))
                        .await
                    {
                        Ok(made) => {
                            let rv = rv_of(&made.metadata.resource_version.unwrap_or_default());
                            acked.lock().unwrap().push((name, rv, after));
                        }
                        Err(e) => failed.lock().unwrap().push((name, e.to_string())),
                    }
                }
            })
        })
        .collect();
    tokio::time::sleep(BEFORE_KILL).await;
    // The survivors-to-be handed their writes on until now.
    for (k, api) in &apis {
        let client = api.clone().into_client();
        let handed = metric(&client, "flotilla_store_writes_handed_on_total").await;
        assert!(
            handed.unwrap_or(0.0) > 0.0,
            "replica {k} handed no write on to the writer of record (replica {holder}): {handed:?}"
        );
    }
    tokio::task::block_in_place(|| set.kill(holder));
    killed.store(true, Ordering::Relaxed);
    tokio::time::sleep(AFTER_KILL).await;
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.expect("a writer task");
    }
    let successor = one_holder(set, &others, Duration::from_secs(10), WRITER).await;

    let acked = std::mem::take(&mut *acked.lock().unwrap());
    let failed = std::mem::take(&mut *failed.lock().unwrap());
    let after = acked.iter().filter(|a| a.2).count();
    eprintln!(
        "ha: writer of record replica {holder} killed; {} writes acknowledged ({after} after the kill), {} failed{}; replica {successor} took over",
        acked.len(),
        failed.len(),
        failed.first().map(|f| format!(" (the first: {}: {})", f.0, f.1)).unwrap_or_default()
    );
    assert!(after > 0, "no write was acknowledged after the kill");
    let mut problems = Vec::new();
    for (k, api) in &apis {
        let stored = feed::read_all(api, SELECTOR).await;
        for (name, rv, _) in &acked {
            match stored.get(name) {
                None => problems.push(format!(
                    "acknowledged {name} (rv {rv}) is lost on replica {k}"
                )),
                Some(got) if got != rv => problems.push(format!(
                    "{name} was acknowledged at rv {rv}, replica {k} has it at {got}"
                )),
                Some(_) => {}
            }
        }
    }
    assert!(problems.is_empty(), "{}", feed::summary(&problems));
}
