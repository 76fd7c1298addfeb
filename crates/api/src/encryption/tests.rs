use bytes::Bytes;

use super::*;

const KEY: &str = "/registry/core/secrets/default/db";
const PLAIN: &[u8] = br#"{"kind":"Secret","data":{"password":"aHVudGVyMg=="}}"#;

fn config(providers: &str) -> Encryption {
    let text = format!(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- \
         resources: [secrets, '*.apps']\n  providers:\n{providers}"
    );
    config::parse(&text).unwrap_or_else(|e| panic!("{e}"))
}

/// base64 of `n` bytes of `b`.
fn secret(b: u8, n: usize) -> String {
    base64::Engine::encode(&base64::engine::general_purpose::STANDARD, vec![b; n])
}

fn provider(kind: &str, keys: &[(&str, String)]) -> String {
    let keys: String = keys
        .iter()
        .map(|(n, s)| format!("      - {{name: {n}, secret: '{s}'}}\n"))
        .collect();
    format!("  - {kind}:\n      keys:\n{keys}")
}

#[test]
fn every_provider_seals_and_opens_and_hides_the_data() {
    for (kind, size) in [
        ("aesgcm", 32),
        ("aesgcm", 16),
        ("aescbc", 32),
        ("secretbox", 32),
    ] {
        let enc = config(&provider(kind, &[("k1", secret(7, size))]));
        assert!(enc.seals(KEY) && enc.is_enabled());
        let sealed = enc.seal(KEY, Bytes::from_static(PLAIN));
        let prefix = format!("k8s:enc:{kind}:v1:k1:");
        assert!(sealed.starts_with(prefix.as_bytes()), "{kind}");
        assert!(
            !sealed.windows(8).any(|w| w == b"aHVudGVy")
                && !sealed.windows(6).any(|w| w == b"Secret"),
            "{kind} shows the data"
        );
        assert_eq!(enc.open(KEY, sealed.clone()).unwrap(), PLAIN, "{kind}");
        // Two seals of one value differ (a fresh nonce or IV each time).
        assert_ne!(enc.seal(KEY, Bytes::from_static(PLAIN)), sealed, "{kind}");
        // A flipped byte does not open as something else (aescbc is not authenticated: it
        // may fail or give garbage, as kube's; the authenticated ones must fail).
        let mut bad = sealed.to_vec();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        if kind != "aescbc" {
            assert!(
                enc.open(KEY, bad.into()).is_err(),
                "{kind} opened a tampered value"
            );
        }
    }
}

#[test]
fn aesgcm_binds_the_value_to_its_key() {
    let enc = config(&provider("aesgcm", &[("k1", secret(1, 32))]));
    let sealed = enc.seal(KEY, Bytes::from_static(PLAIN));
    let err = enc
        .open("/registry/core/secrets/default/other", sealed)
        .unwrap_err();
    assert!(err.contains("does not open"), "{err}");
}

#[test]
fn rotation_reads_old_keys_and_writes_with_the_first() {
    let old = config(&provider("aesgcm", &[("old", secret(1, 32))]));
    let sealed_old = old.seal(KEY, Bytes::from_static(PLAIN));
    let rotated = config(&provider(
        "aesgcm",
        &[("new", secret(2, 32)), ("old", secret(1, 32))],
    ));
    assert!(
        rotated.is_stale(KEY, &sealed_old),
        "sealed with the old key"
    );
    assert!(
        rotated.is_stale(KEY, PLAIN),
        "clear where the first provider seals"
    );
    assert_eq!(rotated.open(KEY, sealed_old).unwrap(), PLAIN);
    let sealed_new = rotated.seal(KEY, Bytes::from_static(PLAIN));
    assert!(!rotated.is_stale(KEY, &sealed_new));
    assert!(!Encryption::default().is_stale(KEY, PLAIN));
    assert!(sealed_new.starts_with(b"k8s:enc:aesgcm:v1:new:"));
    // Without the old key, the old value is an error that names the key.
    let err = config(&provider("secretbox", &[("other", secret(3, 32))]))
        .open(KEY, old.seal(KEY, Bytes::from_static(PLAIN)))
        .unwrap_err();
    assert!(
        err.contains("\"old\"") && !err.contains("aHVudGVy"),
        "{err}"
    );
}

#[test]
fn identity_first_writes_clear_and_reads_sealed() {
    let both = format!(
        "  - identity: {{}}\n{}",
        provider("secretbox", &[("k1", secret(5, 32))])
    );
    let enc = config(&both);
    assert!(!enc.seals(KEY));
    assert_eq!(enc.seal(KEY, Bytes::from_static(PLAIN)), PLAIN);
    let sealed = config(&provider("secretbox", &[("k1", secret(5, 32))]))
        .seal(KEY, Bytes::from_static(PLAIN));
    assert_eq!(enc.open(KEY, sealed).unwrap(), PLAIN);
}

#[test]
fn only_the_named_resources_are_sealed_and_clear_values_still_read() {
    let enc = config(&provider("secretbox", &[("k1", secret(5, 32))]));
    assert!(!enc.seals("/registry/core/configmaps/default/x"));
    assert!(enc.seals("/registry/apps/deployments/default/x"), "*.apps");
    assert!(!enc.seals("/registry/batch/jobs/default/x"));
    assert_eq!(enc.open(KEY, Bytes::from_static(PLAIN)).unwrap(), PLAIN);
    let default = Encryption::secrets_with("default", &[9; 32]);
    assert!(default.seals(KEY) && !default.seals("/registry/core/configmaps/a/b"));
    assert!(!Encryption::default().is_enabled());
}

#[test]
fn bad_configurations_say_what_to_fix() {
    let cases = [
        (
            provider("aesgcm", &[("k1", secret(1, 24))]),
            "24 bytes; it must be 16 or 32",
        ),
        (
            provider("aescbc", &[("k1", "not base64!".into())]),
            "not base64",
        ),
        (
            provider("secretbox", &[("a", secret(1, 32)), ("a", secret(2, 32))]),
            "given twice",
        ),
        ("  - kms: {name: x}\n".into(), "kms is not supported"),
        ("  - {}\n".into(), "exactly one of"),
    ];
    for (providers, want) in cases {
        let text = format!(
            "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- \
             resources: [secrets]\n  providers:\n{providers}"
        );
        let err = config::parse(&text).map(|_| ()).unwrap_err();
        assert!(err.0.contains(want), "{err} lacks {want}");
        assert!(err.0.contains("resources[0].providers[0]"), "{err}");
    }
    let err = config::parse("apiVersion: v1\nkind: ConfigMap\n")
        .map(|_| ())
        .unwrap_err();
    assert!(err.0.contains("expected EncryptionConfiguration"), "{err}");
}
