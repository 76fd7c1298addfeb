//! Conformance: custom resources as the upstream suite checks them — CRD rules judged when
//! the CRD is written (syntax, unknown fields, cost) and enforced with Kubernetes' CEL
//! libraries and cost limits, defaults applied to objects read from storage, discovery's
//! `storageVersionHash`, and a CRD's deletion finishing while its objects are removed.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::Hub;

/// A namespaced CRD `<plural>.<group>` of kind `kind` with one version `v1` of `schema`.
fn crd(group: &str, plural: &str, kind: &str, schema: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind, "listKind": format!("{kind}List")},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": schema}}]}
    })
}

fn create_crd(hub: &Hub, crd: &Value) {
    hub.ok_stdin(&["create", "-f", "-"], &crd.to_string());
    let name = format!(
        "crd/{}",
        crd["metadata"]["name"].as_str().unwrap_or_default()
    );
    hub.ok(&[
        "wait",
        "--for=condition=Established",
        &name,
        "--timeout=30s",
    ]);
}

fn cr(group: &str, kind: &str, name: &str, spec: Value) -> String {
    json!({"apiVersion": format!("{group}/v1"), "kind": kind,
        "metadata": {"name": name, "namespace": "default"}, "spec": spec})
    .to_string()
}

/// Poll `f` until it holds (or fail after 30 s).
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out: {what}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A CRD whose rule is wrong is refused with 422 and kube's words, and not stored.
#[test]
fn bad_rules_refuse_the_crd() {
    let hub = Hub::start();
    let spec = |rules: Value, props: Value| {
        json!({"type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": rules, "properties": props}}})
    };
    let nested = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "x": {"type": "array", "items": {"type": "array", "items": {"type": "string"},
            "x-kubernetes-validations": [{"rule": "self.all(s, s == 'string constant')"}]}}}}}});
    let cases = [
        (
            spec(
                json!([{"rule": "self.z == 100"}]),
                json!({"x": {"type": "integer"}}),
            ),
            "undefined field 'z'",
        ),
        (
            spec(json!([{"rule": "self = 42"}]), json!({})),
            "Syntax error",
        ),
        (
            nested,
            "estimated rule cost exceeds budget by factor of more than 100x",
        ),
        (
            spec(
                json!([{"rule": "self.x + 1"}]),
                json!({"x": {"type": "integer"}}),
            ),
            "cel expression must evaluate to a bool",
        ),
    ];
    for (i, (schema, wanted)) in cases.into_iter().enumerate() {
        let plural = format!("bads{i}");
        let c = crd(
            "bad.conformance.example.com",
            &plural,
            &format!("Bad{i}"),
            schema,
        );
        let out = hub.kubectl_stdin(&["create", "-f", "-", "-v=6"], &c.to_string());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{wanted}: created");
        assert!(
            err.contains("422") || err.contains("is invalid"),
            "{wanted}: {err}"
        );
        assert!(err.contains(wanted), "{wanted}: {err}");
        let gone = hub.fails(&[
            "get",
            "crd",
            &format!("{plural}.bad.conformance.example.com"),
        ]);
        assert!(
            gone.contains("NotFound") || gone.contains("not found"),
            "{gone}"
        );
    }
}

/// Rules calling Kubernetes' CEL libraries are enforced, and a rule costing past the per-call
/// limit on an object refuses it (the upstream suite's schema).
#[test]
fn library_rules_and_runtime_cost_are_enforced() {
    let hub = Hub::start();
    let g = "lib.conformance.example.com";
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.firstArray.isSorted() && self.firstArray.sum() % 2 == 0"},
            {"rule": "quantity(self.size).isLessThan(quantity('1Gi'))", "message": "size must be under 1Gi"},
            {"rule": "self.largeArray.all(x, self.largeArray.all(y, y == x))"}],
        "properties": {
            "firstArray": {"type": "array", "maxItems": 1000, "items": {"type": "integer"}},
            "largeArray": {"type": "array", "maxItems": 725, "items": {"type": "integer"}},
            "size": {"type": "string", "maxLength": 20}}}}});
    create_crd(&hub, &crd(g, "libs", "Lib", schema));
    let ok = cr(
        g,
        "Lib",
        "ok",
        json!({"firstArray": [1, 3], "largeArray": [2, 2], "size": "512Mi"}),
    );
    hub.ok_stdin(&["create", "-f", "-"], &ok);
    let refused = [
        (
            json!({"firstArray": [3, 1], "largeArray": [], "size": "1Mi"}),
            "failed rule: self.firstArray.isSorted()",
        ),
        (
            json!({"firstArray": [], "largeArray": [], "size": "2Gi"}),
            "size must be under 1Gi",
        ),
        (
            json!({"firstArray": [], "largeArray": vec![20; 725], "size": "1"}),
            "call cost exceeds limit",
        ),
    ];
    for (i, (spec, wanted)) in refused.into_iter().enumerate() {
        let out = hub.kubectl_stdin(
            &["create", "-f", "-"],
            &cr(g, "Lib", &format!("bad{i}"), spec),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(wanted),
            "{wanted}: {err}"
        );
        let gone = hub.fails(&[
            "get",
            "libs.lib.conformance.example.com",
            &format!("bad{i}"),
        ]);
        assert!(gone.contains("not found"), "{gone}");
    }
}

