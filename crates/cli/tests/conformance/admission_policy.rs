//! Conformance: admission_policy (filled in by its area).
