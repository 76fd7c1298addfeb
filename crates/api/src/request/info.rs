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
    /// The namespace the request is authorized in, as kube-apiserver's RequestInfo has it: the
    /// `namespaces/{ns}` segment of the path, which for the namespace object itself
    /// (`/api/v1/namespaces/{name}`) is its own name. Which namespace holds the objects is
    /// [`RequestInfo::object_namespace`].
    pub namespace: Option<String>,
    /// Did the resource follow a `namespaces/{ns}/` prefix? Then the namespace scopes it, and a
    /// cluster-scoped resource there (`/api/v1/namespaces/a/namespaces/b`) does not exist. False
    /// for cluster paths and for the namespace object itself (and its `status` / `finalize`).
    pub namespaced_path: bool,
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
            info.namespaced_path = true;
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

    /// The namespace that holds the objects the request is about: the path's `namespaces/{ns}/`
    /// prefix, if it had one (for `namespaces/NAME` itself it is `None`, the object being
    /// cluster-scoped).
    pub fn object_namespace(&self) -> Option<&str> {
        if self.namespaced_path {
            self.namespace.as_deref()
        } else {
            None
        }
    }

    /// As kube-apiserver: a list or watch whose field selector pins `metadata.name` (`kubectl get
    /// secret db -w`) is about that one object, so it is authorized with that name (RBAC
    /// `resourceNames` then apply) — and served for that name only (see the objects handlers'
    /// filter). A name that could not be a path segment is ignored, as there.
    pub fn with_field_selector(mut self, field_selector: Option<&str>) -> RequestInfo {
        if !self.is_resource_request
            || self.name.is_some()
            || !matches!(self.verb.as_str(), "list" | "watch")
        {
            return self;
        }
        let Some(selector) = field_selector else {
            return self;
        };
        let Ok(parsed) = crate::selector::field::FieldSelector::parse(selector) else {
            return self; // the handler answers 400
        };
        if let Some(name) = parsed.exact_value("metadata.name") {
            if is_path_segment_name(name) {
                self.name = Some(name.to_string());
            }
        }
        self
    }
}

/// `path.IsValidPathSegmentName`: not `.` or `..`, no `/` or `%`.
fn is_path_segment_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '%'])
}

#[cfg(test)]
mod tests;
