use http::Method;
use serde_json::{json, Value};

use super::*;

fn with_uid(mut o: Value) -> Value {
    let name = o["metadata"]["name"].as_str().unwrap().to_string();
    o["metadata"]["uid"] = json!(format!("uid-{name}"));
    o
}

/// The configuration kube-apiserver starts with, plus `noxu` → `e2e` at precedence 1000 and a
/// schema pointing at a level that does not exist.
fn classifier() -> Classifier {
    let mut schemas: Vec<Value> = bootstrap::mandatory_flow_schemas();
    schemas.extend(bootstrap::suggested_flow_schemas());
    schemas.push(json!({"metadata": {"name": "e2e"}, "spec": {
        "matchingPrecedence": 1000, "priorityLevelConfiguration": {"name": "e2e"},
        "rules": [{"subjects": [{"kind": "User", "user": {"name": "noxu"}}],
                   "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}}));
    schemas.push(json!({"metadata": {"name": "a-dangling"}, "spec": {
        "matchingPrecedence": 3, "priorityLevelConfiguration": {"name": "nowhere"},
        "rules": [{"subjects": [{"kind": "Group", "group": {"name": "*"}}],
                   "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}}));
    let mut levels = bootstrap::mandatory_priority_levels();
    levels.extend(bootstrap::suggested_priority_levels());
    levels.push(json!({"metadata": {"name": "e2e"}, "spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Reject"}}}}));
    let schemas: Vec<Value> = schemas.into_iter().map(with_uid).collect();
    let levels: Vec<Value> = levels.into_iter().map(with_uid).collect();
    Classifier::build(&schemas, &levels)
}

#[test]
fn requests_are_classified_in_precedence_order() {
    let c = classifier();
    let admin = UserInfo::authenticated("flotilla-admin", vec!["system:masters".into()]);
    let noxu = UserInfo::authenticated("noxu", vec![]);
    let foo = UserInfo::authenticated("foo", vec![]);
    let kube_system_sa = UserInfo::service_account("kube-system", "job-controller", "u");
    let sa = UserInfo::service_account("team", "bot", "u");
    let anonymous = UserInfo::anonymous();
    let node = UserInfo::authenticated("system:node:n1", vec!["system:nodes".into()]);
    let get = |p: &str| RequestInfo::parse(&Method::GET, p, false);
    let put = |p: &str| RequestInfo::parse(&Method::PUT, p, false);
    let cases: Vec<(&UserInfo, RequestInfo, &str, &str)> = vec![
        (
            &admin,
            get("/api/v1/namespaces/a/configmaps"),
            "exempt",
            "exempt",
        ),
        (&noxu, get("/version"), "e2e", "e2e"),
        // noxu's schema has only URL rules: a resource request falls through.
        (
            &noxu,
            get("/api/v1/namespaces/a/configmaps"),
            "global-default",
            "global-default",
        ),
        (&foo, get("/version"), "global-default", "global-default"),
        (&foo, get("/healthz"), "probes", "exempt"),
        (&anonymous, get("/readyz"), "probes", "exempt"),
        (
            &sa,
            get("/api/v1/namespaces/team/secrets"),
            "service-accounts",
            "workload-low",
        ),
        (
            &kube_system_sa,
            put("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x"),
            "system-leader-election",
            "leader-election",
        ),
        (
            &kube_system_sa,
            put("/api/v1/namespaces/kube-system/configmaps/x"),
            "workload-leader-election",
            "leader-election",
        ),
        (
            &kube_system_sa,
            get("/api/v1/pods"),
            "kube-system-service-accounts",
            "workload-high",
        ),
        (
            &node,
            put("/api/v1/nodes/n1/status"),
            "system-node-high",
            "node-high",
        ),
        (
            &node,
            get("/api/v1/namespaces/a/pods"),
            "system-nodes",
            "system",
        ),
    ];
    for (user, info, schema, level) in cases {
        let m = c
            .classify(user, &info)
            .unwrap_or_else(|| panic!("{} unmatched", info.path));
        assert_eq!(
            (&*m.flow_schema, &*m.priority_level),
            (schema, level),
            "{} {}",
            user.name,
            info.path
        );
        assert_eq!(&*m.flow_schema_uid, format!("uid-{schema}"));
        assert_eq!(&*m.priority_level_uid, format!("uid-{level}"));
    }
    // Watches are left out, as kube-apiserver leaves long-running requests out.
    let fc = FlowControl::default();
    fc.replace(classifier());
    let watch = RequestInfo::parse(&Method::GET, "/api/v1/configmaps", true);
    assert!(fc.classify(&foo, &watch).is_none());
    assert!(fc.classify(&foo, &get("/api/v1/configmaps")).is_some());
}

#[test]
fn defaults_make_bootstrap_specs_and_stored_specs_equal() {
    let mut pl = json!({"spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {}}}}});
    defaults::apply("PriorityLevelConfiguration", &mut pl);
    assert_eq!(
        pl["spec"]["limited"],
        json!({"nominalConcurrencyShares": 30, "lendablePercent": 0,
               "limitResponse": {"type": "Queue", "queuing": {"handSize": 8, "queues": 64, "queueLengthLimit": 50}}})
    );
    let mut fs = json!({"spec": {"matchingPrecedence": 0}});
    defaults::apply("FlowSchema", &mut fs);
    assert_eq!(fs["spec"]["matchingPrecedence"], 1000);
    // Every bootstrap object is already defaulted and valid.
    for (kind, objects) in [
        (
            "FlowSchema",
            [
                bootstrap::mandatory_flow_schemas(),
                bootstrap::suggested_flow_schemas(),
            ]
            .concat(),
        ),
        (
            "PriorityLevelConfiguration",
            [
                bootstrap::mandatory_priority_levels(),
                bootstrap::suggested_priority_levels(),
            ]
            .concat(),
        ),
    ] {
        for o in objects {
            let mut d = o.clone();
            defaults::apply(kind, &mut d);
            assert!(
                specs_equal(&d["spec"], &o["spec"]),
                "{}",
                o["metadata"]["name"]
            );
            assert_eq!(validation::causes(kind, &o), Vec::<(String, String)>::new());
        }
    }
    assert!(specs_equal(
        &json!({"a": 1, "b": false, "c": []}),
        &json!({"a": 1})
    ));
    assert!(!specs_equal(&json!({"a": 1}), &json!({"a": 2})));
}

#[test]
fn invalid_objects_are_refused_in_kube_apiservers_words() {
    let fs = |spec: Value| json!({"metadata": {"name": "x"}, "spec": spec});
    let rule = json!({"subjects": [{"kind": "User", "user": {"name": "a"}}],
                      "resourceRules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]});
    type Case<'a> = (&'a str, Value, Vec<(&'a str, &'a str)>);
    let cases: Vec<Case> = vec![
        (
            "FlowSchema",
            fs(json!({"matchingPrecedence": 10001, "priorityLevelConfiguration": {"name": ""}})),
            vec![
                ("spec.matchingPrecedence", "Invalid value: 10001: must not be greater than 10000"),
                ("spec.priorityLevelConfiguration.name", "Required value: must reference a priority level"),
            ],
        ),
        (
            "FlowSchema",
            fs(json!({"matchingPrecedence": 1, "priorityLevelConfiguration": {"name": "p"},
                      "distinguisherMethod": {"type": "ByColour"}, "rules": [rule]})),
            vec![
                ("spec.matchingPrecedence", "Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1"),
                ("spec.distinguisherMethod.type", "Unsupported value: \"ByColour\": supported values: \"ByNamespace\", \"ByUser\""),
                (
                    "spec.rules[0].resourceRules[0].namespaces",
                    "Required value: resource rules that are not cluster scoped must supply at least one namespace",
                ),
            ],
        ),
        (
            "FlowSchema",
            fs(json!({"matchingPrecedence": 5, "priorityLevelConfiguration": {"name": "p"},
                      "rules": [{"subjects": [{"kind": "User", "group": {"name": "g"}}]}]})),
            vec![
                ("spec.rules[0].subjects[0].user", "Required value: user is required when subject kind is 'User'"),
                ("spec.rules[0].subjects[0].group", "Forbidden: group is forbidden when subject kind is not 'Group'"),
                ("spec.rules[0]", "Required value: at least one of resourceRules and nonResourceRules has to be non-empty"),
            ],
        ),
        (
            "PriorityLevelConfiguration",
            json!({"metadata": {"name": "p"}, "spec": {"type": "Limited", "limited": {
                "lendablePercent": 101,
                "limitResponse": {"type": "Queue", "queuing": {"queues": 4, "handSize": 5, "queueLengthLimit": 1}}}}}),
            vec![
                ("spec.limited.lendablePercent", "Invalid value: 101: must be between 0 and 100, inclusive"),
                ("spec.limited.limitResponse.queuing.handSize", "Invalid value: 5: should not be greater than queues (4)"),
            ],
        ),
        (
            "PriorityLevelConfiguration",
            json!({"metadata": {"name": "p"}, "spec": {"type": "Exempt"}}),
            vec![("spec.type", "Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt'")],
        ),
    ];
    for (kind, obj, want) in cases {
        let got = validation::causes(kind, &obj);
        let got: Vec<(&str, &str)> = got.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(got, want, "{obj}");
    }
    // A mandatory object's spec is fixed.
    let mut catch_all = bootstrap::mandatory("FlowSchema", "catch-all").unwrap();
    catch_all["spec"]["matchingPrecedence"] = json!(9999);
    let got = validation::causes("FlowSchema", &catch_all);
    assert_eq!(got.len(), 1);
    assert!(
        got[0]
            .1
            .ends_with("spec of 'catch-all' must equal the fixed value"),
        "{got:?}"
    );
    let mut exempt = bootstrap::mandatory("PriorityLevelConfiguration", "exempt").unwrap();
    exempt["spec"]["exempt"]["nominalConcurrencyShares"] = json!(7);
    assert!(validation::causes("PriorityLevelConfiguration", &exempt).is_empty());
}

#[test]
fn nominal_seats_share_out_the_server_limit() {
    // kube-apiserver's defaults: catch-all gets 13 of 600 seats, exempt none.
    let mut levels = classifier().levels().to_vec();
    levels.retain(|(name, _)| name != "e2e");
    let seats = nominal_seats(&levels);
    let of = |n: &str| seats.iter().find(|(name, _)| *name == n).unwrap().1;
    assert_eq!(of("catch-all"), 13);
    assert_eq!(of("exempt"), 0);
    assert_eq!(of("global-default"), 49);
}

#[test]
fn printer_cells_are_kube_apiservers() {
    let exempt = bootstrap::mandatory("PriorityLevelConfiguration", "exempt").unwrap();
    let global = bootstrap::suggested_priority_levels().pop().unwrap();
    let fs = bootstrap::mandatory("FlowSchema", "exempt").unwrap();
    let cases = [
        ("@apfshares", &exempt, json!("<none>")),
        ("@apfqueues", &exempt, json!("<none>")),
        ("@apfshares", &global, json!(20)),
        ("@apfhandsize", &global, json!(6)),
        ("@apfqueuelimit", &global, json!(50)),
        ("@apfmethod", &fs, json!("<none>")),
        ("@apfmissingpl", &fs, json!("?")),
    ];
    for (name, obj, want) in cases {
        assert_eq!(printer::cell(name, obj), Some(want), "{name}");
    }
    let mut fs = fs;
    fs["status"] = json!({"conditions": [{"type": "Dangling", "status": "False"}]});
    assert_eq!(printer::cell("@apfmissingpl", &fs), Some(json!("False")));
    assert_eq!(printer::cell("@other", &fs), None);
}

/// A URL rule matches its path and the paths below it; a trailing `*` or `/` changes nothing.
#[test]
fn url_rules_match_their_path_and_below() {
    let schema = |name: &str, url: &str| {
        with_uid(json!({"metadata": {"name": name}, "spec": {
            "matchingPrecedence": 10, "priorityLevelConfiguration": {"name": "l"},
            "rules": [{"subjects": [{"kind": "Group", "group": {"name": "*"}}],
                       "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": [url]}]}]}}))
    };
    let level = with_uid(json!({"metadata": {"name": "l"}, "spec": {"type": "Limited"}}));
    let user = UserInfo::authenticated("foo", vec![]);
    let cases = [
        ("/apis/*", "/apis/x", true),
        ("/apis/*", "/apis", false),
        ("/apis/*", "/apisx", false),
        ("/healthz", "/healthz", true),
        ("/healthz", "/healthz/etcd", true),
        ("/healthz", "/healthzx", false),
        ("/a/", "/a/", true),
        ("/a/", "/a/b", true),
        ("/a/", "/a", false),
        ("/a//", "/a/b", false),
        ("*", "/anything", true),
    ];
    for (url, path, want) in cases {
        let c = Classifier::build(&[schema("s", url)], std::slice::from_ref(&level));
        let info = RequestInfo::parse(&Method::GET, path, false);
        assert_eq!(c.classify(&user, &info).is_some(), want, "{url} {path}");
    }
}
