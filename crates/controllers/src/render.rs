//! Rendering a hub template into the manifest for one member cluster: pure functions, no I/O.
//!
//! The binding→Work controller calls [`render`] once per selected cluster: it clones the
//! template, strips what only the hub owns ([`strip_hub_fields`]), writes the cluster's share of
//! replicas ([`set_replicas`], [`set_job`], [`set_hpa`]), then applies the override rules that
//! target the cluster ([`rules_for_cluster`] picks and orders them; [`apply_overrides`] applies
//! one rule, in Karmada's order: image, command, args, labels, annotations, plaintext).
//!
//! * `strip`: hub-owned fields.
//! * `image`: image references and the `imageOverrider`.
//! * `overrides`: the other overriders and the order within a rule.
//! * `target`: `targetCluster` selection and the order of rules across policies.

mod image;
mod overrides;
mod strip;
mod target;

use flotilla_apis::cluster::v1alpha1::Cluster;
use flotilla_apis::policy::v1alpha1::Overriders;
use serde_json::{Map, Value};

pub use image::ImageRef;
pub use overrides::apply_overrides;
pub use strip::strip_hub_fields;
pub use target::{affinity_selects, rules_for_cluster, MatchedPolicy, PolicyScope};

use crate::Result;

/// One cluster's share of a template's replicas, as the scheduler decided it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplicaShare {
    /// `spec.replicas` of a Deployment, StatefulSet or ReplicaSet; `spec.parallelism` of a Job.
    Replicas(u32),
    /// A Job's `spec.parallelism` and, when set, `spec.completions`.
    Job {
        /// `spec.parallelism`.
        parallelism: u32,
        /// `spec.completions`; `None` leaves the template's value (a work-queue Job).
        completions: Option<u32>,
    },
    /// A HorizontalPodAutoscaler's bounds.
    Hpa {
        /// `spec.minReplicas`.
        min: u32,
        /// `spec.maxReplicas`.
        max: u32,
    },
}

/// The manifest of `template` for `cluster`: a clone, stripped of hub-owned fields, with the
/// cluster's replica share (none: as in the template, e.g. `Duplicated`) and the `overriders`
/// applied in the given order (from [`rules_for_cluster`]). Overrides that would change the
/// object's identity (kind, name, namespace, ...) are an error: no manifest for that cluster.
///
/// `interpreter` is the ResourceInterpreter of the template's kind, if any: its
/// `reviseReplicas` rule says where a share goes in a kind flotilla has no compiled rule for
/// (and overrides a built-in kind's), and its `retain` paths are left out (the member owns
/// them).
pub fn render(
    template: &Value,
    cluster: &Cluster,
    replicas: Option<ReplicaShare>,
    interpreter: Option<&flotilla_interpreter::Interpreter>,
    overriders: &[&Overriders],
) -> Result<Value> {
    // The cluster is already reflected in which overriders were chosen; it stays in the
    // signature so per-cluster defaults can be added without changing callers.
    let _ = cluster;
    let mut obj = template.clone();
    strip_hub_fields(&mut obj);
    let kind = obj
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let revise =
        |obj: &mut Value, n: u32| interpreter.and_then(|i| i.revise_replicas(obj, i64::from(n)));
    match replicas {
        Some(ReplicaShare::Replicas(n)) => match revise(&mut obj, n) {
            Some(Err(e)) => return Err(crate::Error::Invalid(e.to_string())),
            Some(Ok(())) => {}
            None => set_replicas(&mut obj, &kind, n),
        },
        Some(ReplicaShare::Job {
            parallelism,
            completions,
        }) => set_job(&mut obj, parallelism, completions),
        Some(ReplicaShare::Hpa { min, max }) => set_hpa(&mut obj, min, max),
        None => {}
    }
    let selected = flotilla_apis::scope::identity(&obj);
    for o in overriders {
        apply_overrides(&mut obj, o)?;
    }
    // Whatever an overrider did, the member gets the object the policy selected, where it was.
    if let Some(change) = flotilla_apis::scope::identity_change(&selected, &obj) {
        return Err(crate::Error::Invalid(format!(
            "the overrides change the object's identity ({change}); overriders may not \
             change apiVersion, kind, metadata.name, metadata.namespace or \
             metadata.generateName (fix the OverridePolicy)"
        )));
    }
    // The fields the member owns are not flotilla's to write.
    if let Some(i) = interpreter {
        i.release(&mut obj);
    }
    Ok(obj)
}

/// Writes a replica count where `kind` keeps it: `spec.replicas` (Deployment, StatefulSet,
/// ReplicaSet) or `spec.parallelism` (Job). Other kinds are left alone.
pub fn set_replicas(obj: &mut Value, kind: &str, replicas: u32) {
    match kind {
        "Deployment" | "StatefulSet" | "ReplicaSet" => set_spec(obj, "replicas", replicas),
        "Job" => set_spec(obj, "parallelism", replicas),
        _ => {}
    }
}

/// Writes a Job's `spec.parallelism`, and `spec.completions` when given.
pub fn set_job(obj: &mut Value, parallelism: u32, completions: Option<u32>) {
    set_spec(obj, "parallelism", parallelism);
    if let Some(completions) = completions {
        set_spec(obj, "completions", completions);
    }
}

/// Writes a HorizontalPodAutoscaler's `spec.minReplicas` and `spec.maxReplicas`.
pub fn set_hpa(obj: &mut Value, min: u32, max: u32) {
    set_spec(obj, "minReplicas", min);
    set_spec(obj, "maxReplicas", max);
}

/// Sets `spec.<field>`, creating `spec` when absent; a non-object is left alone.
fn set_spec(obj: &mut Value, field: &str, value: u32) {
    let Some(root) = obj.as_object_mut() else {
        return;
    };
    let spec = root
        .entry("spec")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(spec) = spec.as_object_mut() {
        spec.insert(field.to_owned(), Value::from(value));
    }
}

#[cfg(test)]
mod tests;
