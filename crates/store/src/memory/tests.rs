//! What the conformance suite cannot see: named databases.

use crate::{Error, Store};

#[tokio::test]
async fn a_named_database_outlives_its_store_and_is_open_in_one_at_a_time() {
    let url = "memory:unit-named";
    let s = Store::open(url).await.unwrap();
    s.create("/a", crate::Render::fixed(bytes::Bytes::from_static(b"1")))
        .await
        .unwrap();
    let again = Store::open(url).await.expect_err("open twice");
    assert!(matches!(again, Error::MemoryInUse { .. }), "{again:?}");
    s.close().await;
    let s = Store::open(url).await.unwrap();
    assert_eq!(s.revision(), 1);
    assert_eq!(&s.get("/a").await.unwrap().unwrap().value[..], b"1");
    s.close().await;
}

#[tokio::test]
async fn an_unnamed_database_is_new_each_time() {
    let a = Store::open("memory:").await.unwrap();
    a.create("/a", crate::Render::fixed(bytes::Bytes::from_static(b"1")))
        .await
        .unwrap();
    let b = Store::open("memory:").await.unwrap();
    assert_eq!(b.revision(), 0);
    assert!(b.get("/a").await.unwrap().is_none());
}
