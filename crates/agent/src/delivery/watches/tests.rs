use super::*;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

const KEY: &str = "deployments/shop/web";

fn writing(written: &mut HashMap<String, Seen>) {
    hold(written, KEY.to_owned());
}

#[test]
fn the_echo_of_a_write_is_not_queued_whether_it_comes_before_or_after_the_answer() {
    let mut written = HashMap::new();
    // Before: held while the write is in flight, then recognised.
    writing(&mut written);
    assert!(!observed(&mut written, KEY, Some("10")), "held, not queued");
    assert!(
        !settled(&mut written, KEY.to_owned(), Some("10")),
        "its own echo"
    );
    assert!(!written[KEY].moved);
    // After: the version the write returned.
    writing(&mut written);
    assert!(!settled(&mut written, KEY.to_owned(), Some("11")));
    assert!(!observed(&mut written, KEY, Some("11")), "the echo");
    assert!(!written[KEY].moved, "still fresh: written unread next time");
}

#[test]
fn a_change_seen_during_a_write_queues_the_work_once_the_answer_is_known() {
    let mut written = HashMap::new();
    writing(&mut written);
    // The member's controller wrote status right after the create, before its answer.
    assert!(!observed(&mut written, KEY, Some("10")));
    assert!(!observed(&mut written, KEY, Some("12")));
    assert!(settled(&mut written, KEY.to_owned(), Some("10")), "queued");
    assert!(written[KEY].moved, "read before the next write");
    // Later changes are queued at once.
    assert!(observed(&mut written, KEY, Some("13")));
}

#[test]
fn objects_unknown_or_deleted_are_queued_and_a_failed_first_write_leaves_nothing() {
    let mut written = HashMap::new();
    assert!(observed(&mut written, "deployments/shop/other", Some("3")));
    writing(&mut written);
    assert!(!settled(&mut written, KEY.to_owned(), None), "nothing seen");
    assert!(
        !written.contains_key(KEY),
        "no version: nothing to call fresh"
    );
    writing(&mut written);
    assert!(!settled(&mut written, KEY.to_owned(), Some("20")));
    assert!(observed(&mut written, KEY, None), "deleted");
    assert!(!written.contains_key(KEY));
    // A failed write of an object written before, moved meanwhile, is read next time.
    writing(&mut written);
    assert!(!settled(&mut written, KEY.to_owned(), Some("21")));
    writing(&mut written);
    assert!(!observed(&mut written, KEY, Some("22")));
    assert!(settled(&mut written, KEY.to_owned(), None));
    assert!(written[KEY].moved);
    assert_eq!(written[KEY].resource_version.as_deref(), Some("21"));
}

fn watches() -> Watches {
    let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a URL"));
    let member = Client::try_from(config).expect("a client that never connects");
    Watches::new(member, "flotilla-es-m1".into(), Queue::default())
}

fn work(generation: i64, observed: i64, applied: &str) -> Work {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "work.flotilla.io/v1alpha1",
        "kind": "Work",
        "metadata": {"name": "w", "namespace": "flotilla-es-m1", "generation": generation},
        "spec": {"manifests": [{"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop"}}]},
        "status": {
            "conditions": [{"type": "Applied", "status": applied, "reason": "x", "message": "",
                "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": observed}],
            "manifestStatuses": [{"identifier": {"ordinal": 0, "group": "apps", "version": "v1",
                "kind": "Deployment", "resource": "deployments", "namespace": "shop",
                "name": "web"}}],
        },
    }))
    .expect("a Work")
}

#[tokio::test]
async fn a_resync_passes_by_only_works_applied_at_their_generation_with_every_object_unmoved() {
    let w = watches();
    assert!(
        !w.passes_resync(&work(2, 2, "True")),
        "nothing known yet (a restart)"
    );
    {
        let mut written = w.written.lock();
        writing(&mut written);
        settled(&mut written, KEY.to_owned(), Some("10"));
    }
    assert!(w.passes_resync(&work(2, 2, "True")));
    assert!(!w.passes_resync(&work(3, 2, "True")), "a newer generation");
    assert!(!w.passes_resync(&work(2, 2, "False")), "not applied");
    let mut deleting = work(2, 2, "True");
    deleting.metadata.deletion_timestamp = Some(Time(Timestamp::now()));
    assert!(
        !w.passes_resync(&deleting),
        "being deleted: its finalizer waits for a look"
    );
    assert!(observed(&mut w.written.lock(), KEY, Some("11")));
    assert!(!w.passes_resync(&work(2, 2, "True")), "moved since");
}
