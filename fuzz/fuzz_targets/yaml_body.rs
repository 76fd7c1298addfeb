//! A request body declared YAML: one document decoded, or refused, never a panic.
#![no_main]
use flotilla_api::request::body::{decode_body, BodyFormat};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = decode_body(BodyFormat::Yaml, data);
});
