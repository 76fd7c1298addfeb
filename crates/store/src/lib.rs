//! Storage for the hub. (API stub written by the lead so dependents can type-check; the store
//! implementation replaces this file.)
#![allow(missing_docs, unused_variables)]

use bytes::Bytes;

pub type Revision = i64;
#[derive(Clone, Debug)]
pub struct Record { pub key: String, pub value: Bytes, pub create_revision: Revision, pub mod_revision: Revision }
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind { Put, Delete }
#[derive(Clone, Debug)]
pub struct Event { pub revision: Revision, pub key: String, pub kind: EventKind, pub value: Bytes, pub prev_value: Option<Bytes>, pub create_revision: Revision }
pub type Render = Box<dyn FnOnce(Revision) -> Bytes + Send>;
#[derive(Clone, Debug, Default)]
pub struct ListOptions { pub revision: Option<Revision>, pub start_after: Option<String>, pub limit: Option<usize> }
#[derive(Clone, Debug)]
pub struct ListResult { pub records: Vec<Record>, pub revision: Revision, pub more: bool, pub remaining: u64 }
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("already exists: {key}")] AlreadyExists { key: String },
    #[error("not found: {key}")] NotFound { key: String },
    #[error("conflict: {key}")] Conflict { key: String, current: Option<Record> },
    #[error("compacted")] Compacted { requested: Revision, compacted: Revision },
    #[error("future")] FutureRevision { requested: Revision, current: Revision },
    #[error("closed")] Closed,
}
pub type Result<T, E = Error> = std::result::Result<T, E>;
pub type WatchStream = std::pin::Pin<Box<dyn futures::Stream<Item = Result<Event>> + Send>>;
#[derive(Clone)]
pub struct Store {}
impl Store {
    pub async fn open(url: &str) -> Result<Store> { todo!() }
    pub fn revision(&self) -> Revision { todo!() }
    pub fn compacted_revision(&self) -> Revision { todo!() }
    pub async fn get(&self, key: &str) -> Result<Option<Record>> { todo!() }
    pub async fn list(&self, prefix: &str, opts: ListOptions) -> Result<ListResult> { todo!() }
    pub async fn create(&self, key: &str, render: Render) -> Result<Record> { todo!() }
    pub async fn update(&self, key: &str, expected_mod_revision: Revision, render: Render) -> Result<Record> { todo!() }
    pub async fn delete(&self, key: &str, expected_mod_revision: Revision, render: Render) -> Result<Record> { todo!() }
    pub fn watch(&self, from: Revision) -> WatchStream { todo!() }
    pub async fn compact(&self, revision: Revision) -> Result<()> { todo!() }
    pub fn spawn_auto_compaction(&self, every: std::time::Duration) -> tokio::task::JoinHandle<()> { todo!() }
    pub async fn close(&self) {}
}
