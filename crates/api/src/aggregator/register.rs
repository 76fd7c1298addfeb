//! Which local APIServices should exist: kube-apiserver's autoregister controller makes one
//! for every built-in group version it serves (labelled `automanaged: onstart`), and its
//! crdregistration controller one for every served version of every CRD (`automanaged:
//! "true"`). Each is named `<version>.<group>` (`v1.` for the legacy core group) and has no
//! service.
//!
//! The hub keeps them level-triggered: a missing one is created, an automanaged one whose spec
//! differs is put back, an automanaged one nothing serves any more is deleted. Unlike kube,
//! which creates the built-in ones only at start, a deleted built-in one comes back at once:
//! the hub serves the group version regardless, so the list stays true.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::priorities;

/// The label kube-aggregator's autoregister controller marks what it manages with.
pub const AUTOMANAGED: &str = "kube-aggregator.kubernetes.io/automanaged";

/// One APIService the hub should have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Wanted {
    pub group: String,
    pub version: String,
    pub group_priority: i64,
    pub version_priority: i64,
    /// `onstart` (built-in) or `true` (a CRD's).
    pub managed: &'static str,
}

impl Wanted {
    /// `<version>.<group>`.
    pub fn name(&self) -> String {
        format!("{}.{}", self.version, self.group)
    }

    /// The spec kube writes.
    pub fn spec(&self) -> Value {
        json!({
            "group": self.group,
            "version": self.version,
            "groupPriorityMinimum": self.group_priority,
            "versionPriority": self.version_priority,
        })
    }

    /// The object to create.
    pub fn object(&self) -> Value {
        json!({
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": self.name(), "labels": {AUTOMANAGED: self.managed}},
            "spec": self.spec(),
        })
    }
}

/// The APIServices wanted for the built-in group versions `builtin` and the CRDs `crds`, by
/// name. A built-in group version kube gives no priority gets none; a CRD never displaces a
/// built-in one.
pub(crate) fn wanted<'a>(
    builtin: impl IntoIterator<Item = (&'a str, &'a str)>,
    crds: &[Value],
) -> BTreeMap<String, Wanted> {
    let mut out = BTreeMap::new();
    for (group, version) in builtin {
        if let Some((gp, vp)) = priorities::builtin(group, version) {
            let w = Wanted {
                group: group.into(),
                version: version.into(),
                group_priority: gp,
                version_priority: vp,
                managed: "onstart",
            };
            out.insert(w.name(), w);
        }
    }
    for crd in crds {
        let group = crd
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .unwrap_or("");
        let versions = crd
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for v in versions {
            let served = v.get("served").and_then(Value::as_bool).unwrap_or(false);
            let Some(version) = v.get("name").and_then(Value::as_str) else {
                continue;
            };
            if group.is_empty() || !served {
                continue;
            }
            let (gp, vp) = priorities::CRD;
            let w = Wanted {
                group: group.into(),
                version: version.into(),
                group_priority: gp,
                version_priority: vp,
                managed: "true",
            };
            out.entry(w.name()).or_insert(w);
        }
    }
    out
}

/// What to do about one stored APIService.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    /// Nothing: as wanted, or not the hub's to manage.
    Keep,
    /// Put the wanted spec (and label) back.
    Correct(Value),
    /// Automanaged, and nothing serves its group version any more.
    Delete,
}

/// The action for `current` (stored), given what is wanted under its name.
pub(crate) fn action(current: &Value, wanted: Option<&Wanted>) -> Action {
    let label = current
        .pointer(&format!(
            "/metadata/labels/{}",
            AUTOMANAGED.replace('/', "~1")
        ))
        .and_then(Value::as_str);
    // kube manages only what carries its label; a user's own APIService is left alone.
    if label.is_none() {
        return Action::Keep;
    }
    let Some(w) = wanted else {
        return Action::Delete;
    };
    let spec_ok = current.get("spec") == Some(&w.spec());
    if spec_ok && label == Some(w.managed) {
        return Action::Keep;
    }
    let mut new = current.clone();
    new["spec"] = w.spec();
    if let Some(labels) = new
        .pointer_mut("/metadata/labels")
        .and_then(Value::as_object_mut)
    {
        labels.insert(AUTOMANAGED.into(), json!(w.managed));
    }
    Action::Correct(new)
}
