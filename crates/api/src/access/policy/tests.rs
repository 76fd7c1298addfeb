use flotilla_store::Store;
use serde_json::json;

use super::*;
use crate::auth::{authorize, Attributes, UserInfo};

const ROLE: &str = "/registry/rbac.authorization.k8s.io/clusterroles/reader";
const BINDING: &str = "/registry/rbac.authorization.k8s.io/clusterrolebindings/alice-reads";

fn render(v: serde_json::Value) -> flotilla_store::Render {
    flotilla_store::Render::fixed(v.to_string())
}

#[tokio::test]
async fn rbac_writes_are_seen_by_the_next_request() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("db").display());
    let store = Store::open(&url).await.unwrap();
    let cache = Cache::start(store.clone()).await.unwrap();
    let policy = CachePolicy::default();
    let alice = UserInfo::authenticated("alice", vec![]);
    let list_cms = Attributes::resource(alice, "list", "", "configmaps");
    let allowed = |p: &Policy| authorize(&list_cms, p).is_allowed();

    let empty = policy.snapshot(&cache);
    assert!(!allowed(&empty));
    assert!(
        Arc::ptr_eq(&empty, &policy.snapshot(&cache)),
        "kept while unchanged"
    );

    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "reader"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]});
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding", "metadata": {"name": "alice-reads"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "reader"},
        "subjects": [{"kind": "User", "name": "alice"}]});
    store.create(ROLE, render(role)).await.unwrap();
    let created = store
        .create(BINDING, render(binding.clone()))
        .await
        .unwrap();
    cache.sync().await.unwrap();
    assert!(
        allowed(&policy.snapshot(&cache)),
        "a new binding applies at once"
    );

    store
        .delete(BINDING, created.mod_revision, render(binding))
        .await
        .unwrap();
    cache.sync().await.unwrap();
    assert!(
        !allowed(&policy.snapshot(&cache)),
        "a deleted one stops applying"
    );
}

fn cluster_role(name: &str, verbs: &[&str]) -> serde_json::Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": verbs}]})
}

fn binding_of(user: &str, role: &str) -> serde_json::Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding", "metadata": {"name": user},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": role},
        "subjects": [{"kind": "User", "name": user}]})
}

/// A changed role is seen by the next request; a snapshot an earlier request still holds is
/// left as it was (copied, not changed under it); a snapshot that fell behind the feed's buffer
/// (4 changes here) is built again and misses nothing.
#[tokio::test]
async fn changes_apply_to_the_snapshot_and_a_lagging_one_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("db").display());
    let store = Store::open(&url).await.unwrap();
    let cache = Cache::start_with(store.clone(), 4, Default::default())
        .await
        .unwrap();
    let policy = CachePolicy::default();
    let may = |p: &Policy, user: &str, verb: &str| {
        let who = UserInfo::authenticated(user, vec![]);
        authorize(&Attributes::resource(who, verb, "", "configmaps"), p).is_allowed()
    };

    let role = cluster_role("reader", &["list"]);
    let created = store.create(ROLE, render(role)).await.unwrap();
    store
        .create(BINDING, render(binding_of("alice", "reader")))
        .await
        .unwrap();
    cache.sync().await.unwrap();
    let before = policy.snapshot(&cache);
    assert!(may(&before, "alice", "list") && !may(&before, "alice", "get"));

    store
        .update(
            ROLE,
            created.mod_revision,
            render(cluster_role("reader", &["list", "get"])),
        )
        .await
        .unwrap();
    cache.sync().await.unwrap();
    let after = policy.snapshot(&cache);
    assert!(may(&after, "alice", "get"), "the changed role applies");
    assert!(!may(&before, "alice", "get"), "a held snapshot changed");

    // Ten bindings in a row: more than the feed holds.
    for k in 0..10 {
        let user = format!("user-{k}");
        let key = format!("/registry/rbac.authorization.k8s.io/clusterrolebindings/{user}");
        store
            .create(&key, render(binding_of(&user, "reader")))
            .await
            .unwrap();
    }
    cache.sync().await.unwrap();
    let rebuilt = policy.snapshot(&cache);
    assert!((0..10).all(|k| may(&rebuilt, &format!("user-{k}"), "get")));
    assert_eq!(rebuilt.len(), 12);
}
