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

/// Annotation on every object an agent writes into a member: `<work namespace>/<work name>` of
/// the Work that applied it. Only objects carrying it are updated, pruned or adopted as flotilla's.
pub const OWNER_ANNOTATION: &str = "work.flotilla.io/owner";

/// Label (value `"true"`) on every object an agent writes into a member, so the agent can watch
/// just its own objects with a label selector (an annotation cannot be selected on).
pub const MANAGED_LABEL: &str = "work.flotilla.io/managed";

/// Finalizer the agent (or push worker) puts on a Work, so that deleting the Work first removes
/// (or orphans) what it applied in the member.
pub const WORK_FINALIZER: &str = "work.flotilla.io/cleanup";

/// Metadata fields an API server sets on the object it stores (version, identity, history,
/// owners in that server): a copy written into a member must not carry them, the member sets its
/// own. The agent removes these, and only these, from every Work manifest it applies.
pub const SERVER_SET_METADATA: &[&str] = &[
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "generation",
    "managedFields",
    "ownerReferences",
    "selfLink",
];

/// Metadata fields about a hub object's own deletion: whether it is being deleted and what holds
/// it back. The binding controller removes these as well as [`SERVER_SET_METADATA`] when it
/// renders a template into a Work, so a terminating template or a hub-side finalizer does not
/// reach a member. The agent leaves them in a Work manifest: a rendered one no longer has them,
/// and one written by hand keeps what its author put there.
pub const HUB_DELETION_METADATA: &[&str] = &[
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "finalizers",
];

/// The service account of a member's agent, in the member's execution namespace. Its tokens die
/// with it (`flotilla cluster remove` deletes the namespace).
pub const AGENT_SERVICE_ACCOUNT: &str = "flotilla-agent";

/// The Role (in the execution namespace) and ClusterRole (`flotilla-agent:<cluster>`) granting an
/// agent what it may do, and their bindings, share this name.
pub const AGENT_ROLE: &str = "flotilla-agent";

/// The Role and RoleBinding in the execution namespace that let an approved join request's
/// bootstrap user fetch the agent's first token (TokenRequest on [`AGENT_SERVICE_ACCOUNT`]).
pub const AGENT_BOOTSTRAP_ROLE: &str = "flotilla-agent-bootstrap";

/// Annotation the hub sets on a Cluster created by a bootstrap credential: the user name of the
/// credential (`system:bootstrap:<token id>`). Whatever a client sends there is overwritten.
pub const REQUESTED_BY_ANNOTATION: &str = "cluster.flotilla.io/requested-by";

/// Bootstrap tokens are Secrets of this type in [`SYSTEM_NAMESPACE`], as kubeadm's are in
/// kube-system: keys `token-id`, `token-secret`, `expiration` (RFC 3339),
/// `usage-bootstrap-authentication` ("true"), `description`, and flotilla's optional
/// [`BOOTSTRAP_TOKEN_CLUSTER_KEY`].
pub const BOOTSTRAP_TOKEN_TYPE: &str = "bootstrap.kubernetes.io/token";

/// A bootstrap token with id `ID` is the Secret `bootstrap-token-ID`.
pub const BOOTSTRAP_TOKEN_SECRET_PREFIX: &str = "bootstrap-token-";

/// Optional key of a bootstrap token Secret: the only Cluster name the token may ask to join as.
pub const BOOTSTRAP_TOKEN_CLUSTER_KEY: &str = "flotilla-cluster";

/// A bootstrap token authenticates as this prefix, then its token id.
pub const BOOTSTRAP_USER_PREFIX: &str = "system:bootstrap:";

/// Groups of a bootstrap token's user (besides `system:authenticated`), as in Kubernetes.
pub const BOOTSTRAP_GROUPS: [&str; 2] = ["system:bootstrappers", "system:bootstrappers:flotilla"];

/// The Secret in [`SYSTEM_NAMESPACE`] holding a push-mode member's kubeconfig (key `kubeconfig`).
pub fn push_secret_name(cluster: &str) -> String {
    format!("cluster-{cluster}-kubeconfig")
}

/// The ClusterRole and ClusterRoleBinding letting `cluster`'s agent read its Cluster and write
/// its status.
pub fn agent_cluster_role(cluster: &str) -> String {
    format!("{AGENT_ROLE}:{cluster}")
}

/// The user name of `cluster`'s agent (its service account).
pub fn agent_user(cluster: &str) -> String {
    format!(
        "system:serviceaccount:{}:{AGENT_SERVICE_ACCOUNT}",
        execution_namespace(cluster)
    )
}

/// The execution namespace of `cluster`.
pub fn execution_namespace(cluster: &str) -> String {
    format!("{EXECUTION_NAMESPACE_PREFIX}{cluster}")
}

/// The longest cluster name: its execution namespace `flotilla-es-<name>` must still be a DNS
/// label (63 characters), as every namespace name is.
pub const MAX_CLUSTER_NAME_LEN: usize = 63 - EXECUTION_NAMESPACE_PREFIX.len();

/// Why `name` cannot be a cluster's name, or `None` when it can.
///
/// A cluster's name becomes its execution namespace `flotilla-es-<name>`, a Lease and the label
/// values that mark its objects, so it must be a DNS-1123 label short enough to stay one with the
/// prefix: lower-case letters, digits and '-', starting and ending with a letter or digit, at
/// most [`MAX_CLUSTER_NAME_LEN`] characters. A name outside this rule could be asked for but
/// never approved; the hub refuses it at join time, and so does the CLI before it asks.
pub fn cluster_name_error(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("a cluster name is required".into());
    }
    if name.len() > MAX_CLUSTER_NAME_LEN {
        return Some(format!(
            "must be no more than {MAX_CLUSTER_NAME_LEN} characters (it is {}), so that its \
             execution namespace {EXECUTION_NAMESPACE_PREFIX}<name> is a valid namespace name",
            name.len()
        ));
    }
    let b = name.as_bytes();
    let allowed = b
        .iter()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-');
    let ends_ok = b[0] != b'-' && b[b.len() - 1] != b'-';
    if allowed && ends_ok {
        return None;
    }
    let dots = if name.contains('.') {
        format!(
            " (no dots: it becomes part of the namespace name {EXECUTION_NAMESPACE_PREFIX}<name>)"
        )
    } else {
        String::new()
    };
    Some(format!(
        "a cluster name must be a lowercase RFC 1123 label: lower case alphanumeric characters \
         or '-', starting and ending with an alphanumeric character (e.g. 'eu-west-1'){dots}"
    ))
}

/// The cluster whose execution namespace `namespace` is, if it is one.
pub fn cluster_of_execution_namespace(namespace: &str) -> Option<&str> {
    namespace
        .strip_prefix(EXECUTION_NAMESPACE_PREFIX)
        .filter(|c| !c.is_empty())
}

#[cfg(test)]
mod tests;

/// Request header (value `true`) by which a flotilla client asks the hub to leave
/// `metadata.managedFields` out of the objects a LIST or watch sends. flotilla's controllers and
/// agents take it off every object they keep, so decoding it was work thrown away; any other
/// server ignores the header, and the objects it sends are whole, as before.
pub const OMIT_MANAGED_FIELDS_HEADER: &str = "flotilla-omit-managed-fields";
