use serde_json::json;

use super::*;

fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {
            "name": "web", "namespace": "shop", "labels": {"app": "web"},
            "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
        },
        "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}}},
        "status": {"readyReplicas": 3},
    })
}

#[test]
fn keeps_the_object_but_its_managed_fields_and_what_it_is_told_to_leave_out() {
    let o: DynamicObject = serde_json::from_value(deployment()).expect("an object");
    let packed = PackedObject::pack(o, &["status"], &mut Dictionary::default());
    assert_eq!(packed.metadata.name.as_deref(), Some("web"));
    assert!(
        packed.metadata.labels.is_none(),
        "labels travel in the text"
    );
    let mut want = deployment();
    want["metadata"]
        .as_object_mut()
        .expect("metadata")
        .remove("managedFields");
    want.as_object_mut().expect("object").remove("status");
    assert_eq!(packed.to_value().expect("parses back"), want);
}

#[test]
fn deserializes_whole_but_lean() {
    let packed: PackedObject = serde_json::from_value(deployment()).expect("an object");
    let back = packed.to_value().expect("parses back");
    assert_eq!(back["status"], json!({"readyReplicas": 3}));
    assert_eq!(back["kind"], json!("Deployment"));
    assert!(back["metadata"].get("managedFields").is_none(), "lean");
}

#[test]
fn events_are_packed_object_by_object() {
    let o: DynamicObject = serde_json::from_value(deployment()).expect("an object");
    match PackedObject::pack_event(
        watcher::Event::Apply(o),
        &["status"],
        &mut Dictionary::default(),
    ) {
        watcher::Event::Apply(p) => {
            assert!(p.to_value().expect("parses").get("status").is_none())
        }
        _ => panic!("an Apply stays an Apply"),
    }
    assert!(matches!(
        PackedObject::pack_event(watcher::Event::InitDone, &[], &mut Dictionary::default()),
        watcher::Event::InitDone
    ));
}
