use std::os::unix::fs::PermissionsExt;

use super::sealed::{self, IdentityKey, OpenError, VERSION};
use super::*;

const TEXT: &[u8] = b"correct horse battery staple, 32+ bytes of it";

fn key(text: &[u8]) -> IdentityKey {
    IdentityKey::from_text(text, "the test").unwrap()
}

#[test]
fn seal_then_open_round_trips_with_a_fresh_nonce_each_time() {
    let k = key(TEXT);
    let a = sealed::seal(&k, RECORD, b"the secret").unwrap();
    let b = sealed::seal(&k, RECORD, b"the secret").unwrap();
    assert_eq!(a[0], VERSION);
    assert_ne!(a, b, "two seals share a nonce");
    assert!(
        !a.windows(10).any(|w| w == b"the secret"),
        "plaintext visible"
    );
    assert_eq!(sealed::open(&k, RECORD, &a).unwrap(), b"the secret");
    assert_eq!(sealed::open(&k, RECORD, &b).unwrap(), b"the secret");
    // Surrounding whitespace (a key file's newline) derives the same key.
    let with_newline = [TEXT, b"\n"].concat();
    assert_eq!(
        sealed::open(&key(&with_newline), RECORD, &a).unwrap(),
        b"the secret"
    );
}

#[test]
fn another_key_is_refused() {
    let a = sealed::seal(&key(TEXT), RECORD, b"the secret").unwrap();
    let other = key(b"another key of thirty-two bytes or more!!");
    assert_eq!(sealed::open(&other, RECORD, &a), Err(OpenError::WrongKey));
    let err = Identity::open(&other, &a).unwrap_err().to_string();
    assert!(err.contains("--identity-key-file"), "{err}");
    assert!(err.contains("FLOTILLA_IDENTITY_KEY"), "{err}");
}

#[test]
fn tampering_is_refused() {
    let k = key(TEXT);
    let a = sealed::seal(&k, RECORD, b"the secret").unwrap();
    for i in 1..a.len() {
        let mut t = a.clone();
        t[i] ^= 0x01;
        assert_eq!(
            sealed::open(&k, RECORD, &t),
            Err(OpenError::WrongKey),
            "byte {i} flipped"
        );
    }
    let mut newer = a.clone();
    newer[0] = VERSION + 1;
    assert_eq!(
        sealed::open(&k, RECORD, &newer),
        Err(OpenError::UnknownVersion(VERSION + 1))
    );
    assert_eq!(
        sealed::open(&k, RECORD, &a[..a.len() - 1]),
        Err(OpenError::WrongKey)
    );
    assert_eq!(
        sealed::open(&k, RECORD, &a[..20]),
        Err(OpenError::Truncated)
    );
    assert_eq!(sealed::open(&k, RECORD, &[]), Err(OpenError::Truncated));
    // Sealed for one record, it does not open as another.
    assert_eq!(
        sealed::open(&k, "/flotilla/other", &a),
        Err(OpenError::WrongKey)
    );
}

