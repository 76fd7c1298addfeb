//! The line of `explain placement` saying which controller process works the binding: the
//! binding's shard and who holds that shard's Lease.

use flotilla_controllers::shards::{binding_key, lapsed, lease_name, shard_of, NAMESPACE};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::Timestamp;
use kube::{Api, Client};

/// `binding`'s shard and its Lease's holder, as one line (never fails: a Lease that cannot be
/// read is said so).
pub async fn line(hub: &Client, namespace: Option<&str>, binding: &str) -> String {
    let shard = shard_of(&binding_key(namespace, binding));
    let lease = Api::<Lease>::namespaced(hub.clone(), NAMESPACE)
        .get_opt(&lease_name(shard))
        .await
        .map_err(|e| e.to_string());
    describe(shard, lease, Timestamp::now())
}

fn describe(shard: u32, lease: Result<Option<Lease>, String>, now: Timestamp) -> String {
    let name = lease_name(shard);
    let head = format!("worked in shard {shard} (Lease {NAMESPACE}/{name})");
    let lease = match lease {
        Err(e) => return format!("{head}: its Lease cannot be read: {e}"),
        Ok(None) => return format!("{head}: no controller process has claimed it yet"),
        Ok(Some(l)) => l,
    };
    let is_lapsed = lapsed(&lease, now);
    let spec = lease.spec.unwrap_or_default();
    let holder = spec.holder_identity.as_deref().unwrap_or_default();
    let renewed = spec.renew_time.as_ref().map(|t| t.0);
    let ago = renewed
        .map(|t| format!("{}s ago, at {t:.0}", now.duration_since(t).as_secs().max(0)))
        .unwrap_or_else(|| "never".into());
    if holder.is_empty() {
        format!("{head}: held by no process (given back; renewed {ago})")
    } else if is_lapsed {
        format!("{head}: last held by {holder}, lapsed (renewed {ago}); the next process to look takes it")
    } else {
        format!("{head}: held by controller process {holder}, renewed {ago}")
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::coordination::v1::LeaseSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
    use k8s_openapi::jiff::SignedDuration;

    use super::*;

    fn lease(holder: Option<&str>, renewed: Timestamp) -> Lease {
        Lease {
            metadata: Default::default(),
            spec: Some(LeaseSpec {
                holder_identity: holder.map(Into::into),
                renew_time: Some(MicroTime(renewed)),
                lease_duration_seconds: Some(10),
                ..LeaseSpec::default()
            }),
        }
    }

    #[test]
    fn says_who_holds_the_shard() {
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        let t = now - SignedDuration::from_secs(2);
        let held = describe(3, Ok(Some(lease(Some("a-1-beef"), t))), now);
        assert_eq!(
            held,
            "worked in shard 3 (Lease flotilla-system/flotilla-shard-3): held by controller \
             process a-1-beef, renewed 2s ago, at 2027-01-15T07:59:58Z"
        );
        let old = now - SignedDuration::from_secs(30);
        let lapsed = describe(3, Ok(Some(lease(Some("a"), old))), now);
        assert!(
            lapsed.contains("last held by a, lapsed (renewed 30s ago"),
            "{lapsed}"
        );
        let free = describe(3, Ok(Some(lease(None, t))), now);
        assert!(free.contains("held by no process"), "{free}");
        let none = describe(0, Ok(None), now);
        assert!(
            none.ends_with("no controller process has claimed it yet"),
            "{none}"
        );
        assert!(describe(0, Err("boom".into()), now).ends_with("cannot be read: boom"));
    }
}
