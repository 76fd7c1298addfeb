use super::*;

#[test]
fn parses_common_parameters() {
    let q = Query::parse(Some(
        "labelSelector=app%3Dweb&limit=500&watch=1&dryRun=All&fieldValidation=Strict&force=true",
    ))
    .unwrap();
    assert_eq!(q.label_selector.as_deref(), Some("app=web"));
    assert_eq!(q.limit, Some(500));
    assert!(q.watch && q.dry_run && q.force);
    assert_eq!(q.field_validation, FieldValidation::Strict);
}

#[test]
fn rejects_bad_values_with_a_clear_message() {
    for raw in [
        "limit=abc",
        "dryRun=Some",
        "fieldValidation=Loose",
        "watch=maybe",
    ] {
        let e = Query::parse(Some(raw)).unwrap_err();
        assert_eq!(e.code, 400, "{raw}");
    }
}
