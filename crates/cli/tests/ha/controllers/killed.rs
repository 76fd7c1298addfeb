//! SIGKILL of controller process `a`: `b` owns every shard once a's Leases lapse, a Deployment
//! created right after still reaches every member within 15 s + normal latency, and b carries
//! an edit of a Deployment a had propagated — each Work written exactly as often as asked.

use std::time::{Duration, Instant};

use flotilla_controllers::shards::shard_of;
use flotilla_testkit::Members;

use super::fleet::{everywhere, image_everywhere, set_image};
use super::{last_owned, name_held_by, shard_of_deployment, until, Scene, MEMBERS, SHARDS};

pub async fn two_processes_and_one_killed(members: &Members) {
    let mut scene = Scene::up(members, "ctl_kill").await;
    // Both Deployments belong to shards of a, so b has to take them over.
    let before = scene.holders().await;
    let (n, first) = name_held_by(&before, "a", 0);
    let (_, second) = name_held_by(&before, "a", n);
    let pushed_by_a: Vec<&str> = MEMBERS
        .into_iter()
        .filter(|c| before.get(&shard_of(c)).map(String::as_str) == Some("a"))
        .collect();
    eprintln!(
        "ha controllers: {first} (shard {}) and {second} (shard {}) are a's; a pushes to {pushed_by_a:?}",
        shard_of_deployment(&first),
        shard_of_deployment(&second)
    );

    // (2) A Deployment and a policy for every member propagate.
    let took = scene.deploy(1, &first, Duration::from_secs(60)).await;
    eprintln!("ha controllers: {first} in every member after {took:.1?}");
    let still = scene.holders().await;
    assert_eq!(
        still.get(&shard_of_deployment(&first)).map(String::as_str),
        Some("a"),
        "the first Deployment's shard moved before a was killed: {still:?}"
    );

    // (3) SIGKILL of a.
    scene.procs.kill("a");
    let killed = Instant::now();
    // (4) A second Deployment and policy, made at once, reach every member within 15 s +
    // normal latency.
    let took = scene.deploy(2, &second, Duration::from_secs(45)).await;
    eprintln!(
        "ha controllers: {second} in every member {:.1?} after SIGKILL of a ({took:.1?} after its create; bound 45 s)",
        killed.elapsed()
    );
    // The takeover: b holds every shard (a's Leases lapsed: 10 s, plus a round).
    scene.until_all_held_by("b", Duration::from_secs(30)).await;
    eprintln!(
        "ha controllers: b holds all 16 shards {:.1?} after SIGKILL of a (when first seen)",
        killed.elapsed()
    );
    assert_eq!(
        last_owned(&scene.procs.log("b")),
        Some(SHARDS),
        "b's log does not tell of it owning all 16 shards:\n{}",
        scene.procs.tails()
    );
    let members = &scene.members;
    assert!(
        everywhere(members, &first).await,
        "{first} left a member after the takeover"
    );
    // b, now the owner, carries an edit of the first Deployment out.
    let begun = Instant::now();
    set_image(&scene.set, 2, &first, "nginx:1.28").await;
    until(
        Duration::from_secs(30),
        "the edit of the first Deployment in every member",
        || image_everywhere(members, &first, "nginx:1.28"),
    )
    .await;
    eprintln!(
        "ha controllers: the edit of {first} in every member after {:.1?}",
        begun.elapsed()
    );

    // (5) No Work written by both: one generation per Work of the second Deployment, two
    // (create, edit) per Work of the first — a's writes and b's re-reconcile of a's shards on
    // the takeover made none extra.
    scene.judge(&[(&first, 2), (&second, 1)]).await;
}
