use super::*;

#[test]
fn keeps_short_text_as_it_is_and_long_text_smaller() {
    let short = br#"{"a":1}"#;
    let t = Text::new(short, None);
    assert_eq!(&*t.json(), short);
    assert_eq!(t.held(), short.len() + 1, "plain, with its tag");

    let long = serde_json::to_vec(&serde_json::json!({
        "items": (0..100).map(|i| serde_json::json!({"name": format!("web-{i}"), "image": "nginx:1.27"})).collect::<Vec<_>>(),
    }))
    .expect("JSON");
    let t = Text::new(&long, None);
    assert_eq!(&*t.json(), &long[..], "the same text back");
    assert!(
        t.held() * 3 < long.len(),
        "{} of {} bytes",
        t.held(),
        long.len()
    );
}

#[test]
fn a_text_packed_with_a_dictionary_reads_back_with_it() {
    let text = |i: usize| {
        serde_json::to_vec(&serde_json::json!({
            "metadata": {"name": format!("web-{i}"), "labels": {"app": "web", "tier": "front"}},
            "spec": {"containers": (0..8).map(|c| serde_json::json!({"name": format!("c{c}"),
                "image": "registry.example.com/shop/web:1.27.3"}))
                .collect::<Vec<_>>()},
        }))
        .expect("JSON")
    };
    let mut dict = Dictionary::default();
    let d = (0..=flotilla_compress::SAMPLES)
        .find_map(|i| dict.learn(&text(i)))
        .expect("learned");
    let t = Text::new(&text(9), Some(d));
    assert_eq!(&*t.json(), &text(9)[..]);
    assert!(
        t.held() < text(9).len() / 2,
        "{} of {}",
        t.held(),
        text(9).len()
    );
}
