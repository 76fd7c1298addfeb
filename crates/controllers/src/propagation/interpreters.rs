//! The hub's ResourceInterpreters, as the propagation controllers use them: one reflector store,
//! and each interpreter compiled once per resourceVersion ([`Interpreters::for_kind`]).

use std::collections::HashMap;
use std::sync::Arc;

use flotilla_apis::config::v1alpha1::ResourceInterpreter;
use flotilla_interpreter::Interpreter;
use kube::runtime::reflector::Store;
use kube::ResourceExt;
use parking_lot::Mutex;

/// The ResourceInterpreters of the hub, compiled on first use.
pub struct Interpreters {
    store: Store<ResourceInterpreter>,
    /// By name: the resourceVersion compiled, and the result (`None`: it does not compile,
    /// which admission refuses; one stored before is left unused and logged once).
    compiled: Mutex<HashMap<String, Compiled>>,
}

/// The resourceVersion compiled, and what came of it.
type Compiled = (String, Option<Arc<Interpreter>>);

impl Interpreters {
    /// Interpreters read from `store` (fed by a watch of ResourceInterpreters).
    pub fn new(store: Store<ResourceInterpreter>) -> Interpreters {
        Interpreters {
            store,
            compiled: Mutex::default(),
        }
    }

    /// Once the store has been filled the first time.
    pub async fn ready(&self) {
        let _ = self.store.wait_until_ready().await;
    }

    /// The interpreter of `api_version`/`kind`, if one targets it and compiles.
    pub fn for_kind(&self, api_version: &str, kind: &str) -> Option<Arc<Interpreter>> {
        let all = self.store.state();
        let chosen = flotilla_interpreter::choose(all.iter().map(|a| &**a), api_version, kind)?;
        let name = chosen.name_any();
        let version = chosen.resource_version().unwrap_or_default();
        let mut compiled = self.compiled.lock();
        if let Some((v, i)) = compiled.get(&name) {
            if *v == version {
                return i.clone();
            }
        }
        let i = match Interpreter::compile(&chosen.spec) {
            Ok(i) => Some(Arc::new(i)),
            Err(errors) => {
                let why: Vec<String> = errors
                    .iter()
                    .map(|e| format!("{}: {}", e.field, e.message))
                    .collect();
                tracing::warn!(interpreter = %name, errors = %why.join("; "),
                    "a ResourceInterpreter does not compile; its kind is read without it");
                None
            }
        };
        if compiled.len() > 4 * all.len() + 16 {
            compiled.clear();
        }
        compiled.insert(name, (version, i.clone()));
        i
    }
}
