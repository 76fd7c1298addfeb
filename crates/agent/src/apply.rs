//! The [`Applier`]: writes one Work's manifests into a member.
//!
//! Level-triggered and idempotent: applying the same Work twice leaves the member as once. Each
//! manifest gets its own [`ManifestResult`]; one failing does not stop the others. An object the
//! member still has as this applier left it is read, not written again ([`unchanged`]).

pub(crate) mod unchanged;

use std::collections::HashSet;

use flotilla_apis::names::FIELD_MANAGER;
use flotilla_apis::work::v1alpha1::{
    ApplyStrategy, ConflictPolicy, ResourceIdentifier, Work, REASON_APPLIED, REASON_APPLY_FAILED,
    REASON_CONFLICT, REASON_KIND_NOT_SERVED, REASON_NOT_FOUND,
};
use kube::api::{DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiResource, Scope};
use kube::{Api, Client, ResourceExt};
use serde_json::{json, Value};

use crate::discovery::Resolver;
use crate::manifest::{self, ManifestRef};
use crate::{Error, ManifestResult, Result};

/// Applies Works into one member cluster; keep one per member so discovery stays cached.
pub struct Applier {
    pub(crate) client: Client,
    pub(crate) resolver: Resolver,
    /// Namespaces known to exist in the member, so a Work's update does not read its
    /// namespace again (one member round trip less per reconcile). A namespace is forgotten
    /// when a write into it fails, so one deleted in the member is created again on the retry.
    namespaces: parking_lot::Mutex<HashSet<String>>,
    /// What was last written of each object ([`unchanged`]).
    written: unchanged::Written,
}

/// What the caller knows of the member's objects: whether the one of a resource, namespace and
/// name is known to be as this applier last wrote it, nothing having changed it since (a
/// member watch that saw no other change). Such an object is written without being read first.
pub trait Fresh: Sync {
    /// Whether the object is known unchanged since the last write.
    fn fresh(&self, resource: &str, namespace: Option<&str>, name: &str) -> bool;

    /// The applier is about to read or write the object: a change seen before the result is
    /// known may be the echo of this write.
    fn writing(&self, _resource: &str, _namespace: Option<&str>, _name: &str) {}
}

/// Knows nothing: every object is read before it is written.
pub struct Unknown;

impl Fresh for Unknown {
    fn fresh(&self, _: &str, _: Option<&str>, _: &str) -> bool {
        false
    }
}

/// Where one manifest goes in the member, once discovery has answered.
struct Target {
    api: Api<DynamicObject>,
    identifier: ResourceIdentifier,
    describe: String,
}

/// What the member reports of an object after a write or read.
struct Observed {
    resource_version: Option<String>,
    generation: Option<i64>,
    object: Option<Value>,
}

impl From<DynamicObject> for Observed {
    fn from(obj: DynamicObject) -> Self {
        Self {
            resource_version: obj.resource_version(),
            generation: obj.metadata.generation,
            object: serde_json::to_value(&obj).ok(),
        }
    }
}

/// How one write came out, before it becomes a [`ManifestResult`].
enum Written {
    /// The object as the member has it after the write, and what was done.
    Applied(Observed, &'static str),
    Conflict(String),
    Missing(String),
}

impl Applier {
    /// An applier writing through `client` (the member's API server).
    pub fn new(client: Client) -> Self {
        Self {
            client,
            resolver: Resolver::default(),
            namespaces: parking_lot::Mutex::new(HashSet::new()),
            written: unchanged::Written::default(),
        }
    }

    /// The owner annotation value of objects applied for `work`: `<namespace>/<name>`.
    pub fn owner(work: &Work) -> String {
        format!(
            "{}/{}",
            work.metadata.namespace.as_deref().unwrap_or_default(),
            work.metadata.name.as_deref().unwrap_or_default()
        )
    }