#[test]
fn short_empty_and_doubly_given_keys_are_refused() {
    let e = IdentityKey::from_text(b"  \n", "X")
        .unwrap_err()
        .to_string();
    assert!(e.contains("empty"), "{e}");
    let e = IdentityKey::from_text(&[b'k'; 31], "X")
        .unwrap_err()
        .to_string();
    assert!(e.contains("31 bytes"), "{e}");
    assert!(IdentityKey::from_text(&[b'k'; 32], "X").is_ok());

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("key");
    fs::write(&file, "short\n").unwrap();
    let e = IdentityKey::from_args(Some(&file), None)
        .unwrap_err()
        .to_string();
    assert!(e.contains(&file.display().to_string()), "{e}");
    let e = IdentityKey::from_args(Some(&file), Some(TEXT))
        .unwrap_err()
        .to_string();
    assert!(e.contains("not both"), "{e}");
    assert!(IdentityKey::from_args(None, None).unwrap().is_none());
    assert!(IdentityKey::from_args(None, Some(TEXT)).unwrap().is_some());
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Two data directories on one (real, SQLite) store: the first stores its identity, the second
/// loads it over its own files; a wrong key writes nothing.
#[tokio::test]
async fn replicas_share_the_first_ones_identity() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&format!("sqlite:{}", tmp.path().join("db").display()))
        .await
        .unwrap();
    let (one, two, three) = (
        tmp.path().join("one"),
        tmp.path().join("two"),
        tmp.path().join("three"),
    );
    for d in [&one, &two, &three] {
        fs::create_dir(d).unwrap();
    }
    let k = key(TEXT);
    let issuer = establish(&store, &k, &one, "https://one:6443")
        .await
        .unwrap();
    assert_eq!(issuer, "https://one:6443");
    let record = store.get(RECORD).await.unwrap().unwrap();
    let token = fs::read_to_string(one.join(pki::ADMIN_TOKEN)).unwrap();
    assert!(!record
        .value
        .windows(token.len())
        .any(|w| w == token.as_bytes()));

    // The second has credentials of its own already: they are replaced.
    pki::ensure_authority(&two).unwrap();
    let issuer = establish(&store, &k, &two, "https://two:6443")
        .await
        .unwrap();
    assert_eq!(issuer, "https://one:6443");
    for (name, secret) in [
        (pki::CA_CERT, false),
        (pki::CA_KEY, true),
        (pki::ADMIN_TOKEN, true),
        (signing_key::FILE_NAME, true),
    ] {
        assert_eq!(
            fs::read(one.join(name)).unwrap(),
            fs::read(two.join(name)).unwrap(),
            "{name}"
        );
        if secret {
            assert_eq!(mode(&two.join(name)), 0o600, "{name}");
        }
    }
    // The first, restarted, keeps what it has.
    assert_eq!(
        establish(&store, &k, &one, "https://elsewhere")
            .await
            .unwrap(),
        "https://one:6443"
    );

    let wrong = key(b"not the key the first replica was given!");
    let e = establish(&store, &wrong, &three, "https://three")
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("identity key"), "{e}");
    assert_eq!(fs::read_dir(&three).unwrap().count(), 0, "wrote files");
}

/// On a store holding a shared identity, a replica without the key, or with another issuer, is
/// refused; with neither a key nor a shared identity, the data directory's identity stays.
#[tokio::test]
async fn settle_refuses_a_replica_that_would_not_share() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&format!("sqlite:{}", tmp.path().join("db").display()))
        .await
        .unwrap();
    let dir = tmp.path().join("d");
    fs::create_dir(&dir).unwrap();
    // `postgres` is what decides; the record and its reads are the same on SQLite.
    let no_key = settle(&store, true, None, &dir, "https://me", None).await;
    assert_eq!(no_key.unwrap(), "https://me");
    let k = key(TEXT);
    let shared = settle(
        &store,
        true,
        Some(&k),
        &dir,
        "https://me",
        Some("https://lb"),
    )
    .await
    .unwrap();
    assert_eq!(shared, "https://lb");
    let e = settle(&store, true, None, &dir, "https://me", None)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("--identity-key-file"), "{e}");
    let e = settle(
        &store,
        true,
        Some(&k),
        &dir,
        "https://me",
        Some("https://other"),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(e.contains("https://lb"), "{e}");
    assert_eq!(
        settle(&store, true, Some(&k), &dir, "https://me", None)
            .await
            .unwrap(),
        "https://lb"
    );
    // SQLite: nothing shared, the own issuer.
    assert_eq!(
        settle(&store, false, Some(&k), &dir, "https://me", None)
            .await
            .unwrap(),
        "https://me"
    );
}

/// Replicas starting at once on an empty store: one stores its identity, the others lose the
/// create and take the winner's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_starting_together_end_with_one_identity() {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&format!("sqlite:{}", tmp.path().join("db").display()))
        .await
        .unwrap();
    let mut starts = Vec::new();
    for i in 0..4 {
        let dir = tmp.path().join(format!("r{i}"));
        fs::create_dir(&dir).unwrap();
        let store = store.clone();
        starts.push(tokio::spawn(async move {
            let issuer = establish(&store, &key(TEXT), &dir, &format!("https://r{i}")).await;
            (dir, issuer.unwrap())
        }));
    }
    let mut done = Vec::new();
    for start in starts {
        done.push(start.await.unwrap());
    }
    let stored =
        Identity::open(&key(TEXT), &store.get(RECORD).await.unwrap().unwrap().value).unwrap();
    for (dir, issuer) in done {
        assert_eq!(issuer, stored.issuer);
        for (name, want) in [
            (signing_key::FILE_NAME, &stored.signing_key),
            (pki::CA_KEY, &stored.ca_key),
            (pki::CA_CERT, &stored.ca_cert),
            (pki::ADMIN_TOKEN, &stored.admin_token),
        ] {
            assert_eq!(&fs::read_to_string(dir.join(name)).unwrap(), want, "{name}");
        }
    }
}
