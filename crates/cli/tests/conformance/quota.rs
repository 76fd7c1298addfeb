//! Conformance: quota (filled in by its area).
