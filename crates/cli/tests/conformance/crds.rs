//! Conformance: crds (filled in by its area).
