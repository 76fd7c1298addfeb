//! Write throughput: many tasks each creating single keys with 1 KiB values, as the API server
//! does under a burst of creates. Prints creates per second.
//!
//! ```text
//! cargo run --release -p flotilla-store --example throughput                  # SQLite in a temp dir
//! cargo run --release -p flotilla-store --example throughput -- postgres://…  # PostgreSQL
//! ```
//! Options after the URL: `TASKS` (default 64) and `WRITES_PER_TASK` (default 1000).

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use flotilla_store::Store;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temporary directory: {e}"));
    let url = match args.first().map(String::as_str) {
        Some(u) if u != "sqlite" => u.to_owned(),
        _ => format!("sqlite:{}", dir.path().join("bench.db").display()),
    };
    let tasks: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(64);
    let per_task: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let backend = url.split(':').next().unwrap_or("?").to_owned();

    let store = Store::open(&url)
        .await
        .unwrap_or_else(|e| panic!("opening {backend}: {e}"));
    // Keys unique per run, so a reused PostgreSQL database does not collide.
    let run = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    let value = Bytes::from(vec![b'x'; 1024]);
    let value = Arc::new(value);

    let started = Instant::now();
    let workers: Vec<_> = (0..tasks)
        .map(|t| {
            let store = store.clone();
            let value = value.clone();
            tokio::spawn(async move {
                for i in 0..per_task {
                    let key = format!("/bench/{run}/{t}/{i}");
                    let v = (*value).clone();
                    if let Err(e) = store.create(&key, Box::new(move |_| v)).await {
                        panic!("create {key}: {e}");
                    }
                }
            })
        })
        .collect();
    for w in workers {
        if let Err(e) = w.await {
            panic!("writer task: {e}");
        }
    }
    let elapsed = started.elapsed();
    let total = tasks * per_task;
    let rate = total as f64 / elapsed.as_secs_f64();
    println!(
        "{backend}: {tasks} tasks x {per_task} creates of 1 KiB = {total} writes in {:.2}s: {rate:.0} creates/s",
        elapsed.as_secs_f64()
    );
    let wal = dir.path().join("bench.db-wal");
    if let Ok(meta) = std::fs::metadata(&wal) {
        println!(
            "  SQLite WAL file at the end: {:.1} MiB",
            meta.len() as f64 / 1048576.0
        );
    }
    store.close().await;
}
