//! Conformance: bootstrap (filled in by its area).
