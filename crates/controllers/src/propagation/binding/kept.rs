//! What the bindings informer keeps of a binding: lean, and each member's reported status as
//! a digest. Those statuses (a Deployment's conditions and counts, once per cluster) are the
//! largest part of a binding held as parsed JSON, and the controllers reading the informer
//! only compare them with what they would write ([`digest_member_statuses`] on both sides).

use std::hash::{Hash, Hasher};

use flotilla_apis::work::v1alpha1::{AggregatedStatusItem, ResourceBindingStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

/// Trims a binding (its `metadata` and `status`) for the informer.
pub(super) fn keep(meta: &mut ObjectMeta, status: Option<&mut ResourceBindingStatus>) {
    meta.managed_fields = None;
    if let Some(s) = status {
        digest_member_statuses(&mut s.aggregated_status);
    }
}

/// Replaces each member's reported status by a digest of it: a JSON string, where a status is
/// an object, so a digest is left as it is. Equal statuses (whatever the order of their keys)
/// have equal digests.
pub fn digest_member_statuses(items: &mut [AggregatedStatusItem]) {
    for status in items.iter_mut().filter_map(|i| i.status.as_mut()) {
        if !status.is_string() {
            let mut h = std::hash::DefaultHasher::new();
            canonical(status, &mut h);
            *status = Value::String(format!("{:016x}", h.finish()));
        }
    }
}

/// Hashes `v` with its objects' keys in order.
fn canonical(v: &Value, h: &mut impl Hasher) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            h.write_u8(b'{');
            for k in keys {
                k.hash(h);
                canonical(&map[k.as_str()], h);
            }
            h.write_u8(b'}');
        }
        Value::Array(items) => {
            h.write_u8(b'[');
            items.iter().for_each(|i| canonical(i, h));
            h.write_u8(b']');
        }
        other => other.to_string().hash(h),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn item(status: Value) -> AggregatedStatusItem {
        AggregatedStatusItem {
            cluster_name: "m-1".into(),
            status: Some(status),
            applied: true,
            ..Default::default()
        }
    }

    #[test]
    fn equal_statuses_digest_alike_in_any_key_order_and_a_digest_stays() {
        let mut a = [item(
            json!({"replicas": 3, "conditions": [{"type": "Available"}]}),
        )];
        let mut b = [item(
            json!({"conditions": [{"type": "Available"}], "replicas": 3}),
        )];
        let mut c = [item(
            json!({"replicas": 2, "conditions": [{"type": "Available"}]}),
        )];
        digest_member_statuses(&mut a);
        digest_member_statuses(&mut b);
        digest_member_statuses(&mut c);
        assert!(a[0].status.as_ref().is_some_and(Value::is_string));
        assert_eq!(a, b);
        assert_ne!(a, c);
        let once = a.clone();
        digest_member_statuses(&mut a);
        assert_eq!(a, once, "digesting twice changes nothing");
    }

    #[test]
    fn the_informer_keeps_bindings_lean_with_digested_statuses() {
        let mut meta = ObjectMeta {
            managed_fields: Some(vec![Default::default()]),
            ..Default::default()
        };
        let mut status = ResourceBindingStatus {
            aggregated_status: vec![item(json!({"replicas": 3}))],
            ..Default::default()
        };
        keep(&mut meta, Some(&mut status));
        assert!(meta.managed_fields.is_none());
        assert!(status.aggregated_status[0]
            .status
            .as_ref()
            .is_some_and(Value::is_string));
    }
}
