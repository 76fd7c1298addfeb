//! Conformance: access_reviews (filled in by its area).
