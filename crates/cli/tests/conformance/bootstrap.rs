//! Conformance: namespace bootstrap. kube-apiserver serves the Service, Endpoints and
//! EndpointSlice `default/kubernetes` naming itself; kube-controller-manager keeps a
//! ServiceAccount `default` and a ConfigMap `kube-root-ca.crt` (the CA) in every namespace. The
//! upstream suite waits for the ServiceAccount in each namespace it makes, and refuses to start
//! without the Service.

use base64::Engine as _;
use serde_json::Value;

use crate::common::Hub;
use crate::support::{get_in, within};

/// The namespaces kube-apiserver creates at start.
const KUBE_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

/// The hub's CA PEM, as its kubeconfig has it.
fn hub_ca(hub: &Hub) -> String {
    let data = hub.ok(&[
        "config",
        "view",
        "--raw",
        "-o",
        "jsonpath={.clusters[0].cluster.certificate-authority-data}",
    ]);
    let pem = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .expect("base64 CA");
    String::from_utf8(pem).expect("PEM text")
}

/// The port the hub listens on.
fn hub_port(hub: &Hub) -> i64 {
    let server = hub.server();
    server
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {server}"))
}

fn uid(v: &Value) -> String {
    v["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Waits for the object to be there again as a new object (a new uid).
fn comes_back(hub: &Hub, what: &str, ns: &str, old_uid: &str) -> Value {
    within(5, || get_in(hub, what, ns).filter(|v| uid(v) != old_uid))
        .unwrap_or_else(|| panic!("{ns}/{what} did not come back\n{}", hub.log()))
}

#[test]
fn fresh_hub_serves_default_kubernetes_and_namespace_defaults() {
    let hub = Hub::start();
    let port = hub_port(&hub);
    let svc = within(5, || get_in(&hub, "service/kubernetes", "default")).expect("the Service");
    assert_eq!(svc["spec"]["clusterIP"], "10.0.0.1");
    assert_eq!(svc["spec"]["type"], "ClusterIP");
    assert_eq!(svc["spec"]["ports"][0]["name"], "https");
    assert_eq!(svc["spec"]["ports"][0]["port"], 443);
    assert_eq!(svc["spec"]["ports"][0]["protocol"], "TCP");
    assert_eq!(svc["spec"]["ports"][0]["targetPort"], port);
    assert_eq!(svc["metadata"]["labels"]["component"], "apiserver");
    assert_eq!(svc["metadata"]["labels"]["provider"], "kubernetes");

    let ep = within(5, || get_in(&hub, "endpoints/kubernetes", "default")).expect("the Endpoints");
    let subset = &ep["subsets"][0];
    assert_eq!(subset["addresses"][0]["ip"], "127.0.0.1");
    assert_eq!(subset["ports"][0]["port"], port);
    assert_eq!(subset["ports"][0]["name"], "https");

    let slice = within(5, || {
        get_in(
            &hub,
            "endpointslices.discovery.k8s.io/kubernetes",
            "default",
        )
    })
    .expect("the EndpointSlice");
    assert_eq!(
        slice["metadata"]["labels"]["kubernetes.io/service-name"],
        "kubernetes"
    );
    assert_eq!(slice["addressType"], "IPv4");
    assert_eq!(slice["endpoints"][0]["addresses"][0], "127.0.0.1");
    assert_eq!(slice["endpoints"][0]["conditions"]["ready"], true);
    assert_eq!(slice["ports"][0]["port"], port);
    assert_eq!(slice["ports"][0]["name"], "https");

    let ca = hub_ca(&hub);
    for ns in KUBE_NAMESPACES {
        assert!(
            get_in(&hub, &format!("namespace/{ns}"), "default").is_some(),
            "{ns}"
        );
        within(5, || get_in(&hub, "serviceaccount/default", ns))
            .unwrap_or_else(|| panic!("no ServiceAccount default in {ns}"));
        let cm = within(5, || get_in(&hub, "configmap/kube-root-ca.crt", ns))
            .unwrap_or_else(|| panic!("no kube-root-ca.crt in {ns}"));
        assert_eq!(cm["data"]["ca.crt"], ca.as_str(), "{ns}");
        let described = cm["metadata"]["annotations"]["kubernetes.io/description"]
            .as_str()
            .unwrap_or_default();
        assert!(described.starts_with("Contains a CA bundle"), "{ns}: {cm}");
    }
}

#[test]
fn new_namespace_gets_service_account_and_root_ca_at_once() {
    let hub = Hub::start();
    let ca = hub_ca(&hub);
    hub.ok(&["create", "namespace", "team"]);
    // The upstream suite waits for the ServiceAccount in each namespace it creates.
    within(2, || get_in(&hub, "serviceaccount/default", "team"))
        .unwrap_or_else(|| panic!("no ServiceAccount default within 2s\n{}", hub.log()));
    let cm = within(2, || get_in(&hub, "configmap/kube-root-ca.crt", "team"))
        .unwrap_or_else(|| panic!("no kube-root-ca.crt within 2s\n{}", hub.log()));
    assert_eq!(cm["data"]["ca.crt"], ca.as_str());
}

#[test]
fn deleted_or_changed_bootstrap_objects_are_restored() {
    let hub = Hub::start();
    let ca = hub_ca(&hub);
    hub.ok(&["create", "namespace", "team"]);
    let port = hub_port(&hub);

    for (what, ns) in [
        ("serviceaccount/default", "team"),
        ("configmap/kube-root-ca.crt", "team"),
        ("service/kubernetes", "default"),
        ("endpoints/kubernetes", "default"),
        ("endpointslices.discovery.k8s.io/kubernetes", "default"),
    ] {
        let before = within(5, || get_in(&hub, what, ns)).expect(what);
        hub.ok(&["delete", what, "-n", ns]);
        comes_back(&hub, what, ns, &uid(&before));
    }

    // A changed CA is put back, the ConfigMap's other metadata kept.
    hub.ok(&[
        "patch",
        "configmap/kube-root-ca.crt",
        "-n",
        "team",
        "--type=merge",
        "-p",
        r#"{"metadata":{"labels":{"mine":"yes"}},"data":{"ca.crt":"forged","extra":"x"}}"#,
    ]);
    let cm = within(5, || {
        get_in(&hub, "configmap/kube-root-ca.crt", "team")
            .filter(|cm| cm["data"]["ca.crt"] == ca.as_str())
    })
    .expect("ca.crt restored");
    assert_eq!(cm["data"].as_object().map(|d| d.len()), Some(1), "{cm}");
    assert_eq!(cm["metadata"]["labels"]["mine"], "yes");

    // Endpoints pointed elsewhere are pointed back at the hub.
    hub.ok(&[
        "patch",
        "endpoints/kubernetes",
        "-n",
        "default",
        "--type=merge",
        "-p",
        r#"{"subsets":[{"addresses":[{"ip":"192.0.2.1"}],"ports":[{"name":"https","port":1}]}]}"#,
    ]);
    within(5, || {
        get_in(&hub, "endpoints/kubernetes", "default").filter(|ep| {
            ep["subsets"][0]["addresses"][0]["ip"] == "127.0.0.1"
                && ep["subsets"][0]["ports"][0]["port"] == port
        })
    })
    .expect("the Endpoints point at the hub again");
}
