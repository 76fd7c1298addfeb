use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::leases::member_lease_name;
use super::plan::{decide, intended, live_members, share, slots, Slot};
use super::*;

fn lease(name: &str, holder: Option<&str>, renewed: Timestamp) -> Lease {
    Lease {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: holder.map(Into::into),
            lease_duration_seconds: Some(10),
            renew_time: Some(MicroTime(renewed)),
            ..LeaseSpec::default()
        }),
    }
}

fn now() -> Timestamp {
    Timestamp::from_second(1_800_000_000).unwrap()
}

fn ago(secs: i64) -> Timestamp {
    now() - SignedDuration::from_secs(secs)
}

#[test]
fn keys_spread_over_every_shard_and_stay_put() {
    assert_eq!(
        shard_of("shop/web-deployment"),
        shard_of("shop/web-deployment")
    );
    let hit: Owned = (0..1000)
        .map(|i| shard_of(&binding_key(Some("ns"), &format!("app-{i}-deployment"))))
        .collect();
    assert_eq!(hit, Owned::ALL);
    assert!((0..1000).all(|i| shard_of(&format!("c{i}")) < SHARDS));
    // The same key as the Works' binding label hashes: fnv64 of "<ns>/<name>".
    assert_eq!(
        u64::from(shard_of("a/b")),
        crate::propagation::workload::fnv64(b"a/b") % 16
    );
    assert_eq!(binding_key(None, "crb"), "/crb");
}

#[test]
fn share_is_the_ceiling_of_shards_over_processes() {
    assert_eq!(share(1), 16);
    assert_eq!(share(2), 8);
    assert_eq!(share(3), 6);
    assert_eq!(share(5), 4);
    assert_eq!(share(16), 1);
    assert_eq!(share(40), 1);
    assert_eq!(share(0), 16);
}

#[test]
fn alone_a_process_claims_every_shard_at_once() {
    let d = decide(&[Slot::Absent; 16], 1, "a");
    assert!(d.renew.is_empty() && d.release.is_empty());
    assert_eq!(intended(&d), Owned::ALL);
}

#[test]
fn a_second_process_makes_the_first_give_half_back() {
    let mut s = [Slot::Mine; 16];
    let d = decide(&s, 2, "a");
    assert_eq!(d.renew, (0..8).collect::<Vec<_>>());
    assert_eq!(d.release, (8..16).collect::<Vec<_>>());
    assert!(d.claim.is_empty());
    // The newcomer sees the 8 given back as free and takes exactly those.
    for slot in s.iter_mut().take(8) {
        *slot = Slot::Taken;
    }
    for slot in s.iter_mut().skip(8) {
        *slot = Slot::Free;
    }
    let d = decide(&s, 2, "b");
    assert_eq!(intended(&d), (8..16).collect::<Owned>());
    // While the first still holds all, the newcomer takes nothing.
    assert!(intended(&decide(&[Slot::Taken; 16], 2, "b")).is_empty());
}

#[test]
fn three_processes_cover_every_shard_and_none_exceeds_its_share() {
    // Simulate rounds: each process decides on the same view, applies, in turn.
    let ids = ["p1", "p2", "p3"];
    let mut holder: [Option<usize>; 16] = [Some(0); 16];
    for _ in 0..4 {
        for (me, id) in ids.iter().enumerate() {
            let view: [Slot; 16] = std::array::from_fn(|s| match holder[s] {
                None => Slot::Free,
                Some(h) if h == me => Slot::Mine,
                Some(_) => Slot::Taken,
            });
            let d = decide(&view, 3, id);
            for s in d.release {
                holder[s as usize] = None;
            }
            for s in d.claim {
                holder[s as usize] = Some(me);
            }
        }
    }
    assert!(holder.iter().all(Option::is_some), "{holder:?}");
    for me in 0..3 {
        let n = holder.iter().filter(|h| **h == Some(me)).count();
        assert!((4..=6).contains(&n), "process {me} holds {n}");
    }
}

#[test]
fn slots_from_leases() {
    let leases = vec![
        lease("flotilla-shard-0", Some("a"), ago(1)),
        lease("flotilla-shard-1", Some("b"), ago(1)),
        lease("flotilla-shard-2", Some("b"), ago(11)),
        lease("flotilla-shard-3", None, ago(1)),
        lease("flotilla-shard-4", Some("a"), ago(30)),
        lease("flotilla-shard-99", Some("b"), ago(1)),
        lease("member-1", Some("b"), ago(1)),
    ];
    let s = slots(&leases, "a", now());
    assert_eq!(
        s[..6],
        [
            Slot::Mine,
            Slot::Taken,
            Slot::Free,
            Slot::Free,
            Slot::Mine,
            Slot::Absent
        ]
    );
}

