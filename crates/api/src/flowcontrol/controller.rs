//! The configuration loop (kube-apiserver's APF configuration controller and its ensurer, in
//! one level-triggered loop): on every change of a FlowSchema or PriorityLevelConfiguration it
//! rebuilds the [`Classifier`], puts back a deleted mandatory object, and brings each schema's
//! `Dangling` condition up to date; at start and every minute it also creates missing suggested
//! objects, refreshes the specs of those still marked for auto-update, and deletes objects
//! marked for auto-update that are not part of the configuration (left by an older version).

use std::sync::Arc;
use std::time::Duration;

use chrono::{SecondsFormat, Utc};
use serde_json::{json, Value};

use super::bootstrap::{self, AUTOUPDATE_ANNOTATION};
use super::{specs_equal, Classifier, GROUP};
use crate::objects::{commit_create, delete_object, guaranteed_update, DeleteOptions, Writer};
use crate::registry::ResourceInfo;
use crate::Api;

/// The field manager of the hub's own writes, as kube-apiserver names it.
const MANAGER: &str = "api-priority-and-fairness-config-producer-v1";
/// Where both kinds are stored.
const PREFIX: &str = "/registry/flowcontrol.apiserver.k8s.io/";
/// How often the suggested configuration is ensured (as in kube-apiserver).
const ENSURE_EVERY: Duration = Duration::from_secs(60);

fn resource(api: &Api, plural: &str) -> Option<Arc<ResourceInfo>> {
    api.registry.snapshot().get(GROUP, "v1", plural).cloned()
}

/// Run until the server stops.
pub(super) async fn run(api: Arc<Api>) {
    let periodic = api.clone();
    tokio::spawn(async move {
        loop {
            ensure(&periodic, true).await;
            tokio::time::sleep(ENSURE_EVERY).await;
        }
    });
    let follower = api.clone();
    crate::lifecycle::follow(api, PREFIX, move |_| {
        let api = follower.clone();
        async move { reconcile(&api).await }
    })
    .await;
}

fn values(api: &Api, res: &ResourceInfo) -> Vec<Value> {
    let (items, _, _) = api.cache.list(&res.key_prefix(None), None, None, |_| true);
    items.iter().map(|o| o.value()).collect()
}

/// Rebuild the classifier, restore mandatory objects, update `Dangling` conditions.
async fn reconcile(api: &Arc<Api>) {
    let (Some(fs), Some(pl)) = (
        resource(api, "flowschemas"),
        resource(api, "prioritylevelconfigurations"),
    ) else {
        return;
    };
    let schemas = values(api, &fs);
    let levels = values(api, &pl);
    api.flowcontrol
        .replace(Classifier::build(&schemas, &levels));
    ensure(api, false).await;
    let exists = |name: &str| {
        levels
            .iter()
            .any(|l| l.pointer("/metadata/name").and_then(Value::as_str) == Some(name))
    };
    for schema in &schemas {
        let name = schema
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let level = schema
            .pointer("/spec/priorityLevelConfiguration/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let want = dangling(level, !exists(level));
        if has_condition(schema, &want) {
            continue;
        }
        let key = fs.key(None, name);
        let result = guaranteed_update(api, Writer::Server, &fs, &key, name, false, |cur| {
            let mut new = cur.clone();
            set_condition(&mut new, &want);
            Ok(new)
        })
        .await;
        if let Err(e) = result {
            if e.code != 404 {
                tracing::warn!(flowschema = name, error = %e, "could not update the Dangling condition");
            }
        }
    }
}

/// The `Dangling` condition kube-apiserver sets on a schema.
fn dangling(level: &str, missing: bool) -> Value {
    let (status, reason, message) = if missing {
        (
            "True",
            "NotFound",
            format!("This FlowSchema references the PriorityLevelConfiguration object named {level:?} but there is no such object"),
        )
    } else {
        (
            "False",
            "Found",
            format!("This FlowSchema references the PriorityLevelConfiguration object named {level:?} and it exists"),
        )
    };
    json!({"type": "Dangling", "status": status, "reason": reason, "message": message})
}

fn has_condition(obj: &Value, want: &Value) -> bool {
    let conditions = obj.pointer("/status/conditions").and_then(Value::as_array);
    conditions.into_iter().flatten().any(|c| {
        ["type", "status", "reason", "message"]
            .iter()
            .all(|k| c.get(*k) == want.get(*k))
    })
}

fn set_condition(obj: &mut Value, want: &Value) {
    let mut condition = want.clone();
    condition["lastTransitionTime"] = json!(Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true));
    if !obj.get("status").is_some_and(Value::is_object) {
        obj["status"] = json!({});
    }
    let status = &mut obj["status"];
    if !status.get("conditions").is_some_and(Value::is_array) {
        status["conditions"] = json!([]);
    }
    if let Some(list) = status["conditions"].as_array_mut() {
        match list.iter_mut().find(|c| c["type"] == "Dangling") {
            Some(c) => *c = condition,
            None => list.push(condition),
        }
    }
}

