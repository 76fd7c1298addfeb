//! Conformance: API Priority and Fairness objects. The hub starts with kube-apiserver's
//! mandatory and suggested FlowSchemas and PriorityLevelConfigurations, keeps the mandatory
//! ones (recreated when deleted, their spec fixed), marks each schema's `Dangling` condition,
//! and names in every response the schema and level its request matched
//! (`X-Kubernetes-PF-FlowSchema-UID`, `X-Kubernetes-PF-PriorityLevel-UID`).

use std::time::{Duration, Instant};

use crate::common::Hub;
use crate::support::get_json;
use serde_json::{json, Value};

fn get(hub: &Hub, kind: &str, name: &str) -> Option<Value> {
    get_json(hub, &[kind, name])
}

/// Poll until `check` holds (10 s), then return what it found.
fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(t) = check() {
            return t;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn dangling(fs: &Value) -> Option<String> {
    fs["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Dangling")
        .and_then(|c| c["status"].as_str().map(String::from))
}

#[test]
fn configuration_objects_are_kept_as_kube_apiserver_keeps_them() {
    let mut hub = Hub::start();
    for name in [
        "exempt",
        "catch-all",
        "probes",
        "global-default",
        "service-accounts",
    ] {
        let fs = eventually(name, || {
            get(&hub, "flowschemas", name).filter(|f| dangling(f).is_some())
        });
        assert_eq!(dangling(&fs).as_deref(), Some("False"), "{fs}");
        assert_eq!(
            fs["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"],
            "true"
        );
    }
    for name in ["exempt", "catch-all", "global-default", "workload-low"] {
        eventually(name, || get(&hub, "prioritylevelconfigurations", name));
    }
    let listed = hub.ok(&["get", "flowschemas"]);
    let header = listed.lines().next().unwrap_or("");
    for column in [
        "PRIORITYLEVEL",
        "MATCHINGPRECEDENCE",
        "DISTINGUISHERMETHOD",
        "MISSINGPL",
    ] {
        assert!(header.contains(column), "{header}");
    }
    // As kube-apiserver prints them: <none> where the spec has no value.
    let row = hub.ok(&["get", "flowschema", "exempt", "--no-headers"]);
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        (cells[1], cells[2], cells[3], cells[5]),
        ("exempt", "1", "<none>", "False"),
        "{row}"
    );
    let row = hub.ok(&[
        "get",
        "prioritylevelconfiguration",
        "exempt",
        "--no-headers",
    ]);
    assert!(
        row.starts_with("exempt") && row.matches("<none>").count() == 4,
        "{row}"
    );

    // A mandatory object's spec is fixed; deleted, it comes back (a new object).
    let e = hub.fails(&[
        "patch",
        "flowschema",
        "catch-all",
        "--type=merge",
        "-p",
        r#"{"spec":{"matchingPrecedence":9999}}"#,
    ]);
    assert!(
        e.contains("spec of 'catch-all' must equal the fixed value"),
        "{e}"
    );
    let old = get(&hub, "flowschemas", "catch-all").unwrap();
    hub.ok(&["delete", "flowschema", "catch-all"]);
    let new = eventually("catch-all back", || {
        get(&hub, "flowschemas", "catch-all")
            .filter(|f| f["metadata"]["uid"] != old["metadata"]["uid"])
    });
    assert_eq!(new["spec"]["matchingPrecedence"], 10000);
    let old_level = get(&hub, "prioritylevelconfigurations", "exempt").unwrap();
    hub.ok(&["delete", "prioritylevelconfiguration", "exempt"]);
    eventually("exempt level back", || {
        get(&hub, "prioritylevelconfigurations", "exempt")
            .filter(|l| l["metadata"]["uid"] != old_level["metadata"]["uid"])
    });

    // Defaults and validation as kube-apiserver's.
    let pl = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
        "metadata": {"name": "team"},
        "spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {}}}}});
    hub.ok_stdin(&["create", "-f", "-"], &pl.to_string());
    let pl = get(&hub, "prioritylevelconfigurations", "team").unwrap();
    assert_eq!(
        pl["spec"]["limited"],
        json!({"nominalConcurrencyShares": 30, "lendablePercent": 0,
               "limitResponse": {"type": "Queue", "queuing": {"handSize": 8, "queues": 64, "queueLengthLimit": 50}}})
    );
    let bad = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
        "metadata": {"name": "bad"}, "spec": {"matchingPrecedence": 1, "priorityLevelConfiguration": {"name": "team"}}});
    let e = hub.kubectl_stdin(&["create", "-f", "-"], &bad.to_string());
    let e = String::from_utf8_lossy(&e.stderr);
    assert!(
        e.contains("only the schema named 'exempt' may have matchingPrecedence 1"),
        "{e}"
    );
    assert!(get(&hub, "flowschemas", "bad").is_none());

    // A schema naming a level that does not exist is Dangling until the level exists.
    let fs = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
        "metadata": {"name": "later"},
        "spec": {"priorityLevelConfiguration": {"name": "later"},
                 "rules": [{"subjects": [{"kind": "Group", "group": {"name": "nobody"}}],
                            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}});
    hub.ok_stdin(&["create", "-f", "-"], &fs.to_string());
    let fs = eventually("Dangling True", || {
        get(&hub, "flowschemas", "later").filter(|f| dangling(f).as_deref() == Some("True"))
    });
    assert_eq!(fs["spec"]["matchingPrecedence"], 1000, "defaulted");
    let level = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
        "metadata": {"name": "later"},
        "spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Reject"}}}});
    hub.ok_stdin(&["create", "-f", "-"], &level.to_string());
    eventually("Dangling False", || {
        get(&hub, "flowschemas", "later").filter(|f| dangling(f).as_deref() == Some("False"))
    });

    // An object marked for auto-update that is not part of the configuration was the hub's
    // once (an older version's): it goes when the hub starts. A user's object stays.
    for (name, auto) in [("leftover", "true"), ("mine", "false")] {
        let fs = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": name, "annotations": {"apf.kubernetes.io/autoupdate-spec": auto}},
            "spec": {"priorityLevelConfiguration": {"name": "later"},
                     "rules": [{"subjects": [{"kind": "Group", "group": {"name": "nobody"}}],
                                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}});
        hub.ok_stdin(&["create", "-f", "-"], &fs.to_string());
    }
    hub.restart();
    eventually("leftover removed", || {
        get(&hub, "flowschemas", "leftover").is_none().then_some(())
    });
    assert!(get(&hub, "flowschemas", "mine").is_some());
}

