//! Schemas of the kinds the hub serves.

pub mod defs;
pub mod lookup;
pub mod patch_meta;
