use super::*;

#[test]
fn made_up_methods_share_one_series() {
    let metrics = Metrics::default();
    for method in ["GET", "PATCH", "FROB", "X1", "get", "BREW"] {
        metrics.observe(method, 401, Duration::from_millis(1));
    }
    let text = metrics.render();
    let series: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("apiserver_request_total{"))
        .collect();
    assert_eq!(series.len(), 3, "{series:?}");
    assert!(
        text.contains(r#"apiserver_request_total{verb="other",code="401"} 4"#),
        "{text}"
    );
    assert!(!text.contains("FROB") && !text.contains("BREW"), "{text}");
}
