//! Schemas of the kinds the hub serves.

pub mod lookup;
