//! The watch cache against a real SQLite store in a temp dir.

use std::sync::Arc;

use bytes::Bytes;

use super::*;

fn obj(name: &str, labels: &str, rev: i64) -> Bytes {
    Bytes::from(format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"ns","resourceVersion":"{rev}","labels":{{{labels}}}}}}}"#
    ))
}

async fn setup() -> (tempfile::TempDir, Store, Arc<Cache>) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&format!("sqlite:{}", dir.path().join("db").display()))
        .await
        .unwrap();
    let cache = Cache::start(store.clone()).await.unwrap();
    (dir, store, cache)
}

async fn put(store: &Store, name: &str, labels: &'static str) -> i64 {
    let n = name.to_string();
    store
        .create(
            &format!("/registry/core/configmaps/ns/{name}"),
            Box::new(move |rev| obj(&n, labels, rev)),
        )
        .await
        .unwrap()
        .mod_revision
}

#[tokio::test]
async fn reads_are_consistent_after_writes() {
    let (_d, store, cache) = setup().await;
    let rev = put(&store, "a", r#""app":"web""#).await;
    cache.sync().await.unwrap();
    let o = cache
        .get("/registry/core/configmaps/ns/a")
        .expect("visible after sync");
    assert_eq!(o.mod_revision, rev);
    assert_eq!(o.label("app"), Some("web"));
    assert_eq!(o.namespace.as_deref(), Some("ns"));
}

#[tokio::test]
async fn subscribe_replays_history_then_goes_live() {
    let (_d, store, cache) = setup().await;
    let r1 = put(&store, "a", "").await;
    put(&store, "b", "").await;
    cache.sync().await.unwrap();
    let mut sub = cache
        .subscribe("/registry/core/configmaps/ns/", Some(r1))
        .unwrap();
    assert_eq!(sub.replay.len(), 1, "only what came after r1");
    assert_eq!(sub.replay[0].object.name, "b");
    put(&store, "c", "").await;
    let live = tokio::time::timeout(Duration::from_secs(5), sub.live.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(live.object.name, "c");
    assert_eq!(live.kind, ChangeKind::Added);
}

#[tokio::test]
async fn current_state_subscription_lists_only_the_prefix() {
    let (_d, store, cache) = setup().await;
    put(&store, "a", "").await;
    store
        .create(
            "/registry/core/secrets/ns/s",
            Box::new(|rev| obj("s", "", rev)),
        )
        .await
        .unwrap();
    cache.sync().await.unwrap();
    let sub = cache.subscribe("/registry/core/configmaps/", None).unwrap();
    let names: Vec<&str> = sub.replay.iter().map(|c| c.object.name.as_str()).collect();
    assert_eq!(names, vec!["a"]);
    assert_eq!(cache.count("/registry/core/"), 2);
}

#[tokio::test]
async fn too_old_resource_version_is_gone() {
    let (_d, store, _) = setup().await;
    put(&store, "a", "").await;
    // A cache that starts now has history only from its start.
    let cache = Cache::start(store.clone()).await.unwrap();
    let err = cache
        .subscribe("/registry/", Some(0))
        .err()
        .expect("history before start is gone");
    assert_eq!(err.code, 410);
}

#[tokio::test]
async fn history_older_than_the_cache_is_replayed_from_the_store() {
    let (_d, store, _) = setup().await;
    let r1 = put(&store, "a", "").await;
    put(&store, "b", "").await;
    store
        .update(
            "/registry/core/configmaps/ns/a",
            r1,
            Box::new(|rev| obj("a", r#""v":"2""#, rev)),
        )
        .await
        .unwrap();
    // A cache that starts now (as after a restart) has no history of its own before it.
    let cache = Cache::start(store.clone()).await.unwrap();
    put(&store, "c", "").await;
    cache.sync().await.unwrap();
    let sub = cache
        .subscribe_replaying("/registry/core/configmaps/ns/", Some(r1))
        .await
        .expect("the store still has the log");
    let seen: Vec<(&str, ChangeKind)> = sub
        .replay
        .iter()
        .map(|c| (c.object.name.as_str(), c.kind))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("b", ChangeKind::Added),
            ("a", ChangeKind::Modified),
            ("c", ChangeKind::Added)
        ],
        "every change after r1 once, in order: the log's, then the cache's"
    );
    assert_eq!(sub.replay[1].object.label("v"), Some("2"));
    assert!(
        sub.replay[1].prev.is_some(),
        "a modification knows its old state"
    );

    // Compacted history is gone for good.
    store.compact(store.revision()).await.unwrap();
    let err = cache
        .subscribe_replaying("/registry/core/configmaps/ns/", Some(r1))
        .await
        .err()
        .expect("compacted");
    assert_eq!(err.code, 410);
}

#[tokio::test]
async fn list_pages_and_filters() {
    let (_d, store, cache) = setup().await;
    for n in ["a", "b", "c", "d"] {
        put(&store, n, r#""k":"v""#).await;
    }
    cache.sync().await.unwrap();
    let (page, _, more) = cache.list("/registry/core/configmaps/ns/", None, Some(3), |_| true);
    assert_eq!(page.len(), 3);
    assert!(more);
    let (rest, _, more) = cache.list(
        "/registry/core/configmaps/ns/",
        Some(&page[2].key),
        Some(3),
        |_| true,
    );
    assert_eq!(rest.len(), 1);
    assert!(!more);
    let (odd, _, _) = cache.list("/registry/core/configmaps/ns/", None, None, |o| {
        o.name == "b" || o.name == "d"
    });
    assert_eq!(odd.len(), 2);
}

#[test]
fn history_keeps_fresh_changes_and_a_floor_of_old_ones() {
    let change = |rev: i64| {
        let object = CachedObject::new(
            format!("/registry/core/configmaps/ns/c{rev}"),
            obj("c", "", rev),
            rev,
        )
        .unwrap();
        Arc::new(Change {
            revision: rev,
            kind: ChangeKind::Added,
            object: Arc::new(object),
            prev: None,
        })
    };
    let mut st = State::default();
    let start = Instant::now();
    let total = HISTORY_MIN as i64 + 500;
    // The first 700 changes are old, the rest fresh.
    for rev in 1..=total {
        let at = if rev <= 700 {
            start
        } else {
            start + HISTORY_FRESH + Duration::from_secs(10)
        };
        st.remember(at, change(rev));
    }
    // The old ones went as far as the floor allows, the fresh ones all stay.
    assert_eq!(st.history.len(), HISTORY_MIN);
    assert_eq!(st.history_start, total - HISTORY_MIN as i64);
    assert_eq!(st.history.front().unwrap().1.revision, st.history_start + 1);
    // Once everything is old, the floor still holds.
    st.trim_history(start + 10 * HISTORY_FRESH);
    assert_eq!(st.history.len(), HISTORY_MIN);
}

#[test]
fn history_of_large_objects_is_bounded_by_bytes() {
    // Fresh changes of 64 KiB objects: the byte budget, not the age, trims them. (Random
    // letters: held compressed, repeated ones would take next to nothing.)
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let big: String = (0..64 << 10)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            char::from(b'a' + (seed % 26) as u8)
        })
        .collect();
    let mut st = State::default();
    let now = Instant::now();
    let total = 2 * HISTORY_MIN as i64;
    for rev in 1..=total {
        let raw = Bytes::from(format!(
            r#"{{"metadata":{{"name":"c","resourceVersion":"{rev}"}},"data":{{"v":"{big}"}}}}"#
        ));
        let object =
            Arc::new(CachedObject::new("/registry/core/configmaps/ns/c".into(), raw, rev).unwrap());
        st.remember(
            now,
            Arc::new(Change {
                revision: rev,
                kind: ChangeKind::Modified,
                object: object.clone(),
                prev: Some(object),
            }),
        );
    }
    // HISTORY_MIN changes of 128 KiB each are more than the budget: the floor wins.
    assert_eq!(st.history.len(), HISTORY_MIN);
    assert_eq!(st.history_start, total - HISTORY_MIN as i64);
    let held: usize = st.history.iter().map(|(_, c)| c.bytes()).sum();
    assert_eq!(st.history_bytes, held, "the count follows what is held");

    // Small changes after them push the big ones out until the budget holds again.
    for rev in total + 1..=total + 2 * HISTORY_MIN as i64 {
        let object = Arc::new(
            CachedObject::new(
                format!("/registry/core/configmaps/ns/s{rev}"),
                obj("s", "", rev),
                rev,
            )
            .unwrap(),
        );
        st.remember(
            now,
            Arc::new(Change {
                revision: rev,
                kind: ChangeKind::Added,
                object,
                prev: None,
            }),
        );
    }
    assert!(st.history_bytes <= HISTORY_BYTES);
    assert!(st.history.len() > HISTORY_MIN, "small changes fit more");
    let held: usize = st.history.iter().map(|(_, c)| c.bytes()).sum();
    assert_eq!(st.history_bytes, held);
}

#[tokio::test]
async fn a_writes_hint_answers_for_the_object_it_stored() {
    use crate::admission::schema::on_read::ReadDefaults;
    let (_d, store, cache) = setup().await;
    let schema = serde_json::json!({"type": "object", "properties": {
        "a": {"type": "string", "default": "A"}}});
    let defaults = Arc::new(ReadDefaults::compile(&schema).expect("a default"));
    let key = "/registry/example.com/foos/x";
    let head = Bytes::from_static(br#"{"a":"set","metadata":{"name":"x","resourceVersion":""#);
    let tail = Bytes::from_static(br#""}}"#);
    // Told "unchanged" (a lie the object's bytes would contradict): the cache believes the
    // write, so it was the hint that answered, not a parse.
    cache.hint(key, (head.clone(), tail.clone()), defaults.clone(), true);
    let stored = store
        .create(key, flotilla_store::Render::splice(head, tail))
        .await
        .expect("stored");
    // The write's response asks first: from the hint, or the object it went to.
    assert_eq!(
        cache.known_defaults(key, &stored.value, &defaults),
        Some(true)
    );
    cache.sync().await.unwrap();
    let o = cache.get(key).expect("cached");
    assert!(o.changed_by_defaults(&defaults, || panic!("asked again")));
    assert_eq!(cache.known_defaults(key, &o.raw(), &defaults), Some(true));
    // Without a hint (another replica's write), the object is asked.
    store
        .update(
            key,
            o.mod_revision,
            flotilla_store::Render::fixed(&br#"{"metadata":{"name":"x"}}"#[..]),
        )
        .await
        .expect("updated");
    cache.sync().await.unwrap();
    let o = cache.get(key).expect("cached");
    assert_eq!(
        cache.known_defaults(key, &o.raw(), &defaults),
        None,
        "nobody said"
    );
    let mut asked = false;
    assert!(!o.changed_by_defaults(&defaults, || {
        asked = true;
        false
    }));
    assert!(asked, "no hint for bytes it was not left for");
}

#[test]
fn large_objects_are_held_compressed_and_read_back_exactly() {
    let labels: String = (0..40).map(|i| format!(r#""k{i}":"value-{i}","#)).collect();
    let big = format!(
        r#"{{"metadata":{{"name":"big","namespace":"ns","labels":{{{}}}}},"data":{{"a":"{}"}}}}"#,
        labels.trim_end_matches(','),
        "repetitive ".repeat(200)
    );
    assert!(big.len() >= super::object::COMPRESS_FROM);
    let o = CachedObject::new(
        "/registry/core/configmaps/ns/big".into(),
        Bytes::from(big.clone()),
        3,
    )
    .unwrap();
    assert_eq!(o.raw(), Bytes::from(big.clone()), "byte for byte");
    assert_eq!(o.raw_len(), big.len());
    assert!(
        o.held_bytes() * 2 < big.len(),
        "held compressed: {}",
        o.held_bytes()
    );
    assert!(o.is(big.as_bytes()));
    assert!(!o.is(&big.as_bytes()[1..]));
    let mut other = big.clone().into_bytes();
    other[20] ^= 1;
    assert!(!o.is(&other), "same length, other bytes");
    assert_eq!(o.label("k7"), Some("value-7"));
    assert_eq!(o.label("k40"), None);
    assert_eq!(o.value()["metadata"]["name"], "big");

    // A small object is held as it is.
    let small = obj("s", r#""app":"x""#, 4);
    let s = CachedObject::new("/registry/core/configmaps/ns/s".into(), small.clone(), 4).unwrap();
    assert_eq!(s.held_bytes(), small.len());
    assert_eq!(s.raw(), small);
    assert_eq!(s.label("app"), Some("x"));
}
