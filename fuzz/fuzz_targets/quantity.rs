//! Resource quantities (`1.5Gi`, `250m`, `1e3`): parsed to milli-units or refused, and what is
//! printed parses back to the same value.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(m) = flotilla_apis::quantity::parse_millis(text) {
        let printed = flotilla_apis::quantity::format_millis(m);
        assert_eq!(
            flotilla_apis::quantity::parse_millis(&printed),
            Some(m),
            "{text} -> {printed}"
        );
    }
});
