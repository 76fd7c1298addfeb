use super::*;

fn kubeconfig(user: &str, cluster: &str) -> Kubeconfig {
    let text = format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: m\n\
         contexts: [{{name: m, context: {{cluster: m, user: u}}}}]\n\
         clusters: [{{name: m, cluster: {{server: 'https://127.0.0.1:1', {cluster}}}}}]\n\
         users: [{{name: u, user: {{{user}}}}}]\n"
    );
    Kubeconfig::from_yaml(&text).expect("a kubeconfig")
}

/// (user fields, cluster fields, refused because of)
#[test]
fn only_inline_credentials() {
    let ca = "certificate-authority-data: Zm9v";
    let cases = [
        ("token: abc", ca, None),
        ("client-certificate-data: Zm9v, client-key-data: YmFy", ca, None),
        ("username: a, password: b", ca, None),
        (
            "exec: {apiVersion: client.authentication.k8s.io/v1, command: sh, args: [-c, 'touch /tmp/x']}",
            ca,
            Some("exec plugin"),
        ),
        (
            "auth-provider: {name: oidc, config: {idp-issuer-url: 'https://x'}}",
            ca,
            Some("auth provider"),
        ),
        ("tokenFile: /etc/flotilla/token", ca, Some("tokenFile")),
        ("client-certificate: /a.crt, client-key-data: YmFy", ca, Some("client-certificate")),
        ("client-certificate-data: Zm9v, client-key: /a.key", ca, Some("client-key")),
        ("token: abc", "certificate-authority: /etc/ssl/ca.crt", Some("certificate-authority")),
    ];
    for (user, cluster, want) in cases {
        let got = refused(&kubeconfig(user, cluster));
        match want {
            None => assert_eq!(got, None, "{user} / {cluster}"),
            Some(what) => {
                let message = got.unwrap_or_default();
                assert!(message.contains(what), "{user}: {message}");
                assert!(
                    message.contains("inline") || message.contains("-data"),
                    "{message}"
                );
            }
        }
    }
}
