use serde_json::json;

use crate::auth::user::{split_service_account_username, UserInfo};

#[test]
fn groups_follow_kubernetes_conventions() {
    let cases: Vec<(UserInfo, &[&str], bool)> = vec![
        (
            UserInfo::authenticated("alice", vec![]),
            &["system:authenticated"],
            false,
        ),
        (
            UserInfo::authenticated(
                "root",
                vec!["system:masters".into(), "system:authenticated".into()],
            ),
            &["system:masters", "system:authenticated"],
            true,
        ),
        (UserInfo::anonymous(), &["system:unauthenticated"], false),
        (
            UserInfo::service_account("ns1", "builder", "u1"),
            &[
                "system:serviceaccounts",
                "system:serviceaccounts:ns1",
                "system:authenticated",
            ],
            false,
        ),
    ];
    for (user, groups, privileged) in cases {
        assert_eq!(user.groups, groups, "{}", user.name);
        assert_eq!(user.is_privileged(), privileged, "{}", user.name);
    }
}

#[test]
fn splits_service_account_user_names() {
    let cases: &[(&str, Option<(&str, &str)>)] = &[
        ("system:serviceaccount:ns:sa", Some(("ns", "sa"))),
        ("system:serviceaccount:ns:", None),
        ("system:serviceaccount::sa", None),
        ("system:serviceaccount:ns:sa:x", None),
        ("system:serviceaccounts:ns", None),
        ("alice", None),
    ];
    for (name, want) in cases {
        assert_eq!(split_service_account_username(name), *want, "{name}");
    }
    let sa = UserInfo::service_account("ns", "sa", "");
    assert_eq!(sa.service_account_name(), Some(("ns", "sa")));
}

#[test]
fn serializes_as_authentication_user_info() {
    let user = UserInfo::authenticated("alice", vec!["devs".into()]);
    assert_eq!(
        serde_json::to_value(&user).unwrap(),
        json!({"username": "alice", "groups": ["devs", "system:authenticated"]})
    );
    let back: UserInfo = serde_json::from_value(json!({"username": "bob"})).unwrap();
    assert_eq!(back.name, "bob");
}
