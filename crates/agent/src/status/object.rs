//! Reading an object as the member returned it: its group and kind, numbers in its status, and
//! its `status.conditions`. Health and feedback both read objects they know only as JSON (any
//! kind, any version), so a missing or mistyped field reads as absent rather than failing.

use serde_json::Value;

pub(crate) use flotilla_apis::gvk::group_kind;

/// The integer at JSON pointer `pointer`, if there is one.
pub(crate) fn int(object: &Value, pointer: &str) -> Option<i64> {
    object.pointer(pointer).and_then(Value::as_i64)
}

/// The string at JSON pointer `pointer`, if there is one.
pub(crate) fn text<'a>(object: &'a Value, pointer: &str) -> Option<&'a str> {
    object.pointer(pointer).and_then(Value::as_str)
}

/// `spec.replicas`, which the API server defaults to 1 when it is left out.
pub(crate) fn desired_replicas(object: &Value) -> i64 {
    int(object, "/spec/replicas").unwrap_or(1)
}

/// One entry of `status.conditions`, as the object's controller wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ObjectCondition<'a> {
    /// `True`, `False` or `Unknown`.
    pub status: &'a str,
    /// The machine-readable reason (may be empty: not every controller sets one).
    pub reason: &'a str,
    /// The human-readable message (may be empty).
    pub message: &'a str,
    /// The generation the condition was computed for, when the controller records it.
    pub observed_generation: Option<i64>,
}

impl ObjectCondition<'_> {
    /// Whether the status is `True`.
    pub fn is_true(&self) -> bool {
        self.status == "True"
    }

    /// Whether the status is `False`.
    pub fn is_false(&self) -> bool {
        self.status == "False"
    }

    /// `reason: message`, or whichever of the two is set, for our own messages.
    pub fn explain(&self) -> String {
        match (self.reason, self.message) {
            ("", "") => String::new(),
            (reason, "") => reason.to_owned(),
            ("", message) => message.to_owned(),
            (reason, message) => format!("{reason}: {message}"),
        }
    }
}

/// The condition of type `type_` in `status.conditions`, if the object has one.
pub(crate) fn condition<'a>(object: &'a Value, type_: &str) -> Option<ObjectCondition<'a>> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
        .map(|c| ObjectCondition {
            status: c["status"].as_str().unwrap_or("Unknown"),
            reason: c["reason"].as_str().unwrap_or_default(),
            message: c["message"].as_str().unwrap_or_default(),
            observed_generation: c["observedGeneration"].as_i64(),
        })
}

/// `Err(message)` while the object's controller has not yet seen its latest spec
/// (`status.observedGeneration < metadata.generation`): until it has, the rest of the status
/// describes an older spec and says nothing about the current one. An object without
/// `metadata.generation` (nothing to compare) counts as observed.
pub(crate) fn observed(object: &Value) -> Result<(), String> {
    let Some(generation) = int(object, "/metadata/generation") else {
        return Ok(());
    };
    match int(object, "/status/observedGeneration") {
        Some(seen) if seen >= generation => Ok(()),
        _ => Err(format!(
            "waiting for the controller to observe generation {generation}"
        )),
    }
}
