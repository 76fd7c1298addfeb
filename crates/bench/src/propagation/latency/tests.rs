use super::*;

#[test]
fn a_member_copy_shows_every_number_up_to_its_own_and_whether_it_runs() {
    let mut d = objects::deployment("r", "ns", "web", 1).unwrap();
    d.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(objects::SEQ_ANNOTATION.into(), "2".into());
    let keys: Vec<(Key, bool)> = judge(&d)
        .into_iter()
        .map(|(k, v)| (k, matches!(v, Verdict::Met)))
        .collect();
    assert_eq!(
        keys,
        [
            ("ns/web@0".to_string(), true),
            ("ns/web@1".to_string(), true),
            ("ns/web@2".to_string(), true),
            ("ns/web#running".to_string(), false),
        ]
    );
    d.status = Some(Default::default());
    d.status.as_mut().unwrap().ready_replicas = Some(1);
    assert!(matches!(judge(&d).pop(), Some((_, Verdict::Met))));
}
