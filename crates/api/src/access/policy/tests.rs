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
