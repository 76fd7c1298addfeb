use super::*;

#[test]
fn generated_once_then_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(FILE_NAME);
    let first = load_or_generate(&path).unwrap();
    let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the key is private");
    assert!(!path.with_extension("pem.tmp").exists());
    let again = load_or_generate(&path).unwrap();
    assert_eq!(
        first.key_id(),
        again.key_id(),
        "the same key after a restart"
    );
}

#[test]
fn a_bad_key_file_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(FILE_NAME);
    fs::write(&path, "not a key").unwrap();
    let e = load_or_generate(&path).unwrap_err();
    assert!(
        e.message.contains(FILE_NAME) && e.message.contains("remove the file"),
        "{}",
        e.message
    );
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "not a key",
        "never overwritten"
    );
}
