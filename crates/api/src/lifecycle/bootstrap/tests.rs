use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use serde_json::json;

use super::*;
use crate::objects::delete_object;

#[test]
fn endpoint_address_of_advertised_addresses() {
    let cases: &[(&str, Option<(IpAddr, u16)>)] = &[
        ("127.0.0.1:6443", Some((Ipv4Addr::LOCALHOST.into(), 6443))),
        ("[::1]:443", Some((Ipv6Addr::LOCALHOST.into(), 443))),
        ("hub.example:6443", None),
        ("127.0.0.1", None),
    ];
    for (given, want) in cases {
        assert_eq!(endpoint_address(given), *want, "{given}");
    }
}

#[test]
fn kept_objects_name_the_hub() {
    let kept = kept_objects(Ipv4Addr::new(10, 1, 2, 3).into(), 7443);
    let svc = &kept[0].object;
    assert_eq!(svc["spec"]["clusterIP"], "10.0.0.1");
    assert_eq!(
        svc["spec"]["ports"],
        json!([{"name": "https", "protocol": "TCP", "port": 443, "targetPort": 7443}])
    );
    let ep = &kept[1].object;
    assert_eq!(ep["subsets"][0]["addresses"][0]["ip"], "10.1.2.3");
    assert_eq!(ep["subsets"][0]["ports"][0]["port"], 7443);
    let slice = &kept[2].object;
    assert_eq!(slice["addressType"], "IPv4");
    assert_eq!(slice["endpoints"][0]["addresses"][0], "10.1.2.3");
    assert_eq!(
        slice["metadata"]["labels"]["kubernetes.io/service-name"],
        "kubernetes"
    );
    let v6 = kept_objects(Ipv6Addr::LOCALHOST.into(), 1);
    assert_eq!(v6[2].object["addressType"], "IPv6");
}

#[test]
fn corrected_puts_back_owned_fields_only() {
    let kept = kept_objects(Ipv4Addr::LOCALHOST.into(), 6443);
    let ep = &kept[1];
    assert_eq!(corrected(ep, &ep.object), None, "as kept: nothing to do");
    let mut changed = ep.object.clone();
    changed["subsets"] = json!([{"addresses": [{"ip": "9.9.9.9"}]}]);
    changed["metadata"]["labels"] = json!({"team": "x"});
    changed["metadata"]["annotations"] = json!({"note": "kept"});
    let fixed = corrected(ep, &changed).expect("a change to correct");
    assert_eq!(fixed["subsets"], ep.object["subsets"]);
    assert_eq!(
        fixed["metadata"]["labels"],
        json!({"team": "x", "endpointslice.kubernetes.io/skip-mirror": "true"})
    );
    assert_eq!(fixed["metadata"]["annotations"], json!({"note": "kept"}));
}

/// The server creates the objects at start and brings a deleted one back.
#[tokio::test]
async fn kept_in_place_by_the_server() {
    let dir = tempfile::tempdir().expect("temp dir");
    let api = Api::for_tests(dir.path()).await;
    let snap = api.registry.snapshot();
    let svc = snap
        .get("", "v1", "services")
        .cloned()
        .expect("services served");
    let eps = snap
        .get("", "v1", "endpoints")
        .cloned()
        .expect("endpoints served");
    let present = |key: String| {
        let api = api.clone();
        async move {
            for _ in 0..100 {
                if api.cache.get(&key).is_some() {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            false
        }
    };
    assert!(present(svc.key(Some("default"), "kubernetes")).await);
    let ep_key = eps.key(Some("default"), "kubernetes");
    assert!(present(ep_key.clone()).await);
    let uid = |api: &Api| {
        api.cache
            .get(&ep_key)
            .map(|o| o.value()["metadata"]["uid"].clone())
    };
    let first = uid(&api);
    delete_object(&api, &eps, &ep_key, "kubernetes", &Default::default())
        .await
        .expect("delete the Endpoints");
    let mut back = false;
    for _ in 0..100 {
        let now = uid(&api);
        if now.is_some() && now != first {
            back = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(back, "the Endpoints come back");
    let ep = api.cache.get(&ep_key).expect("present").value();
    assert_eq!(ep["subsets"][0]["addresses"][0]["ip"], "127.0.0.1");
    assert_eq!(ep["subsets"][0]["ports"][0]["port"], 6443);
}
