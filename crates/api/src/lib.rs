//! The hub API server.
