//! Paged lists (apimachinery/chunking.go) and Tables (table_conversion.go).

use std::time::{Duration, Instant};

use hyper::Method;
use serde_json::{json, Value};

use super::{names_of, rv_of, sixty_configmaps, Caller, TABLE, TABLE_V1BETA1};
use crate::common::Hub;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunked_list_is_one_snapshot_however_it_changes_meanwhile() {
    let hub = Hub::start();
    let caller = Caller::new(&hub).await;
    let want = sixty_configmaps(&hub, &caller, "chunks").await;
    let total = want.len();
    let base = "/api/v1/namespaces/chunks/configmaps";
    let (mut found, mut token, mut snapshot) = (Vec::new(), None::<String>, None);
    loop {
        let path = match &token {
            Some(t) => format!("{base}?limit=7&continue={t}"),
            None => format!("{base}?limit=7"),
        };
        let (code, page) = caller.get(&path, None).await;
        assert_eq!(code, 200, "{page}");
        let items = names_of(&page, "items");
        assert!(items.len() <= 7, "{page}");
        let rv = page["metadata"]["resourceVersion"].clone();
        assert_eq!(
            snapshot.get_or_insert(rv.clone()),
            &rv,
            "pages of one list, one revision"
        );
        let cont = page["metadata"]["continue"].as_str().map(String::from);
        match &cont {
            Some(_) => {
                let rest = page["metadata"]["remainingItemCount"]
                    .as_u64()
                    .expect("a count");
                assert_eq!(rest as usize + items.len() + found.len(), total, "{page}");
            }
            None => assert!(
                page["metadata"].get("remainingItemCount").is_none(),
                "{page}"
            ),
        }
        if token.is_none() {
            // Changes after the first page are not in this list: one deleted, one created.
            hub.ok(&["delete", "configmap", "cm-40", "-n", "chunks"]);
            hub.ok(&["create", "configmap", "cm-30a", "-n", "chunks"]);
        }
        found.extend(items);
        match cont {
            Some(c) => token = Some(c),
            None => break,
        }
    }
    assert_eq!(found, want);
    // A paged list at a revision seen before is read at exactly that revision, as
    // kube-apiserver's storage reads it: without the changes made since.
    let rv = snapshot
        .as_ref()
        .and_then(Value::as_str)
        .expect("a revision");
    let (_, then) = caller
        .get(&format!("{base}?resourceVersion={rv}&limit=500"), None)
        .await;
    assert_eq!(names_of(&then, "items"), want);
    assert_eq!(then["metadata"]["resourceVersion"], rv);
    // All at once with a limit above the count: no continue.
    let (_, all) = caller
        .get(&format!("{base}?limit={}", total + 1), None)
        .await;
    assert_eq!(names_of(&all, "items").len(), total);
    assert!(all["metadata"].get("continue").is_none(), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_continue_token_is_410_with_a_token_that_goes_on_inconsistently() {
    let hub = Hub::start_with(&["--compaction-interval", "1s"]);
    let caller = Caller::new(&hub).await;
    let total = sixty_configmaps(&hub, &caller, "old").await.len() + 1;
    let base = "/api/v1/namespaces/old/configmaps";
    let (_, first) = caller.get(&format!("{base}?limit=6"), None).await;
    let first_token = first["metadata"]["continue"]
        .as_str()
        .expect("a token")
        .to_string();
    // History moves on past the snapshot (kube-apiserver's compactor writes too).
    hub.ok(&["create", "configmap", "cm-05a", "-n", "old"]);

    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        let path = format!("{base}?limit=6&continue={first_token}");
        let (code, body) = caller.get(&path, None).await;
        if code == 410 {
            break body;
        }
        assert_eq!(code, 200, "{body}");
        assert!(Instant::now() < deadline, "the token never expired");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(status["reason"], "Expired", "{status}");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(
            "The provided continue parameter is too old to display a consistent list result."
        ),
        "{status}"
    );
    let inconsistent = status["metadata"]["continue"]
        .as_str()
        .expect("a token in the Status");

    let (code, second) = caller
        .get(&format!("{base}?limit=6&continue={inconsistent}"), None)
        .await;
    assert_eq!(code, 200, "{second}");
    assert_ne!(
        second["metadata"]["resourceVersion"],
        first["metadata"]["resourceVersion"]
    );
    // It goes on after the last name served, at the latest state (cm-05a is there now).
    let names = names_of(&second, "items");
    assert_eq!(
        names,
        ["cm-05a", "cm-06", "cm-07", "cm-08", "cm-09", "cm-10"]
    );
    let rest = second["metadata"]["remainingItemCount"]
        .as_u64()
        .expect("a count");
    assert_eq!(rest as usize + 12, total, "{second}");
    // The pages after it share its revision.
    let token = second["metadata"]["continue"].as_str().expect("more pages");
    let (_, third) = caller
        .get(&format!("{base}?limit=6&continue={token}"), None)
        .await;
    assert_eq!(
        third["metadata"]["resourceVersion"],
        second["metadata"]["resourceVersion"]
    );
    assert_eq!(names_of(&third, "items")[0], "cm-11");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_come_in_chunks() {
    let hub = Hub::start();
    let caller = Caller::new(&hub).await;
    let total = sixty_configmaps(&hub, &caller, "tables").await.len();
    let base = "/api/v1/namespaces/tables/configmaps";
    for accept in [TABLE, TABLE_V1BETA1] {
        let (code, page) = caller.get(&format!("{base}?limit=2"), Some(accept)).await;
        assert_eq!((code, &page["kind"]), (200, &json!("Table")), "{page}");
        assert_eq!(names_of(&page, "rows"), ["cm-00", "cm-01"]);
        assert!(rv_of(&page) > 0, "{page}");
        let token = page["metadata"]["continue"]
            .as_str()
            .expect("a continue token");
        // The rest, without a limit, as the upstream spec asks.
        let (code, rest) = caller
            .get(&format!("{base}?continue={token}"), Some(accept))
            .await;
        assert_eq!(code, 200, "{rest}");
        let rows = names_of(&rest, "rows");
        assert_eq!(
            (rows.len(), rows[0].as_str()),
            (total - 2, "cm-02"),
            "{accept}"
        );
        assert!(rest["metadata"].get("continue").is_none(), "{rest}");
        assert_eq!(
            rest["metadata"]["resourceVersion"],
            page["metadata"]["resourceVersion"]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_has_no_table_form() {
    let hub = Hub::start();
    let caller = Caller::new(&hub).await;
    let path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
    let review = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"nonResourceAttributes": {"path": "/", "verb": "get"}}});
    let (code, status) = caller
        .call(Method::POST, path, Some(TABLE), Some(&review))
        .await;
    assert_eq!(
        (code, &status["reason"]),
        (406, &json!("NotAcceptable")),
        "{status}"
    );
    // Offered JSON as well, the review is answered.
    let accept = format!("{TABLE}, application/json");
    let (code, answer) = caller
        .call(Method::POST, path, Some(&accept), Some(&review))
        .await;
    assert_eq!(
        (code, &answer["status"]["allowed"]),
        (201, &json!(true)),
        "{answer}"
    );
}
