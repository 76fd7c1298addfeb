//! Does one PolicyRule allow a request? (`rbac.RuleAllows` and its helpers.)

use k8s_openapi::api::rbac::v1::PolicyRule;

use super::Attributes;

const ALL: &str = "*";

/// Does `rule` allow the request described by `attrs`?
///
/// Resource requests need a matching verb, API group, resource (with subresource) and, when the
/// rule lists resourceNames, name; non-resource requests need a matching verb and URL.
pub fn rule_allows(attrs: &Attributes, rule: &PolicyRule) -> bool {
    if !verb_matches(rule, &attrs.verb) {
        return false;
    }
    if !attrs.resource_request {
        return non_resource_url_matches(rule, &attrs.path);
    }
    let combined = if attrs.subresource.is_empty() {
        attrs.resource.clone()
    } else {
        format!("{}/{}", attrs.resource, attrs.subresource)
    };
    api_group_matches(rule, &attrs.api_group)
        && resource_matches(rule, &combined, &attrs.subresource)
        && resource_name_matches(rule, &attrs.name)
}

fn list(v: &Option<Vec<String>>) -> &[String] {
    v.as_deref().unwrap_or_default()
}

fn verb_matches(rule: &PolicyRule, verb: &str) -> bool {
    rule.verbs.iter().any(|v| v == ALL || v == verb)
}

fn api_group_matches(rule: &PolicyRule, group: &str) -> bool {
    list(&rule.api_groups)
        .iter()
        .any(|g| g == ALL || g == group)
}

/// `*` matches everything including subresources; `pods/log` matches exactly; `*/scale`
/// matches the `scale` subresource of any resource. A bare `pods` does not match `pods/log`.
fn resource_matches(rule: &PolicyRule, combined: &str, subresource: &str) -> bool {
    list(&rule.resources).iter().any(|r| {
        r == ALL
            || r == combined
            || (!subresource.is_empty() && r.strip_prefix("*/") == Some(subresource))
    })
}

/// No resourceNames means any name; otherwise the request must name one of them (so a rule
/// with resourceNames never allows `list`, `watch` or `create` of unnamed objects).
fn resource_name_matches(rule: &PolicyRule, name: &str) -> bool {
    let names = list(&rule.resource_names);
    names.is_empty() || names.iter().any(|n| n == name)
}

/// `*` matches every path; `/apis/*` matches every path starting with `/apis/`; otherwise the
/// path must be equal.
fn non_resource_url_matches(rule: &PolicyRule, path: &str) -> bool {
    list(&rule.non_resource_urls).iter().any(|u| {
        u == ALL || u == path || (u.ends_with('*') && path.starts_with(u.trim_end_matches('*')))
    })
}
