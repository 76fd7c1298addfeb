//! Controller process `a` stalls (SIGSTOP) past its Leases while a Deployment of its shards is
//! edited: `b` takes the shards over and carries the edit out; when `a` resumes (SIGCONT) with
//! its stale view, the hub fences its writes, nothing `b` wrote is undone, and the two split
//! the shards again — each Work still written exactly as often as asked.

use std::time::{Duration, Instant};

use flotilla_testkit::Members;

use super::fleet::{image_everywhere, set_image};
use super::{name_held_by, until, until_split, Scene};

pub async fn a_stalled_process_resumes(members: &Members) {
    let scene = Scene::up(members, "ctl_stall").await;
    let before = scene.holders().await;
    let (_, web) = name_held_by(&before, "a", 0);
    let took = scene.deploy(1, &web, Duration::from_secs(60)).await;
    eprintln!("ha controllers: {web} (a's shard) in every member after {took:.1?}");

    scene.procs.signal("a", "STOP");
    let stopped = Instant::now();
    set_image(&scene.set, 2, &web, "nginx:1.28").await;
    let members = &scene.members;
    until(
        Duration::from_secs(45),
        "the edit made while a is stopped in every member",
        || image_everywhere(members, &web, "nginx:1.28"),
    )
    .await;
    eprintln!(
        "ha controllers: an edit of {web} made while a is stopped in every member after {:.1?} (bound 45 s)",
        stopped.elapsed()
    );
    scene.until_all_held_by("b", Duration::from_secs(30)).await;

    // a wakes up believing it still owns its shards; its writes are refused until it learns.
    scene.procs.signal("a", "CONT");
    let resumed = Instant::now();
    let took = until_split(&scene.leases, Duration::from_secs(60)).await;
    eprintln!("ha controllers: a, resumed, holds shards again after {took:.1?}");
    // Whatever a did on waking, the edit stands in every member.
    let members = &scene.members;
    until(
        Duration::from_secs(30),
        "b's edit still in every member after a resumed",
        || image_everywhere(members, &web, "nginx:1.28"),
    )
    .await;
    // a itself noticed on waking that its Leases had run out, and stopped working them.
    let log = scene.procs.log("a");
    let stopped_working = log
        .lines()
        .filter(|l| l.contains("not renewed in time: stopped working it"))
        .count();
    let fenced = log
        .lines()
        .filter(|l| l.contains("409") || l.contains("fence"))
        .count();
    eprintln!(
        "ha controllers: a, resumed, stopped working {stopped_working} shards whose Leases ran out; {fenced} log lines about fenced writes ({:.1?} after SIGCONT)",
        resumed.elapsed()
    );
    assert!(
        stopped_working > 0,
        "a's log tells of no shard it stopped working on waking:\n{}",
        scene.procs.tails()
    );

    // A later edit is carried out by whoever owns the shard now.
    set_image(&scene.set, 1, &web, "nginx:1.29").await;
    until(
        Duration::from_secs(30),
        "an edit after a resumed in every member",
        || image_everywhere(members, &web, "nginx:1.29"),
    )
    .await;
    scene.judge(&[(&web, 3)]).await;
}
