//! Property tests of round trips, run in CI (`cargo test`): what the fuzz targets check on
//! arbitrary bytes (`scripts/fuzz`), checked here on generated well-formed inputs. A label
//! selector printed parses back to the same selector; a quantity printed reads back the same
//! value; a merge patch applied twice changes nothing more.

use flotilla_api::selector::label::LabelSelector;
use proptest::prelude::*;
use serde_json::Value;

/// A label key: an optional DNS-subdomain prefix and a name.
fn key() -> impl Strategy<Value = String> {
    (
        proptest::option::of("[a-z]([a-z0-9-]{0,10}[a-z0-9])?(\\.[a-z]{1,5}){0,2}"),
        "[A-Za-z0-9]([A-Za-z0-9_.-]{0,20}[A-Za-z0-9])?",
    )
        .prop_map(|(prefix, name)| match prefix {
            Some(p) => format!("{p}/{name}"),
            None => name,
        })
}

/// A label value (possibly empty).
fn value() -> impl Strategy<Value = String> {
    "([A-Za-z0-9]([A-Za-z0-9_.-]{0,15}[A-Za-z0-9])?)?"
}

/// One requirement, as text.
fn requirement() -> impl Strategy<Value = String> {
    (key(), 0..7usize, proptest::collection::vec(value(), 1..4)).prop_map(
        |(k, op, values)| match op {
            0 => format!("{k}={}", values[0]),
            1 => format!("{k}=={}", values[0]),
            2 => format!("{k}!={}", values[0]),
            3 => format!("{k} in ({})", values.join(",")),
            4 => format!("{k} notin ({})", values.join(",")),
            5 => k,
            _ => format!("!{k}"),
        },
    )
}

/// Any JSON value a few levels deep.
fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::from),
        "[a-z]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-e]", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_printed_label_selector_parses_to_the_same(reqs in proptest::collection::vec(requirement(), 1..5)) {
        let text = reqs.join(",");
        // Some generated texts are refused, as kube-apiserver's parser refuses them (`a in
        // (,,)`): the property is about those that parse.
        let parsed = LabelSelector::parse(&text);
        prop_assume!(parsed.is_ok());
        let parsed = parsed.unwrap();
        let printed = parsed.to_string();
        let again = LabelSelector::parse(&printed)
            .map_err(|e| TestCaseError::fail(format!("{printed:?} (from {text:?}): {e}")))?;
        prop_assert_eq!(&again, &parsed, "{} -> {}", text, printed);
        prop_assert_eq!(again.to_string(), printed);
    }

    #[test]
    fn a_printed_quantity_reads_back_the_same(millis in -(1i64 << 50)..(1i64 << 50)) {
        let printed = flotilla_apis::quantity::format_millis(millis);
        prop_assert_eq!(flotilla_apis::quantity::parse_millis(&printed), Some(millis), "{}", printed);
    }

    #[test]
    fn a_merge_patch_applied_twice_changes_nothing_more(doc in json(), patch in json()) {
        if let Ok(once) = flotilla_api::patch::merge_patch(&doc, &patch) {
            let twice = flotilla_api::patch::merge_patch(&once, &patch)
                .map_err(|e| TestCaseError::fail(format!("applies once, not twice: {e:?}")))?;
            prop_assert_eq!(once, twice);
        }
    }
}
