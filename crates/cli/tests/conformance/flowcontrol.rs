//! Conformance: flowcontrol (filled in by its area).
