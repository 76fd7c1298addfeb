//! What each REST operation accepts and returns: query parameters, status codes, media types.

/// One REST operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    List,
    ListAll,
    Create,
    DeleteCollection,
    Read,
    Replace,
    Patch,
    Delete,
}

/// A query parameter: name, JSON type, description.
pub(crate) type Param = (&'static str, &'static str, &'static str);

// The parameters several operations share.
const DRY_RUN: Param = (
    "dryRun",
    "string",
    "When present (value All), changes are not persisted.",
);
const FIELD_VALIDATION: Param = (
    "fieldValidation",
    "string",
    "How to treat unknown or duplicate fields: Ignore, Warn or Strict.",
);
const ORPHAN_DEPENDENTS: Param = (
    "orphanDependents",
    "boolean",
    "Deprecated: use propagationPolicy.",
);
const PROPAGATION_POLICY: Param = (
    "propagationPolicy",
    "string",
    "Garbage collection of dependents: Orphan, Background or Foreground.",
);

const LIST_PARAMS: &[Param] = &[
    (
        "allowWatchBookmarks",
        "boolean",
        "Request watch events of type BOOKMARK.",
    ),
    (
        "continue",
        "string",
        "Continue token of a previous paginated list call.",
    ),
    (
        "fieldSelector",
        "string",
        "Restrict the returned objects by their fields.",
    ),
    (
        "labelSelector",
        "string",
        "Restrict the returned objects by their labels.",
    ),
    (
        "limit",
        "integer",
        "Maximum number of objects to return in one page.",
    ),
    (
        "resourceVersion",
        "string",
        "Resource version the result must be at least as new as.",
    ),
    (
        "resourceVersionMatch",
        "string",
        "How resourceVersion is applied to list calls.",
    ),
    (
        "sendInitialEvents",
        "boolean",
        "Start a watch with synthetic events for the current state.",
    ),
    (
        "timeoutSeconds",
        "integer",
        "Timeout of the list or watch call.",
    ),
    (
        "watch",
        "boolean",
        "Watch for changes and return them as a stream of events.",
    ),
];
const WRITE_PARAMS: &[Param] = &[
    DRY_RUN,
    (
        "fieldManager",
        "string",
        "Name of the actor making the change, for field ownership.",
    ),
    FIELD_VALIDATION,
];
const PATCH_PARAMS: &[Param] = &[
    DRY_RUN,
    (
        "fieldManager",
        "string",
        "Name of the actor making the change; required for apply patches.",
    ),
    FIELD_VALIDATION,
    (
        "force",
        "boolean",
        "Force an apply patch to take ownership of conflicting fields.",
    ),
];
const DELETE_PARAMS: &[Param] = &[
    DRY_RUN,
    (
        "gracePeriodSeconds",
        "integer",
        "Seconds to wait before the object is deleted.",
    ),
    ORPHAN_DEPENDENTS,
    PROPAGATION_POLICY,
];
const DELETE_COLLECTION_PARAMS: &[Param] = &[
    (
        "continue",
        "string",
        "Continue token of a previous paginated list call.",
    ),
    DRY_RUN,
    (
        "fieldSelector",
        "string",
        "Restrict the deleted objects by their fields.",
    ),
    (
        "gracePeriodSeconds",
        "integer",
        "Seconds to wait before the objects are deleted.",
    ),
    (
        "labelSelector",
        "string",
        "Restrict the deleted objects by their labels.",
    ),
    (
        "limit",
        "integer",
        "Maximum number of objects to delete in one call.",
    ),
    ORPHAN_DEPENDENTS,
    PROPAGATION_POLICY,
    (
        "resourceVersion",
        "string",
        "Resource version the listing must be at least as new as.",
    ),
    (
        "resourceVersionMatch",
        "string",
        "How resourceVersion is applied.",
    ),
    ("timeoutSeconds", "integer", "Timeout of the call."),
];

/// The query parameter every path accepts.
pub(crate) const PRETTY: Param = (
    "pretty",
    "string",
    "If 'true', then the output is pretty printed.",
);

impl Action {
    /// HTTP method, lower case (as OpenAPI path items spell it).
    pub(crate) fn method(self) -> &'static str {
        match self {
            Action::List | Action::ListAll | Action::Read => "get",
            Action::Create => "post",
            Action::Replace => "put",
            Action::Patch => "patch",
            Action::Delete | Action::DeleteCollection => "delete",
        }
    }

    /// `x-kubernetes-action`.
    pub(crate) fn k8s_action(self) -> &'static str {
        match self {
            Action::List | Action::ListAll => "list",
            Action::Create => "post",
            Action::DeleteCollection => "deletecollection",
            Action::Read => "get",
            Action::Replace => "put",
            Action::Patch => "patch",
            Action::Delete => "delete",
        }
    }

    /// Operation-specific query parameters.
    pub(crate) fn params(self) -> &'static [Param] {
        match self {
            Action::List | Action::ListAll => LIST_PARAMS,
            Action::Create | Action::Replace => WRITE_PARAMS,
            Action::Patch => PATCH_PARAMS,
            Action::Delete => DELETE_PARAMS,
            Action::DeleteCollection => DELETE_COLLECTION_PARAMS,
            Action::Read => &[],
        }
    }

    /// Response status codes (all carry the response schema).
    pub(crate) fn status_codes(self) -> &'static [&'static str] {
        match self {
            Action::Create => &["200", "201", "202"],
            Action::Replace | Action::Patch => &["200", "201"],
            Action::Delete => &["200", "202"],
            _ => &["200"],
        }
    }

    pub(super) fn verb(self) -> &'static str {
        match self {
            Action::List | Action::ListAll => "list",
            Action::Create => "create",
            Action::DeleteCollection => "deleteCollection",
            Action::Read => "read",
            Action::Replace => "replace",
            Action::Patch => "patch",
            Action::Delete => "delete",
        }
    }
}

pub(super) const PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];
pub(super) const CR_PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
];
pub(super) const ANY: &[&str] = &["*/*"];
pub(super) const PRODUCES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];
pub(super) const PRODUCES_LIST: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf;stream=watch",
];
pub(super) const CR_PRODUCES: &[&str] = &["application/json", "application/yaml"];
pub(super) const CR_PRODUCES_LIST: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/json;stream=watch",
];
