//! Label selectors (`metav1.LabelSelector`) against an object's labels, as Kubernetes matches
//! them: every `matchLabels` pair and every `matchExpressions` requirement must hold; an empty
//! selector matches everything; an unknown operator matches nothing.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

/// Does `selector` select an object with `labels`?
pub fn matches(selector: &LabelSelector, labels: Option<&BTreeMap<String, String>>) -> bool {
    let get = |k: &str| labels.and_then(|l| l.get(k)).map(String::as_str);
    let pairs = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| get(k) == Some(v.as_str()));
    pairs
        && selector.match_expressions.iter().flatten().all(|r| {
            let values = r.values.as_deref().unwrap_or_default();
            let listed = || get(&r.key).is_some_and(|h| values.iter().any(|v| v == h));
            match r.operator.as_str() {
                "In" => listed(),
                "NotIn" => !listed(),
                "Exists" => get(&r.key).is_some(),
                "DoesNotExist" => get(&r.key).is_none(),
                _ => false,
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn expr(key: &str, op: &str, values: &[&str]) -> LabelSelector {
        LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: key.into(),
                operator: op.into(),
                values: Some(values.iter().map(|v| (*v).to_owned()).collect()),
            }]),
            ..LabelSelector::default()
        }
    }

    #[test]
    fn selectors_match_as_kubernetes_does() {
        let l = labels(&[("app", "web"), ("tier", "front")]);
        assert!(matches(&LabelSelector::default(), None));
        let pair = LabelSelector {
            match_labels: Some(labels(&[("app", "web")])),
            ..LabelSelector::default()
        };
        assert!(matches(&pair, Some(&l)));
        assert!(!matches(&pair, None));
        assert!(matches(&expr("tier", "In", &["front", "back"]), Some(&l)));
        assert!(!matches(&expr("tier", "NotIn", &["front"]), Some(&l)));
        assert!(matches(&expr("tier", "NotIn", &["front"]), None));
        assert!(matches(&expr("app", "Exists", &[]), Some(&l)));
        assert!(!matches(&expr("app", "DoesNotExist", &[]), Some(&l)));
        assert!(!matches(&expr("app", "Like", &["web"]), Some(&l)));
    }
}
