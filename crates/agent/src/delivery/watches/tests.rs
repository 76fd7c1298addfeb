use super::*;

const KEY: &str = "deployments/shop/web";

fn writing(written: &mut HashMap<String, Seen>) {
    written.entry(KEY.to_owned()).or_default().in_flight = Some(Vec::new());
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