    /// Applies every manifest of `work`; returns one result per manifest, in manifest order.
    pub async fn apply(&self, work: &Work) -> Vec<ManifestResult> {
        self.apply_knowing(work, &Unknown).await
    }

    /// [`Applier::apply`], skipping the read before writing an object `fresh` knows unchanged.
    pub async fn apply_knowing(&self, work: &Work, fresh: &dyn Fresh) -> Vec<ManifestResult> {
        let manifests = &work.spec.manifests;
        let has_crd = manifests
            .iter()
            .any(|m| m.0["kind"] == "CustomResourceDefinition");
        let owner = Self::owner(work);
        let mut ensured = self.namespaces.lock().clone();
        let mut results = Vec::with_capacity(manifests.len());
        for i in manifest::apply_order(manifests) {
            let result = self
                .apply_one(work, i, (&owner, fresh), has_crd, &mut ensured)
                .await;
            if !result.applied {
                if let Some(ns) = &result.identifier.namespace {
                    ensured.remove(ns);
                    self.namespaces.lock().remove(ns);
                }
            }
            tracing::debug!(ordinal = i, applied = result.applied, reason = %result.reason, "manifest");
            results.push(result);
        }
        results.sort_by_key(|r| r.identifier.ordinal);
        let failed: HashSet<&String> = results
            .iter()
            .filter(|r| !r.applied)
            .filter_map(|r| r.identifier.namespace.as_ref())
            .collect();
        self.namespaces
            .lock()
            .extend(ensured.into_iter().filter(|ns| !failed.contains(ns)));
        results
    }

    async fn apply_one(
        &self,
        work: &Work,
        ordinal: usize,
        (owner, fresh): (&str, &dyn Fresh),
        patient: bool,
        ensured: &mut HashSet<String>,
    ) -> ManifestResult {
        let raw = &work.spec.manifests[ordinal].0;
        let mref = match ManifestRef::of(ordinal, raw) {
            Ok(r) => r,
            Err(e) => return failed(partial_identifier(ordinal, raw), REASON_APPLY_FAILED, &e),
        };
        let target = match self.target(&mref, patient).await {
            Ok(t) => t,
            Err(e @ Error::KindNotServed(_)) => {
                return failed(identifier(&mref, "", None), REASON_KIND_NOT_SERVED, &e)
            }
            Err(e) => return failed(identifier(&mref, "", None), REASON_APPLY_FAILED, &e),
        };
        let strategy = work.spec.apply_strategy;
        if let (Some(ns), false) = (
            &target.identifier.namespace,
            strategy == ApplyStrategy::ReadOnly,
        ) {
            if !ensured.contains(ns) {
                if let Err(e) = self.ensure_namespace(ns).await {
                    return failed(target.identifier, REASON_APPLY_FAILED, &e);
                }
                ensured.insert(ns.clone());
            }
        }
        let mut object = raw.clone();
        manifest::strip_hub_fields(&mut object);
        manifest::mark(&mut object, target.identifier.namespace.as_deref(), owner);
        let id = &target.identifier;
        let how = How {
            strategy,
            policy: work.spec.conflict_policy,
            owner,
            work_generation: work.metadata.generation,
            fresh: fresh.fresh(&id.resource, id.namespace.as_deref(), &id.name),
        };
        fresh.writing(&id.resource, id.namespace.as_deref(), &id.name);
        let written = self.write(&target, &mref.name, object, how).await;
        match written {
            Ok(Written::Applied(obj, message)) => ManifestResult {
                identifier: target.identifier,
                applied: true,
                reason: REASON_APPLIED.to_owned(),
                message: message.to_owned(),
                resource_version: obj.resource_version,
                generation: obj.generation,
                object: obj.object,
            },
            Ok(Written::Conflict(message)) => ManifestResult {
                identifier: target.identifier,
                applied: false,
                reason: REASON_CONFLICT.to_owned(),
                message,
                resource_version: None,
                generation: None,
                object: None,
            },
            Ok(Written::Missing(message)) => ManifestResult {
                identifier: target.identifier,
                applied: false,
                reason: REASON_NOT_FOUND.to_owned(),
                message,
                resource_version: None,
                generation: None,
                object: None,
            },
            Err(e) => failed(target.identifier, REASON_APPLY_FAILED, &e),
        }
    }

