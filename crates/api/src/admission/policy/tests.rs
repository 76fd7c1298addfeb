use serde_json::{json, Value};

use super::evaluate::{denial_error, judge, Denial};
use super::kinds;
use super::matching::{resources_match, rule_matches};
use super::Attributes;
use crate::auth::UserInfo;
use crate::registry::{builtin_resources, ResourceInfo};

fn res(plural: &str) -> ResourceInfo {
    builtin_resources()
        .into_iter()
        .find(|r| r.plural == plural)
        .expect("a built-in resource")
}

fn user() -> UserInfo {
    UserInfo {
        name: "alice".into(),
        ..Default::default()
    }
}

fn deployment(replicas: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ns1", "labels": {"app": "web"}},
        "spec": {"replicas": replicas}})
}

fn attrs<'a>(
    r: &'a ResourceInfo,
    user: &'a UserInfo,
    obj: &'a Value,
    ns: Option<&'a Value>,
    sub: Option<&'a str>,
) -> Attributes<'a> {
    Attributes {
        res: r,
        operation: "CREATE",
        subresource: sub,
        name: "web",
        namespace: "ns1",
        object: Some(obj),
        old_object: None,
        namespace_object: ns,
        user,
        dry_run: false,
        equivalent_versions: &[],
    }
}

#[test]
fn rules_match_as_kube_matches_them() {
    let d = res("deployments");
    let u = user();
    let obj = deployment(1);
    let rule = |ops: &[&str], g: &[&str], v: &[&str], r: &[&str]| json!({"operations": ops, "apiGroups": g, "apiVersions": v, "resources": r, "scope": "*"});
    let cases = [
        (
            rule(&["CREATE"], &["apps"], &["v1"], &["deployments"]),
            None,
            true,
        ),
        (
            rule(&["UPDATE"], &["apps"], &["v1"], &["deployments"]),
            None,
            false,
        ),
        (rule(&["*"], &["*"], &["*"], &["*"]), None, true),
        (rule(&["*"], &["*"], &["*"], &["*"]), Some("status"), false),
        (rule(&["*"], &["*"], &["*"], &["*/*"]), Some("status"), true),
        (
            rule(&["*"], &["apps"], &["v1"], &["deployments/status"]),
            Some("status"),
            true,
        ),
        (
            rule(&["*"], &["apps"], &["v1"], &["deployments/*"]),
            Some("scale"),
            true,
        ),
        (
            rule(&["*"], &["apps"], &["v1"], &["*/scale"]),
            Some("scale"),
            true,
        ),
        (rule(&["*"], &[""], &["v1"], &["deployments"]), None, false),
        (
            rule(&["*"], &["apps"], &["v1"], &["replicasets"]),
            None,
            false,
        ),
        (
            json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "scope": "Cluster"}),
            None,
            false,
        ),
        (
            json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "resourceNames": ["other"]}),
            None,
            false,
        ),
        (
            json!({"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"], "resourceNames": ["web"]}),
            None,
            true,
        ),
    ];
    for (rule, sub, want) in cases {
        let a = attrs(&d, &u, &obj, None, sub);
        assert_eq!(rule_matches(&rule, &a), want, "{rule} sub {sub:?}");
    }
}

