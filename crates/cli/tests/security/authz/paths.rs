//! A cluster-scoped resource under a namespace path does not exist there.
//!
//! The hole: `/api/v1/namespaces/a/namespaces/b` was authorized in namespace `a` but served
//! namespace `b`, and `DELETE /api/v1/namespaces/a/namespaces` deleted every namespace, for
//! anyone whose RoleBinding in `a` allows it. kube-apiserver answers 404 for every cluster-scoped
//! kind under `namespaces/{ns}/`; so must the hub, after authorization and before anything is
//! read or written.

use hyper::Method;
use serde_json::json;

use super::{account, names, Caller};
use crate::common::Hub;

const WIDGETS_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.authz.example.com}
spec:
  group: authz.example.com
  scope: Cluster
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_scoped_kinds_under_a_namespace_path_are_not_found() {
    let hub = Hub::start();
    for ns in ["a", "b"] {
        hub.ok(&["create", "namespace", ns]);
    }
    hub.ok_stdin(&["apply", "-f", "-"], WIDGETS_CRD);
    hub.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/widgets.authz.example.com",
        "--timeout=30s",
    ]);
    hub.ok_stdin(
        &["apply", "-f", "-"],
        "{\"apiVersion\": \"authz.example.com/v1\", \"kind\": \"Widget\", \"metadata\": {\"name\": \"w1\"}}",
    );
    // Everything, but only in namespace `a`: authorization passes for any path under `a`, so
    // whatever is refused below is refused by the path itself.
    let owner = account(&hub, "a", "owner", "clusterrole:cluster-admin");
    let owner = Caller::new(&hub, Some(&owner)).await;

    let rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/a";
    let ns_body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "c"}});
    let role_body = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "made-in-a"}, "rules": []});
    let policy_body = json!({"apiVersion": "policy.flotilla.io/v1alpha1",
        "kind": "ClusterPropagationPolicy", "metadata": {"name": "made-in-a"},
        "spec": {"resourceSelectors": [{"apiVersion": "v1", "kind": "Secret"}]}});
    let widget_body =
        json!({"apiVersion": "authz.example.com/v1", "kind": "Widget", "metadata": {"name": "w2"}});
    let cases: Vec<(Method, String, Option<&serde_json::Value>)> = vec![
        (Method::GET, "/api/v1/namespaces/a/namespaces/b".into(), None),
        (Method::GET, "/api/v1/namespaces/a/namespaces".into(), None),
        (Method::GET, "/api/v1/namespaces/a/namespaces?watch=1&timeoutSeconds=1".into(), None),
        (Method::GET, "/api/v1/watch/namespaces/a/namespaces/b?timeoutSeconds=1".into(), None),
        (Method::GET, "/api/v1/namespaces/a/namespaces/b/status".into(), None),
        (Method::POST, "/api/v1/namespaces/a/namespaces".into(), Some(&ns_body)),
        (Method::PUT, "/api/v1/namespaces/a/namespaces/b".into(), Some(&ns_body)),
        (Method::DELETE, "/api/v1/namespaces/a/namespaces/b".into(), None),
        (Method::DELETE, "/api/v1/namespaces/a/namespaces".into(), None),
        (Method::GET, format!("{rbac}/clusterroles/cluster-admin"), None),
        (Method::GET, format!("{rbac}/clusterroles"), None),
        (Method::POST, format!("{rbac}/clusterroles"), Some(&role_body)),
        (Method::DELETE, format!("{rbac}/clusterroles"), None),
        (Method::GET, format!("{rbac}/clusterrolebindings/cluster-admin"), None),
        (Method::DELETE, format!("{rbac}/clusterrolebindings"), None),
        (
            Method::GET,
            "/apis/apiextensions.k8s.io/v1/namespaces/a/customresourcedefinitions".into(),
            None,
        ),
        (
            Method::DELETE,
            "/apis/apiextensions.k8s.io/v1/namespaces/a/customresourcedefinitions/widgets.authz.example.com".into(),
            None,
        ),
        (Method::GET, "/apis/authz.example.com/v1/namespaces/a/widgets/w1".into(), None),
        (Method::POST, "/apis/authz.example.com/v1/namespaces/a/widgets".into(), Some(&widget_body)),
        (Method::DELETE, "/apis/authz.example.com/v1/namespaces/a/widgets".into(), None),
        (Method::GET, "/apis/cluster.flotilla.io/v1alpha1/namespaces/a/clusters".into(), None),
        (Method::DELETE, "/apis/cluster.flotilla.io/v1alpha1/namespaces/a/clusters".into(), None),
        (
            Method::POST,
            "/apis/policy.flotilla.io/v1alpha1/namespaces/a/clusterpropagationpolicies".into(),
            Some(&policy_body),
        ),
        (
            Method::GET,
            "/apis/work.flotilla.io/v1alpha1/namespaces/a/clusterresourcebindings".into(),
            None,
        ),
    ];
    for (method, path, body) in cases {
        let r = match body {
            Some(b) => {
                owner
                    .call(method.clone(), &path, Some((super::JSON, b)))
                    .await
            }
            None => owner.call(method.clone(), &path, None).await,
        };
        assert_eq!(
            (r.code, r.reason()),
            (404, "NotFound"),
            "{method} {path}: {:?}",
            r.body
        );
    }

    // Nothing was read, written or deleted on the way.
    let admin = Caller::new(&hub, None).await;
    let nss = names(&admin.get("/api/v1/namespaces").await.body);
    for ns in ["a", "b", "default", "kube-system", "flotilla-system"] {
        assert!(
            nss.iter().any(|n| n == ns),
            "namespace {ns} survives: {nss:?}"
        );
    }
    assert!(
        !nss.iter().any(|n| n == "c"),
        "no namespace was created: {nss:?}"
    );
    let kept = [
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/cluster-admin",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/cluster-admin",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.authz.example.com",
        "/apis/authz.example.com/v1/widgets/w1",
    ];
    for path in kept {
        assert_eq!(admin.get(path).await.code, 200, "{path} survives");
    }
    for path in [
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/made-in-a",
        "/apis/authz.example.com/v1/widgets/w2",
        "/apis/policy.flotilla.io/v1alpha1/clusterpropagationpolicies/made-in-a",
    ] {
        assert_eq!(admin.get(path).await.code, 404, "{path} was not created");
    }

    // The namespace object itself is still authorized in its own namespace, as in Kubernetes.
    assert_eq!(owner.get("/api/v1/namespaces/a").await.code, 200);
    let other = owner.get("/api/v1/namespaces/b").await;
    assert_eq!(
        (other.code, other.reason()),
        (403, "Forbidden"),
        "{:?}",
        other.body
    );
}
