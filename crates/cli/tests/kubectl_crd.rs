//! CustomResourceDefinitions through kubectl: served at once, printer columns, status and
//! scale subresources, several versions, cascade on CRD deletion.

mod common;

use common::Hub;

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab, shortNames: [ct]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    additionalPrinterColumns:
    - {name: Spec, type: string, jsonPath: .spec.cronSpec}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              cronSpec: {type: string}
              image: {type: string}
              replicas: {type: integer}
          status:
            type: object
            properties:
              replicas: {type: integer}
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
"#;

const CR: &str = r#"{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"tab","namespace":"default"},"spec":{"cronSpec":"* * * * */5","image":"img","replicas":1}}"#;

#[test]
fn crd_lifecycle() {
    let hub = Hub::start();
    hub.ok_stdin(&["create", "-f", "-"], CRD);
    hub.ok(&[
        "wait",
        "--for",
        "condition=Established",
        "crd/crontabs.stable.example.com",
        "--timeout=30s",
    ]);
    // Discovery refreshes: the new kind is usable by short name at once.
    hub.ok_stdin(&["create", "-f", "-"], CR);
    let t = hub.ok(&["get", "ct"]);
    assert!(
        t.contains("SPEC") && t.contains("* * * * */5") && t.contains("REPLICAS"),
        "{t}"
    );
    // Served at both versions; conversion None only changes apiVersion.
    let b = hub.ok(&[
        "get",
        "crontabs.v1beta1.stable.example.com",
        "tab",
        "-o",
        "jsonpath={.apiVersion}",
    ]);
    assert_eq!(b, "stable.example.com/v1beta1");

    hub.ok(&["scale", "crontab/tab", "--replicas=3"]);
    assert_eq!(
        hub.ok(&["get", "ct", "tab", "-o", "jsonpath={.spec.replicas}"]),
        "3"
    );
    // The main resource ignores status; the status subresource takes only status.
    hub.ok(&[
        "patch",
        "ct",
        "tab",
        "--type=merge",
        "-p",
        r#"{"status":{"replicas":9}}"#,
    ]);
    assert_eq!(
        hub.ok(&["get", "ct", "tab", "-o", "jsonpath={.status.replicas}"]),
        ""
    );
    hub.ok(&[
        "patch",
        "ct",
        "tab",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"replicas":2},"spec":{"image":"ignored"}}"#,
    ]);
    assert_eq!(
        hub.ok(&[
            "get",
            "ct",
            "tab",
            "-o",
            "jsonpath={.status.replicas}/{.spec.image}"
        ]),
        "2/img"
    );
    // generation moves with spec only.
    let g1 = hub.ok(&["get", "ct", "tab", "-o", "jsonpath={.metadata.generation}"]);
    hub.ok(&["label", "ct", "tab", "x=y"]);
    assert_eq!(
        hub.ok(&["get", "ct", "tab", "-o", "jsonpath={.metadata.generation}"]),
        g1
    );

    let e = hub.fails(&[
        "patch",
        "ct",
        "tab",
        "--type=strategic",
        "-p",
        r#"{"spec":{"image":"x"}}"#,
    ]);
    assert!(e.contains("strategic merge patch is not supported"), "{e}");

    hub.ok(&[
        "delete",
        "crd",
        "crontabs.stable.example.com",
        "--timeout=30s",
    ]);
    // Gone with its definition: neither discovered nor listable (an empty list would mean the
    // hub still serves the resource).
    let out = hub.kubectl(&["get", "crontabs.stable.example.com"]);
    let e = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success(),
        "the resource outlived its CRD: {e}\nhub log:\n{}",
        hub.log()
    );
    assert!(
        e.contains("the server doesn't have a resource type")
            || e.contains("NotFound")
            || e.contains("not found"),
        "{e}"
    );
}
