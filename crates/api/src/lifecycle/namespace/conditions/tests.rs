use super::*;

fn kinds(conditions: &[Value]) -> Vec<(&str, &str)> {
    conditions
        .iter()
        .map(|c| {
            (
                c["type"].as_str().unwrap_or_default(),
                c["status"].as_str().unwrap_or_default(),
            )
        })
        .collect()
}

#[test]
fn remaining_content_and_finalizers_are_reported_as_the_controller_words_them() {
    let mut r = Remaining::default();
    r.object("configmaps.".into(), &["example.com/hold".into()]);
    r.object("configmaps.".into(), &[]);
    r.object(
        "widgets.example.com".into(),
        &["example.com/hold".into(), "b.io/x".into()],
    );
    assert_eq!(r.total(), 3);
    let c = update(&[], &r, "2024-01-01T00:00:00Z").expect("new conditions");
    assert_eq!(
        kinds(&c),
        [
            ("NamespaceDeletionDiscoveryFailure", "False"),
            ("NamespaceDeletionGroupVersionParsingFailure", "False"),
            ("NamespaceDeletionContentFailure", "False"),
            ("NamespaceContentRemaining", "True"),
            ("NamespaceFinalizersRemaining", "True"),
        ]
    );
    assert_eq!(c[0]["reason"], "ResourcesDiscovered");
    assert_eq!(c[0]["message"], "All resources successfully discovered");
    assert_eq!(c[3]["reason"], "SomeResourcesRemain");
    assert_eq!(
        c[3]["message"],
        "Some resources are remaining: configmaps. has 2 resource instances, widgets.example.com has 1 resource instances"
    );
    assert_eq!(c[4]["reason"], "SomeFinalizersRemain");
    assert_eq!(
        c[4]["message"],
        "Some content in the namespace has finalizers remaining: b.io/x in 1 resource instances, example.com/hold in 2 resource instances"
    );
    assert_eq!(c[4]["lastTransitionTime"], "2024-01-01T00:00:00Z");

    // The same state later: nothing to write.
    assert!(update(&c, &r, "2024-01-01T00:01:00Z").is_none());

    // Everything gone: the two conditions turn False, the others keep their time.
    let done = update(&c, &Remaining::default(), "2024-01-01T00:02:00Z").expect("changed");
    assert_eq!(done[3]["status"], "False");
    assert_eq!(done[3]["reason"], "ContentRemoved");
    assert_eq!(done[3]["message"], "All content successfully removed");
    assert_eq!(
        done[4]["message"],
        "All content-preserving finalizers finished"
    );
    assert_eq!(done[4]["lastTransitionTime"], "2024-01-01T00:02:00Z");
    assert_eq!(done[0]["lastTransitionTime"], "2024-01-01T00:00:00Z");
}

#[test]
fn failed_deletes_and_foreign_conditions() {
    let foreign = json!({"type": "Custom", "status": "True"});
    let r = Remaining {
        delete_errors: vec!["a".into(), "b".into()],
        ..Default::default()
    };
    let c = update(std::slice::from_ref(&foreign), &r, "t").expect("changed");
    assert_eq!(c[0], foreign);
    assert_eq!(c[3]["type"], "NamespaceDeletionContentFailure");
    assert_eq!(c[3]["status"], "True");
    assert_eq!(c[3]["reason"], "ContentDeletionFailed");
    assert_eq!(
        c[3]["message"],
        "Failed to delete all resource types, 2 remaining: [a, b]"
    );
}
