//! Turning a URL path and method into what is being asked: the Kubernetes `RequestInfo`.

use http::Method;

/// What a request asks for, parsed from its path and method the way kube-apiserver does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestInfo {
    /// True for `/api/...` and `/apis/...` paths that name a resource (not discovery).
    pub is_resource_request: bool,
    /// The raw path.
    pub path: String,
    /// Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection
    /// (for non-resource paths: the lower-case HTTP method).
    pub verb: String,
    /// `api` or `apis`.
    pub prefix: String,
    /// API group ("" for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Namespace, if the path has one.
    pub namespace: Option<String>,
    /// Plural resource.
    pub resource: String,
    /// Subresource (`status`, `scale`, `token`, `finalize`).
    pub subresource: Option<String>,
    /// Object name.
    pub name: Option<String>,
}

impl RequestInfo {
    /// Parse `path` (without query) for `method`; `watch_param` is the value of `?watch=`.
    pub fn parse(method: &Method, path: &str, watch_param: bool) -> RequestInfo {
        let mut info = RequestInfo {
            path: path.to_string(),
            verb: method.as_str().to_ascii_lowercase(),
            ..Default::default()
        };
        let parts: Vec<&str> = path
            .trim_matches('/')
            .split('/')
            .filter(|p| !p.is_empty())
            .collect();
        let rest: &[&str] = match parts.as_slice() {
            ["api", version, rest @ ..] => {
                info.prefix = "api".into();
                info.version = version.to_string();
                rest
            }
            ["apis", group, version, rest @ ..] => {
                info.prefix = "apis".into();
                info.group = group.to_string();
                info.version = version.to_string();
                rest
            }
            _ => return info,
        };
        if rest.is_empty() {
            return info; // discovery of a group-version
        }
        info.is_resource_request = true;
        let mut rest = rest.to_vec();
        let mut legacy_watch = false;
        if rest.first() == Some(&"watch") {
            legacy_watch = true;
            rest.remove(0);
        }
        // namespaces/{ns}/{resource}... but not /namespaces/{name}[/status|finalize] itself.
        if rest.first() == Some(&"namespaces")
            && rest.len() >= 3
            && !matches!(rest[2], "status" | "finalize")
        {
            info.namespace = Some(rest[1].to_string());
            rest.drain(..2);
        } else if rest.first() == Some(&"namespaces") && rest.len() >= 2 {
            // The namespace object itself: its "namespace" for authorization is its name.
            info.namespace = Some(rest[1].to_string());
        }
        info.resource = rest.first().map(|s| s.to_string()).unwrap_or_default();
        info.name = rest.get(1).map(|s| s.to_string());
        info.subresource = rest.get(2).map(|s| s.to_string());
        if rest.len() > 3 {
            // Deeper paths exist in Kubernetes only for proxy; the hub serves none.
            info.is_resource_request = false;
            return info;
        }
        info.verb = match (method.as_str(), info.name.is_some()) {
            ("GET" | "HEAD", _) if legacy_watch || watch_param => "watch",
            ("GET" | "HEAD", true) => "get",
            ("GET" | "HEAD", false) => "list",
            ("POST", _) => "create",
            ("PUT", _) => "update",
            ("PATCH", _) => "patch",
            ("DELETE", true) => "delete",
            ("DELETE", false) => "deletecollection",
            (other, _) => {
                return RequestInfo {
                    verb: other.to_ascii_lowercase(),
                    ..info
                }
            }
        }
        .to_string();
        info
    }

    /// The namespace that scopes the request's *contents* (for `namespaces/NAME` itself it's `None`).
    pub fn object_namespace(&self) -> Option<&str> {
        if self.resource == "namespaces" && self.group.is_empty() {
            None
        } else {
            self.namespace.as_deref()
        }
    }
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn watch_query_turns_list_into_watch() {
        let i = RequestInfo::parse(&Method::GET, "/api/v1/configmaps", true);
        assert_eq!(i.verb, "watch");
    }
}