/// An object stored before its CRD had a default gets it on GET, LIST and WATCH.
#[test]
fn defaults_apply_to_objects_read_from_storage() {
    let hub = Hub::start();
    let g = "defaults.conformance.example.com";
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}}});
    create_crd(&hub, &crd(g, "things", "Thing", schema));
    hub.ok_stdin(
        &["create", "-f", "-"],
        &cr(g, "Thing", "old", json!({"b": "kept"})),
    );
    let patch = r#"[{"op":"add","path":"/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/a/default","value":"A"}]"#;
    hub.ok(&[
        "patch",
        "crd",
        &format!("things.{g}"),
        "--type=json",
        "-p",
        patch,
    ]);
    let path = format!("/apis/{g}/v1/namespaces/default/things");
    eventually("the default shows on GET", || {
        let got: Value = serde_json::from_str(&hub.ok(&["get", "--raw", &format!("{path}/old")]))
            .unwrap_or_default();
        got["spec"]["a"] == "A"
    });
    let got: Value =
        serde_json::from_str(&hub.ok(&["get", "--raw", &format!("{path}/old")])).unwrap();
    assert_eq!(got["spec"]["b"], "kept");
    let list: Value = serde_json::from_str(&hub.ok(&["get", "--raw", &path])).unwrap();
    assert_eq!(list["items"][0]["spec"]["a"], "A", "{list}");
    let watch = hub.ok(&[
        "get",
        "--raw",
        &format!("{path}?watch=true&timeoutSeconds=2"),
    ]);
    let first: Value = serde_json::from_str(watch.lines().next().unwrap_or("{}")).unwrap();
    assert_eq!(first["object"]["spec"]["a"], "A", "{watch}");
    // Not rewritten in storage: a field set later is not replaced by the default.
    let set = r#"{"spec":{"a":"mine"}}"#;
    hub.ok(&[
        "patch",
        &format!("things.{g}"),
        "old",
        "--type=merge",
        "-p",
        set,
    ]);
    let got: Value =
        serde_json::from_str(&hub.ok(&["get", "--raw", &format!("{path}/old")])).unwrap();
    assert_eq!(got["spec"]["a"], "mine");
}

