//! `flotilla explain interpret KIND/NAME -n NS`: which ResourceInterpreter reads the object,
//! and what each of its rules returns for it (or why a rule fails).

use anyhow::{Context, Result};
use flotilla_apis::config::v1alpha1::ResourceInterpreter;
use flotilla_controllers::propagation::workload;
use flotilla_interpreter::Interpreter;
use kube::api::ListParams;
use kube::{Api, Client};

/// Print the interpreter's view of `object` in `namespace`.
pub async fn run(hub: Client, object: &str, namespace: Option<&str>) -> Result<()> {
    let super::Object {
        group_version,
        resource: res,
        name,
        api: objects,
    } = super::object(&hub, object, namespace).await?;
    let Some(obj) = objects
        .get_opt(&name)
        .await
        .with_context(|| format!("read {object}"))?
    else {
        anyhow::bail!(
            "{object} does not exist{}",
            namespace
                .map(|ns| format!(" in namespace {ns}"))
                .unwrap_or_default()
        );
    };
    let obj = serde_json::to_value(&obj).context("the object as JSON")?;
    let all = Api::<ResourceInterpreter>::all(hub)
        .list(&ListParams::default())
        .await
        .context("list the ResourceInterpreters")?
        .items;
    let Some(chosen) = flotilla_interpreter::choose(&all, &group_version, &res.kind) else {
        let compiled = if workload::has_replicas(&group_version, &res.kind) {
            "flotilla's compiled rules apply (replicas from spec.replicas, requests from the pod \
             template, status summed)"
        } else {
            "flotilla's compiled rules apply where it has them; otherwise its replicas are not \
             divided and it counts as healthy once applied"
        };
        println!(
            "{object}: no ResourceInterpreter targets {group_version} {}; {compiled}",
            res.kind
        );
        return Ok(());
    };
    let ri_name = chosen.metadata.name.as_deref().unwrap_or_default();
    println!("{object}: read by ResourceInterpreter {ri_name}");
    let interpreter = match Interpreter::compile(&chosen.spec) {
        Ok(i) => i,
        Err(errors) => {
            // Admission refuses such rules; one stored before a fix is said so.
            for e in errors {
                println!("  {}: does not compile: {}", e.field, e.message);
            }
            return Ok(());
        }
    };
    let results = interpreter.explain(&obj);
    if results.is_empty() {
        println!("  (the interpreter has no rule that reads an object)");
    }
    for (rule, result) in results {
        match result {
            Ok(v) => println!("  {rule}: {v}"),
            Err(e) => println!("  {rule}: FAILS: {e}"),
        }
    }
    Ok(())
}
