use super::*;

#[test]
fn a_resource_is_its_keys_first_four_segments_and_secrets_have_no_dictionary() {
    assert_eq!(
        resource("/registry/apps/deployments/shop/web"),
        Some("/registry/apps/deployments/")
    );
    assert_eq!(
        resource("/registry/core/namespaces/shop"),
        Some("/registry/core/namespaces/")
    );
    assert_eq!(resource("/registry/core/secrets/shop/token"), None);
    assert_eq!(resource("/short"), None);
}

#[test]
fn each_resource_learns_its_own_dictionary() {
    let key = |r: &str, i: usize| format!("/registry/dict.test.flotilla.io/{r}/ns/w-{i}");
    for i in 0..flotilla_compress::SAMPLES {
        assert!(
            for_key(&key("widgets", i), b"{\"widget\":1}").is_none(),
            "learning"
        );
    }
    let widgets = for_key(&key("widgets", 9), b"{}").expect("learned");
    assert_eq!(
        &widgets[..],
        "{\"widget\":1}"
            .repeat(flotilla_compress::SAMPLES)
            .as_bytes()
    );
    assert!(
        for_key(&key("gadgets", 0), b"{\"gadget\":1}").is_none(),
        "another resource learns anew"
    );
    let again = for_key(&key("widgets", 10), b"{}").expect("kept");
    assert!(Arc::ptr_eq(&widgets, &again), "fixed once learned");
}

#[test]
fn objects_of_a_resource_compress_against_its_first_ones() {
    use bytes::Bytes;
    use serde_json::json;

    use crate::cache::object::CachedObject;

    // Work-like objects: the same shape, different names, uids and times.
    let object = |i: usize| {
        let containers: Vec<_> = (0..3)
            .map(|c| {
                json!({"name": format!("c{c}"), "image": "registry.example.com/shop/web:1.27.3",
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                "ports": [{"containerPort": 8080, "protocol": "TCP"}]})
            })
            .collect();
        serde_json::to_vec(&json!({
            "apiVersion": "work.flotilla.io/v1alpha1", "kind": "Work",
            "metadata": {"name": format!("web-{i}-deployment"), "namespace": "flotilla-es-m-1",
                "uid": format!("{:08x}-1f2e-4d3c-9b8a-{:012x}", i * 7919, i * 104_729),
                "resourceVersion": format!("{}", 1000 + i),
                "creationTimestamp": format!("2026-12-06T05:{:02}:{:02}Z", i % 60, (i * 7) % 60),
                "labels": {"work.flotilla.io/binding": format!("{:016x}", i * 0x9e37_79b9)},
                "annotations": {"work.flotilla.io/binding-name": format!("web-{i}-deployment"),
                    "work.flotilla.io/binding-namespace": "shop"}},
            "spec": {"workload": {"manifests": [{"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": format!("web-{i}"), "namespace": "shop", "labels": {"app": "web"}},
                "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": containers}}}}]}},
        }))
        .expect("JSON")
    };
    let key = |i: usize| format!("/registry/dict2.test.flotilla.io/works/shop/w-{i}");
    let kept: Vec<CachedObject> = (0..10)
        .map(|i| CachedObject::new(key(i), Bytes::from(object(i)), i as _).expect("an object"))
        .collect();
    for (i, o) in kept.iter().enumerate() {
        assert_eq!(o.raw(), object(i), "object {i} back as stored");
        assert_eq!(o.raw_len(), object(i).len());
        assert!(o.is(&object(i)));
    }
    let alone = flotilla_compress::pack(&object(9), None)
        .expect("shrinks")
        .len();
    let held = kept[9].held_bytes();
    assert!(
        held * 2 < alone,
        "{held} bytes with the dictionary, {alone} without, of {}",
        object(9).len()
    );
}
