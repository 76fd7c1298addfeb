use super::*;
use http::Method;

fn info(method: Method, path: &str) -> RequestInfo {
    RequestInfo::parse(&method, path, false)
}

#[test]
fn requests_become_authorizer_attributes() {
    let u = UserInfo::service_account("team", "bot", "u1");
    let cases = [
        (
            info(Method::GET, "/api/v1/namespaces/team/secrets/db"),
            "secrets \"db\" is forbidden: User \"system:serviceaccount:team:bot\" cannot get \
             resource \"secrets\" in API group \"\" in the namespace \"team\"",
            json!({"name": "db", "kind": "secrets"}),
        ),
        (
            info(Method::GET, "/apis/apps/v1/deployments"),
            "deployments.apps is forbidden: User \"system:serviceaccount:team:bot\" cannot \
             list resource \"deployments\" in API group \"apps\" at the cluster scope",
            json!({"group": "apps", "kind": "deployments"}),
        ),
        (
            info(
                Method::PUT,
                "/apis/apps/v1/namespaces/team/deployments/web/scale",
            ),
            "deployments.apps \"web\" is forbidden: User \"system:serviceaccount:team:bot\" \
             cannot update resource \"deployments/scale\" in API group \"apps\" in the \
             namespace \"team\"",
            json!({"name": "web", "group": "apps", "kind": "deployments"}),
        ),
        (
            info(Method::POST, "/version"),
            "forbidden: User \"system:serviceaccount:team:bot\" cannot post path \"/version\"",
            json!({}),
        ),
    ];
    for (info, message, want_details) in cases {
        let attrs = attributes(&u, &info);
        assert_eq!(forbidden_status_message(&attrs, ""), message);
        assert_eq!(details(&attrs), want_details, "{message}");
    }
}
