use super::*;

/// method, path, verb, group, namespace, resource, name, subresource
type Case<'a> = (
    Method,
    &'a str,
    &'a str,
    &'a str,
    Option<&'a str>,
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
);

fn p(m: Method, path: &str) -> RequestInfo {
    RequestInfo::parse(&m, path, false)
}

#[test]
fn parses_the_shapes_kubernetes_uses() {
    let cases: &[Case<'_>] = &[
        (
            Method::GET,
            "/api/v1/namespaces",
            "list",
            "",
            None,
            "namespaces",
            None,
            None,
        ),
        (
            Method::GET,
            "/api/v1/namespaces/ns1",
            "get",
            "",
            Some("ns1"),
            "namespaces",
            Some("ns1"),
            None,
        ),
        (
            Method::PUT,
            "/api/v1/namespaces/ns1/finalize",
            "update",
            "",
            Some("ns1"),
            "namespaces",
            Some("ns1"),
            Some("finalize"),
        ),
        (
            Method::GET,
            "/api/v1/namespaces/ns1/configmaps",
            "list",
            "",
            Some("ns1"),
            "configmaps",
            None,
            None,
        ),
        (
            Method::POST,
            "/apis/apps/v1/namespaces/d/deployments",
            "create",
            "apps",
            Some("d"),
            "deployments",
            None,
            None,
        ),
        (
            Method::PATCH,
            "/apis/apps/v1/namespaces/d/deployments/web/scale",
            "patch",
            "apps",
            Some("d"),
            "deployments",
            Some("web"),
            Some("scale"),
        ),
        (
            Method::DELETE,
            "/apis/apps/v1/namespaces/d/deployments",
            "deletecollection",
            "apps",
            Some("d"),
            "deployments",
            None,
            None,
        ),
        (
            Method::GET,
            "/apis/apps/v1/deployments",
            "list",
            "apps",
            None,
            "deployments",
            None,
            None,
        ),
        (
            Method::GET,
            "/api/v1/watch/namespaces/x/configmaps",
            "watch",
            "",
            Some("x"),
            "configmaps",
            None,
            None,
        ),
        (
            Method::GET,
            "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin",
            "get",
            "rbac.authorization.k8s.io",
            None,
            "clusterroles",
            Some("admin"),
            None,
        ),
    ];
    for (m, path, verb, group, ns, res, name, sub) in cases {
        let i = p(m.clone(), path);
        assert!(i.is_resource_request, "{path}");
        assert_eq!(i.verb, *verb, "{path}");
        assert_eq!(i.group, *group, "{path}");
        assert_eq!(i.namespace.as_deref(), *ns, "{path}");
        assert_eq!(i.resource, *res, "{path}");
        assert_eq!(i.name.as_deref(), *name, "{path}");
        assert_eq!(i.subresource.as_deref(), *sub, "{path}");
    }
}

#[test]
fn discovery_and_other_paths_are_not_resource_requests() {
    for path in [
        "/api",
        "/api/v1",
        "/apis",
        "/apis/apps",
        "/apis/apps/v1",
        "/version",
        "/openapi/v2",
    ] {
        assert!(!p(Method::GET, path).is_resource_request, "{path}");
    }
}

/// (path, authorization namespace, namespaced path?, object namespace)
#[test]
fn a_namespace_prefix_is_told_apart_from_the_namespace_object() {
    let cases = [
        ("/api/v1/namespaces/a", Some("a"), false, None),
        ("/api/v1/namespaces/a/status", Some("a"), false, None),
        ("/api/v1/namespaces/a/finalize", Some("a"), false, None),
        ("/api/v1/namespaces", None, false, None),
        (
            "/api/v1/namespaces/a/configmaps",
            Some("a"),
            true,
            Some("a"),
        ),
        // A cluster-scoped resource under a namespace: scoped by the path, so dispatch can
        // refuse it instead of serving namespace `b` authorized in `a`.
        (
            "/api/v1/namespaces/a/namespaces/b",
            Some("a"),
            true,
            Some("a"),
        ),
        (
            "/api/v1/namespaces/a/namespaces",
            Some("a"),
            true,
            Some("a"),
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/a/clusterroles/x",
            Some("a"),
            true,
            Some("a"),
        ),
    ];
    for (path, ns, namespaced, object_ns) in cases {
        let i = p(Method::GET, path);
        assert_eq!(i.namespace.as_deref(), ns, "{path}");
        assert_eq!(i.namespaced_path, namespaced, "{path}");
        assert_eq!(i.object_namespace(), object_ns, "{path}");
    }
}

/// (method, path, watch, fieldSelector, name the request is authorized for)
#[test]
fn a_list_pinned_to_one_name_is_about_that_name() {
    let cases = [
        (
            Method::GET,
            "/api/v1/namespaces/a/secrets",
            false,
            Some("metadata.name=db"),
            Some("db"),
        ),
        (
            Method::GET,
            "/api/v1/namespaces/a/secrets",
            true,
            Some("metadata.name==db"),
            Some("db"),
        ),
        (
            Method::GET,
            "/api/v1/secrets",
            true,
            Some("metadata.name=db,type=x"),
            Some("db"),
        ),
        (
            Method::GET,
            "/api/v1/namespaces/a/secrets",
            false,
            Some("metadata.name!=db"),
            None,
        ),
        (
            Method::GET,
            "/api/v1/namespaces/a/secrets",
            false,
            Some("metadata.name=.."),
            None,
        ),
        (
            Method::GET,
            "/api/v1/namespaces/a/secrets",
            false,
            Some("metadata.name=a%2Fb"),
            None,
        ),
        (
            Method::GET,
            "/api/v1/namespaces/a/secrets",
            false,
            Some("metadata.namespace=a"),
            None,
        ),
        (
            Method::GET,
            "/api/v1/namespaces/a/secrets",
            false,
            None,
            None,
        ),
        // A named request keeps its own name; other verbs ignore the selector.
        (
            Method::GET,
            "/api/v1/namespaces/a/secrets/x",
            false,
            Some("metadata.name=db"),
            Some("x"),
        ),
        (
            Method::DELETE,
            "/api/v1/namespaces/a/secrets",
            false,
            Some("metadata.name=db"),
            None,
        ),
    ];
    for (m, path, watch, selector, name) in cases {
        let i = RequestInfo::parse(&m, path, watch).with_field_selector(selector);
        assert_eq!(i.name.as_deref(), name, "{m} {path} {selector:?}");
    }
}

#[test]
fn watch_query_turns_list_into_watch() {
    let i = RequestInfo::parse(&Method::GET, "/api/v1/configmaps", true);
    assert_eq!(i.verb, "watch");
}
