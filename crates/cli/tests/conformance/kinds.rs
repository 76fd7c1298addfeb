//! Conformance: kinds (filled in by its area).