#[test]
fn live_members_count_renewed_membership_leases_and_this_one() {
    let me = member_lease_name("a");
    let leases = vec![
        lease(&me, Some("a"), ago(1)),
        lease("flotilla-controller-b", Some("b"), ago(2)),
        lease("flotilla-controller-c", Some("c"), ago(15)),
        lease("flotilla-shard-0", Some("d"), ago(1)),
    ];
    assert_eq!(live_members(&leases, &me, now()), 2);
    assert_eq!(live_members(&[], &me, now()), 1);
}

#[test]
fn membership_leases_of_long_departed_processes_are_removed() {
    let leases = vec![
        lease("flotilla-controller-b", Some("b"), ago(60)),
        lease("flotilla-controller-c", Some("c"), ago(71)),
        lease("flotilla-shard-1", Some("c"), ago(300)),
    ];
    let gone: Vec<_> = super::plan::departed(&leases, now())
        .into_iter()
        .filter_map(|l| l.metadata.name.as_deref())
        .collect();
    assert_eq!(gone, ["flotilla-controller-c"]);
}

#[test]
fn member_lease_names_are_valid_object_names() {
    assert_eq!(
        member_lease_name("Host_1-42-ab12"),
        "flotilla-controller-host-1-42-ab12"
    );
    assert!(member_lease_name(&"x".repeat(400)).len() <= 253);
}

#[tokio::test]
async fn all_owns_everything_and_singletons_run() {
    let shards = Shards::all();
    assert!(shards.owns(0) && shards.owns(15) && !shards.owns(16));
    assert!(shards.owns_key("anything"));
    assert_eq!(shards.work("k", async { 7 }).await, Some(7));
    let ran = std::sync::atomic::AtomicBool::new(false);
    shards
        .while_owned("tokens", || async {
            ran.store(true, std::sync::atomic::Ordering::SeqCst)
        })
        .await;
    assert!(ran.into_inner());
}

#[tokio::test]
async fn gained_ticks_on_gains_and_singletons_stop_on_loss() {
    use futures::StreamExt;
    let (tx, rx) = tokio::sync::watch::channel(Owned::NONE);
    let shards = Shards::new("p", rx);
    let mut gained = Box::pin(shards.gained());
    let shard = shard_of("tokens");
    tx.send_replace(Owned::NONE.with(shard));
    tokio::time::timeout(std::time::Duration::from_secs(1), gained.next())
        .await
        .expect("a gain ticks")
        .expect("stream open");
    assert!(shards.owns_key("tokens"));
    let (started, mut starts) = tokio::sync::mpsc::unbounded_channel();
    let runner = {
        let shards = shards.clone();
        tokio::spawn(async move {
            shards
                .while_owned("tokens", || {
                    let started = started.clone();
                    async move {
                        let _ = started.send(());
                        std::future::pending::<()>().await
                    }
                })
                .await
        })
    };
    starts.recv().await.expect("started while owned");
    // Lost and regained: stopped, then started again.
    tx.send_replace(Owned::NONE);
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    tx.send_replace(Owned::ALL);
    tokio::time::timeout(std::time::Duration::from_secs(1), starts.recv())
        .await
        .expect("started again");
    assert!(!shards.owned().gains_over(Owned::ALL));
    runner.abort();
}

#[tokio::test(start_paused = true)]
async fn a_holding_is_renewed_only_by_its_own_keeper_and_lapses_at_its_deadline() {
    use std::time::Duration;
    use tokio::time::Instant;
    let (state, rx) = state::State::new("p", "flotilla-controller-p".into());
    let written = lease("flotilla-shard-3", Some("p"), now());
    let first = state.take(3, written.clone(), Instant::now() + Duration::from_secs(8));
    state.publish();
    assert!(rx.borrow().contains(3));
    // Given back and taken again: the first holding's keeper can no longer extend it or drop
    // it, the second's can.
    assert!(state.drop_shard(3, None).is_some());
    let second = state.take(3, written.clone(), Instant::now() + Duration::from_secs(8));
    let later = Instant::now() + Duration::from_secs(20);
    assert!(!state.extend(3, first, written.clone(), later));
    assert!(state.drop_shard(3, Some(first)).is_none());
    assert!(state.holding(3, first).is_none());
    assert!(state.extend(3, second, written.clone(), later));
    assert_eq!(
        state.holding(3, second).map(|(until, _)| until),
        Some(later)
    );
    // Not renewed by its deadline: the expiry timer stops the work at once.
    let state = std::sync::Arc::new(state);
    let expiry = tokio::spawn({
        let state = state.clone();
        async move { state.expire().await }
    });
    tokio::time::sleep(Duration::from_secs(19)).await;
    assert!(rx.borrow().contains(3));
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(!rx.borrow().contains(3));
    assert!(!state.holds(3));
    expiry.abort();
}
