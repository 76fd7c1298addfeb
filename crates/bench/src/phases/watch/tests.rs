use super::*;

#[test]
fn send_times_are_found_in_event_lines() {
    let compact = format!(
        r#"{{"type":"ADDED","object":{{"metadata":{{"annotations":{{"{SENT}":"12345"}},"managedFields":[{{"fieldsV1":{{"f:metadata":{{"f:annotations":{{"f:{SENT}":{{}}}}}}}}}}]}}}}}}"#
    );
    assert_eq!(sent_time(compact.as_bytes()), Some(12345));
    let spaced = format!(
        r#"{{"type": "ADDED", "object": {{"metadata": {{"annotations": {{"{SENT}": "678"}}}}}}}}"#
    );
    assert_eq!(sent_time(spaced.as_bytes()), Some(678));
    assert_eq!(sent_time(br#"{"type":"BOOKMARK","object":{}}"#), None);
    assert!(is_error(br#"{"type":"ERROR","object":{"code":410}}"#));
}

#[test]
fn lines_split_across_chunks() {
    let mut b = LineBuffer::default();
    assert!(b.push(b"{\"a\"").is_empty());
    assert_eq!(
        b.push(b":1}\n{\"b\":2}\n{"),
        vec![b"{\"a\":1}\n".to_vec(), b"{\"b\":2}\n".to_vec()]
    );
    assert_eq!(b.push(b"}\n"), vec![b"{}\n".to_vec()]);
}
