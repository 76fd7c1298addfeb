use super::*;

#[test]
fn execution_namespaces_round_trip() {
    assert_eq!(execution_namespace("member-1"), "flotilla-es-member-1");
    assert_eq!(
        cluster_of_execution_namespace("flotilla-es-member-1"),
        Some("member-1")
    );
    assert_eq!(cluster_of_execution_namespace("flotilla-es-"), None);
    assert_eq!(cluster_of_execution_namespace("default"), None);
}

#[test]
fn cluster_names_must_make_a_namespace_name() {
    let longest = "a".repeat(MAX_CLUSTER_NAME_LEN);
    let too_long = "a".repeat(MAX_CLUSTER_NAME_LEN + 1);
    for (name, ok) in [
        ("member-1", true),
        ("eu-west-1", true),
        ("1", true),
        (longest.as_str(), true),
        (too_long.as_str(), false),
        ("", false),
        ("a.b", false),
        ("Member", false),
        ("-a", false),
        ("a-", false),
        ("a_b", false),
        ("a:b", false),
    ] {
        assert_eq!(cluster_name_error(name).is_none(), ok, "{name:?}");
        if ok {
            assert!(execution_namespace(name).len() <= 63, "{name}");
        }
    }
    assert!(cluster_name_error("a.b").unwrap().contains("no dots"));
    assert!(cluster_name_error(&too_long)
        .unwrap()
        .contains("51 characters"));
}
