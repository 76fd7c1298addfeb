use super::*;

#[test]
fn keeps_short_text_as_it_is_and_long_text_smaller() {
    let short = br#"{"a":1}"#;
    let t = Text::new(short);
    assert_eq!(&*t.json(), short);
    assert_eq!(t.held(), short.len() + 1, "plain, with its tag");

    let long = serde_json::to_vec(&serde_json::json!({
        "items": (0..100).map(|i| serde_json::json!({"name": format!("web-{i}"), "image": "nginx:1.27"})).collect::<Vec<_>>(),
    }))
    .expect("JSON");
    let t = Text::new(&long);
    assert_eq!(&*t.json(), &long[..], "the same text back");
    assert!(
        t.held() * 3 < long.len(),
        "{} of {} bytes",
        t.held(),
        long.len()
    );
}

#[test]
fn text_that_does_not_shrink_is_kept_plain() {
    // Bytes LZ4 cannot find repeats in.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let noise: Vec<u8> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let t = Text::new(&noise);
    assert_eq!(t.held(), noise.len() + 1);
    assert_eq!(&*t.json(), &noise[..]);
}
