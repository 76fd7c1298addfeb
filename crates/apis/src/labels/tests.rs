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
