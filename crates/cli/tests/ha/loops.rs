//! The server's own loops that follow every write (garbage collection, namespace deletion,
//! quota and budget status) run on one replica at a time: the garbage collector collects
//! whichever replica the owner is deleted through, and when the replica running the loops is
//! killed with SIGKILL, a survivor takes them over and collects again.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, PostParams};

use crate::cross::config_map;
use crate::set::HaSet;
use crate::writer::one_holder;

const NS: &str = "ha-loops";
/// The gauge that is 1 on the replica running the loops.
const LOOPS: &str = "flotilla_store_runs_loops";
/// How long the survivors may take to elect another (the lock is free once the killed
/// replica's session ends; the survivors try every second).
const TAKEOVER: Duration = Duration::from_secs(15);
/// How long a dependent may outlive its deleted owner.
const COLLECTED_WITHIN: Duration = Duration::from_secs(15);

pub async fn one_replica_runs_them_and_a_survivor_takes_over(set: &HaSet) {
    set.namespace(NS).await;
    let all: Vec<usize> = (1..=set.replicas).collect();
    let runner = one_holder(set, &all, Duration::from_secs(20), LOOPS).await;
    let others: Vec<usize> = all.iter().copied().filter(|k| *k != runner).collect();
    // Made and deleted through a replica that does not run the loops: the runner collects.
    collects(set, others[0], "before").await;

    tokio::task::block_in_place(|| set.kill(runner));
    let killed_at = Instant::now();
    let successor = one_holder(set, &others, TAKEOVER, LOOPS).await;
    eprintln!(
        "ha: loops ran on replica {runner}; {:?} after its SIGKILL replica {successor} runs them",
        killed_at.elapsed()
    );
    let through = others
        .iter()
        .copied()
        .find(|k| *k != successor)
        .unwrap_or(successor);
    collects(set, through, "after").await;
}

/// Through replica `k`: an owner ConfigMap and one that names it as its owner; the owner is
/// deleted, and the dependent must be gone within [`COLLECTED_WITHIN`].
async fn collects(set: &HaSet, k: usize, tag: &str) {
    let api = Api::<ConfigMap>::namespaced(set.client(k).await, NS);
    let owner_name = format!("owner-{tag}");
    let owner = api
        .create(&PostParams::default(), &config_map(&owner_name, "loops"))
        .await
        .unwrap_or_else(|e| panic!("create {owner_name} through replica {k}: {e}"));
    let uid = owner.metadata.uid.expect("a created object has a uid");
    let mut dependent = config_map(&format!("dependent-{tag}"), "loops");
    dependent.metadata.owner_references = Some(vec![
        k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            name: owner_name.clone(),
            uid,
            ..Default::default()
        },
    ]);
    let dependent = api
        .create(&PostParams::default(), &dependent)
        .await
        .unwrap_or_else(|e| panic!("create the dependent through replica {k}: {e}"));
    let dependent_name = dependent.metadata.name.expect("a name");
    api.delete(&owner_name, &DeleteParams::background())
        .await
        .unwrap_or_else(|e| panic!("delete {owner_name} through replica {k}: {e}"));
    let deadline = Instant::now() + COLLECTED_WITHIN;
    while api.get_opt(&dependent_name).await.ok().flatten().is_some() {
        assert!(
            Instant::now() < deadline,
            "{dependent_name} still exists {COLLECTED_WITHIN:?} after its owner was deleted \
             ({tag} the SIGKILL of the replica running the loops)\n{}",
            set.log_tails(20)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
