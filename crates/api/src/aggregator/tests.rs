use serde_json::{json, Value};

use super::available::{verdict, with_verdict, Backend};
use super::register::{action, wanted, Action, AUTOMANAGED};
use super::validation::{causes, defaults, on_create};
use super::{cell, priorities};

fn apiservice(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
           "metadata": {"name": name}, "spec": spec})
}

fn local(name: &str, group: &str, version: &str) -> Value {
    apiservice(
        name,
        json!({"group": group, "version": version, "groupPriorityMinimum": 100, "versionPriority": 10}),
    )
}

fn fields(obj: &Value) -> Vec<String> {
    causes(obj)
        .into_iter()
        .map(|(f, m)| format!("{f}: {m}"))
        .collect()
}

#[test]
fn names_and_priorities_follow_kube_rules() {
    let remote = |spec_extra: Value| {
        let mut o = local("v1.example.com", "example.com", "v1");
        for (k, v) in spec_extra.as_object().into_iter().flatten() {
            o["spec"][k] = v.clone();
        }
        defaults(&mut o);
        o
    };
    let cases: Vec<(&str, Value, Vec<&str>)> = vec![
        ("valid local", local("v1.example.com", "example.com", "v1"), vec![]),
        ("legacy core group", local("v1.", "", "v1"), vec![]),
        (
            "name not version.group",
            local("example", "example.com", "v1"),
            vec![r#"metadata.name: Invalid value: "example": must be `spec.version+"."+spec.group`: "v1.example.com""#],
        ),
        (
            "name a path segment",
            local("a/b", "example.com", "v1"),
            vec![r#"metadata.name: Invalid value: "a/b": may not contain '/' or '%'"#],
        ),
        (
            "empty group only for v1",
            local("v2.", "", "v2"),
            vec!["spec.group: Required value: only v1 may have an empty group and it better be legacy kube"],
        ),
        (
            "group a DNS subdomain",
            local("v1.Example", "Example", "v1"),
            vec!["spec.group: Invalid value: \"Example\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"],
        ),
        (
            "version a DNS-1035 label",
            local("1v.example.com", "example.com", "1v"),
            vec!["spec.version: Invalid value: \"1v\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"],
        ),
        (
            "priorities in range",
            apiservice("v1.example.com", json!({"group": "example.com", "version": "v1", "groupPriorityMinimum": 20001, "versionPriority": 0})),
            vec![
                "spec.groupPriorityMinimum: Invalid value: 20001: must be positive and less than 20000",
                "spec.versionPriority: Invalid value: 0: must be positive and less than 1000",
            ],
        ),
        (
            "priorities at their bounds",
            apiservice("v1.example.com", json!({"group": "example.com", "version": "v1", "groupPriorityMinimum": 20000, "versionPriority": 1000})),
            vec![],
        ),
        (
            "local with a caBundle and insecureSkipTLSVerify",
            remote(json!({"caBundle": "aGVsbG8=", "insecureSkipTLSVerify": true})),
            vec![
                r#"spec.caBundle: Invalid value: "5 bytes": local APIServices may not have a caBundle"#,
                "spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify",
            ],
        ),
        (
            "service with both",
            remote(json!({"service": {"namespace": "ns", "name": "api"}, "caBundle": "aGVsbG8=", "insecureSkipTLSVerify": true})),
            vec!["spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present"],
        ),
        (
            "service needs namespace, name and a port",
            remote(json!({"service": {"port": 70000}})),
            vec![
                "spec.service.namespace: Required value",
                "spec.service.name: Required value",
                "spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive",
            ],
        ),
        ("service defaulted to port 443", remote(json!({"service": {"namespace": "ns", "name": "api"}})), vec![]),
    ];
    for (what, obj, want) in cases {
        assert_eq!(fields(&obj), want, "{what}");
    }
}

#[test]
fn condition_status_is_true_false_or_unknown() {
    let mut o = local("v1.example.com", "example.com", "v1");
    o["status"] = json!({"conditions": [{"type": "Available", "status": "Maybe"}]});
    assert_eq!(
        fields(&o),
        vec![
            r#"status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", "Unknown""#
        ]
    );
}

#[test]
fn defaults_and_create() {
    let mut o = apiservice(
        "v1.x.io",
        json!({"service": {"namespace": "n", "name": "s"}}),
    );
    defaults(&mut o);
    assert_eq!(o["spec"]["service"]["port"], 443);
    on_create(&mut o);
    assert_eq!(
        o["status"],
        json!({}),
        "a remote APIService is judged by the loop"
    );
    let mut l = local("v1.x.io", "x.io", "v1");
    on_create(&mut l);
    let c = &l["status"]["conditions"][0];
    assert_eq!(
        (
            c["type"].as_str(),
            c["status"].as_str(),
            c["reason"].as_str()
        ),
        (Some("Available"), Some("True"), Some("Local"))
    );
    assert_eq!(c["message"], "Local APIServices are always available");
}

#[test]
fn wanted_follows_kube_tables_and_crds() {
    let crds = vec![
        json!({"spec": {"group": "stable.example.com", "versions": [
            {"name": "v1", "served": true}, {"name": "v2", "served": false}]}}),
        // A CRD never displaces a built-in group version.
        json!({"spec": {"group": "apps", "versions": [{"name": "v1", "served": true}]}}),
    ];
    let builtin = [
        ("", "v1"),
        ("apps", "v1"),
        ("autoscaling", "v2"),
        ("apiregistration.k8s.io", "v1"),
    ];
    let w = wanted(builtin, &crds);
    let names: Vec<&str> = w.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["v1.", "v1.apps", "v1.stable.example.com", "v2.autoscaling"]
    );
    let spec = |n: &str| w[n].spec();
    assert_eq!(
        spec("v1."),
        json!({"group": "", "version": "v1", "groupPriorityMinimum": 18000, "versionPriority": 1})
    );
    assert_eq!(spec("v1.apps")["groupPriorityMinimum"], 17800);
    assert_eq!(spec("v2.autoscaling")["versionPriority"], 30);
    assert_eq!(
        spec("v1.stable.example.com"),
        json!({"group": "stable.example.com", "version": "v1", "groupPriorityMinimum": 1000, "versionPriority": 100})
    );
    assert_eq!(w["v1.apps"].managed, "onstart");
    assert_eq!(w["v1.stable.example.com"].managed, "true");
    assert_eq!(
        priorities::builtin("flowcontrol.apiserver.k8s.io", "v1"),
        Some((16100, 21))
    );
}

#[test]
fn automanaged_ones_are_corrected_or_deleted_others_kept() {
    let w = wanted([("apps", "v1")], &[]);
    let mut ours = w["v1.apps"].object();
    assert_eq!(action(&ours, w.get("v1.apps")), Action::Keep);
    ours["spec"]["versionPriority"] = json!(1);
    let Action::Correct(fixed) = action(&ours, w.get("v1.apps")) else {
        panic!("a changed spec is put back");
    };
    assert_eq!(fixed["spec"]["versionPriority"], 15);
    assert_eq!(action(&ours, None), Action::Delete);
    let users = local("v1.mine.io", "mine.io", "v1");
    assert_eq!(action(&users, None), Action::Keep);
    assert_eq!(ours["metadata"]["labels"][AUTOMANAGED], "onstart");
}

#[test]
fn remote_availability_reasons() {
    let mut o = apiservice(
        "v1.x.io",
        json!({"group": "x.io", "version": "v1", "service": {"namespace": "n", "name": "s", "port": 443}}),
    );
    let none = Backend {
        service: None,
        endpoints: None,
    };
    let v = verdict(&o, &none);
    assert_eq!(
        (v.status, v.reason, v.message.as_str()),
        (
            "False",
            "ServiceNotFound",
            r#"service/s in "n" is not present"#
        )
    );
    let svc = json!({"spec": {"type": "ClusterIP", "ports": [{"name": "https", "port": 443}]}});
    let on = |service: &Value, endpoints: Option<Value>| {
        verdict(
            &o,
            &Backend {
                service: Some(service.clone()),
                endpoints,
            },
        )
    };
    let wrong_port = json!({"spec": {"ports": [{"name": "https", "port": 8443}]}});
    assert_eq!(on(&wrong_port, None).reason, "ServicePortError");
    assert_eq!(on(&svc, None).reason, "EndpointsNotFound");
    assert_eq!(
        on(&svc, Some(json!({"subsets": []}))).reason,
        "MissingEndpoints"
    );
    let ready = json!({"subsets": [{"addresses": [{"ip": "10.0.0.9"}], "ports": [{"name": "https", "port": 8443}]}]});
    let v = on(&svc, Some(ready));
    assert_eq!((v.status, v.reason), ("False", "FailedDiscoveryCheck"));
    assert!(v.message.contains("does not proxy"), "{}", v.message);
    // Set once; the same verdict again changes nothing (no write, no new transition time).
    let set = with_verdict(&o, &v).expect("a first condition");
    assert_eq!(with_verdict(&set, &v), None);
    o = set;
    assert_eq!(cell("@apiservice", &o), "n/s");
    assert_eq!(cell("@apiavailable", &o), "False (FailedDiscoveryCheck)");
    let mut l = local("v1.x.io", "x.io", "v1");
    assert_eq!(cell("@apiavailable", &l), "Unknown");
    on_create(&mut l);
    assert_eq!(
        (cell("@apiservice", &l), cell("@apiavailable", &l)),
        (json!("Local"), json!("True"))
    );
}

#[test]
fn discovery_lists_groups_in_kube_aggregators_order() {
    let g = |name: &str, versions: &[&str]| {
        (
            name.to_string(),
            versions.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
        )
    };
    let groups = vec![
        g("", &["v1"]),
        g("zeta.example.com", &["v1"]),
        g("batch", &["v1"]),
        g("apiextensions.k8s.io", &["v1"]),
        g("alpha.example.com", &["v1beta1", "v1"]),
        g("autoscaling", &["v2", "v1"]),
        g("admissionregistration.k8s.io", &["v1"]),
        g("apiregistration.k8s.io", &["v1"]),
        g("apps", &["v1"]),
    ];
    let order: Vec<&str> = super::discovery_order(&groups)
        .iter()
        .map(|(name, _)| name.as_str())
        .collect();
    assert_eq!(
        order,
        [
            "apiregistration.k8s.io",
            "",
            "apps",
            "autoscaling",
            "batch",
            // 16700 both: by APIService name, v1.admissionregistration… < v1.apiextensions….
            "admissionregistration.k8s.io",
            "apiextensions.k8s.io",
            // CRD groups at 1000, by their APIServices' names.
            "alpha.example.com",
            "zeta.example.com",
        ]
    );
}
