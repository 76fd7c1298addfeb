use super::*;

#[test]
fn names_are_validated_like_kubernetes() {
    assert!(names::dns_subdomain("web-1.example").is_none());
    assert!(names::dns_subdomain("Web").is_some());
    assert!(names::dns_subdomain("-a").is_some());
    assert!(names::dns_label("a.b").is_some());
    assert!(names::dns_label(&"a".repeat(64)).is_some());
    assert!(names::path_segment("system:admin").is_none());
    assert!(names::path_segment("a/b").is_some());
}
