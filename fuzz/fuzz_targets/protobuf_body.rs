//! A request body declared Kubernetes protobuf (the `k8s\0` envelope): decoded or refused.
#![no_main]
use flotilla_api::request::body::{decode_body, BodyFormat};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = decode_body(BodyFormat::Protobuf, data);
});
