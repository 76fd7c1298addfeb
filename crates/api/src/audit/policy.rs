//! kube-apiserver's audit `Policy` (`audit.k8s.io/v1`): the first rule that matches a request
//! gives its level; no rule matching means `None`.

use serde::Deserialize;

use crate::auth::UserInfo;
use crate::request::RequestInfo;

/// How much of a request is logged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
pub enum Level {
    /// Nothing.
    None,
    /// Who did what to which object, and the answer's code.
    Metadata,
    /// Also the request's body.
    Request,
    /// Also the response's body.
    RequestResponse,
}

/// A stage of a request that can be logged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
pub enum Stage {
    /// As soon as the request arrives, before it is handled.
    RequestReceived,
    /// A long-running request (watch) started answering.
    ResponseStarted,
    /// The answer is complete.
    ResponseComplete,
    /// The request failed in a panic.
    Panic,
}

/// The policy file.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Policy {
    api_version: String,
    kind: String,
    #[serde(default)]
    metadata: Option<serde_json::Value>,
    #[serde(default)]
    rules: Vec<Rule>,
    #[serde(default)]
    omit_stages: Vec<Stage>,
    #[serde(default)]
    omit_managed_fields: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Rule {
    level: Level,
    #[serde(default)]
    users: Vec<String>,
    #[serde(default)]
    user_groups: Vec<String>,
    #[serde(default)]
    verbs: Vec<String>,
    #[serde(default)]
    resources: Vec<GroupResources>,
    #[serde(default)]
    namespaces: Vec<String>,
    #[serde(default, rename = "nonResourceURLs")]
    non_resource_urls: Vec<String>,
    #[serde(default)]
    omit_stages: Vec<Stage>,
    #[serde(default)]
    omit_managed_fields: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct GroupResources {
    #[serde(default)]
    group: String,
    #[serde(default)]
    resources: Vec<String>,
    #[serde(default)]
    resource_names: Vec<String>,
}

/// What the policy says of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// How much is logged.
    pub level: Level,
    /// Stages not logged.
    pub omit_stages: Vec<Stage>,
    /// Drop `metadata.managedFields` from logged bodies.
    pub omit_managed_fields: bool,
}

impl Policy {
    /// Parse a policy file's text; the error says what to fix.
    pub fn parse(text: &str) -> Result<Policy, String> {
        let p: Policy =
            serde_yaml::from_str(text).map_err(|e| format!("not an audit Policy: {e}"))?;
        let _ = &p.metadata;
        if p.kind != "Policy"
            || !matches!(
                p.api_version.as_str(),
                "audit.k8s.io/v1" | "audit.k8s.io/v1beta1"
            )
        {
            return Err(format!(
                "kind {:?} of apiVersion {:?}: expected Policy of audit.k8s.io/v1",
                p.kind, p.api_version
            ));
        }
        for (i, r) in p.rules.iter().enumerate() {
            if !r.non_resource_urls.is_empty()
                && (!r.resources.is_empty() || !r.namespaces.is_empty())
            {
                return Err(format!(
                    "rules[{i}]: nonResourceURLs cannot be mixed with resources or namespaces"
                ));
            }
            for url in &r.non_resource_urls {
                if url.contains('*') && !url.ends_with('*') {
                    return Err(format!(
                        "rules[{i}]: nonResourceURLs {url:?}: '*' is only allowed at the end"
                    ));
                }
            }
        }
        Ok(p)
    }

    /// The verdict for `user`'s request `info`.
    pub fn judge(&self, user: &UserInfo, info: &RequestInfo) -> Verdict {
        let rule = self.rules.iter().find(|r| r.matches(user, info));
        let mut omit = self.omit_stages.clone();
        if let Some(r) = rule {
            omit.extend(r.omit_stages.iter().copied());
        }
        Verdict {
            level: rule.map_or(Level::None, |r| r.level),
            omit_stages: omit,
            omit_managed_fields: rule
                .and_then(|r| r.omit_managed_fields)
                .unwrap_or(self.omit_managed_fields),
        }
    }
}

impl Rule {
    fn matches(&self, user: &UserInfo, info: &RequestInfo) -> bool {
        if !self.users.is_empty() && !self.users.contains(&user.name) {
            return false;
        }
        if !self.user_groups.is_empty() && !user.groups.iter().any(|g| self.user_groups.contains(g))
        {
            return false;
        }
        if !self.verbs.is_empty() && !self.verbs.contains(&info.verb) {
            return false;
        }
        if info.is_resource_request {
            if !self.non_resource_urls.is_empty() {
                return false;
            }
            if !self.namespaces.is_empty() {
                let ns = info.namespace.as_deref().unwrap_or_default();
                if !self.namespaces.iter().any(|n| n == ns) {
                    return false;
                }
            }
            self.resources.is_empty() || self.resources.iter().any(|g| g.matches(info))
        } else {
            if !self.resources.is_empty() || !self.namespaces.is_empty() {
                return false;
            }
            self.non_resource_urls.is_empty()
                || self
                    .non_resource_urls
                    .iter()
                    .any(|u| match u.strip_suffix('*') {
                        Some(prefix) => info.path.starts_with(prefix),
                        None => info.path == *u,
                    })
        }
    }
}

impl GroupResources {
    /// As kube-apiserver's: no resources listed is the whole group; then `*` (all, also
    /// subresources), `RESOURCE`, `RESOURCE/SUB`, `*/SUB` and `RESOURCE/*`, each for the
    /// listed `resourceNames` only, if any.
    fn matches(&self, info: &RequestInfo) -> bool {
        if self.group != info.group {
            return false;
        }
        if self.resources.is_empty() {
            return true;
        }
        if !self.resource_names.is_empty()
            && !info
                .name
                .as_ref()
                .is_some_and(|n| self.resource_names.contains(n))
        {
            return false;
        }
        let combined = match &info.subresource {
            Some(sub) => format!("{}/{sub}", info.resource),
            None => info.resource.clone(),
        };
        self.resources.iter().any(|pattern| {
            pattern == "*"
                || *pattern == combined
                || pattern
                    .strip_prefix("*/")
                    .is_some_and(|sub| info.subresource.as_deref() == Some(sub))
                || pattern
                    .strip_suffix("/*")
                    .is_some_and(|res| res == info.resource)
        })
    }
}
