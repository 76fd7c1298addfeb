//! Read semantics and refusals kubectl relies on: the full label/field selector grammar
//! (events' involvedObject fields too), core/v1 and events.k8s.io/v1 Events as one store,
//! paging with limit/continue over a consistent snapshot (with remainingItemCount), GETs that
//! see the writes before them (and honour resourceVersion=0 / a future version), `kubectl wait
//! --for=jsonpath|delete`, and errors with kube-apiserver's reasons and wording for malformed,
//! oversized and mismatched bodies, ConfigMaps and Secrets over 1 MiB, invalid names and
//! unknown types. (Write semantics: `kubectl_semantics.rs`.)

mod common;

use common::{cm, json, k, k_err, names, Hub};
use serde_json::Value;

/// Waits for `ns`'s ConfigMap `kube-root-ca.crt`, which the hub's controllers put into every
/// namespace (as kube-controller-manager does): the lists below then hold it every time.
fn wait_root_ca(hub: &Hub, ns: &str) {
    for _ in 0..200 {
        let out = hub.kubectl(&["get", "cm", "kube-root-ca.crt", "-n", ns]);
        if out.status.success() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("no kube-root-ca.crt in {ns}\n{}", hub.log());
}

#[test]
fn label_and_field_selectors() {
    let hub = Hub::start();
    k(&hub, "create namespace sel");
    wait_root_ca(&hub, "sel");
    for (n, labels) in [
        ("web", r#""app":"web","tier":"front""#),
        ("api", r#""app":"api","tier":"back""#),
        ("db", r#""app":"db""#),
        ("bare", ""),
    ] {
        hub.ok_stdin(&["create", "-f", "-"], &cm(n, "sel", labels));
    }
    hub.ok_stdin(
        &["create", "-f", "-"],
        &cm("web", "default", r#""app":"web""#),
    );
    let sel = |s: &str| hub.ok(&["get", "cm", "-n", "sel", "-o", "name", "-l", s]);
    assert_eq!(names(&sel("app==web")), ["configmap/web"]);
    assert_eq!(
        names(&sel("app!=web")),
        [
            "configmap/api",
            "configmap/bare",
            "configmap/db",
            "configmap/kube-root-ca.crt"
        ]
    );
    assert_eq!(
        names(&sel("app in (web,db)")),
        ["configmap/db", "configmap/web"]
    );
    assert_eq!(
        names(&sel("app notin (web,db)")),
        [
            "configmap/api",
            "configmap/bare",
            "configmap/kube-root-ca.crt"
        ]
    );
    assert_eq!(names(&sel("tier")), ["configmap/api", "configmap/web"]);
    assert_eq!(
        names(&sel("!tier")),
        [
            "configmap/bare",
            "configmap/db",
            "configmap/kube-root-ca.crt"
        ]
    );
    assert_eq!(sel("app,!tier,app!=db"), "");
    let e = hub.fails(&["get", "cm", "-n", "sel", "-o", "name", "-l", "app in (web"]);
    assert!(e.contains("unable to parse requirement"), "{e}");

    let fs = |args: &str| k(&hub, &format!("get -o name {args}"));
    let both = fs("cm -A --field-selector metadata.name=web,metadata.namespace=sel");
    assert_eq!(both.trim(), "configmap/web");
    // Field and label selectors together, across namespaces.
    let elsewhere = fs("cm -A --field-selector metadata.namespace!=sel -l app=web");
    assert_eq!(elsewhere.trim(), "configmap/web");
    let not_web = fs("cm -n sel --field-selector metadata.name!=web -l app");
    assert_eq!(names(&not_web), ["configmap/api", "configmap/db"]);

    let event = |name: &str, kind: &str, obj: &str, reason: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"Event","metadata":{{"name":"{name}","namespace":"sel"}},"involvedObject":{{"kind":"{kind}","name":"{obj}","namespace":"sel"}},"reason":"{reason}","message":"m","type":"Normal"}}"#
        )
    };
    for (n, kind, obj, reason) in [
        ("e1", "ConfigMap", "web", "Made"),
        ("e2", "Deployment", "web", "Scaled"),
        ("e3", "ConfigMap", "db", "Made"),
    ] {
        hub.ok_stdin(&["create", "-f", "-"], &event(n, kind, obj, reason));
    }
    let ev = |f: &str| fs(&format!("events -n sel --field-selector {f}"));
    assert_eq!(
        names(&ev("involvedObject.name=web")),
        ["event/e1", "event/e2"]
    );
    assert_eq!(
        names(&ev("involvedObject.kind=ConfigMap")),
        ["event/e1", "event/e3"]
    );
    let one = ev("involvedObject.kind=ConfigMap,involvedObject.name=web");
    assert_eq!(one.trim(), "event/e1");
    assert_eq!(ev("reason=Scaled").trim(), "event/e2");

    let e = k_err(&hub, "get cm -n sel --field-selector data.a=1");
    assert!(e.contains("field label not supported: data.a"), "{e}");
    let e = k_err(&hub, "get events -n sel --field-selector spec.x=1");
    assert!(e.contains("field label not supported: spec.x"), "{e}");
}

#[test]
fn events_are_one_store_under_both_apis() {
    let hub = Hub::start();
    k(&hub, "create namespace ev");
    let core = r#"{"apiVersion":"v1","kind":"Event","metadata":{"name":"old-style","namespace":"ev"},"involvedObject":{"kind":"ConfigMap","name":"c","namespace":"ev"},"reason":"Made","message":"from core","type":"Normal","count":2,"source":{"component":"kubelet"}}"#;
    let new = r#"{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"new-style","namespace":"ev"},"eventTime":"2024-01-02T03:04:05.000000Z","reportingController":"example.com/ctl","reportingInstance":"ctl-1","action":"Scale","reason":"Scaled","type":"Normal","regarding":{"kind":"Deployment","name":"web","namespace":"ev"},"note":"from events.k8s.io"}"#;
    hub.ok_stdin(&["create", "-f", "-"], core);

    // A watch through events.k8s.io started before the second write sees both.
    let kubeconfig = hub.kubeconfig.clone();
    let watch = std::thread::spawn(move || {
        common::kubectl_bin(
            "kubectl",
            &kubeconfig,
            &[
                "get",
                "--raw",
                "/apis/events.k8s.io/v1/namespaces/ev/events?watch=1&timeoutSeconds=4",
            ],
            None,
        )
    });
    std::thread::sleep(std::time::Duration::from_secs(1));
    hub.ok_stdin(&["create", "-f", "-"], new);

    let both = ["event/new-style", "event/old-style"];
    assert_eq!(names(&k(&hub, "get events -n ev -o name")), both);
    let via_new = k(&hub, "get events.v1.events.k8s.io -n ev -o name");
    assert_eq!(
        names(&via_new),
        [
            "event.events.k8s.io/new-style",
            "event.events.k8s.io/old-style"
        ]
    );
    // Each API shows each event in its own fields.
    let c = json(&k(&hub, "get events new-style -n ev -o json"));
    assert_eq!(c["apiVersion"], "v1");
    assert_eq!(c["message"], "from events.k8s.io");
    assert_eq!(c["involvedObject"]["name"], "web");
    assert_eq!(c["reportingComponent"], "example.com/ctl");
    let n = json(&k(
        &hub,
        "get events.v1.events.k8s.io old-style -n ev -o json",
    ));
    assert_eq!(n["apiVersion"], "events.k8s.io/v1");
    assert_eq!(n["note"], "from core");
    assert_eq!(n["regarding"]["kind"], "ConfigMap");
    assert_eq!(n["deprecatedCount"], 2);
    assert_eq!(n["deprecatedSource"]["component"], "kubelet");
    assert!(n.get("message").is_none(), "{n}");
    // Selectors in either API's vocabulary.
    let sel = k(
        &hub,
        "get events.v1.events.k8s.io -n ev -o name --field-selector regarding.kind=ConfigMap",
    );
    assert_eq!(sel.trim(), "event.events.k8s.io/old-style");
    let sel = k(
        &hub,
        "get events -n ev -o name --field-selector involvedObject.kind=Deployment",
    );
    assert_eq!(sel.trim(), "event/new-style");

    let out = watch.join().expect("watch");
    let stream = String::from_utf8_lossy(&out.stdout);
    let events: Vec<Value> = stream.lines().map(json).collect();
    let notes: Vec<&str> = events
        .iter()
        .map(|e| e["object"]["note"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(notes, ["from core", "from events.k8s.io"], "{stream}");
    assert!(events
        .iter()
        .all(|e| e["object"]["apiVersion"] == "events.k8s.io/v1"));

    // Deleting through one API deletes the one object.
    k(&hub, "delete events.v1.events.k8s.io old-style -n ev");
    assert_eq!(
        k(&hub, "get events -n ev -o name").trim(),
        "event/new-style"
    );
}

fn item_names(page: &Value) -> Vec<String> {
    let items = page["items"].as_array().cloned().unwrap_or_default();
    items
        .iter()
        .map(|i| {
            i["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

fn continue_of(page: &Value) -> String {
    page["metadata"]["continue"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn paging_walks_a_snapshot_and_rejects_bad_tokens() {
    let hub = Hub::start();
    k(&hub, "create namespace pg");
    wait_root_ca(&hub, "pg");
    k(&hub, "create namespace other");
    let items: Vec<String> = (0..7)
        .map(|i| {
            cm(
                &format!("c{i}"),
                "pg",
                if i % 2 == 0 { r#""even":"yes""# } else { "" },
            )
        })
        .collect();
    let list = format!(
        r#"{{"apiVersion":"v1","kind":"List","items":[{}]}}"#,
        items.join(",")
    );
    hub.ok_stdin(&["create", "-f", "-"], &list);
    let page = |query: &str| {
        json(&k(
            &hub,
            &format!("get --raw /api/v1/namespaces/pg/configmaps?{query}"),
        ))
    };

    let first = page("limit=2");
    assert_eq!(item_names(&first), ["c0", "c1"]);
    // Unfiltered pages say how many items follow them, as kube-apiserver does.
    // (c2..c6 and the namespace's kube-root-ca.crt.)
    assert_eq!(first["metadata"]["remainingItemCount"], 6, "{first}");
    let mut token = continue_of(&first);
    assert!(!token.is_empty(), "no continue token: {first}");
    // Opaque, and safe in a URL as it is (kube-apiserver's are unpadded base64url).
    let url_safe = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    assert!(token.bytes().all(url_safe), "{token}");
    // Changes after the first page don't show in the rest of the walk.
    k(&hub, "delete cm c5 -n pg");
    hub.ok_stdin(&["create", "-f", "-"], &cm("c9", "pg", ""));
    let mut seen = item_names(&first);
    while !token.is_empty() {
        let p = page(&format!("limit=2&continue={token}"));
        assert_eq!(
            p["metadata"]["resourceVersion"],
            first["metadata"]["resourceVersion"]
        );
        seen.extend(item_names(&p));
        token = continue_of(&p);
        // Counted in the snapshot the walk started from; the last page has none.
        let left = p["metadata"].get("remainingItemCount").cloned();
        let want = (!token.is_empty()).then(|| Value::from(8 - seen.len()));
        assert_eq!(left, want, "{p}");
    }
    assert_eq!(
        seen,
        ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "kube-root-ca.crt"]
    );

    // A selector filters within pages; the walk still ends with every match.
    let mut seen = Vec::new();
    let mut token = String::new();
    loop {
        let p = page(&format!(
            "limit=1&labelSelector=even%3Dyes&continue={token}"
        ));
        seen.extend(item_names(&p));
        token = continue_of(&p);
        // A selector filters the pages: no count, as in kube-apiserver.
        assert!(p["metadata"].get("remainingItemCount").is_none(), "{p}");
        if token.is_empty() {
            break;
        }
    }
    assert_eq!(seen, ["c0", "c2", "c4", "c6"]);

    // kubectl's paging sees the present.
    let now = k(&hub, "get cm -n pg --chunk-size=2 -o name");
    let now = names(&now);
    assert_eq!(now.len(), 8, "{now:?}");
    assert!(
        now.contains(&"configmap/c9") && !now.contains(&"configmap/c5"),
        "{now:?}"
    );

    // Tokens that are not ours, or not for this list.
    let e = k_err(
        &hub,
        "get --raw /api/v1/namespaces/pg/configmaps?limit=2&continue=garbage!!",
    );
    assert!(e.contains("BadRequest") && e.contains("continue"), "{e}");
    let t = continue_of(&first);
    let e = k_err(
        &hub,
        &format!("get --raw /api/v1/namespaces/other/configmaps?limit=2&continue={t}"),
    );
    assert!(e.contains("BadRequest") && e.contains("continue"), "{e}");
}

#[test]
fn a_get_right_after_a_write_sees_it() {
    let hub = Hub::start();
    // Read-your-writes: a GET without resourceVersion is as fresh as the last acknowledged write.
    for i in 0..5 {
        let name = format!("ryw{i}");
        k(&hub, &format!("create cm {name} --from-literal=n={i}"));
        assert_eq!(
            k(&hub, &format!("get cm {name} -o jsonpath={{.data.n}}")),
            i.to_string()
        );
        k(
            &hub,
            &format!("patch cm {name} -p {{\"data\":{{\"n\":\"x\"}}}}"),
        );
        assert_eq!(
            k(&hub, &format!("get cm {name} -o jsonpath={{.data.n}}")),
            "x"
        );
    }
    // resourceVersion=0 may be served from any cached state; a future one is a 504 Timeout.
    let v = json(&k(
        &hub,
        "get --raw /api/v1/namespaces/default/configmaps/ryw0?resourceVersion=0",
    ));
    assert_eq!(v["metadata"]["name"], "ryw0");
    let e = k_err(
        &hub,
        "get --raw /api/v1/namespaces/default/configmaps/ryw0?resourceVersion=99999999",
    );
    assert!(e.contains("Too large resource version"), "{e}");
}

/// `kubectl wait ...` started in the background; join for its output.
fn wait_in_background(
    hub: &Hub,
    args: &'static [&'static str],
) -> std::thread::JoinHandle<std::process::Output> {
    let kubeconfig = hub.kubeconfig.clone();
    let t = std::thread::spawn(move || common::kubectl_bin("kubectl", &kubeconfig, args, None));
    std::thread::sleep(std::time::Duration::from_secs(1));
    t
}

#[test]
fn wait_for_jsonpath_and_delete() {
    let hub = Hub::start();
    k(&hub, "create cm job --from-literal=state=pending");
    let e = k_err(
        &hub,
        "wait --for=jsonpath={.data.state}=ready cm/job --timeout=1s",
    );
    assert!(e.contains("timed out"), "{e}");
    let waiter = wait_in_background(
        &hub,
        &[
            "wait",
            "--for=jsonpath={.data.state}=ready",
            "cm/job",
            "--timeout=30s",
        ],
    );
    k(&hub, r#"patch cm job -p {"data":{"state":"ready"}}"#);
    let out = waiter.join().expect("waiter");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("condition met"),
        "{out:?}"
    );

    let waiter = wait_in_background(&hub, &["wait", "--for=delete", "cm/job", "--timeout=30s"]);
    k(&hub, "delete cm job");
    let out = waiter.join().expect("waiter");
    assert!(out.status.success(), "{out:?}");
}

const CM_URL: &str = "/api/v1/namespaces/default/configmaps";

/// `kubectl create --raw` sends the file's bytes as they are, so the server sees them.
fn raw_create_fails(hub: &Hub, body: &[u8]) -> String {
    let file = hub.dir.path().join("body");
    std::fs::write(&file, body).expect("write body");
    hub.fails(&[
        "create",
        "--raw",
        CM_URL,
        "-f",
        file.to_str().expect("utf-8 path"),
    ])
}

#[test]
fn malformed_oversized_and_mismatched_bodies() {
    let hub = Hub::start();
    let e = raw_create_fails(
        &hub,
        br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x""#,
    );
    assert!(e.contains("BadRequest"), "{e}");
    let e = raw_create_fails(&hub, b"[1,2]");
    assert!(e.contains("BadRequest"), "{e}");
    let e = raw_create_fails(
        &hub,
        br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"kube-system"}}"#,
    );
    let want =
        "the namespace of the provided object does not match the namespace sent on the request";
    assert!(e.contains(want), "{e}");
    let e = raw_create_fails(
        &hub,
        br#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}"#,
    );
    assert!(e.contains("BadRequest") && e.contains("Secret"), "{e}");
    assert_eq!(
        k(
            &hub,
            "get cm -o name --field-selector=metadata.name!=kube-root-ca.crt"
        ),
        ""
    );

    // More than kube-apiserver's 3 MiB request limit: 413, and nothing is stored.
    let big = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "big", "namespace": "default"},
        "data": {"blob": "x".repeat(3 * 1024 * 1024 + 512 * 1024)},
    });
    let file = hub.dir.path().join("big.json");
    std::fs::write(&file, big.to_string()).expect("write big");
    let e = hub.fails(&["create", "-f", file.to_str().expect("utf-8 path")]);
    assert!(
        e.contains("RequestEntityTooLarge")
            && e.contains("Request entity too large: limit is 3145728"),
        "{e}"
    );
    let e = k_err(&hub, "get cm big");
    assert!(e.contains("not found"), "{e}");
    // The connection that carried it did not poison the server.
    k(&hub, "create cm after");

    // Under the request limit but over the 1 MiB ConfigMap and Secret data limit: 422.
    let file = hub.dir.path().join("blob");
    std::fs::write(&file, "x".repeat(1024 * 1024 + 1)).expect("write blob");
    let from = format!("--from-file=blob={}", file.display());
    let e = hub.fails(&["create", "cm", "big", &from]);
    assert!(
        e.contains(r#"ConfigMap "big" is invalid: []: Too long: must have at most 1048576 bytes"#),
        "{e}"
    );
    let e = hub.fails(&["create", "secret", "generic", "big", &from]);
    assert!(
        e.contains(r#"Secret "big" is invalid: data: Too long: must have at most 1048576 bytes"#),
        "{e}"
    );
    std::fs::write(&file, "x".repeat(1024 * 1024)).expect("write blob");
    k(&hub, &format!("create cm fits {from}"));
}

#[test]
fn invalid_names_and_unknown_types() {
    let hub = Hub::start();
    let e = k_err(&hub, "create cm Invalid_Name");
    let want = r#"ConfigMap "Invalid_Name" is invalid: metadata.name: Invalid value: "Invalid_Name": a lowercase RFC 1123 subdomain"#;
    assert!(e.contains(want), "{e}");
    // Namespaces are DNS labels: no dots.
    let e = k_err(&hub, "create namespace team.a");
    assert!(
        e.contains(r#"Namespace "team.a" is invalid"#) && e.contains("a lowercase RFC 1123 label"),
        "{e}"
    );
    let widget = r#"{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"}}"#;
    let out = hub.kubectl_stdin(&["create", "-f", "-"], widget);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && e.contains(r#"no matches for kind "Widget" in version "example.com/v1""#),
        "{e}"
    );
    for path in ["/apis/example.com/v1/widgets", "/api/v1/widgets"] {
        let e = k_err(&hub, &format!("get --raw {path}"));
        assert!(
            e.contains("the server could not find the requested resource"),
            "{e}"
        );
    }
    let e = k_err(&hub, "get widgets");
    assert!(
        e.contains(r#"the server doesn't have a resource type "widgets""#),
        "{e}"
    );
}
