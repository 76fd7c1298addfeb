use super::*;

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

#[test]
fn hub_admin_kubeconfig() {
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: flotilla\n  cluster:\n    server: https://127.0.0.1:6443/\n    certificate-authority-data: {}\nusers:\n- name: flotilla-admin\n  user:\n    token: abc\ncontexts:\n- name: flotilla\n  context:\n    cluster: flotilla\n    user: flotilla-admin\ncurrent-context: flotilla\n",
        b64("CA PEM")
    );
    let t = parse(&text, Path::new("/")).unwrap();
    assert_eq!(t.server, "https://127.0.0.1:6443");
    assert_eq!(t.ca_pem, b"CA PEM");
    assert_eq!(t.auth, Auth::Token("abc".into()));
}

#[test]
fn current_context_picks_cluster_and_user() {
    let text = format!(
        "clusters:\n- name: a\n  cluster: {{server: 'https://a', certificate-authority-data: {ca}}}\n- name: b\n  cluster: {{server: 'https://b', certificate-authority-data: {ca}}}\nusers:\n- name: ua\n  user: {{token: ta}}\n- name: ub\n  user:\n    client-certificate-data: {cert}\n    client-key-data: {key}\ncontexts:\n- name: ca\n  context: {{cluster: a, user: ua}}\n- name: cb\n  context: {{cluster: b, user: ub}}\ncurrent-context: cb\n",
        ca = b64("CA"),
        cert = b64("CERT"),
        key = b64("KEY"),
    );
    let t = parse(&text, Path::new("/")).unwrap();
    assert_eq!(t.server, "https://b");
    assert_eq!(
        t.auth,
        Auth::ClientCert {
            cert_pem: b"CERT".to_vec(),
            key_pem: b"KEY".to_vec()
        }
    );
}

#[test]
fn files_are_relative_to_the_kubeconfig() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ca.crt"), "CA FILE").unwrap();
    std::fs::write(dir.path().join("token"), "tok\n").unwrap();
    let path = dir.path().join("config");
    std::fs::write(
        &path,
        "clusters:\n- name: c\n  cluster: {server: 'https://x', certificate-authority: ca.crt}\nusers:\n- name: u\n  user: {tokenFile: token}\n",
    )
    .unwrap();
    let t = read(&path).unwrap();
    assert_eq!(t.ca_pem, b"CA FILE");
    assert_eq!(t.auth, Auth::Token("tok".into()));
}

#[test]
fn refusals_say_what_to_do() {
    let cases = [
        ("clusters: []\nusers: []\n", "no cluster"),
        (
            "clusters:\n- name: c\n  cluster: {server: 'https://x'}\nusers:\n- name: u\n  user: {token: t}\n",
            "trusts only the kubeconfig's CA",
        ),
        (
            "clusters:\n- name: c\n  cluster: {server: 'https://x', certificate-authority-data: QQ==}\nusers:\n- name: u\n  user: {exec: {command: gke-auth}}\n",
            "kubectl create token",
        ),
        (
            "clusters: []\ncontexts: []\ncurrent-context: gone\n",
            "\"gone\" is not among the contexts",
        ),
    ];
    for (text, want) in cases {
        let err = format!("{:#}", parse(text, Path::new("/")).unwrap_err());
        assert!(err.contains(want), "{err:?} lacks {want:?}");
    }
}

#[test]
fn secrets_stay_out_of_debug_output() {
    assert_eq!(format!("{:?}", Auth::Token("s3cret".into())), "Token(…)");
}
