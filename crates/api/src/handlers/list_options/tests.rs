use super::*;

const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

fn prepared(raw: &str, accept: Option<&str>) -> Result<(Query, Want)> {
    let mut q = Query::parse(Some(raw))?;
    let want = prepare(&mut q, accept, false)?;
    Ok((q, want))
}

#[test]
fn a_watch_from_now_is_a_watch_list_by_default() {
    for raw in [
        "watch=1&allowWatchBookmarks=true",
        "watch=1&allowWatchBookmarks=true&resourceVersion=0",
        "watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
        "watch=1&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=5",
    ] {
        let (q, _) = prepared(raw, None).unwrap();
        assert!(is_watch_list(&q), "{raw}");
    }
    for raw in [
        // From a revision: the changes after it, as always.
        "watch=1&allowWatchBookmarks=true&resourceVersion=5",
        // No bookmark to end the initial events with.
        "watch=1",
        "watch=1&allowWatchBookmarks=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan",
        "limit=5",
    ] {
        let (q, _) = prepared(raw, None).unwrap();
        assert!(!is_watch_list(&q), "{raw}");
    }
}

#[test]
fn bad_combinations_are_invalid_list_options_worded_as_kube() {
    let cases = [
        (
            "watch=1&sendInitialEvents=true&allowWatchBookmarks=true",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ),
        (
            "watch=1&resourceVersion=3&resourceVersionMatch=NotOlderThan",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        ),
        (
            "watch=1&sendInitialEvents=true&resourceVersionMatch=Exact",
            "ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: \"Exact\": supported values: \"NotOlderThan\"]",
        ),
        (
            "resourceVersionMatch=NotOlderThan",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
        (
            "resourceVersion=0&resourceVersionMatch=Exact",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
        ),
        (
            "resourceVersion=4&resourceVersionMatch=Newest",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Unsupported value: \"Newest\": supported values: \"Exact\", \"NotOlderThan\", \"\"",
        ),
        (
            "sendInitialEvents=true",
            "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list",
        ),
    ];
    for (raw, message) in cases {
        let e = prepared(raw, None).unwrap_err();
        assert_eq!((e.code, e.reason), (422, "Invalid"), "{raw}");
        assert_eq!(e.message, message, "{raw}");
        let details = e.details.unwrap_or_default();
        assert_eq!(details["kind"], "ListOptions", "{raw}");
        assert_eq!(details["group"], "meta.k8s.io", "{raw}");
    }
}

#[test]
fn a_watch_list_is_never_a_table() {
    let watch_list =
        "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true";
    let e = prepared(watch_list, Some(TABLE)).unwrap_err();
    assert_eq!((e.code, e.reason), (406, "NotAcceptable"));
    assert_eq!(
        e.message,
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );
    let mut q = Query::parse(Some(watch_list)).unwrap();
    let e = prepare(&mut q, Some(TABLE), true).unwrap_err();
    assert!(
        e.message.ends_with("application/json, application/yaml"),
        "{}",
        e.message
    );

    // The next alternative the client offers is used instead.
    let both = format!("{TABLE}, application/json");
    assert_eq!(prepared(watch_list, Some(&both)).unwrap().1, Want::Object);
    let meta = format!("{TABLE},application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1");
    assert_eq!(prepared(watch_list, Some(&meta)).unwrap().1, Want::Metadata);
    // Any other watch or list may be a Table.
    assert_eq!(
        prepared("watch=1&resourceVersion=7", Some(TABLE))
            .unwrap()
            .1,
        Want::Table
    );
    assert_eq!(prepared("limit=2", Some(TABLE)).unwrap().1, Want::Table);
}

#[test]
fn an_answer_without_a_table_form_takes_the_next_alternative_or_is_406() {
    let e = without_table(Some(TABLE), false).unwrap_err();
    assert_eq!(e.code, 406);
    let e = without_table(Some(&format!("{TABLE}, text/html")), false).unwrap_err();
    assert_eq!(e.code, 406);
    for accept in [None, Some(""), Some("*/*"), Some("application/json")] {
        assert_eq!(
            without_table(accept, false).unwrap(),
            Want::Object,
            "{accept:?}"
        );
    }
    let both = format!("{TABLE};q=0.9, application/yaml");
    assert_eq!(without_table(Some(&both), false).unwrap(), Want::Object);
}
