//! A watch or list about one name serves that name only.
//!
//! The hole: a watch on `…/secrets/db` used the object's storage key as a prefix and also
//! streamed `db-admin` and `dbx`, so RBAC `resourceNames: [db]` leaked every Secret whose name
//! starts with `db` — from the current state, from history (`resourceVersion=N`) and live. A
//! list or watch whose field selector pins `metadata.name` is, as in kube-apiserver, authorized
//! for that name and must serve exactly it.

use std::time::Duration;

use serde_json::json;

use super::{account, names, Caller, MERGE};
use crate::common::Hub;

const SECRETS: &str = "/api/v1/namespaces/vault/secrets";

fn secret(name: &str) -> String {
    format!(
        "{{\"apiVersion\": \"v1\", \"kind\": \"Secret\", \"metadata\": {{\"name\": \"{name}\", \
         \"namespace\": \"vault\"}}, \"stringData\": {{\"password\": \"{name}-pw\"}}}}"
    )
}

/// Every event of `events` is about `db`, and there is at least one.
fn only_db(what: &str, events: &[(String, String)]) {
    assert!(!events.is_empty(), "{what}: no events");
    assert!(
        events.iter().all(|(_, name)| name == "db"),
        "{what} streams other Secrets: {events:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_named_watch_or_list_serves_that_name_only() {
    let hub = Hub::start();
    hub.ok(&["create", "namespace", "vault"]);
    let admin = Caller::new(&hub, None).await;
    let before = admin.get(SECRETS).await.body["metadata"]["resourceVersion"]
        .as_str()
        .expect("a list resourceVersion")
        .to_string();
    for name in ["db", "db-admin", "dbx"] {
        hub.ok_stdin(&["apply", "-f", "-"], &secret(name));
    }
    hub.ok(&[
        "create",
        "role",
        "db-only",
        "-n",
        "vault",
        "--verb=get,list,watch",
        "--resource=secrets",
        "--resource-name=db",
    ]);
    let app = account(&hub, "vault", "app", "role:db-only");
    let app = Caller::new(&hub, Some(&app)).await;

    // The object itself, and its neighbours refused.
    assert_eq!(app.get(&format!("{SECRETS}/db")).await.code, 200);
    assert_eq!(app.get(&format!("{SECRETS}/db-admin")).await.code, 403);
    assert_eq!(app.get(SECRETS).await.code, 403, "no list without a name");

    // Watches of one name, from the current state and from history, as the scoped account and
    // as the admin (the watch itself is exact, not only its authorization).
    let watches = [
        format!("{SECRETS}/db?watch=1&timeoutSeconds=1"),
        "/api/v1/watch/namespaces/vault/secrets/db?timeoutSeconds=1".to_string(),
        format!("{SECRETS}/db?watch=1&timeoutSeconds=1&resourceVersion={before}"),
        format!("{SECRETS}?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Ddb"),
        format!(
            "{SECRETS}?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Ddb&resourceVersion={before}"
        ),
    ];
    for path in &watches {
        for (who, caller) in [("app", &app), ("admin", &admin)] {
            let events = caller
                .watch(path)
                .await
                .unwrap_or_else(|r| panic!("{who} {path}: {} {:?}", r.code, r.body));
            only_db(&format!("{who} {path}"), &events);
        }
    }
    // Cluster-wide, a name is the name in every namespace, never a namespace called `db…`.
    let everywhere = admin
        .watch("/api/v1/secrets?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Ddb")
        .await
        .expect("a cluster-wide watch");
    only_db("admin cluster-wide", &everywhere);

    // Live changes to the neighbours are not delivered either.
    let live = {
        let path = format!("{SECRETS}/db?watch=1&timeoutSeconds=3");
        let app = Caller::new(&hub, Some(&super::token(&hub, "vault", "app"))).await;
        tokio::spawn(async move { app.watch(&path).await })
    };
    tokio::time::sleep(Duration::from_millis(800)).await;
    let touch = json!({"metadata": {"labels": {"touched": "yes"}}});
    for name in ["db-admin", "dbx", "db"] {
        let r = admin
            .patch(&format!("{SECRETS}/{name}"), MERGE, &touch)
            .await;
        assert_eq!(r.code, 200, "{name}: {:?}", r.body);
    }
    let events = live.await.expect("the watch task").expect("the live watch");
    only_db("live", &events);
    assert!(
        events.iter().any(|(t, n)| t == "MODIFIED" && n == "db"),
        "the change to db itself is delivered: {events:?}"
    );

    // Lists pinned to the name: that name only, for the account and for the admin.
    for (who, caller) in [("app", &app), ("admin", &admin)] {
        let r = caller
            .get(&format!("{SECRETS}?fieldSelector=metadata.name%3Ddb"))
            .await;
        assert_eq!(r.code, 200, "{who}: {:?}", r.body);
        assert_eq!(names(&r.body), ["db"], "{who}");
    }
    for path in [
        format!("{SECRETS}?fieldSelector=metadata.name%3Ddb-admin"),
        format!("{SECRETS}?fieldSelector=metadata.name%21%3Ddb"),
        format!("{SECRETS}?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Ddbx"),
    ] {
        let r = app.get(&path).await;
        assert_eq!(
            (r.code, r.reason()),
            (403, "Forbidden"),
            "{path}: {:?}",
            r.body
        );
    }
}
