//! Conformance: writes (filled in by its area).
