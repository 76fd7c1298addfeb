//! Label and field selectors. (Interim placeholder until the selector library lands.)
#![allow(missing_docs)]

pub mod label {
    use std::collections::BTreeMap;
    #[derive(Debug)]
    pub struct LabelSelector;
    impl LabelSelector {
        pub fn parse(_s: &str) -> Result<Self, String> {
            Err("label selectors are not supported yet".into())
        }
        pub fn matches(&self, _l: &BTreeMap<String, String>) -> bool {
            true
        }
    }
}

pub mod field {
    #[derive(Debug)]
    pub struct FieldSelector;
    impl FieldSelector {
        pub fn parse(_s: &str) -> Result<Self, String> {
            Err("field selectors are not supported yet".into())
        }
        pub fn fields(&self) -> Vec<&str> {
            Vec::new()
        }
        pub fn matches(&self, _get: impl Fn(&str) -> Option<String>) -> bool {
            true
        }
    }
    pub fn supported_fields(_group: &str, _kind: &str) -> &'static [&'static str] {
        &[]
    }
    pub fn extract(_v: &serde_json::Value, _f: &str) -> Option<String> {
        None
    }
}