    async fn target(&self, mref: &ManifestRef, patient: bool) -> Result<Target> {
        let gvk = GroupVersionKind::gvk(&mref.group, &mref.version, &mref.kind);
        let (ar, caps) = self.resolver.resolve(&self.client, &gvk, patient).await?;
        let namespace = match caps.scope {
            Scope::Namespaced => Some(mref.namespace.clone().unwrap_or_else(|| "default".into())),
            Scope::Cluster => None,
        };
        let api = match &namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &ar),
            None => Api::all_with(self.client.clone(), &ar),
        };
        Ok(Target {
            api,
            describe: mref.describe(namespace.as_deref()),
            identifier: identifier(mref, &ar.plural, namespace),
        })
    }

    /// Forget what was written of `id`'s object: it left the member.
    pub(crate) fn forget(&self, id: &ResourceIdentifier) {
        let key = unchanged::key(&id.resource, id.namespace.as_deref(), &id.name);
        self.written.forget(&key);
    }

    /// Creates `namespace` (a bare Namespace, server-side applied) if the member lacks it.
    async fn ensure_namespace(&self, namespace: &str) -> Result<()> {
        let ar = ApiResource::erase::<k8s_openapi::api::core::v1::Namespace>(&());
        let api: Api<DynamicObject> = Api::all_with(self.client.clone(), &ar);
        let object = format!("Namespace {namespace}");
        let found = api.get_opt(namespace).await.map_err(|source| Error::Read {
            object: object.clone(),
            source,
        })?;
        if found.is_none() {
            let bare =
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}});
            api.patch(
                namespace,
                &PatchParams::apply(FIELD_MANAGER),
                &Patch::Apply(&bare),
            )
            .await
            .map_err(|source| Error::Write { object, source })?;
        }
        Ok(())
    }

    async fn write(
        &self,
        target: &Target,
        name: &str,
        object: Value,
        how: How<'_>,
    ) -> Result<Written> {
        let How {
            strategy,
            policy,
            owner,
            work_generation,
            fresh,
        } = how;
        let read_err = |source| Error::Read {
            object: target.describe.clone(),
            source,
        };
        let write_err = |source| Error::Write {
            object: target.describe.clone(),
            source,
        };
        let id = &target.identifier;
        let key = unchanged::key(&id.resource, id.namespace.as_deref(), name);
        // Known to be ours and unchanged since it was applied: apply again without reading.
        let skip_read = fresh && strategy == ApplyStrategy::ServerSideApply;
        let existing = match skip_read {
            true => None,
            false => target.api.get_opt(name).await.map_err(read_err)?,
        };
        let ours = skip_read
            || existing.as_ref().is_some_and(|e| {
                manifest::owner_of(e.metadata.annotations.as_ref()) == Some(owner)
            });
        let foreign = existing.is_some() && !ours;
        let conflict = || {
            Written::Conflict(format!(
                "{} exists in the member and is not flotilla's (no {} annotation for {owner})",
                target.describe,
                flotilla_apis::names::OWNER_ANNOTATION
            ))
        };
        match strategy {
            ApplyStrategy::ReadOnly => Ok(match existing {
                Some(obj) => Written::Applied(obj.into(), "read only: observed, not written"),
                None => {
                    Written::Missing(format!("{} does not exist in the member", target.describe))
                }
            }),
            ApplyStrategy::CreateOnly => match existing {
                Some(obj) if ours => Ok(Written::Applied(
                    obj.into(),
                    "created earlier; create-only never updates",
                )),
                Some(_) => Ok(conflict()),
                None => {
                    let obj = encode(object, &target.describe)?;
                    let created = target
                        .api
                        .create(&post_params(), &obj)
                        .await
                        .map_err(write_err)?;
                    Ok(Written::Applied(created.into(), "created"))
                }
            },
            _ if foreign && policy == ConflictPolicy::Abort => Ok(conflict()),
            ApplyStrategy::Update => {
                let mut obj = encode(object, &target.describe)?;
                let written = match existing {
                    Some(current) => {
                        obj.metadata.resource_version = current.resource_version();
                        target.api.replace(name, &post_params(), &obj).await
                    }
                    None => target.api.create(&post_params(), &obj).await,
                };
                Ok(Written::Applied(
                    written.map_err(write_err)?.into(),
                    "updated",
                ))
            }
            ApplyStrategy::ServerSideApply => {
                if let Some(current) = existing
                    .filter(|e| ours && self.written.unchanged(&key, work_generation, e, &object))
                {
                    // The same message as a write: the Work's status must not change for it.
                    return Ok(Written::Applied(current.into(), APPLIED));
                }
                let mut params = PatchParams::apply(FIELD_MANAGER);
                if ours || policy == ConflictPolicy::Overwrite {
                    params = params.force();
                }
                match target
                    .api
                    .patch(name, &params, &Patch::Apply(&object))
                    .await
                {
                    Ok(obj) => {
                        self.written.wrote(key, work_generation, &obj);
                        Ok(Written::Applied(obj.into(), APPLIED))
                    }
                    Err(kube::Error::Api(status)) if status.code == 409 => Ok(Written::Conflict(
                        format!("{}: {}", target.describe, status.message),
                    )),
                    Err(source) => Err(write_err(source)),
                }
            }
        }
    }
}

