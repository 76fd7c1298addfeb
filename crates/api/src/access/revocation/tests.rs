//! Revocation against a real watch cache on SQLite: deleting, re-creating or (for bootstrap
//! tokens) changing an object ends what depends on it; expiry ends it on time; nothing else does.

use std::time::Duration;

use flotilla_store::Store;
use serde_json::json;

use super::*;

const SA: &str = "/registry/core/serviceaccounts/team/bot";
const SECRET: &str = "/registry/core/secrets/team/s";

fn render(v: serde_json::Value) -> flotilla_store::Render {
    flotilla_store::Render::fixed(v.to_string())
}

fn object(uid: &str) -> serde_json::Value {
    json!({"metadata": {"uid": uid}})
}

async fn cache() -> (tempfile::TempDir, Store, Arc<Cache>, Revocations) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("db").display());
    let store = Store::open(&url).await.unwrap();
    let cache = Cache::start(store.clone()).await.unwrap();
    let revocations = Revocations::default();
    revocations.start(cache.clone());
    (dir, store, cache, revocations)
}

fn depends_on(key: &str, uid: &str) -> Credential {
    Credential {
        expires_after: None,
        depends_on: vec![Dependency {
            key: key.into(),
            uid: Some(uid.into()),
            revision: None,
        }],
    }
}

/// Does `revoked` complete within `within`?
async fn ends(revoked: impl Future<Output = ()>, within: Duration) -> bool {
    tokio::time::timeout(within, revoked).await.is_ok()
}

const SOON: Duration = Duration::from_secs(5);
const NOT_YET: Duration = Duration::from_millis(300);

#[tokio::test]
async fn deleting_or_recreating_the_object_revokes_every_waiter_on_it() {
    let (_dir, store, cache, revocations) = cache().await;
    let created = store.create(SA, render(object("u1"))).await.unwrap();
    cache.sync().await.unwrap();
    let credential = depends_on(SA, "u1");
    assert_eq!(credential.check(&cache), Ok(()));

    let first = revocations.until_revoked(&cache, &credential);
    let second = revocations.until_revoked(&cache, &credential);
    assert_eq!(revocations.registry.lock().len(), 1, "one entry per object");
    let mut first = Box::pin(first);
    assert!(!ends(&mut first, NOT_YET).await, "valid: not revoked");

    store
        .delete(SA, created.mod_revision, render(object("u1")))
        .await
        .unwrap();
    assert!(ends(first, SOON).await, "deleted: revoked");
    assert!(ends(second, SOON).await, "every waiter");
    assert!(
        revocations.registry.lock().is_empty(),
        "forgotten once nobody waits"
    );

    // Re-created: another object, and a credential naming the old uid is dead at once.
    store.create(SA, render(object("u2"))).await.unwrap();
    cache.sync().await.unwrap();
    assert!(credential.check(&cache).is_err());
    assert!(ends(revocations.until_revoked(&cache, &credential), SOON).await);
}

#[tokio::test]
async fn a_bootstrap_credential_ends_when_its_secret_changes() {
    let (_dir, store, cache, revocations) = cache().await;
    let created = store.create(SECRET, render(object("s1"))).await.unwrap();
    cache.sync().await.unwrap();
    let credential = Credential::bootstrap(&cache.get(SECRET).unwrap());
    let mut revoked = Box::pin(revocations.until_revoked(&cache, &credential));
    assert!(!ends(&mut revoked, NOT_YET).await);
    store
        .update(
            SECRET,
            created.mod_revision,
            render(json!({"metadata": {"uid": "s1"}, "data": {}})),
        )
        .await
        .unwrap();
    assert!(ends(revoked, SOON).await, "changed: revoked");
}

#[tokio::test]
async fn expiry_ends_it_and_nothing_ends_a_permanent_credential() {
    let (_dir, store, cache, revocations) = cache().await;
    store.create(SA, render(object("u1"))).await.unwrap();
    cache.sync().await.unwrap();
    let mut expiring = depends_on(SA, "u1");
    expiring.expires_after = Some(chrono::Utc::now().timestamp() + 1);
    let mut revoked = Box::pin(revocations.until_revoked(&cache, &expiring));
    assert!(!ends(&mut revoked, NOT_YET).await, "not expired yet");
    assert!(ends(revoked, SOON).await, "expired");

    let permanent = Credential::permanent();
    assert!(!ends(revocations.until_revoked(&cache, &permanent), NOT_YET).await);
    // Unrelated writes revoke nothing.
    let mut revoked = Box::pin(revocations.until_revoked(&cache, &depends_on(SA, "u1")));
    store.create(SECRET, render(object("s1"))).await.unwrap();
    assert!(!ends(&mut revoked, NOT_YET).await);
}
