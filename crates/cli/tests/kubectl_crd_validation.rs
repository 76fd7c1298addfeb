//! A CRD's structural schema is enforced on every write through kubectl, as kube-apiserver
//! enforces it: a value that breaks the schema is refused (422) with kube's message, and
//! nothing is stored — on create, apply (create and update), patch and the status subresource;
//! its CEL rules too, transition rules (`oldSelf`) on updates.

mod common;

use common::Hub;

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            x-kubernetes-validations:
            - rule: "!has(self.mode) || self.mode != 'Slow' || self.size <= 5"
              message: a slow widget has at most 5
            properties:
              size: {type: integer, minimum: 1, maximum: 10}
              id: {type: string, format: uuid}
              name:
                type: string
                pattern: '^[a-z]+$'
                maxLength: 8
                x-kubernetes-validations:
                - {rule: self == oldSelf, message: name is immutable}
              mode: {type: string, enum: [Fast, Slow]}
              tags: {type: array, maxItems: 2, items: {type: string}}
          status:
            type: object
            properties:
              ready: {type: integer, minimum: 0}
"#;

fn widget(spec: &str) -> String {
    format!(
        r#"{{"apiVersion":"example.com/v1","kind":"Widget","metadata":{{"name":"w","namespace":"default"}},"spec":{spec}}}"#
    )
}

fn stderr_of(hub: &Hub, args: &[&str], stdin: &str) -> String {
    let out = hub.kubectl_stdin(args, stdin);
    assert!(!out.status.success(), "kubectl {args:?} should have failed");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn established(hub: &Hub) {
    hub.ok_stdin(&["create", "-f", "-"], CRD);
    hub.ok(&[
        "wait",
        "--for",
        "condition=Established",
        "crd/widgets.example.com",
        "--timeout=30s",
    ]);
}

#[test]
fn schema_keywords_are_enforced_and_nothing_is_stored() {
    let hub = Hub::start();
    established(&hub);

    let e = stderr_of(&hub, &["create", "-f", "-"], &widget(r#"{"size":0}"#));
    assert!(
        e.contains(
            "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"
        ),
        "{e}"
    );
    let e = stderr_of(
        &hub,
        &["apply", "-f", "-"],
        &widget(r#"{"size":11,"name":"Abc","mode":"Medium","tags":["a","b","c"]}"#),
    );
    for want in [
        "spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10",
        r#"spec.name: Invalid value: "Abc": spec.name in body should match '^[a-z]+$'"#,
        r#"spec.mode: Unsupported value: "Medium": supported values: "Fast", "Slow""#,
        "spec.tags: Too many: 3: must have at most 2 items",
    ] {
        assert!(e.contains(want), "missing {want:?} in {e}");
    }
    let e = stderr_of(&hub, &["create", "-f", "-"], &widget(r#"{"name":"abc"}"#));
    assert!(e.contains("spec.size: Required value"), "{e}");
    let none = hub.kubectl(&["get", "widgets", "-n", "default", "-o", "name"]);
    assert!(String::from_utf8_lossy(&none.stdout).trim().is_empty());

    // A valid widget is stored; breaking it by apply, patch or status leaves it as it was.
    hub.ok_stdin(&["apply", "-f", "-"], &widget(r#"{"size":3,"name":"abc"}"#));
    let e = stderr_of(
        &hub,
        &["apply", "-f", "-"],
        &widget(r#"{"size":3,"name":"toolongname"}"#),
    );
    assert!(
        e.contains("spec.name: Too long: may not be more than 8 bytes"),
        "{e}"
    );
    let out = hub.kubectl(&[
        "patch",
        "widget",
        "w",
        "-n",
        "default",
        "--type=merge",
        "-p",
        r#"{"spec":{"size":0}}"#,
    ]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        e.contains("spec.size in body should be greater than or equal to 1"),
        "{e}"
    );
    let out = hub.kubectl(&[
        "patch",
        "widget",
        "w",
        "-n",
        "default",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"ready":-1}}"#,
    ]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        e.contains("status.ready: Invalid value: -1: status.ready in body should be greater than or equal to 0"),
        "{e}"
    );
    let stored = hub.ok(&[
        "get",
        "widget",
        "w",
        "-n",
        "default",
        "-o",
        "jsonpath={.spec.size} {.spec.name} {.status.ready}",
    ]);
    assert_eq!(stored.trim(), "3 abc");

    // With the status subresource, the main resource ignores a status (bad or not), as kube.
    let got = hub.ok(&["get", "widget", "w", "-n", "default", "-o", "json"]);
    let mut with_status: serde_json::Value = serde_json::from_str(&got).unwrap();
    with_status["status"] = serde_json::json!({"ready": -1});
    with_status["spec"]["mode"] = serde_json::json!("Fast");
    hub.ok_stdin(&["replace", "-f", "-"], &with_status.to_string());
    let stored = hub.ok(&[
        "get",
        "widget",
        "w",
        "-n",
        "default",
        "-o",
        "jsonpath={.spec.mode} {.status.ready}",
    ]);
    assert_eq!(stored.trim(), "Fast");
}

#[test]
fn cel_rules_and_formats_are_enforced() {
    let hub = Hub::start();
    // A rule that does not compile refuses its CRD, as in kube-apiserver.
    let broken = CRD.replace("self == oldSelf", "self ==");
    let e = stderr_of(&hub, &["create", "-f", "-"], &broken);
    assert!(
        e.contains("spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[name].x-kubernetes-validations[0].rule: Invalid value: ")
            && e.contains("compilation failed"),
        "{e}"
    );
    let crds = hub.ok(&["get", "crd", "-o", "name"]);
    assert!(!crds.contains("widgets.example.com"), "{crds}");
    established(&hub);

    let e = stderr_of(
        &hub,
        &["create", "-f", "-"],
        &widget(r#"{"size":6,"mode":"Slow","id":"not-a-uuid"}"#),
    );
    for want in [
        r#"spec: Invalid value: "object": a slow widget has at most 5"#,
        r#"spec.id: Invalid value: "not-a-uuid": spec.id in body must be of type uuid: "not-a-uuid""#,
    ] {
        assert!(e.contains(want), "missing {want:?} in {e}");
    }
    let none = hub.kubectl(&["get", "widgets", "-n", "default", "-o", "name"]);
    assert!(String::from_utf8_lossy(&none.stdout).trim().is_empty());

    // The transition rule lets the first name in, then holds it.
    hub.ok_stdin(
        &["apply", "-f", "-"],
        &widget(r#"{"size":6,"name":"abc","id":"7d444840-9dc0-11d1-b245-5ffdce74fad2"}"#),
    );
    let e = stderr_of(
        &hub,
        &["apply", "-f", "-"],
        &widget(r#"{"size":6,"name":"xyz"}"#),
    );
    assert!(
        e.contains(r#"spec.name: Invalid value: "string": name is immutable"#),
        "{e}"
    );
    let out = hub.kubectl(&[
        "patch",
        "widget",
        "w",
        "-n",
        "default",
        "--type=merge",
        "-p",
        r#"{"spec":{"mode":"Slow"}}"#,
    ]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(e.contains("a slow widget has at most 5"), "{e}");
    let stored = hub.ok(&[
        "get",
        "widget",
        "w",
        "-n",
        "default",
        "-o",
        "jsonpath={.spec.size} {.spec.name} {.spec.mode}",
    ]);
    assert_eq!(stored.trim(), "6 abc");
    hub.ok(&[
        "patch",
        "widget",
        "w",
        "-n",
        "default",
        "--type=merge",
        "-p",
        r#"{"spec":{"size":5,"mode":"Slow"}}"#,
    ]);
}