/// The message of a manifest server-side applied (or found as it was applied).
const APPLIED: &str = "server-side applied";

/// How one manifest is written.
struct How<'a> {
    strategy: ApplyStrategy,
    policy: ConflictPolicy,
    owner: &'a str,
    /// The Work's generation.
    work_generation: Option<i64>,
    /// Whether the caller knows the object unchanged since this applier wrote it.
    fresh: bool,
}

fn post_params() -> PostParams {
    PostParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PostParams::default()
    }
}

fn encode(object: Value, describe: &str) -> Result<DynamicObject> {
    serde_json::from_value(object).map_err(|source| Error::Encode {
        object: describe.to_owned(),
        source,
    })
}

fn identifier(mref: &ManifestRef, resource: &str, namespace: Option<String>) -> ResourceIdentifier {
    ResourceIdentifier {
        ordinal: i32::try_from(mref.ordinal).unwrap_or(i32::MAX),
        group: mref.group.clone(),
        version: mref.version.clone(),
        kind: mref.kind.clone(),
        resource: resource.to_owned(),
        namespace: namespace.or_else(|| mref.namespace.clone()),
        name: mref.name.clone(),
    }
}

/// What can be read from a manifest too broken to name fully.
fn partial_identifier(ordinal: usize, raw: &Value) -> ResourceIdentifier {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let api_version = text(&raw["apiVersion"]);
    let (group, version) = match api_version.split_once('/') {
        Some((g, v)) => (g.to_owned(), v.to_owned()),
        None => (String::new(), api_version),
    };
    ResourceIdentifier {
        ordinal: i32::try_from(ordinal).unwrap_or(i32::MAX),
        group,
        version,
        kind: text(&raw["kind"]),
        resource: String::new(),
        namespace: raw["metadata"]["namespace"].as_str().map(str::to_owned),
        name: text(&raw["metadata"]["name"]),
    }
}

fn failed(identifier: ResourceIdentifier, reason: &str, error: &Error) -> ManifestResult {
    ManifestResult {
        identifier,
        applied: false,
        reason: reason.to_owned(),
        message: error.to_string(),
        resource_version: None,
        generation: None,
        object: None,
    }
}
