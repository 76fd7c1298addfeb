//! Conformance: lists (filled in by its area).
