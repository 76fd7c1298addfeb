//! What the tests against a real member share.

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{DeleteParams, ObjectMeta, PostParams};
use kube::{Api, Client, ResourceExt};

/// Namespace `name` on the member, created if missing and emptied of ConfigMaps (an earlier
/// run's are gone); its ConfigMaps.
pub async fn fresh_namespace(client: &Client, name: &str) -> Api<ConfigMap> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let namespace = Namespace {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    let _ = namespaces.create(&PostParams::default(), &namespace).await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), name);
    for cm in api.list(&Default::default()).await.expect("list").items {
        let _ = api.delete(&cm.name_any(), &DeleteParams::default()).await;
    }
    api
}
