use super::*;

#[tokio::test]
async fn an_oversized_body_is_refused_in_kube_apiservers_words() {
    let dir = tempfile::tempdir().unwrap();
    let api = Api::for_tests(dir.path()).await;
    let body = vec![b' '; crate::request::body::MAX_BODY + 1];
    let req = Request::post("/api/v1/namespaces/default/configmaps")
        .header(http::header::AUTHORIZATION, "Bearer test")
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Body::from(body))
        .unwrap();
    let resp = handle(api, req).await;
    assert_eq!(resp.status(), 413);
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let status: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(status["reason"], "RequestEntityTooLarge");
    assert_eq!(status["code"], 413);
    assert_eq!(
        status["message"],
        "Request entity too large: limit is 3145728"
    );
}
