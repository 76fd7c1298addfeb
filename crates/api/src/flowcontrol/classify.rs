//! Classification: which FlowSchema (and so which priority level) a request belongs to, as
//! kube-apiserver's API Priority and Fairness filter decides it. The schemas are held in a
//! [`Classifier`] built once per change of the configuration objects, sorted by
//! `matchingPrecedence` then name, with each schema's priority level resolved; a schema whose
//! level does not exist (dangling) matches nothing.

use std::borrow::Cow;
use std::sync::Arc;

use k8s_openapi::api::flowcontrol::v1::{
    FlowSchema, NonResourcePolicyRule, PolicyRulesWithSubjects, PriorityLevelConfiguration,
    ResourcePolicyRule, Subject,
};
use serde_json::Value;

use crate::auth::UserInfo;
use crate::request::RequestInfo;

/// What a request was classified as: the uids the response headers carry, and the names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matched {
    /// The FlowSchema's name.
    pub flow_schema: Arc<str>,
    /// The FlowSchema's uid (`X-Kubernetes-PF-FlowSchema-UID`).
    pub flow_schema_uid: Arc<str>,
    /// The PriorityLevelConfiguration's name.
    pub priority_level: Arc<str>,
    /// Its uid (`X-Kubernetes-PF-PriorityLevel-UID`).
    pub priority_level_uid: Arc<str>,
}

struct Schema {
    precedence: i32,
    rules: Vec<PolicyRulesWithSubjects>,
    matched: Matched,
}

/// An immutable view of the FlowSchemas and their priority levels.
#[derive(Default)]
pub struct Classifier {
    schemas: Vec<Schema>,
    /// Priority level names with their nominal concurrency shares (None: the spec gives none).
    levels: Vec<(String, Option<i32>)>,
}

fn uid(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Arc<str> {
    Arc::from(meta.uid.as_deref().unwrap_or(""))
}

// === impl Classifier ===

impl Classifier {
    /// From the stored FlowSchemas and PriorityLevelConfigurations (ones that do not decode
    /// are left out: stored objects passed validation).
    pub fn build(schemas: &[Value], levels: &[Value]) -> Classifier {
        let levels: Vec<PriorityLevelConfiguration> = levels
            .iter()
            .filter_map(|v| serde_json::from_value(v.clone()).ok())
            .collect();
        let mut out = Classifier::default();
        for fs in schemas
            .iter()
            .filter_map(|v| serde_json::from_value::<FlowSchema>(v.clone()).ok())
        {
            let Some(spec) = fs.spec else { continue };
            let level_name = spec.priority_level_configuration.name;
            let Some(level) = levels
                .iter()
                .find(|l| l.metadata.name.as_deref() == Some(level_name.as_str()))
            else {
                continue;
            };
            out.schemas.push(Schema {
                precedence: spec.matching_precedence.unwrap_or(1000),
                rules: spec.rules.unwrap_or_default(),
                matched: Matched {
                    flow_schema: Arc::from(fs.metadata.name.as_deref().unwrap_or("")),
                    flow_schema_uid: uid(&fs.metadata),
                    priority_level: Arc::from(level_name.as_str()),
                    priority_level_uid: uid(&level.metadata),
                },
            });
        }
        out.schemas.sort_by(|a, b| {
            (a.precedence, &a.matched.flow_schema).cmp(&(b.precedence, &b.matched.flow_schema))
        });
        out.levels = levels
            .iter()
            .map(|l| {
                let spec = l.spec.as_ref();
                let limited = spec.and_then(|s| s.limited.as_ref());
                let exempt = spec.and_then(|s| s.exempt.as_ref());
                let shares = limited
                    .map(|lim| lim.nominal_concurrency_shares.unwrap_or(30))
                    .or_else(|| exempt.map(|e| e.nominal_concurrency_shares.unwrap_or(0)));
                (l.metadata.name.clone().unwrap_or_default(), shares)
            })
            .collect();
        out
    }

    /// The first schema, in precedence order, one of whose rules matches the request.
    pub fn classify(&self, user: &UserInfo, info: &RequestInfo) -> Option<&Matched> {
        // Named once per request, not once per rule it is held against.
        let resource = match &info.subresource {
            Some(sub) => Cow::Owned(format!("{}/{sub}", info.resource)),
            None => Cow::Borrowed(info.resource.as_str()),
        };
        self.schemas
            .iter()
            .find(|s| {
                s.rules
                    .iter()
                    .any(|r| rule_matches(r, user, info, &resource))
            })
            .map(|s| &s.matched)
    }

    /// The priority levels, with their nominal concurrency shares (None: the spec gives none).
    pub fn levels(&self) -> &[(String, Option<i32>)] {
        &self.levels
    }
}

fn rule_matches(
    rule: &PolicyRulesWithSubjects,
    user: &UserInfo,
    info: &RequestInfo,
    resource: &str,
) -> bool {
    if !rule.subjects.iter().any(|s| subject_matches(s, user)) {
        return false;
    }
    if info.is_resource_request {
        let rules = rule.resource_rules.as_deref().unwrap_or_default();
        rules
            .iter()
            .any(|r| resource_rule_matches(r, info, resource))
    } else {
        let rules = rule.non_resource_rules.as_deref().unwrap_or_default();
        rules.iter().any(|r| non_resource_rule_matches(r, info))
    }
}

fn subject_matches(subject: &Subject, user: &UserInfo) -> bool {
    match subject.kind.as_str() {
        "User" => subject
            .user
            .as_ref()
            .is_some_and(|u| u.name == "*" || u.name == user.name),
        "Group" => subject
            .group
            .as_ref()
            .is_some_and(|g| g.name == "*" || user.in_group(&g.name)),
        "ServiceAccount" => {
            let Some(sa) = subject.service_account.as_ref() else {
                return false;
            };
            match user.service_account_name() {
                Some((ns, name)) => ns == sa.namespace && (sa.name == "*" || sa.name == name),
                None => false,
            }
        }
        _ => false,
    }
}

/// kube's `containsString`: a lone wildcard matches everything, otherwise an exact member.
fn contains(list: &[String], x: &str, wildcard: &str) -> bool {
    (list.len() == 1 && list[0] == wildcard) || list.iter().any(|y| y == x)
}

/// `resource` is the request's resource with its subresource (`pods/status`).
fn resource_rule_matches(rule: &ResourcePolicyRule, info: &RequestInfo, resource: &str) -> bool {
    if !contains(&rule.verbs, &info.verb, "*")
        || !contains(&rule.resources, resource, "*")
        || !contains(&rule.api_groups, &info.group, "*")
    {
        return false;
    }
    match info.namespace.as_deref().filter(|n| !n.is_empty()) {
        None => rule.cluster_scope.unwrap_or(false),
        Some(ns) => contains(rule.namespaces.as_deref().unwrap_or_default(), ns, "*"),
    }
}

/// A URL rule matches its path, and (as in kube-apiserver) every path below it.
fn non_resource_rule_matches(rule: &NonResourcePolicyRule, info: &RequestInfo) -> bool {
    if !contains(&rule.verbs, &info.verb, "*") {
        return false;
    }
    rule.non_resource_urls.iter().any(|url| {
        if url == "*" || *url == info.path {
            return true;
        }
        // Below `prefix` + `/` (no string built: this runs per rule per request).
        let prefix = url.trim_end_matches('*');
        let below = |p: &str| {
            info.path
                .strip_prefix(p)
                .is_some_and(|r| r.starts_with('/'))
        };
        match prefix.strip_suffix('/') {
            Some(dir) => below(dir),
            None => below(prefix),
        }
    })
}
