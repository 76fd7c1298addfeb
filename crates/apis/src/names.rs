//! Well-known names every flotilla component agrees on.

/// Prefix of a member cluster's execution namespace: the Works for cluster `c` live in
/// `flotilla-es-c`, and that member's agent may only touch that namespace.
pub const EXECUTION_NAMESPACE_PREFIX: &str = "flotilla-es-";

/// The namespace of flotilla's own objects (e.g. push-mode member credentials).
pub const SYSTEM_NAMESPACE: &str = "flotilla-system";

/// The field manager flotilla's controllers and agents write with.
pub const FIELD_MANAGER: &str = "flotilla";

/// The category every flotilla kind is in (`kubectl get flotilla`).
pub const CATEGORY: &str = "flotilla";

/// The execution namespace of `cluster`.
pub fn execution_namespace(cluster: &str) -> String {
    format!("{EXECUTION_NAMESPACE_PREFIX}{cluster}")
}

/// The cluster whose execution namespace `namespace` is, if it is one.
pub fn cluster_of_execution_namespace(namespace: &str) -> Option<&str> {
    namespace
        .strip_prefix(EXECUTION_NAMESPACE_PREFIX)
        .filter(|c| !c.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn execution_namespaces_round_trip() {
        assert_eq!(execution_namespace("member-1"), "flotilla-es-member-1");
        assert_eq!(
            cluster_of_execution_namespace("flotilla-es-member-1"),
            Some("member-1")
        );
        assert_eq!(cluster_of_execution_namespace("flotilla-es-"), None);
        assert_eq!(cluster_of_execution_namespace("default"), None);
    }
}
