//! Label and field selector strings as they come in a query: parsed or refused, and a parsed
//! label selector prints to a string that parses again.
#![no_main]
use flotilla_api::selector::field::FieldSelector;
use flotilla_api::selector::label::LabelSelector;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(s) = LabelSelector::parse(text) {
        let printed = s.to_string();
        LabelSelector::parse(&printed).expect("a printed selector parses again");
    }
    let _ = FieldSelector::parse(text);
});
