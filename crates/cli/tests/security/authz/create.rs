//! An object is created only by a request authorized to create it, at the name and namespace
//! of its URL.
//!
//! The holes: a server-side apply that creates an object was authorized as `patch` alone; a
//! `POST …/configmaps/foo` was authorized for `foo` and created whatever the body named. As in
//! kube-apiserver: an apply that creates also needs `create`; a create goes to the collection
//! (405 on an object's URL); a body naming another namespace than the URL, or an update or
//! patch naming another object, is a 400.

use serde_json::{json, Value};

use super::{account, Caller, JSON_PATCH};
use crate::common::Hub;

const CMS: &str = "/api/v1/namespaces/shop/configmaps";
const NS_MISMATCH: &str =
    "the namespace of the provided object does not match the namespace sent on the request";

fn cm(name: &str, ns: Option<&str>) -> Value {
    let mut v = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
        "data": {"k": "v"}});
    if let Some(ns) = ns {
        v["metadata"]["namespace"] = json!(ns);
    }
    v
}

async fn exists(admin: &Caller, ns: &str, name: &str) -> bool {
    let path = format!("/api/v1/namespaces/{ns}/configmaps/{name}");
    admin.get(&path).await.code == 200
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_are_authorized_and_addressed_as_creates() {
    let hub = Hub::start();
    for ns in ["shop", "other"] {
        hub.ok(&["create", "namespace", ns]);
    }
    hub.ok(&[
        "create",
        "configmap",
        "existing",
        "-n",
        "shop",
        "--from-literal=k=v",
    ]);
    hub.ok(&[
        "create",
        "role",
        "patcher",
        "-n",
        "shop",
        "--verb=get,list,update,patch",
        "--resource=configmaps",
    ]);
    hub.ok(&[
        "create",
        "role",
        "foo-maker",
        "-n",
        "shop",
        "--verb=create,get",
        "--resource=configmaps",
        "--resource-name=foo",
    ]);
    let patcher = account(&hub, "shop", "patcher", "role:patcher");
    let patcher = Caller::new(&hub, Some(&patcher)).await;
    let maker = account(&hub, "shop", "maker", "role:foo-maker");
    let maker = Caller::new(&hub, Some(&maker)).await;
    let admin = Caller::new(&hub, None).await;

    // Server-side apply: updating needs patch; creating needs create as well.
    let r = patcher
        .apply(&format!("{CMS}/existing"), &cm("existing", None))
        .await;
    assert_eq!(r.code, 200, "an apply that updates: {:?}", r.body);
    let r = patcher
        .apply(&format!("{CMS}/fresh"), &cm("fresh", None))
        .await;
    assert_eq!(
        (r.code, r.reason()),
        (403, "Forbidden"),
        "an apply that creates: {:?}",
        r.body
    );
    assert!(
        r.message()
            .contains("cannot create resource \"configmaps\""),
        "{}",
        r.message()
    );
    assert!(
        !exists(&admin, "shop", "fresh").await,
        "nothing was created"
    );
    // `create` limited to one name allows an apply creating that name only.
    let r = maker.apply(&format!("{CMS}/foo"), &cm("foo", None)).await;
    assert_eq!(
        (r.code, r.reason()),
        (403, "Forbidden"),
        "create alone is not patch: {:?}",
        r.body
    );

    // A create names no object in its URL: 405, whoever asks, and nothing is stored.
    for (who, caller) in [("maker", &maker), ("admin", &admin)] {
        let r = caller.post(&format!("{CMS}/foo"), &cm("bar", None)).await;
        assert_eq!(
            (r.code, r.reason()),
            (405, "MethodNotAllowed"),
            "{who}: {:?}",
            r.body
        );
        let r = caller.post(&format!("{CMS}/foo"), &cm("foo", None)).await;
        assert_eq!(r.code, 405, "{who}, same name: {:?}", r.body);
    }
    assert!(!exists(&admin, "shop", "bar").await);
    assert!(!exists(&admin, "shop", "foo").await);
    // The collection is where creates go; `create` on `foo` does not allow creating `bar` there.
    let r = maker.post(CMS, &cm("bar", None)).await;
    assert_eq!(r.code, 403, "{:?}", r.body);

    // The body's namespace must be the URL's.
    let r = admin.post(CMS, &cm("moved", Some("other"))).await;
    assert_eq!((r.code, r.reason()), (400, "BadRequest"), "{:?}", r.body);
    assert_eq!(r.message(), NS_MISMATCH);
    assert!(!exists(&admin, "other", "moved").await);
    assert!(!exists(&admin, "shop", "moved").await);

    // Updates and patches address the object of their URL: another name or namespace is a 400.
    let existing = format!("{CMS}/existing");
    let cases: Vec<(&str, super::Reply, &str)> = vec![
        (
            "PUT naming another object",
            admin.put(&existing, &cm("other-name", Some("shop"))).await,
            "the name of the object (other-name) does not match the name on the URL (existing)",
        ),
        (
            "PUT naming another namespace",
            admin.put(&existing, &cm("existing", Some("other"))).await,
            NS_MISMATCH,
        ),
        (
            "JSON patch renaming",
            admin
                .patch(
                    &existing,
                    JSON_PATCH,
                    &json!([{"op": "replace", "path": "/metadata/name", "value": "renamed"}]),
                )
                .await,
            "the name of the object (renamed) does not match the name on the URL (existing)",
        ),
        (
            "JSON patch moving",
            admin
                .patch(
                    &existing,
                    JSON_PATCH,
                    &json!([{"op": "replace", "path": "/metadata/namespace", "value": "other"}]),
                )
                .await,
            NS_MISMATCH,
        ),
        (
            "apply naming another namespace",
            admin.apply(&existing, &cm("existing", Some("other"))).await,
            NS_MISMATCH,
        ),
        (
            "apply creating in another namespace",
            admin
                .apply(&format!("{CMS}/elsewhere"), &cm("elsewhere", Some("other")))
                .await,
            NS_MISMATCH,
        ),
    ];
    for (what, r, message) in cases {
        assert_eq!(
            (r.code, r.reason()),
            (400, "BadRequest"),
            "{what}: {:?}",
            r.body
        );
        assert_eq!(r.message(), message, "{what}");
    }
    for (ns, name) in [
        ("other", "existing"),
        ("shop", "other-name"),
        ("shop", "renamed"),
        ("other", "elsewhere"),
        ("shop", "elsewhere"),
    ] {
        assert!(
            !exists(&admin, ns, name).await,
            "{ns}/{name} was not written"
        );
    }
}
