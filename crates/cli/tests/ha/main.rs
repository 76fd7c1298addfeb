//! The active-active hub end to end: three `flotilla serve` replicas of the binary under test
//! started by `scripts/ha up 3` on one PostgreSQL (a fresh database of scripts/test's server, or
//! the script's own) and their own nats-server with JetStream, driven with kube-rs.
//!
//! * [`cross`]: one identity (replica 1's token and CA work on every replica) and one feed — a
//!   watch on replica 1 sees 1,000 creates made through replicas 2 and 3 in resourceVersion
//!   order, exactly once each.
//! * [`crash`]: replica 2 is killed with SIGKILL (`scripts/ha stop`) during concurrent writes
//!   spread over all replicas: nothing acknowledged is lost, survivors' watchers deliver
//!   everything once, the killed replica's watcher resumes elsewhere without 410 Gone, and
//!   `scripts/ha start` brings the replica back on its port.
//!
//! * [`writer`]: the writer of record (the replica the others hand their writes to) is killed
//!   with SIGKILL during writes through the others: they go on, a survivor takes over, and
//!   nothing acknowledged is lost.
//!
//! * [`loops`]: the server's own loops (garbage collection among them) run on one replica;
//!   when it is killed with SIGKILL a survivor takes them over.
//!
//! * [`shards`]: the replicas' controllers split the 16 shard Leases; the survivors of a SIGKILL
//!   take the dead replica's shards over, and it takes a share back when started again.
//!
//! * [`controllers`]: two `flotilla controllers` processes on API-only replicas share the
//!   propagation to three real member clusters; one is killed with SIGKILL, the other takes
//!   its shards over, a policy created afterwards still propagates, and no Work is written by
//!   both; and one stopped (SIGSTOP) past its Leases is fenced when it resumes.
//!
//! Each test has its own set; they run one at a time (three replicas each on a 2-core machine).

mod controllers;
mod crash;
mod cross;
mod feed;
mod loops;
mod set;
mod shards;
mod writer;

use std::sync::Mutex;

use set::HaSet;

/// One set of replicas at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn run(test: impl std::future::Future<Output = ()>) {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .expect("a tokio runtime")
        .block_on(test);
}

#[test]
fn a_watch_on_one_replica_sees_the_writes_of_the_others() {
    run(async {
        let set = HaSet::up(3, "cross");
        cross::shared_identity(&set).await;
        cross::watch_sees_other_replicas_creates(&set).await;
    });
}

#[test]
fn kill_9_of_a_replica_loses_no_acknowledged_write_and_its_watchers_resume() {
    run(async {
        let set = HaSet::up(3, "crash");
        crash::kill_during_writes(&set).await;
    });
}

#[test]
fn kill_9_of_the_writer_of_record_loses_no_acknowledged_write() {
    run(async {
        let set = HaSet::up(3, "writer");
        writer::kill_the_writer_of_record(&set).await;
    });
}

#[test]
fn the_servers_own_loops_run_on_one_replica_and_move_when_it_dies() {
    run(async {
        let set = HaSet::up(3, "loops");
        loops::one_replica_runs_them_and_a_survivor_takes_over(&set).await;
    });
}

#[test]
fn the_replicas_controllers_share_the_shards_and_take_over_a_dead_ones() {
    run(async {
        let set = HaSet::up(3, "shards");
        shards::survivors_take_over_the_shards(&set).await;
    });
}

#[test]
fn two_controller_processes_propagate_and_the_survivor_of_a_kill_9_carries_on() {
    run(async {
        let members = tokio::task::spawn_blocking(|| flotilla_testkit::Members::up(3))
            .await
            .expect("start member clusters")
            .expect("member clusters (build them with scripts/members build)");
        controllers::two_processes_and_one_killed(&members).await;
    });
}

#[test]
fn a_stalled_controller_process_is_fenced_and_rejoins() {
    run(async {
        let members = tokio::task::spawn_blocking(|| flotilla_testkit::Members::up(3))
            .await
            .expect("start member clusters")
            .expect("member clusters (build them with scripts/members build)");
        controllers::a_stalled_process_resumes(&members).await;
    });
}
