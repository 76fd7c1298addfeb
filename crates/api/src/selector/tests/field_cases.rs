use serde_json::json;

use crate::selector::field::{check_field, extract, supported_fields, FieldSelector};

/// Input → canonical form (terms sorted, `==` printed as `=`, values re-escaped).
#[test]
fn parses_to_canonical_form() {
    let cases: &[(&str, &str)] = &[
        ("", ""),
        ("metadata.name=x", "metadata.name=x"),
        ("metadata.name==x", "metadata.name=x"),
        ("metadata.name!=x", "metadata.name!=x"),
        ("type=a,metadata.name=b", "metadata.name=b,type=a"),
        ("a=b,,c=d", "a=b,c=d"),
        ("a=", "a="),
        ("a=\\,b", "a=\\,b"),
        ("a=x\\=y", "a=x\\=y"),
        ("a=x\\\\y", "a=x\\\\y"),
        ("a = b", "a = b"),
        (
            "status.phase!=Running,spec.restartPolicy=Always",
            "spec.restartPolicy=Always,status.phase!=Running",
        ),
    ];
    for (input, want) in cases {
        let sel = FieldSelector::parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        assert_eq!(sel.to_string(), *want, "input {input:?}");
        assert_eq!(
            FieldSelector::parse(want).unwrap(),
            sel,
            "round trip of {want:?}"
        );
    }
}

#[test]
fn unescapes_values() {
    let cases: &[(&str, &str, &str)] = &[
        ("a=\\,b", "a", ",b"),
        ("a=x\\=y", "a", "x=y"),
        ("a=x\\\\y", "a", "x\\y"),
        ("a==b", "a", "b"),
        // The first operator splits; the rest is the value (here an escaped `=`).
        ("a!=\\=b", "a", "=b"),
        ("a = b", "a ", " b"),
    ];
    for (input, field, value) in cases {
        let sel = FieldSelector::parse(input).unwrap();
        let r = &sel.requirements()[0];
        assert_eq!(
            (r.field.as_str(), r.value.as_str()),
            (*field, *value),
            "{input:?}"
        );
    }
}

#[test]
fn rejects_with_kubernetes_messages() {
    let cases: &[(&str, &str)] = &[
        ("a", "invalid selector: 'a'; can't understand 'a'"),
        (
            "x=1,name",
            "invalid selector: 'x=1,name'; can't understand 'name'",
        ),
        (
            "a=b=c",
            "invalid field selector: unescaped character in value: =",
        ),
        (
            "a=b\\,c,d=e,f",
            "invalid selector: 'a=b\\,c,d=e,f'; can't understand 'f'",
        ),
        (
            "a=b\\x",
            "invalid field selector: invalid escape sequence: \\x",
        ),
        (
            "a=b\\",
            "invalid field selector: invalid escape sequence: \\",
        ),
    ];
    for (input, want) in cases {
        let got = FieldSelector::parse(input).expect_err(input).to_string();
        assert_eq!(got, *want, "input {input:?}");
    }
}

#[test]
fn matches_with_a_getter() {
    let get = |f: &str| match f {
        "metadata.name" => Some("web".to_string()),
        "metadata.namespace" => Some("prod".to_string()),
        "type" => Some("a,b".to_string()),
        _ => None,
    };
    let cases: &[(&str, bool)] = &[
        ("", true),
        ("metadata.name=web", true),
        ("metadata.name==web", true),
        ("metadata.name=db", false),
        ("metadata.name!=db", true),
        ("metadata.namespace!=prod", false),
        ("type=a\\,b", true),
        ("missing=", true),
        ("missing!=x", true),
        ("missing=x", false),
        ("metadata.name=web,metadata.namespace=prod", true),
        ("metadata.name=web,metadata.namespace=dev", false),
    ];
    for (input, want) in cases {
        let sel = FieldSelector::parse(input).unwrap();
        assert_eq!(sel.matches(get), *want, "{input:?}");
    }
}

