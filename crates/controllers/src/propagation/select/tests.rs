use std::collections::BTreeMap;
use std::sync::Arc;

use flotilla_apis::policy::v1alpha1::{
    ClusterPropagationPolicy, PropagationPolicy, PropagationSpec, ResourceSelector,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::*;

fn selector(name: Option<&str>, labels: Option<(&str, &str)>) -> ResourceSelector {
    ResourceSelector {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        name: name.map(Into::into),
        label_selector: labels.map(|(k, v)| LabelSelector {
            match_labels: Some(BTreeMap::from([(k.to_owned(), v.to_owned())])),
            ..LabelSelector::default()
        }),
        ..ResourceSelector::default()
    }
}

fn spec(priority: i32, s: ResourceSelector) -> PropagationSpec {
    PropagationSpec {
        resource_selectors: vec![s],
        priority,
        ..PropagationSpec::default()
    }
}

fn pp(ns: &str, name: &str, spec: PropagationSpec) -> Arc<PropagationPolicy> {
    let mut p = PropagationPolicy::new(name, spec);
    p.metadata.namespace = Some(ns.into());
    Arc::new(p)
}

fn cpp(name: &str, spec: PropagationSpec) -> Arc<ClusterPropagationPolicy> {
    Arc::new(ClusterPropagationPolicy::new(name, spec.into()))
}

fn web(labels: &BTreeMap<String, String>) -> Subject<'_> {
    Subject {
        api_version: "apps/v1",
        kind: "Deployment",
        namespace: Some("demo"),
        name: "web",
        labels,
    }
}

#[test]
fn selectors_need_kind_and_every_part_they_set() {
    let labels = BTreeMap::from([("app".to_owned(), "web".to_owned())]);
    let s = web(&labels);
    assert_eq!(selects(&selector(None, None), &s), Some(Specificity::Kind));
    assert_eq!(
        selects(&selector(None, Some(("app", "web"))), &s),
        Some(Specificity::Labels)
    );
    assert_eq!(selects(&selector(None, Some(("app", "db"))), &s), None);
    assert_eq!(
        selects(&selector(Some("web"), None), &s),
        Some(Specificity::Name)
    );
    assert_eq!(selects(&selector(Some("api"), None), &s), None);
    let mut other_kind = selector(None, None);
    other_kind.kind = "StatefulSet".into();
    assert_eq!(selects(&other_kind, &s), None);
    let mut other_ns = selector(None, None);
    other_ns.namespace = Some("prod".into());
    assert_eq!(selects(&other_ns, &s), None);
    let mut old_version = selector(None, None);
    old_version.api_version = "apps/v1beta1".into();
    assert_eq!(selects(&old_version, &s), None);
}

#[test]
fn namespaced_policy_then_priority_then_specificity_then_name() {
    let labels = BTreeMap::from([("app".to_owned(), "web".to_owned())]);
    let s = web(&labels);
    let cluster_wide = vec![cpp("fleet", spec(100, selector(Some("web"), None)))];
    // A PropagationPolicy wins over a ClusterPropagationPolicy, whatever its priority.
    let local = vec![pp("demo", "z-kind", spec(0, selector(None, None)))];
    assert_eq!(choose(&s, &local, &cluster_wide).unwrap().name, "z-kind");
    // Only policies in the object's namespace count.
    let elsewhere = vec![pp("prod", "other", spec(0, selector(None, None)))];
    let c = choose(&s, &elsewhere, &cluster_wide).unwrap();
    assert_eq!((c.kind, c.name), ("ClusterPropagationPolicy", "fleet"));
    // Priority first.
    let by_priority = vec![
        pp("demo", "a-name", spec(1, selector(Some("web"), None))),
        pp("demo", "b-kind", spec(5, selector(None, None))),
    ];
    assert_eq!(choose(&s, &by_priority, &[]).unwrap().name, "b-kind");
    // Then name over labels over kind.
    let by_specificity = vec![
        pp("demo", "a-kind", spec(0, selector(None, None))),
        pp(
            "demo",
            "b-labels",
            spec(0, selector(None, Some(("app", "web")))),
        ),
        pp("demo", "c-name", spec(0, selector(Some("web"), None))),
    ];
    assert_eq!(choose(&s, &by_specificity, &[]).unwrap().name, "c-name");
    // Then the first name.
    let by_name = vec![
        pp("demo", "b", spec(0, selector(None, None))),
        pp("demo", "a", spec(0, selector(None, None))),
    ];
    assert_eq!(choose(&s, &by_name, &[]).unwrap().name, "a");
    assert!(choose(&s, &[], &[]).is_none());
}
