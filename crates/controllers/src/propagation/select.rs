//! Which propagation policy claims an object.
//!
//! A selector matches when every part it sets agrees: `apiVersion` and `kind` always, then
//! `namespace`, and `name` or else `labelSelector`. A `PropagationPolicy` only sees objects in
//! its own namespace. Between policies that match one object:
//! 1. a `PropagationPolicy` wins over a `ClusterPropagationPolicy` (the namespace's owner knows
//!    better than the fleet's defaults);
//! 2. then the higher `priority`;
//! 3. then the more specific selector: by name, over by labels, over by kind only;
//! 4. then the policy whose name sorts first, so the choice never depends on event order.

use std::collections::BTreeMap;

use flotilla_apis::labels;
use flotilla_apis::policy::v1alpha1::{
    ClusterPropagationPolicy, PropagationPolicy, PropagationSpec, ResourceSelector,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt;

/// The object being matched: what selectors look at.
#[derive(Clone, Copy, Debug)]
pub struct Subject<'a> {
    /// `apiVersion`.
    pub api_version: &'a str,
    /// `kind`.
    pub kind: &'a str,
    /// Namespace; `None` for cluster-scoped objects.
    pub namespace: Option<&'a str>,
    /// Name.
    pub name: &'a str,
    /// Labels.
    pub labels: &'a BTreeMap<String, String>,
}

/// How specifically a selector names an object; more specific wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Specificity {
    /// By apiVersion and kind only.
    Kind,
    /// By labels.
    Labels,
    /// By name.
    Name,
}

/// The policy chosen for an object.
#[derive(Clone, Copy, Debug)]
pub struct Chosen<'a> {
    /// `PropagationPolicy` or `ClusterPropagationPolicy`.
    pub kind: &'static str,
    /// The policy's namespace (`None` for a ClusterPropagationPolicy).
    pub namespace: Option<&'a str>,
    /// The policy's name.
    pub name: &'a str,
    /// The policy's uid.
    pub uid: Option<&'a str>,
    /// Its spec.
    pub spec: &'a PropagationSpec,
}

/// How specifically `selector` selects `subject`, or `None` when it does not.
pub fn selects(selector: &ResourceSelector, subject: &Subject<'_>) -> Option<Specificity> {
    if selector.api_version != subject.api_version || selector.kind != subject.kind {
        return None;
    }
    if let Some(ns) = &selector.namespace {
        if subject.namespace != Some(ns.as_str()) {
            return None;
        }
    }
    if let Some(name) = &selector.name {
        return (name == subject.name).then_some(Specificity::Name);
    }
    match &selector.label_selector {
        Some(sel) => labels::matches(sel, Some(subject.labels)).then_some(Specificity::Labels),
        None => Some(Specificity::Kind),
    }
}

/// The most specific way any of `selectors` selects `subject`.
pub fn best_match(selectors: &[ResourceSelector], subject: &Subject<'_>) -> Option<Specificity> {
    selectors.iter().filter_map(|s| selects(s, subject)).max()
}

/// The policy that claims `subject`, by the rules in the module docs.
pub fn choose<'a>(
    subject: &Subject<'_>,
    policies: &'a [std::sync::Arc<PropagationPolicy>],
    cluster_policies: &'a [std::sync::Arc<ClusterPropagationPolicy>],
) -> Option<Chosen<'a>> {
    let local = policies
        .iter()
        .filter(|p| subject.namespace.is_some() && p.namespace().as_deref() == subject.namespace)
        .map(|p| (&p.metadata, &p.spec, "PropagationPolicy"));
    best(subject, local).or_else(|| {
        let fleet = cluster_policies
            .iter()
            .map(|p| (&p.metadata, &p.spec.spec, "ClusterPropagationPolicy"));
        best(subject, fleet)
    })
}

type Candidate<'a> = (&'a ObjectMeta, &'a PropagationSpec, &'static str);

/// The best of policies of one scope: priority, then specificity, then the first name.
fn best<'a>(
    subject: &Subject<'_>,
    candidates: impl Iterator<Item = Candidate<'a>>,
) -> Option<Chosen<'a>> {
    candidates
        .filter(|(meta, _, _)| meta.deletion_timestamp.is_none())
        .filter_map(|(meta, spec, kind)| {
            let how = best_match(&spec.resource_selectors, subject)?;
            let name = meta.name.as_deref().unwrap_or_default();
            let rank = (spec.priority, how, std::cmp::Reverse(name));
            let chosen = Chosen {
                kind,
                namespace: meta.namespace.as_deref(),
                name,
                uid: meta.uid.as_deref(),
                spec,
            };
            Some((rank, chosen))
        })
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, chosen)| chosen)
}

#[cfg(test)]
mod tests;