/// (group, kind, field) → Ok, or kube-apiserver's message for that kind.
#[test]
fn supported_fields_per_kind() {
    let cases: &[(&str, &str, &str, Result<(), &str>)] = &[
        ("", "ConfigMap", "metadata.name", Ok(())),
        ("", "ConfigMap", "metadata.namespace", Ok(())),
        ("apps", "Deployment", "status.replicas", Err("\"status.replicas\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"")),
        ("apps", "ReplicaSet", "status.replicas", Err("\"status.replicas\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"")),
        ("", "Secret", "type", Ok(())),
        ("", "Secret", "data", Err("field label not supported: data")),
        ("", "Namespace", "status.phase", Ok(())),
        ("", "Namespace", "metadata.namespace", Err("field label not supported: metadata.namespace")),
        ("", "Event", "involvedObject.uid", Ok(())),
        ("", "Event", "reportingComponent", Ok(())),
        ("", "Event", "regarding.name", Err("field label not supported: regarding.name")),
        ("events.k8s.io", "Event", "regarding.name", Ok(())),
        ("events.k8s.io", "Event", "reportingController", Ok(())),
        ("events.k8s.io", "Event", "involvedObject.name", Err("field label not supported: involvedObject.name")),
        ("", "Service", "spec.clusterIP", Ok(())),
        ("", "Pod", "spec.nodeName", Ok(())),
        ("", "Pod", "spec.host", Ok(())),
        ("", "Node", "metadata.namespace", Err("field label not supported: metadata.namespace")),
        ("batch", "Job", "status.successful", Ok(())),
        ("batch", "Job", "status.failed", Err("field label \"status.failed\" not supported for Job")),
        ("certificates.k8s.io", "CertificateSigningRequest", "spec.signerName", Ok(())),
    ];
    for (group, kind, field, want) in cases {
        let got = check_field(group, kind, field).map_err(|e| e.to_string());
        assert_eq!(
            got.as_ref().map_err(String::as_str),
            want.as_ref().map_err(|s| *s),
            "{group}/{kind} {field}"
        );
        if want.is_ok() && *field != "spec.host" {
            assert!(
                supported_fields(group, kind).contains(field),
                "{group}/{kind} lists {field}"
            );
        }
    }
}

#[test]
fn custom_resources_check_selectable_fields() {
    let sel = FieldSelector::parse("spec.color=red,metadata.namespace=a").unwrap();
    assert!(sel.check_custom(true, &[".spec.color"]).is_ok());
    assert_eq!(
        sel.check_custom(false, &[".spec.color"])
            .unwrap_err()
            .to_string(),
        "field label not supported: metadata.namespace"
    );
    assert_eq!(
        sel.check_custom(true, &[".spec.size"])
            .unwrap_err()
            .to_string(),
        "field label not supported: spec.color"
    );
    assert!(FieldSelector::parse("metadata.name=x")
        .unwrap()
        .check_supported("apps", "Deployment")
        .is_ok());
}

/// (object, field) → extracted value.
#[test]
fn extracts_fields_like_to_selectable_fields() {
    let core_event = json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "e1", "namespace": "ns"},
        "involvedObject": {"kind": "Deployment", "name": "web", "uid": "u1"},
        "reason": "Scaled", "type": "Normal",
        "source": {"component": "deployment-controller"},
        "reportingComponent": "rc"
    });
    let new_event = json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "e2", "namespace": "ns"},
        "regarding": {"kind": "Pod", "name": "p"},
        "reportingController": "kubelet", "reason": "Pulled", "type": "Normal"
    });
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "spec": {"nodeName": "n1"},
        "status": {"podIPs": [{"ip": "10.0.0.1"}], "phase": "Running"}});
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "status": {}});
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque"});
    let custom = json!({"apiVersion": "x.io/v1", "kind": "W", "spec": {"n": 3, "on": true, "l": [1], "o": {}}});
    let cases: &[(&serde_json::Value, &str, Option<&str>)] = &[
        (&core_event, "metadata.name", Some("e1")),
        (&core_event, "involvedObject.kind", Some("Deployment")),
        (&core_event, "regarding.name", Some("web")),
        (&core_event, "source", Some("deployment-controller")),
        (&core_event, "reportingController", Some("rc")),
        (&core_event, "involvedObject.namespace", None),
        (&new_event, "involvedObject.name", Some("p")),
        (&new_event, "regarding.kind", Some("Pod")),
        (&new_event, "reportingComponent", Some("kubelet")),
        (&new_event, "source", Some("kubelet")),
        (&pod, "spec.host", Some("n1")),
        (&pod, "spec.hostNetwork", Some("false")),
        (&pod, "status.podIP", Some("10.0.0.1")),
        (&job, "status.successful", Some("0")),
        (&secret, "type", Some("Opaque")),
        (&custom, "spec.n", Some("3")),
        (&custom, "spec.on", Some("true")),
        (&custom, "spec.l", None),
        (&custom, "spec.o", None),
        (&custom, "spec.missing", None),
    ];
    for (obj, field, want) in cases {
        assert_eq!(
            extract(obj, field).as_deref(),
            *want,
            "{field} of {}",
            obj["kind"]
        );
    }
    let sel = FieldSelector::parse("involvedObject.name=p,type=Normal").unwrap();
    assert!(sel.matches_object(&new_event) && !sel.matches_object(&core_event));
}
