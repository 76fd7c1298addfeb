use k8s_openapi::api::apps::v1::Deployment;
use kube::runtime::reflector::ObjectRef;
use kube::ResourceExt;

use super::*;

fn deployment(i: usize) -> Deployment {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": format!("web-{i}"), "namespace": "shop", "labels": {"app": "web"},
            "annotations": {"example.com/owner": "team-a"}, "resourceVersion": format!("{}", 100 + i)},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": (0..4).map(|c| serde_json::json!({"name": format!("c{c}"),
                    "image": "registry.example.com/shop/web:1.27.3", "ports": [{"containerPort": 8080}]}))
                    .collect::<Vec<_>>()}}},
        "status": {"replicas": 3, "readyReplicas": 2},
    }))
    .expect("a Deployment")
}

#[test]
fn unpacks_to_the_object_packed() {
    let d = deployment(1);
    let c = Compact::pack(d.clone(), &mut Dictionary::default());
    assert_eq!(c.unpack().expect("unpacks"), d);
    assert_eq!(c.meta().name.as_deref(), Some("web-1"));
    assert_eq!(c.annotations().len(), 1, "annotations stay typed");
    assert!(c.meta().labels.is_none(), "labels travel in the text");
    assert_eq!(Compact::<Deployment>::kind(&()), "Deployment");
    assert_eq!(Compact::<Deployment>::plural(&()), "deployments");
    assert_eq!(
        ObjectRef::from_obj(&c),
        ObjectRef::new("web-1").within("shop"),
        "keyed as the object"
    );
}

#[test]
fn a_store_compresses_against_its_first_objects() {
    let mut dictionary = Dictionary::default();
    let packed: Vec<_> = (0..8)
        .map(|i| Compact::pack(deployment(i), &mut dictionary))
        .collect();
    let alone = Compact::pack(deployment(7), &mut Dictionary::default());
    assert!(
        packed[7].rest.held() * 2 < alone.rest.held(),
        "{} bytes with the dictionary, {} without",
        packed[7].rest.held(),
        alone.rest.held()
    );
    assert_eq!(packed[7].unpack().expect("unpacks"), deployment(7));
}

#[test]
fn packs_every_object_of_an_event() {
    let mut dictionary = Dictionary::default();
    match Compact::pack_event(watcher::Event::Apply(deployment(2)), &mut dictionary) {
        watcher::Event::Apply(c) => assert_eq!(c.unpack().expect("unpacks"), deployment(2)),
        _ => panic!("an Apply stays an Apply"),
    }
    assert!(matches!(
        Compact::<Deployment>::pack_event(watcher::Event::InitDone, &mut dictionary),
        watcher::Event::InitDone
    ));
}
