use http::{HeaderMap, HeaderValue};

use super::*;
use crate::Api;

fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
    let mut h = HeaderMap::new();
    for (k, v) in pairs {
        h.append(*k, HeaderValue::from_str(v).unwrap());
    }
    h
}

#[tokio::test]
async fn impersonation_acts_as_whom_the_sender_may_impersonate() {
    let dir = tempfile::tempdir().unwrap();
    let api = Api::for_tests(dir.path()).await;
    let admin = UserInfo::authenticated("flotilla-admin", vec!["system:masters".into()]);
    let access = &api.access;

    // No headers: the sender itself.
    let same = access
        .impersonate(&api.cache, admin.clone(), &HeaderMap::new())
        .unwrap();
    assert_eq!(same, admin);

    let jane = access
        .impersonate(
            &api.cache,
            admin.clone(),
            &headers(&[
                ("impersonate-user", "jane-doe"),
                ("impersonate-uid", "uniq-id"),
                ("impersonate-group", "developers"),
                ("impersonate-extra-known-languages", "python"),
                ("impersonate-extra-known-languages", "javascript"),
                ("impersonate-extra-a%2fb", "x"),
            ]),
        )
        .unwrap();
    assert_eq!(jane.name, "jane-doe");
    assert_eq!(jane.uid, "uniq-id");
    assert_eq!(jane.groups, ["developers", "system:authenticated"]);
    assert_eq!(jane.extra["known-languages"], ["python", "javascript"]);
    assert_eq!(jane.extra["a/b"], ["x"]);

    // A service account gets its own groups when none are given.
    let sa = access
        .impersonate(
            &api.cache,
            admin.clone(),
            &headers(&[("impersonate-user", "system:serviceaccount:team:bot")]),
        )
        .unwrap();
    assert_eq!(
        sa.groups,
        [
            "system:serviceaccounts",
            "system:serviceaccounts:team",
            "system:authenticated"
        ]
    );

    // Someone without the impersonate verb is refused in kube's words.
    let bot = UserInfo::service_account("team", "bot", "u");
    let e = access
        .impersonate(
            &api.cache,
            bot,
            &headers(&[("impersonate-user", "jane-doe")]),
        )
        .unwrap_err();
    assert_eq!(e.code, 403);
    assert_eq!(
        e.message,
        "users \"jane-doe\" is forbidden: User \"system:serviceaccount:team:bot\" cannot \
         impersonate resource \"users\" in API group \"\" at the cluster scope"
    );

    // Groups without a user.
    let e = access
        .impersonate(&api.cache, admin, &headers(&[("impersonate-group", "g")]))
        .unwrap_err();
    assert_eq!(e.code, 500);
}
