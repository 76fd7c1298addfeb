use super::*;

#[test]
fn env_files_parse_into_members() {
    let dir = std::env::temp_dir().join(format!("testkit-env-{}", std::process::id()));
    let m1 = dir.join("member-1");
    std::fs::create_dir_all(&m1).unwrap();
    std::fs::write(
        m1.join("env"),
        "NAME=member-1\nPORT=23456\nSERVER=https://127.0.0.1:23456\nREGION=eu\nZONE=eu-a\nAPISERVER_PID=\n",
    )
    .unwrap();
    let members = read_members(&dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        members,
        vec![Member {
            name: "member-1".into(),
            server: "https://127.0.0.1:23456".into(),
            port: 23456,
            region: "eu".into(),
            zone: "eu-a".into(),
            kubeconfig: m1.join("kubeconfig"),
        }]
    );
}

#[test]
fn a_directory_without_members_is_an_error() {
    let err = read_members(Path::new("/nonexistent/flotilla")).unwrap_err();
    assert!(err.to_string().contains("no member-1/env"), "{err}");
}
