use k8s_openapi::api::rbac::v1::PolicyRule;
use serde_json::{json, Value};

use crate::auth::rbac::{rule_allows, Attributes};
use crate::auth::user::UserInfo;

fn user(name: &str) -> UserInfo {
    UserInfo::authenticated(name, vec![])
}

fn get(u: &UserInfo, group: &str, resource: &str) -> Attributes {
    Attributes::resource(u.clone(), "get", group, resource)
}

fn rule(v: Value) -> PolicyRule {
    serde_json::from_value(v).unwrap()
}

/// Each PolicyRule feature in isolation: (rule, request, allowed?).
#[test]
fn rule_matching_table() {
    let u = user("u");
    let pods = rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}));
    let star_verbs = rule(json!({"verbs": ["*"], "apiGroups": [""], "resources": ["pods"]}));
    let star_groups = rule(json!({"verbs": ["get"], "apiGroups": ["*"], "resources": ["pods"]}));
    let star_resources = rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["*"]}));
    let logs = rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}));
    let any_scale =
        rule(json!({"verbs": ["update"], "apiGroups": ["apps"], "resources": ["*/scale"]}));
    let named = rule(
        json!({"verbs": ["get", "list"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["db"]}),
    );
    let urls = rule(json!({"verbs": ["get"], "nonResourceURLs": ["/healthz", "/apis/*"]}));
    let all_urls = rule(json!({"verbs": ["get"], "nonResourceURLs": ["*"]}));
    let no_groups = rule(json!({"verbs": ["get"], "resources": ["pods"]}));
    let cases: Vec<(&str, &PolicyRule, Attributes, bool)> = vec![
        ("exact match", &pods, get(&u, "", "pods"), true),
        (
            "other verb",
            &pods,
            Attributes::resource(u.clone(), "delete", "", "pods"),
            false,
        ),
        ("other group", &pods, get(&u, "apps", "pods"), false),
        ("other resource", &pods, get(&u, "", "services"), false),
        (
            "bare resource does not cover subresource",
            &pods,
            get(&u, "", "pods").subresource("log"),
            false,
        ),
        (
            "verb *",
            &star_verbs,
            Attributes::resource(u.clone(), "deletecollection", "", "pods"),
            true,
        ),
        (
            "apiGroups *",
            &star_groups,
            get(&u, "example.com", "pods"),
            true,
        ),
        (
            "resources *",
            &star_resources,
            get(&u, "", "anything"),
            true,
        ),
        (
            "resources * covers subresources",
            &star_resources,
            get(&u, "", "pods").subresource("exec"),
            true,
        ),
        (
            "resource/subresource",
            &logs,
            get(&u, "", "pods").subresource("log"),
            true,
        ),
        (
            "resource/subresource not the parent",
            &logs,
            get(&u, "", "pods"),
            false,
        ),
        (
            "*/subresource",
            &any_scale,
            Attributes::resource(u.clone(), "update", "apps", "deployments").subresource("scale"),
            true,
        ),
        (
            "*/subresource other sub",
            &any_scale,
            Attributes::resource(u.clone(), "update", "apps", "deployments").subresource("status"),
            false,
        ),
        (
            "*/subresource without sub",
            &any_scale,
            Attributes::resource(u.clone(), "update", "apps", "deployments"),
            false,
        ),
        (
            "resourceNames match",
            &named,
            get(&u, "", "secrets").named("db"),
            true,
        ),
        (
            "resourceNames other name",
            &named,
            get(&u, "", "secrets").named("web"),
            false,
        ),
        (
            "resourceNames never allow unnamed list",
            &named,
            Attributes::resource(u.clone(), "list", "", "secrets"),
            false,
        ),
        (
            "nonResourceURL exact",
            &urls,
            Attributes::non_resource(u.clone(), "get", "/healthz"),
            true,
        ),
        (
            "nonResourceURL no prefix match without *",
            &urls,
            Attributes::non_resource(u.clone(), "get", "/healthz/etcd"),
            false,
        ),
        (
            "nonResourceURL trailing *",
            &urls,
            Attributes::non_resource(u.clone(), "get", "/apis/apps/v1"),
            true,
        ),
        (
            "nonResourceURL trailing * needs the prefix",
            &urls,
            Attributes::non_resource(u.clone(), "get", "/apis"),
            false,
        ),
        (
            "nonResourceURL *",
            &all_urls,
            Attributes::non_resource(u.clone(), "get", "/anything"),
            true,
        ),
        (
            "nonResourceURL verb",
            &urls,
            Attributes::non_resource(u.clone(), "post", "/healthz"),
            false,
        ),
        (
            "resource rule never allows a URL",
            &star_resources,
            Attributes::non_resource(u.clone(), "get", "/healthz"),
            false,
        ),
        (
            "URL rule never allows a resource",
            &all_urls,
            get(&u, "", "pods"),
            false,
        ),
        (
            "no apiGroups matches no group",
            &no_groups,
            get(&u, "", "pods"),
            false,
        ),
    ];
    for (what, rule, attrs, want) in cases {
        assert_eq!(rule_allows(&attrs, rule), want, "{what}");
    }
}
