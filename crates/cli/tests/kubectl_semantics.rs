//! Write semantics kubectl relies on beyond plain CRUD: server-side dry run of every write,
//! deletecollection, the `scale` and `status` subresources of a built-in kind, kube-apiserver's
//! defaults for built-in kinds, generateName and generation, optimistic concurrency, writes
//! into a terminating namespace and the conditions it reports, and the foreground and orphan
//! deletion policies. (Reads, waits and refusals: `kubectl_semantics_reads.rs`.)

mod common;

use common::{cm, json, k, k_err, k_in, k_in_err, names, Hub};
use serde_json::Value;

fn held(name: &str, ns: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"{ns}","finalizers":["example.com/hold"]}}}}"#
    )
}

const UNHOLD: &str = r#"--type=json -p [{"op":"remove","path":"/metadata/finalizers"}]"#;

#[test]
fn server_dry_run_changes_nothing_but_answers_as_if_it_had() {
    let hub = Hub::start();
    k(&hub, "create namespace dry");
    let c1 = cm("c1", "dry", r#""app":"a""#);

    // create and apply: the would-be object comes back, nothing is stored.
    let v = json(&k_in(&hub, "create --dry-run=server -f - -o json", &c1));
    assert_eq!(v["metadata"]["name"], "c1");
    assert!(v["metadata"]["uid"].is_string() && v["metadata"]["creationTimestamp"].is_string());
    k_in(&hub, "apply --dry-run=server -f -", &c1);
    k_in(&hub, "apply --server-side --dry-run=server -f -", &c1);
    let e = hub.fails(&["get", "cm", "c1", "-n", "dry"]);
    assert!(e.contains("not found"), "a dry run stored c1: {e}");

    k_in(&hub, "create -f -", &c1);
    let rv = k(
        &hub,
        "get cm c1 -n dry -o jsonpath={.metadata.resourceVersion}",
    );
    // A dry-run create checks what a real one would: the name is taken.
    let e = k_in_err(&hub, "create --dry-run=server -f -", &c1);
    assert!(e.contains("AlreadyExists"), "{e}");

    // patch, replace, server-side apply, scale: the answer shows the change, the store doesn't.
    let p = r#"patch cm c1 -n dry --dry-run=server -p {"data":{"a":"2"}} -o jsonpath={.data.a}"#;
    assert_eq!(k(&hub, p), "2");
    let three = c1.replace(r#""a":"1""#, r#""a":"3""#);
    assert_eq!(
        k_in(
            &hub,
            "replace --dry-run=server -f - -o jsonpath={.data.a}",
            &three
        ),
        "3"
    );
    let four = c1.replace(r#""a":"1""#, r#""a":"4""#);
    let ssa = "apply --server-side --force-conflicts --dry-run=server -f - -o jsonpath={.data.a}";
    assert_eq!(k_in(&hub, ssa, &four), "4");
    assert_eq!(
        k(
            &hub,
            "get cm c1 -n dry -o jsonpath={.data.a}/{.metadata.resourceVersion}"
        ),
        format!("1/{rv}"),
        "a dry run wrote"
    );
    k(&hub, "create deploy web -n dry --image=nginx --replicas=2");
    k(
        &hub,
        "scale deploy/web -n dry --replicas=7 --dry-run=server",
    );
    assert_eq!(
        k(&hub, "get deploy web -n dry -o jsonpath={.spec.replicas}"),
        "2"
    );

    // delete: an object, one held by a finalizer (not even marked), a selection, the namespace.
    let out = k(&hub, "delete cm c1 -n dry --dry-run=server");
    assert!(out.contains("server dry run"), "{out}");
    k_in(&hub, "create -f -", &held("held", "dry"));
    k(&hub, "delete cm held -n dry --dry-run=server --wait=false");
    assert_eq!(
        k(
            &hub,
            "get cm held -n dry -o jsonpath={.metadata.deletionTimestamp}"
        ),
        "",
        "a dry-run delete marked the object"
    );
    k(&hub, "delete cm -n dry --all --dry-run=server");
    k(
        &hub,
        "delete --raw /api/v1/namespaces/dry/configmaps?dryRun=All",
    );
    k(&hub, "delete ns dry --dry-run=server");
    assert_eq!(
        names(&own_configmaps(&hub, "dry")),
        ["configmap/c1", "configmap/held"]
    );
    assert_eq!(k(&hub, "get ns dry -o jsonpath={.status.phase}"), "Active");
}

#[test]
fn delete_collection_removes_only_the_selection() {
    let hub = Hub::start();
    for ns in ["x", "y"] {
        k(&hub, &format!("create namespace {ns}"));
        for (n, labels) in [
            ("a1", r#""app":"a""#),
            ("a2", r#""app":"a""#),
            ("b1", r#""app":"b""#),
        ] {
            k_in(&hub, "create -f -", &cm(n, ns, labels));
        }
        k_in(&hub, "create -f -", &cm("n1", ns, ""));
    }
    // The DELETE on the collection itself (kubectl delete -l lists and deletes one by one).
    let list = json(&k(
        &hub,
        "delete --raw /api/v1/namespaces/x/configmaps?labelSelector=app%3Da",
    ));
    assert_eq!(list["kind"], "ConfigMapList", "{list}");
    assert_eq!(list["items"].as_array().map(Vec::len), Some(2), "{list}");
    assert_eq!(
        names(&own_configmaps(&hub, "x")),
        ["configmap/b1", "configmap/n1"]
    );
    k(
        &hub,
        "delete --raw /api/v1/namespaces/x/configmaps?fieldSelector=metadata.name%3Dn1",
    );
    assert_eq!(names(&own_configmaps(&hub, "x")), ["configmap/b1"]);
    // kubectl's own forms.
    k(&hub, "delete cm -n y -l app=a");
    assert_eq!(
        names(&own_configmaps(&hub, "y")),
        ["configmap/b1", "configmap/n1"]
    );
    k(&hub, "delete cm -n y --all");
    assert_eq!(own_configmaps(&hub, "y"), "");
    // Nothing outside the namespace was touched.
    assert_eq!(names(&own_configmaps(&hub, "x")), ["configmap/b1"]);
}

#[test]
fn deployment_scale_status_and_generation() {
    let hub = Hub::start();
    k(&hub, "create deploy web --image=nginx:1.25 --replicas=2");
    let get = |path: &str| k(&hub, &format!("get deploy web -o jsonpath={path}"));
    assert_eq!(get("{.metadata.generation}"), "1");

    k(&hub, "scale deploy/web --replicas=4");
    let scale = json(&k(
        &hub,
        "get --raw /apis/apps/v1/namespaces/default/deployments/web/scale",
    ));
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["apiVersion"], "autoscaling/v1");
    assert_eq!(scale["spec"]["replicas"], 4);
    assert_eq!(scale["status"]["selector"], "app=web");
    assert_eq!(get("{.spec.replicas}/{.metadata.generation}"), "4/2");

    // Labels are not spec: generation stays. A Deployment's annotations count (they are copied
    // to its ReplicaSets), as in kube-apiserver.
    k(&hub, "label deploy web tier=front");
    assert_eq!(get("{.metadata.generation}"), "2");
    k(&hub, "annotate deploy web note=x");
    assert_eq!(get("{.metadata.generation}"), "3");
    // Clients cannot set it.
    k(
        &hub,
        r#"patch deploy web --type=merge -p {"metadata":{"generation":40}}"#,
    );
    assert_eq!(get("{.metadata.generation}"), "3");

    // Kinds without a spec controllers act on have no generation at all.
    k(&hub, "create cm plain --from-literal=a=1");
    k(&hub, "create secret generic s --from-literal=a=1");
    k(&hub, "create sa robot");
    k(&hub, "create role reader --verb=get --resource=configmaps");
    for obj in ["cm/plain", "secret/s", "sa/robot", "role/reader"] {
        let v = json(&k(&hub, &format!("get {obj} -o json")));
        assert!(v["metadata"].get("generation").is_none(), "{obj}: {v}");
    }
    k(&hub, r#"patch cm plain -p {"data":{"a":"2"}}"#);
    let v = json(&k(&hub, "get cm plain -o json"));
    assert!(v["metadata"].get("generation").is_none(), "{v}");

    // The status subresource takes status only; the main resource ignores status.
    let status = r#"{"spec":{"replicas":9},"status":{"replicas":4,"readyReplicas":3,"availableReplicas":3,"updatedReplicas":4}}"#;
    k(
        &hub,
        &format!("patch deploy web --subresource=status --type=merge -p {status}"),
    );
    assert_eq!(
        get("{.spec.replicas}/{.status.readyReplicas}/{.metadata.generation}"),
        "4/3/3"
    );
    k(
        &hub,
        r#"patch deploy web --type=merge -p {"status":{"readyReplicas":1}}"#,
    );
    assert_eq!(get("{.status.readyReplicas}"), "3");
    let st = json(&k(&hub, "get deploy web --subresource=status -o json"));
    assert_eq!(st["status"]["availableReplicas"], 3);

    // Printer columns from the stored status.
    let wide = k(&hub, "get deploy -o wide");
    let rows: Vec<Vec<&str>> = wide
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let want = "NAME READY UP-TO-DATE AVAILABLE AGE CONTAINERS IMAGES SELECTOR";
    assert_eq!(rows[0], want.split(' ').collect::<Vec<_>>(), "{wide}");
    let row = &rows[1];
    assert_eq!(
        [row[0], row[1], row[2], row[3], row[5], row[6], row[7]],
        ["web", "3/4", "4", "3", "nginx", "nginx:1.25", "app=web"],
        "{wide}"
    );
    let labels = k(&hub, "get deploy --show-labels --no-headers");
    assert!(labels.contains("app=web,tier=front"), "{labels}");
    assert_eq!(k(&hub, "get deploy -o name").trim(), "deployment.apps/web");
}

#[test]
fn built_in_kinds_read_back_with_kube_apiservers_defaults() {
    let hub = Hub::start();
    k(&hub, "create deploy web --image=nginx:1.25");
    let d = json(&k(&hub, "get deploy web -o json"));
    let spec = &d["spec"];
    assert_eq!(
        spec["strategy"],
        serde_json::json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
    );
    assert_eq!(
        (
            spec["replicas"].as_i64(),
            spec["revisionHistoryLimit"].as_i64(),
            spec["progressDeadlineSeconds"].as_i64()
        ),
        (Some(1), Some(10), Some(600))
    );
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Always");
    assert_eq!(pod["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["schedulerName"], "default-scheduler");
    assert_eq!(pod["terminationGracePeriodSeconds"], 30);
    assert_eq!(pod["securityContext"], serde_json::json!({}));
    let c = &pod["containers"][0];
    assert_eq!(c["imagePullPolicy"], "IfNotPresent");
    assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(c["terminationMessagePolicy"], "File");
    // Re-applying the manifest as written is no change: defaults are not spec changes.
    let manifest = r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"api","namespace":"default"},"spec":{"selector":{"matchLabels":{"app":"api"}},"template":{"metadata":{"labels":{"app":"api"}},"spec":{"containers":[{"name":"api","image":"example/api","ports":[{"containerPort":8080}]}]}}}}"#;
    k_in(&hub, "apply -f -", manifest);
    k_in(&hub, "apply -f -", manifest);
    let api = json(&k(&hub, "get deploy api -o json"));
    assert_eq!(api["metadata"]["generation"], 1, "{api}");
    let c = &api["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["imagePullPolicy"], "Always", "no tag means :latest");
    assert_eq!(c["ports"][0]["protocol"], "TCP");

    k(&hub, "create service clusterip web --tcp=80:8080 --tcp=81");
    let svc = json(&k(&hub, "get svc web -o json"));
    let spec = &svc["spec"];
    assert_eq!(spec["type"], "ClusterIP");
    assert_eq!(spec["sessionAffinity"], "None");
    assert_eq!(spec["ipFamilyPolicy"], "SingleStack");
    assert_eq!(spec["internalTrafficPolicy"], "Cluster");
    assert_eq!(spec["ports"][0]["protocol"], "TCP");
    assert_eq!(spec["ports"][0]["targetPort"], 8080);
    assert_eq!(spec["ports"][1]["targetPort"], 81);
    assert!(
        spec.get("clusterIP").is_none(),
        "the hub allocates no addresses: {spec}"
    );

    k(&hub, "create job once --image=busybox:1.36");
    let job = json(&k(&hub, "get job once -o json"));
    let spec = &job["spec"];
    assert_eq!(
        (
            spec["backoffLimit"].as_i64(),
            spec["completions"].as_i64(),
            spec["parallelism"].as_i64()
        ),
        (Some(6), Some(1), Some(1))
    );
    assert_eq!(spec["completionMode"], "NonIndexed");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Never");
    assert_eq!(spec["template"]["spec"]["dnsPolicy"], "ClusterFirst");
    let schedule = "--schedule=*/5 * * * *";
    hub.ok(&[
        "create",
        "cronjob",
        "tick",
        "--image=busybox:1.36",
        schedule,
    ]);
    let cj = json(&k(&hub, "get cronjob tick -o json"));
    let spec = &cj["spec"];
    assert_eq!(spec["concurrencyPolicy"], "Allow");
    assert_eq!(spec["suspend"], false);
    assert_eq!(
        (
            spec["successfulJobsHistoryLimit"].as_i64(),
            spec["failedJobsHistoryLimit"].as_i64()
        ),
        (Some(3), Some(1))
    );
    let job_spec = &spec["jobTemplate"]["spec"];
    assert_eq!(
        job_spec["template"]["spec"]["schedulerName"],
        "default-scheduler"
    );
    assert!(job_spec.get("backoffLimit").is_none(), "{job_spec}");
}

#[test]
fn generate_name_system_fields_and_conflicts() {
    let hub = Hub::start();
    let gen = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"job-","namespace":"default","uid":"client-chosen"}}"#;
    let a = json(&k_in(&hub, "create -f - -o json", gen));
    let b = json(&k_in(&hub, "create -f - -o json", gen));
    let na = a["metadata"]["name"].as_str().unwrap_or_default();
    let nb = b["metadata"]["name"].as_str().unwrap_or_default();
    assert!(na.starts_with("job-") && na.len() == 9, "{na}");
    assert!(nb.starts_with("job-") && na != nb, "{na} {nb}");
    // The server owns uid and creationTimestamp.
    assert_ne!(a["metadata"]["uid"], "client-chosen");
    assert_ne!(a["metadata"]["uid"], b["metadata"]["uid"]);
    let ts = a["metadata"]["creationTimestamp"]
        .as_str()
        .unwrap_or_default();
    assert!(ts.len() == 20 && ts.ends_with('Z'), "{ts}");

    // Optimistic concurrency: a replace carrying an old resourceVersion is refused.
    let stale = k(&hub, &format!("get cm {na} -o json"));
    k(
        &hub,
        &format!(r#"patch cm {na} -p {{"data":{{"k":"new"}}}}"#),
    );
    let e = k_in_err(&hub, "replace -f -", &stale);
    assert!(
        e.contains("Conflict")
            && e.contains("the object has been modified; please apply your changes to the latest version and try again"),
        "{e}"
    );
    assert_eq!(
        k(&hub, &format!("get cm {na} -o jsonpath={{.data.k}}")),
        "new"
    );
    // Without a resourceVersion the replace is unconditional.
    let mut fresh = json(&stale);
    if let Some(m) = fresh["metadata"].as_object_mut() {
        m.remove("resourceVersion");
    }
    fresh["data"] = serde_json::json!({"k": "replaced"});
    k_in(&hub, "replace -f -", &fresh.to_string());
    assert_eq!(
        k(&hub, &format!("get cm {na} -o jsonpath={{.data.k}}")),
        "replaced"
    );
}

#[test]
fn a_terminating_namespace_takes_no_new_content() {
    let hub = Hub::start();
    k(&hub, "create namespace closing");
    k_in(&hub, "create -f -", &held("held", "closing"));
    k(&hub, "delete namespace closing --wait=false");
    assert_eq!(
        k(&hub, "get ns closing -o jsonpath={.status.phase}"),
        "Terminating"
    );
    let e = k_in_err(&hub, "create -f -", &cm("late", "closing", ""));
    assert!(
        e.contains("Forbidden")
            && e.contains(r#"configmaps "late" is forbidden: unable to create new content in namespace closing because it is being terminated"#),
        "{e}"
    );
    let e = hub.fails(&["create", "cm", "late2", "-n", "closing"]);
    assert!(e.contains("because it is being terminated"), "{e}");
    // The namespace says what holds it up, in the namespace controller's conditions.
    let condition = |kind: &str| {
        let ns = json(&k(&hub, "get ns closing -o json"));
        let all = ns["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        all.into_iter().find(|c| c["type"] == kind)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while condition("NamespaceFinalizersRemaining").is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "no conditions on the namespace"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let content = condition("NamespaceContentRemaining").unwrap_or_default();
    assert_eq!(
        (&content["status"], &content["reason"], &content["message"]),
        (
            &Value::from("True"),
            &Value::from("SomeResourcesRemain"),
            &Value::from("Some resources are remaining: configmaps. has 1 resource instances")
        )
    );
    let fins = condition("NamespaceFinalizersRemaining").unwrap_or_default();
    assert_eq!(fins["status"], "True");
    assert_eq!(
        fins["message"],
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
    );
    for kind in [
        "NamespaceDeletionDiscoveryFailure",
        "NamespaceDeletionContentFailure",
    ] {
        let c = condition(kind).unwrap_or_default();
        assert_eq!(c["status"], "False", "{kind}: {c}");
    }
    // Updates of what is there still work: that is how finalizers get removed.
    k(&hub, &format!("patch cm held -n closing {UNHOLD}"));
    k(&hub, "wait --for=delete namespace/closing --timeout=30s");
}

/// A ConfigMap `dep` owned by ConfigMaps `owners` (which must exist).
fn dependent(hub: &Hub, dep: &str, owners: &[&str], finalizer: bool) {
    let refs: Vec<String> = owners
        .iter()
        .map(|o| {
            let uid = k(hub, &format!("get cm {o} -o jsonpath={{.metadata.uid}}"));
            format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","name":"{o}","uid":"{uid}","blockOwnerDeletion":true}}"#)
        })
        .collect();
    let fin = if finalizer {
        r#","finalizers":["example.com/hold"]"#
    } else {
        ""
    };
    let refs = refs.join(",");
    k_in(
        hub,
        "create -f -",
        &format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{dep}","namespace":"default","ownerReferences":[{refs}]{fin}}}}}"#
        ),
    );
}

#[test]
fn foreground_deletion_waits_for_dependents_and_orphan_keeps_them() {
    let hub = Hub::start();
    // Foreground: the owner stays (marked, with the foregroundDeletion finalizer) while a
    // dependent is still there, and goes once it has gone.
    k(&hub, "create cm owner");
    dependent(&hub, "dep", &["owner"], true);
    k(&hub, "delete cm owner --cascade=foreground --wait=false");
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(
        k(&hub, "get cm owner -o jsonpath={.metadata.finalizers}"),
        r#"["foregroundDeletion"]"#
    );
    let marked = k(&hub, "get cm dep -o jsonpath={.metadata.deletionTimestamp}");
    assert!(!marked.is_empty(), "the dependent was not deleted");
    k(&hub, &format!("patch cm dep {UNHOLD}"));
    k(&hub, "wait --for=delete cm/owner --timeout=30s");

    // Orphan: the dependent stays and loses only the deleted owner's reference; the other
    // owner still collects it.
    k(&hub, "create cm keeper");
    k(&hub, "create cm owner2");
    dependent(&hub, "dep2", &["owner2", "keeper"], false);
    k(&hub, "delete cm owner2 --cascade=orphan");
    k(&hub, "wait --for=delete cm/owner2 --timeout=30s");
    let refs = k(
        &hub,
        "get cm dep2 -o jsonpath={.metadata.ownerReferences[*].name}",
    );
    assert_eq!(refs, "keeper");
    k(&hub, "delete cm keeper");
    k(&hub, "wait --for=delete cm/dep2 --timeout=30s");
}

/// Sets the owner references of ConfigMap `dep` to `owners`, all blocking.
fn own(hub: &Hub, dep: &str, owners: &[&str]) {
    let refs: Vec<String> = owners
        .iter()
        .map(|o| {
            let uid = k(hub, &format!("get cm {o} -o jsonpath={{.metadata.uid}}"));
            format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","name":"{o}","uid":"{uid}","blockOwnerDeletion":true}}"#)
        })
        .collect();
    let patch = format!(
        r#"{{"metadata":{{"ownerReferences":[{}]}}}}"#,
        refs.join(",")
    );
    k(hub, &format!("patch cm {dep} --type=merge -p {patch}"));
}

#[test]
fn foreground_deletion_unwinds_a_cycle_and_spares_a_dependent_another_owner_holds() {
    let hub = Hub::start();
    // a → c, b → a, c → b, all blocking: a foreground deletion of one waits on the next; the
    // collector makes a waiting dependent's references non-blocking, so all three go (the
    // upstream "should not be blocked by dependency circle").
    k(&hub, "create cm a");
    k(&hub, "create cm b");
    k(&hub, "create cm c");
    own(&hub, "a", &["c"]);
    own(&hub, "b", &["a"]);
    own(&hub, "c", &["b"]);
    k(&hub, "delete cm a --cascade=foreground --wait=false");
    k(&hub, "wait --for=delete cm/a cm/b cm/c --timeout=30s");

    // A dependent of a foreground deletion that another live owner holds is not deleted: it
    // only loses the reference to the owner that goes.
    k(&hub, "create cm keeper");
    k(&hub, "create cm doomed");
    k(&hub, "create cm shared");
    own(&hub, "shared", &["doomed", "keeper"]);
    k(&hub, "delete cm doomed --cascade=foreground --wait=false");
    k(&hub, "wait --for=delete cm/doomed --timeout=30s");
    assert_eq!(
        k(
            &hub,
            "get cm shared -o jsonpath={.metadata.ownerReferences[*].name}"
        ),
        "keeper"
    );
    assert!(k(
        &hub,
        "get cm shared -o jsonpath={.metadata.deletionTimestamp}"
    )
    .is_empty());
}

#[test]
fn an_immutable_configmap_or_secret_keeps_its_data() {
    let hub = Hub::start();
    k_in(
        &hub,
        "create -f -",
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"frozen","namespace":"default"},"data":{"k":"a"},"immutable":true}"#,
    );
    let err = k_err(
        &hub,
        r#"patch cm frozen --type=merge -p {"data":{"k":"b"}}"#,
    );
    assert!(
        err.contains("data: Forbidden: field is immutable when `immutable` is set"),
        "{err}"
    );
    let err = k_err(
        &hub,
        r#"patch cm frozen --type=merge -p {"immutable":false}"#,
    );
    assert!(err.contains("immutable: Forbidden"), "{err}");
    // Its metadata may still change, and the data stayed.
    k(&hub, "label cm frozen team=a");
    assert_eq!(k(&hub, "get cm frozen -o jsonpath={.data.k}"), "a");
    k(&hub, "create secret generic sealed --from-literal=k=a");
    k(
        &hub,
        r#"patch secret sealed --type=merge -p {"immutable":true}"#,
    );
    let err = k_err(
        &hub,
        r#"patch secret sealed --type=merge -p {"data":{"k":"Yg=="}}"#,
    );
    assert!(
        err.contains("field is immutable when `immutable` is set"),
        "{err}"
    );
}

/// The ConfigMaps of `ns` a test made, as `-o name`: every namespace also holds the
/// `kube-root-ca.crt` that the hub keeps there, as kube-controller-manager does.
fn own_configmaps(hub: &Hub, ns: &str) -> String {
    k(
        hub,
        &format!("get cm -n {ns} -o name --field-selector=metadata.name!=kube-root-ca.crt"),
    )
}