/// Discovery's storageVersionHash is kube's hash of the storage version's group/version/kind,
/// for custom resources (whichever version is asked) and built-ins.
#[test]
fn discovery_shows_the_storage_version_hash() {
    let hub = Hub::start();
    let g = "hash.conformance.example.com";
    let mut c = crd(g, "hashes", "Hash", json!({"type": "object"}));
    c["spec"]["versions"] = json!([
        {"name": "v2", "served": true, "storage": false, "schema": {"openAPIV3Schema": {"type": "object"}}},
        {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object"}}}]);
    create_crd(&hub, &c);
    let hash_of = |gv: &str, name: &str| {
        let list: Value = serde_json::from_str(&hub.ok(&["get", "--raw", gv])).unwrap();
        list["resources"]
            .as_array()
            .and_then(|rs| rs.iter().find(|r| r["name"] == name))
            .map(|r| r["storageVersionHash"].clone())
            .unwrap_or(Value::Null)
    };
    // base64(sha256("hash.conformance.example.com/v1/Hash")[..8]).
    let want = flotilla_api::registry::version_hash::hash(g, "v1", "Hash");
    assert_eq!(hash_of(&format!("/apis/{g}/v1"), "hashes"), want.as_str());
    assert_eq!(hash_of(&format!("/apis/{g}/v2"), "hashes"), want.as_str());
    assert_eq!(hash_of("/api/v1", "configmaps"), "qFsyl6wFWjQ=");
    assert_eq!(hash_of("/apis/apps/v1", "deployments"), "8aSe+NMegvE=");
    assert_eq!(hash_of("/apis/apps/v1", "deployments/status"), Value::Null);
}

/// Deleting a CRD removes its objects and then the CRD, through its cleanup finalizer; while
/// an object holds on (its own finalizer), the CRD says it is terminating.
#[test]
fn crd_deletion_finishes_while_its_objects_are_removed() {
    let hub = Hub::start();
    let g = "gone.conformance.example.com";
    let open = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    create_crd(&hub, &crd(g, "widgets", "Widget", open.clone()));
    let name = format!("widgets.{g}");
    let fins = hub.ok(&["get", "crd", &name, "-o", "jsonpath={.metadata.finalizers}"]);
    assert!(
        fins.contains("customresourcecleanup.apiextensions.k8s.io"),
        "{fins}"
    );
    for i in 0..5 {
        hub.ok_stdin(
            &["create", "-f", "-"],
            &cr(g, "Widget", &format!("w{i}"), json!({"n": i})),
        );
    }
    hub.ok(&[
        "patch",
        &name,
        "w0",
        "-n",
        "default",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/hold"]}}"#,
    ]);
    hub.ok(&["delete", "crd", &name, "--wait=false"]);
    eventually("the CRD says it is terminating", || {
        let c: Value =
            serde_json::from_str(&hub.ok(&["get", "crd", &name, "-o", "json"])).unwrap_or_default();
        c["status"]["conditions"].as_array().is_some_and(|cs| {
            cs.iter().any(|c| {
                c["type"] == "Terminating"
                    && c["status"] == "True"
                    && c["reason"] == "InstanceDeletionInProgress"
            })
        })
    });
    eventually("the other objects are removed", || {
        let left = hub.ok(&["get", &name, "-n", "default", "-o", "name"]);
        left.lines().count() == 1 && left.trim().ends_with("/w0")
    });
    // Held longer than one round of the CRD's teardown retries: it keeps waiting for it.
    std::thread::sleep(Duration::from_secs(12));
    hub.ok(&[
        "patch",
        &name,
        "w0",
        "-n",
        "default",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    eventually("the CRD is gone", || {
        !hub.kubectl(&["get", "crd", &name]).status.success()
    });
    let raw = hub.kubectl(&[
        "get",
        "--raw",
        &format!("/apis/{g}/v1/namespaces/default/widgets"),
    ]);
    assert!(!raw.status.success(), "the resource is still served");
    // A CRD of the same name starts empty.
    create_crd(&hub, &crd(g, "widgets", "Widget", open));
    let left = hub.ok(&["get", &name, "-n", "default", "-o", "name"]);
    assert!(left.trim().is_empty(), "{left}");
}

/// A CRD asking for names another CRD of its group holds is not accepted (NamesAccepted False,
/// kube's reason and message) nor served, until the names are free.
#[test]
fn conflicting_names_are_not_accepted() {
    let hub = Hub::start();
    let g = "names.conformance.example.com";
    let open = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    create_crd(&hub, &crd(g, "foos", "Foo", open.clone()));
    let mut second = crd(g, "bars", "Bar", open);
    second["spec"]["names"]["shortNames"] = json!(["foos"]);
    hub.ok_stdin(&["create", "-f", "-"], &second.to_string());
    let bars = format!("bars.{g}");
    let cond = |t: &str| {
        let c: Value =
            serde_json::from_str(&hub.ok(&["get", "crd", &bars, "-o", "json"])).unwrap_or_default();
        c["status"]["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == t).cloned())
            .unwrap_or(Value::Null)
    };
    eventually("the names are judged", || {
        cond("NamesAccepted")["status"] == "False"
    });
    let names = cond("NamesAccepted");
    assert_eq!(names["reason"], "ShortNamesConflict");
    assert_eq!(names["message"], r#""foos" is already in use"#);
    assert_eq!(cond("Established")["status"], "False");
    assert_eq!(cond("Established")["reason"], "NotAccepted");
    let raw = hub.kubectl(&[
        "get",
        "--raw",
        &format!("/apis/{g}/v1/namespaces/default/bars"),
    ]);
    assert!(
        !raw.status.success(),
        "bars is served before its names are accepted"
    );
    hub.ok(&["delete", "crd", &format!("foos.{g}")]);
    hub.ok(&[
        "wait",
        "--for=condition=Established",
        &format!("crd/{bars}"),
        "--timeout=30s",
    ]);
    assert_eq!(cond("NamesAccepted")["reason"], "NoConflicts");
    let accepted = hub.ok(&[
        "get",
        "crd",
        &bars,
        "-o",
        "jsonpath={.status.acceptedNames.shortNames}",
    ]);
    assert!(accepted.contains("foos"), "{accepted}");
}