#[test]
fn selectors_judge_the_namespace_and_the_object() {
    let d = res("deployments");
    let u = user();
    let obj = deployment(1);
    let ns = json!({"metadata": {"name": "ns1", "labels": {"team": "a"}}});
    let rules = json!([{"operations": ["*"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}]);
    let cases = [
        (
            json!({"resourceRules": rules, "namespaceSelector": {}, "objectSelector": {}}),
            true,
        ),
        (
            json!({"resourceRules": rules, "namespaceSelector": {"matchLabels": {"team": "a"}}}),
            true,
        ),
        (
            json!({"resourceRules": rules, "namespaceSelector": {"matchLabels": {"team": "b"}}}),
            false,
        ),
        (
            json!({"resourceRules": rules, "objectSelector": {"matchLabels": {"app": "web"}}}),
            true,
        ),
        (
            json!({"resourceRules": rules, "objectSelector": {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}}),
            false,
        ),
        (
            json!({"resourceRules": rules, "excludeResourceRules": rules}),
            false,
        ),
        (json!({"namespaceSelector": {}}), false),
    ];
    for (m, want) in cases {
        let a = attrs(&d, &u, &obj, Some(&ns), None);
        assert_eq!(resources_match(&m, &a, true), want, "{m}");
    }
}

fn policy(validation: Value) -> Value {
    json!({"metadata": {"name": "p"}, "spec": {
        "failurePolicy": "Fail",
        "matchConstraints": {"resourceRules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}]},
        "variables": [{"name": "max", "expression": "3"}],
        "validations": [validation]}})
}

fn binding(actions: &[&str]) -> Value {
    json!({"metadata": {"name": "b"}, "spec": {"policyName": "p", "validationActions": actions}})
}

#[test]
fn validations_deny_with_their_message_and_reason() {
    let d = res("deployments");
    let u = user();
    let cases = [
        (
            json!({"expression": "object.spec.replicas <= variables.max"}),
            2,
            None,
        ),
        (
            json!({"expression": "object.spec.replicas <= variables.max"}),
            5,
            Some((
                "failed expression: object.spec.replicas <= variables.max",
                "",
            )),
        ),
        (
            json!({"expression": "object.spec.replicas <= 3", "message": "too many", "reason": "Forbidden"}),
            5,
            Some(("too many", "Forbidden")),
        ),
        (
            json!({"expression": "object.spec.replicas <= 3", "messageExpression": "'wants at most 3, got ' + string(object.spec.replicas)"}),
            5,
            Some(("wants at most 3, got 5", "")),
        ),
        (
            json!({"expression": "object.spec.nothere.x > 1"}),
            5,
            Some((
                "expression 'object.spec.nothere.x > 1' resulted in error: ",
                "",
            )),
        ),
    ];
    for (v, replicas, want) in cases {
        let obj = deployment(replicas);
        let a = attrs(&d, &u, &obj, None, None);
        let got = judge(&[policy(v.clone())], &[binding(&["Deny"])], &a, |_, _| {
            Ok(vec![None])
        });
        match (got, want) {
            (None, None) => {}
            (Some(d), Some((msg, reason))) => {
                assert!(d.message.starts_with(msg), "{v}: {}", d.message);
                assert_eq!(d.reason, reason);
                assert_eq!((d.policy.as_str(), d.binding.as_str()), ("p", "b"));
            }
            (got, want) => panic!("{v}: got {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn warn_and_audit_bindings_admit_and_missing_params_follow_the_binding() {
    let d = res("deployments");
    let u = user();
    let obj = deployment(5);
    let a = attrs(&d, &u, &obj, None, None);
    let p = policy(json!({"expression": "object.spec.replicas <= 3"}));
    assert_eq!(
        judge(
            std::slice::from_ref(&p),
            &[binding(&["Warn", "Audit"])],
            &a,
            |_, _| Ok(vec![None])
        ),
        None
    );
    let mut deny_missing = binding(&["Deny"]);
    deny_missing["spec"]["paramRef"] = json!({"name": "x", "parameterNotFoundAction": "Deny"});
    let got = judge(std::slice::from_ref(&p), &[deny_missing], &a, |_, _| {
        Ok(vec![])
    });
    assert_eq!(
        got.map(|d| d.message).as_deref(),
        Some("failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction")
    );
    let mut allow_missing = binding(&["Deny"]);
    allow_missing["spec"]["paramRef"] = json!({"name": "x", "parameterNotFoundAction": "Allow"});
    assert_eq!(judge(&[p], &[allow_missing], &a, |_, _| Ok(vec![])), None);
}

#[test]
fn params_are_seen_by_validations() {
    let d = res("deployments");
    let u = user();
    let obj = deployment(5);
    let a = attrs(&d, &u, &obj, None, None);
    let p = policy(json!({"expression": "object.spec.replicas <= params.data.max"}));
    let small = json!({"data": {"max": 2}});
    let large = json!({"data": {"max": 9}});
    assert!(judge(
        std::slice::from_ref(&p),
        &[binding(&["Deny"])],
        &a,
        |_, _| Ok(vec![Some(small.clone())])
    )
    .is_some());
    assert!(judge(&[p], &[binding(&["Deny"])], &a, |_, _| Ok(vec![Some(
        large.clone()
    )]))
    .is_none());
}

#[test]
fn kinds_are_defaulted_and_validated_as_kube() {
    let mut hook = json!({"webhooks": [{"name": "a.b.c", "clientConfig": {"url": "https://x"}, "sideEffects": "None", "admissionReviewVersions": ["v1"], "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]}]});
    kinds::defaults("MutatingWebhookConfiguration", &mut hook);
    let h = &hook["webhooks"][0];
    assert_eq!(
        (
            h["failurePolicy"].clone(),
            h["matchPolicy"].clone(),
            h["timeoutSeconds"].clone(),
            h["reinvocationPolicy"].clone(),
            h["namespaceSelector"].clone(),
            h["rules"][0]["scope"].clone()
        ),
        (
            json!("Fail"),
            json!("Equivalent"),
            json!(10),
            json!("Never"),
            json!({}),
            json!("*")
        )
    );
    assert_eq!(kinds::causes("MutatingWebhookConfiguration", &hook), vec![]);
    let bad = json!({"webhooks": [{"name": "a.b.c", "clientConfig": {"url": "https://x"}}]});
    let fields: Vec<String> = kinds::causes("ValidatingWebhookConfiguration", &bad)
        .into_iter()
        .map(|c| c.0)
        .collect();
    assert_eq!(
        fields,
        [
            "webhooks[0].sideEffects",
            "webhooks[0].admissionReviewVersions"
        ]
    );
    let vap = json!({"spec": {"matchConstraints": {"resourceRules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}]}, "validations": [{"expression": "object.spec.replicas >"}]}});
    let causes = kinds::causes("ValidatingAdmissionPolicy", &vap);
    assert_eq!(causes.len(), 1, "{causes:?}");
    assert_eq!(causes[0].0, "spec.validations[0].expression");
    assert!(
        causes[0].1.contains("compilation failed"),
        "{}",
        causes[0].1
    );
    let rule_faults = json!({"spec": {"matchConstraints": {"resourceRules": [{"operations": ["FOO"], "apiGroups": ["apps"], "apiVersions": ["v1"]}]}, "validations": [{"expression": "true"}]}});
    let fields: Vec<String> = kinds::causes("ValidatingAdmissionPolicy", &rule_faults)
        .into_iter()
        .map(|c| c.0)
        .collect();
    assert_eq!(
        fields,
        [
            "spec.matchConstraints.resourceRules[0].resources",
            "spec.matchConstraints.resourceRules[0].operations[0]"
        ]
    );
    let both = json!({"spec": {"policyName": "p", "validationActions": ["Deny", "Warn"]}});
    assert_eq!(
        kinds::causes("ValidatingAdmissionPolicyBinding", &both).len(),
        1
    );
}

#[test]
fn a_denial_is_worded_as_kube_words_it() {
    let d = res("deployments");
    let u = user();
    let obj = deployment(5);
    let a = attrs(&d, &u, &obj, None, None);
    let denial = |reason: &str| Denial {
        policy: "p".into(),
        binding: "b".into(),
        message: "too many".into(),
        reason: reason.into(),
    };
    let e = denial_error(&a, &denial(""));
    assert_eq!((e.code, e.reason), (422, "Invalid"));
    assert_eq!(
        e.message,
        "deployments.apps \"web\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: too many"
    );
    let details = e.details.expect("details");
    assert_eq!(details["kind"], "deployments");
    assert_eq!(details["group"], "apps");
    let e = denial_error(&a, &denial("Forbidden"));
    assert_eq!((e.code, e.reason), (403, "Forbidden"));
}

#[test]
fn equivalent_versions_match_unless_the_policy_is_exact() {
    let d = res("deployments");
    let u = user();
    let obj = deployment(1);
    let others = ["v1beta1".to_string()];
    let mut a = attrs(&d, &u, &obj, None, None);
    a.equivalent_versions = &others;
    let rules = json!([{"operations": ["*"], "apiGroups": ["apps"], "apiVersions": ["v1beta1"], "resources": ["deployments"]}]);
    let cases = [("Equivalent", true), ("Exact", false)];
    for (policy, want) in cases {
        let m = json!({"resourceRules": rules, "matchPolicy": policy});
        assert_eq!(resources_match(&m, &a, true), want, "{policy}");
    }
}

#[test]
fn match_conditions_select_what_a_policy_judges() {
    let d = res("deployments");
    let u = user();
    let obj = deployment(5);
    let a = attrs(&d, &u, &obj, None, None);
    let with_condition = |expr: &str, failure: &str| {
        let mut p = policy(json!({"expression": "object.spec.replicas <= 3"}));
        p["spec"]["matchConditions"] = json!([{"name": "only-web", "expression": expr}]);
        p["spec"]["failurePolicy"] = json!(failure);
        p
    };
    let deny = binding(&["Deny"]);
    let judged = |p: Value| judge(&[p], std::slice::from_ref(&deny), &a, |_, _| Ok(vec![None]));
    let cases = [
        (
            "object.metadata.name == 'web'",
            "Fail",
            Some("failed expression"),
        ),
        ("object.metadata.name == 'other'", "Fail", None),
        (
            "object.metadata.nothere.x == 1",
            "Fail",
            Some("failed to evaluate match condition 'only-web'"),
        ),
        ("object.metadata.nothere.x == 1", "Ignore", None),
    ];
    for (expr, failure, want) in cases {
        let got = judged(with_condition(expr, failure)).map(|d| d.message);
        match (got.as_deref(), want) {
            (None, None) => {}
            (Some(m), Some(w)) => assert!(m.starts_with(w), "{expr}: {m}"),
            (got, want) => panic!("{expr} ({failure}): got {got:?}, want {want:?}"),
        }
    }
}
