//! Hostile input: protobuf recursion, deep JSON and YAML, JSON patch bombs, metrics labels and
//! connection limits. Requests kubectl would not send go through [`raw`], a blocking rustls
//! client; protobuf bodies are built by [`proto`].

mod bodies;
mod connections;
mod matrix;
mod patches;
mod proto;
mod raw;
