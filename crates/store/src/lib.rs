//! Storage for the hub.