/// Ensure the mandatory objects (and with `suggested`, the suggested ones): create what is
/// missing, and revise what the ensurer would revise.
async fn ensure(api: &Arc<Api>, suggested: bool) {
    let (Some(fs), Some(pl)) = (
        resource(api, "flowschemas"),
        resource(api, "prioritylevelconfigurations"),
    ) else {
        return;
    };
    let mut wanted: Vec<(Value, bool, &Arc<ResourceInfo>)> = Vec::new();
    wanted.extend(
        bootstrap::mandatory_priority_levels()
            .into_iter()
            .map(|o| (o, true, &pl)),
    );
    wanted.extend(
        bootstrap::mandatory_flow_schemas()
            .into_iter()
            .map(|o| (o, true, &fs)),
    );
    if suggested {
        wanted.extend(
            bootstrap::suggested_priority_levels()
                .into_iter()
                .map(|o| (o, false, &pl)),
        );
        wanted.extend(
            bootstrap::suggested_flow_schemas()
                .into_iter()
                .map(|o| (o, false, &fs)),
        );
    }
    let names: Vec<String> = wanted
        .iter()
        .map(|(o, _, _)| o["metadata"]["name"].as_str().unwrap_or("").to_string())
        .collect();
    for (object, mandatory, res) in wanted {
        if let Err(e) = ensure_one(api, res, object, mandatory).await {
            tracing::warn!(kind = %res.kind, error = %e, "could not ensure an APF configuration object");
        }
    }
    if suggested {
        for res in [&fs, &pl] {
            remove_unwanted(api, res, &names).await;
        }
    }
}

/// `RemoveUnwantedObjects`: an object marked for auto-update whose name is not one of the
/// configuration's was the hub's once, and goes; one without the mark (or marked false) is a
/// user's and stays.
async fn remove_unwanted(api: &Arc<Api>, res: &ResourceInfo, wanted: &[String]) {
    for object in values(api, res) {
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        if wanted.iter().any(|w| w == name) || annotation(&object) != Some(true) {
            continue;
        }
        let key = res.key(None, name);
        match delete_object(api, res, &key, name, &DeleteOptions::default()).await {
            Ok(_) => {
                tracing::info!(kind = %res.kind, %name, "deleted an unwanted APF configuration object")
            }
            Err(e) if e.code == 404 => {}
            Err(e) => {
                tracing::warn!(kind = %res.kind, %name, error = %e, "could not delete an unwanted APF configuration object")
            }
        }
    }
}

async fn ensure_one(
    api: &Arc<Api>,
    res: &ResourceInfo,
    bootstrap: Value,
    mandatory: bool,
) -> crate::error::Result<()> {
    let name = bootstrap["metadata"]["name"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let key = res.key(None, &name);
    let Some(current) = api.cache.get(&key).map(|c| c.value()) else {
        return match commit_create(api, res, bootstrap, Some(MANAGER), false).await {
            Ok(_) => {
                tracing::info!(kind = %res.kind, %name, "created an APF configuration object");
                Ok(())
            }
            Err(e) if e.code == 409 => Ok(()),
            Err(e) => Err(e),
        };
    };
    let auto = mandatory || auto_update(&current);
    let fix_annotation = annotation(&current) != Some(auto);
    let fix_spec = auto && !specs_equal(&current["spec"], &bootstrap["spec"]);
    if !fix_annotation && !fix_spec {
        return Ok(());
    }
    let result = guaranteed_update(api, Writer::Server, res, &key, &name, false, |cur| {
        let mut new = cur.clone();
        if fix_spec {
            new["spec"] = bootstrap["spec"].clone();
        }
        if !new["metadata"]["annotations"].is_object() {
            new["metadata"]["annotations"] = json!({});
        }
        new["metadata"]["annotations"][AUTOUPDATE_ANNOTATION] = json!(auto.to_string());
        Ok(new)
    })
    .await;
    match result {
        Ok(_) => {
            tracing::info!(kind = %res.kind, %name, "revised an APF configuration object");
            Ok(())
        }
        // Someone else changed or deleted it meanwhile: the next round looks again.
        Err(e) if e.code == 404 || e.code == 409 => Ok(()),
        Err(e) => Err(e),
    }
}

/// `shouldUpdateSpec`: the annotation when it parses, else only an object never changed since
/// it was created (generation 1).
fn auto_update(current: &Value) -> bool {
    annotation(current).unwrap_or_else(|| {
        current
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            == Some(1)
    })
}

/// The auto-update annotation, parsed as Go's `strconv.ParseBool` parses it.
fn annotation(current: &Value) -> Option<bool> {
    let v = current
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(AUTOUPDATE_ANNOTATION))
        .and_then(Value::as_str)?;
    match v {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}