/// The flow schema and priority level uids a GET of `path` is answered with (from kubectl's
/// verbose log of the response headers).
fn pf_headers(hub: &Hub, token: Option<&str>, path: &str) -> (String, String) {
    let mut args = vec!["get", "--raw", path, "-v=8"];
    if let Some(t) = token {
        args.extend(["--token", t]);
    }
    // Succeeded or refused: requests are classified before they are authorized.
    let out = hub.kubectl(&args);
    let log = String::from_utf8_lossy(&out.stderr).to_ascii_lowercase();
    let header = |name: &str| {
        log.lines()
            .find_map(|l| {
                l.split_once(&format!(" {name}: "))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| panic!("no {name} header in:\n{log}"))
    };
    (
        header("x-kubernetes-pf-flowschema-uid"),
        header("x-kubernetes-pf-prioritylevel-uid"),
    )
}

#[test]
fn responses_name_the_flow_schema_a_request_matched() {
    let hub = Hub::start();
    hub.ok(&["create", "namespace", "team"]);
    hub.ok(&["create", "serviceaccount", "bot", "-n", "team"]);
    let token = hub.ok(&["create", "token", "bot", "-n", "team"]);
    let token = token.trim();
    let level = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
        "metadata": {"name": "e2e-testing-prioritylevel"},
        "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 1, "limitResponse": {"type": "Reject"}}}});
    let schema = json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
        "metadata": {"name": "e2e-testing-flowschema"},
        "spec": {"matchingPrecedence": 1000, "priorityLevelConfiguration": {"name": "e2e-testing-prioritylevel"},
                 "distinguisherMethod": {"type": "ByUser"},
                 "rules": [{"subjects": [{"kind": "ServiceAccount", "serviceAccount": {"namespace": "team", "name": "bot"}}],
                            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}});
    hub.ok_stdin(&["create", "-f", "-"], &level.to_string());
    hub.ok_stdin(&["create", "-f", "-"], &schema.to_string());
    let uid = |kind: &str, name: &str| {
        eventually(name, || get(&hub, kind, name))["metadata"]["uid"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let fs_uid = uid("flowschemas", "e2e-testing-flowschema");
    let pl_uid = uid("prioritylevelconfigurations", "e2e-testing-prioritylevel");
    eventually("steady state", || {
        get(&hub, "flowschemas", "e2e-testing-flowschema")
            .filter(|f| dangling(f).as_deref() == Some("False"))
    });

    // The level is reported as kube-apiserver reports it (the upstream spec waits for this).
    let metrics = hub.ok(&["get", "--raw", "/metrics"]);
    assert!(
        metrics.contains("apiserver_flowcontrol_nominal_limit_seats{priority_level=\"e2e-testing-prioritylevel\"} "),
        "{metrics}"
    );
    // bot's GET /version matches the new schema; the admin's matches `exempt`.
    assert_eq!(
        pf_headers(&hub, Some(token), "/version"),
        (fs_uid.clone(), pl_uid.clone())
    );
    let exempt_fs = uid("flowschemas", "exempt");
    let exempt_pl = uid("prioritylevelconfigurations", "exempt");
    assert_eq!(
        pf_headers(&hub, None, "/version"),
        (exempt_fs.clone(), exempt_pl)
    );
    // Impersonating bot, the admin's requests are classified as bot's.
    let as_bot = [
        "get",
        "--raw",
        "/version",
        "-v=8",
        "--as",
        "system:serviceaccount:team:bot",
    ];
    let log = String::from_utf8_lossy(&hub.kubectl(&as_bot).stderr).to_ascii_lowercase();
    assert!(
        log.contains(&format!("x-kubernetes-pf-flowschema-uid: {fs_uid}")),
        "{log}"
    );
    // bot's resource requests are not in the schema's rules: they fall to service-accounts
    // (and bot may not list ConfigMaps: the 403 is classified all the same).
    let (fs, pl) = pf_headers(&hub, Some(token), "/api/v1/namespaces/team/configmaps");
    assert_eq!(fs, uid("flowschemas", "service-accounts"));
    assert_eq!(pl, uid("prioritylevelconfigurations", "workload-low"));
    assert_ne!(fs, fs_uid);
}
