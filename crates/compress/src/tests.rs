use super::*;

/// Objects of one shape with different names, uids and annotation values.
fn object(i: usize) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "metadata": {"name": format!("web-{i}"), "uid": format!("{:032x}", i * 7_919_104_729),
            "annotations": (0..20).map(|k| (format!("example.com/key-{k}"), serde_json::Value::from(format!("value {k} of {}", k * 31))))
                .collect::<serde_json::Map<_, _>>()},
        "spec": {"containers": (0..4).map(|c| serde_json::json!({"name": format!("c{c}"),
            "image": "registry.example.com/shop/web:1.27.3", "ports": [{"containerPort": 8080}]}))
            .collect::<Vec<_>>()},
    }))
    .expect("JSON")
}

#[test]
fn packed_text_unpacks_to_itself_and_says_its_length() {
    let text = object(1);
    let packed = pack(&text, None).expect("JSON shrinks");
    assert!(
        packed.len() * 2 < text.len(),
        "{} of {}",
        packed.len(),
        text.len()
    );
    assert_eq!(unpack(&packed, None).expect("unpacks"), text);
    assert_eq!(unpacked_len(&packed), text.len());
    assert_eq!(unpacked_len(b"ab"), 0, "too short for a prefix");
}

#[test]
fn text_that_does_not_shrink_by_a_tenth_is_not_packed() {
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
    assert!(pack(&noise, None).is_none());
}

#[test]
fn the_dictionary_is_learned_from_the_first_objects_then_fixed() {
    let mut dict = Dictionary::default();
    for _ in 0..SAMPLES {
        assert!(dict.learn(b"{\"sample\":1}").is_none(), "learning");
    }
    let learned = dict.learn(b"{\"other\":2}").expect("learned");
    assert_eq!(&learned[..], "{\"sample\":1}".repeat(SAMPLES).as_bytes());
    let again = dict.learn(b"{\"third\":3}").expect("kept");
    assert!(Arc::ptr_eq(&learned, &again), "fixed once learned");
}

#[test]
fn a_dictionary_holds_at_most_its_limit() {
    let mut dict = Dictionary::default();
    assert!(dict.learn(&vec![b'x'; DICTIONARY_MOST + 10]).is_none());
    let learned = dict.learn(b"{}").expect("full after one large sample");
    assert_eq!(learned.len(), DICTIONARY_MOST);
}

#[test]
fn objects_compress_against_a_dictionary_of_their_kind() {
    let mut dict = Dictionary::default();
    for i in 0..SAMPLES {
        assert!(dict.learn(&object(i)).is_none(), "learning");
    }
    let d = dict.learn(&object(9)).expect("learned");
    let with = pack(&object(9), Some(&d)).expect("shrinks");
    let without = pack(&object(9), None).expect("shrinks");
    assert_eq!(unpack(&with, Some(&d)).expect("unpacks"), object(9));
    assert!(
        with.len() * 2 < without.len(),
        "{} bytes with the dictionary, {} without",
        with.len(),
        without.len()
    );
}
