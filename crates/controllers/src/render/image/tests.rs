use super::*;

const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// image, registry, repository, tag, digest
type Parsed<'a> = (
    &'a str,
    Option<&'a str>,
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
);

/// image, component, operator, value, result (`Err`: refused)
type Case<'a> = (
    &'a str,
    ImageComponent,
    OverriderOperator,
    Option<&'a str>,
    Result<String, ()>,
);

#[test]
fn parses() {
    let d = Some(DIGEST);
    let cases: [Parsed; 8] = [
        ("nginx", None, "nginx", None, None),
        ("nginx:1.25", None, "nginx", Some("1.25"), None),
        ("library/nginx:1.25", None, "library/nginx", Some("1.25"), None),
        ("docker.io/library/nginx", Some("docker.io"), "library/nginx", None, None),
        ("localhost:5000/app:1", Some("localhost:5000"), "app", Some("1"), None),
        ("localhost/app", Some("localhost"), "app", None, None),
        ("ghcr.io/org/app:1@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", Some("ghcr.io"), "org/app", Some("1"), d),
        ("app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", None, "app", None, d),
    ];
    for (image, registry, repository, tag, digest) in cases {
        let parsed = ImageRef::parse(image).unwrap();
        let want = ImageRef {
            registry: registry.map(str::to_owned),
            repository: repository.to_owned(),
            tag: tag.map(str::to_owned),
            digest: digest.map(str::to_owned),
        };
        assert_eq!(parsed, want, "{image}");
        assert_eq!(parsed.to_string(), image, "{image} round trip");
    }
    for bad in ["", "app:", "ghcr.io/", "app@latest", "a//b"] {
        assert!(ImageRef::parse(bad).is_err(), "{bad:?} should not parse");
    }
}

#[test]
fn overrides() {
    use ImageComponent::{Registry, Repository, Tag};
    use OverriderOperator::{Add, Remove, Replace};
    let pinned = format!("ghcr.io/org/app:1@{DIGEST}");
    let cases: Vec<Case> = vec![
        (
            "nginx:1.25",
            Registry,
            Add,
            Some("registry.example.com"),
            Ok("registry.example.com/nginx:1.25".into()),
        ),
        (
            "fictional.registry.us/nginx",
            Registry,
            Add,
            Some(".cn"),
            Ok("fictional.registry.us.cn/nginx".into()),
        ),
        (
            "docker.io/library/nginx:1",
            Registry,
            Remove,
            None,
            Ok("library/nginx:1".into()),
        ),
        ("nginx", Registry, Remove, None, Ok("nginx".into())),
        (
            "docker.io/nginx",
            Registry,
            Replace,
            Some("localhost:5000"),
            Ok("localhost:5000/nginx".into()),
        ),
        (
            "r.io/app:1",
            Repository,
            Replace,
            Some("team/app"),
            Ok("r.io/team/app:1".into()),
        ),
        (
            "r.io/app:1",
            Repository,
            Add,
            Some("-debug"),
            Ok("r.io/app-debug:1".into()),
        ),
        ("r.io/app:1", Repository, Remove, None, Err(())),
        (
            "nginx:1.25",
            Tag,
            Replace,
            Some("1.27"),
            Ok("nginx:1.27".into()),
        ),
        (
            "nginx:1.25",
            Tag,
            Add,
            Some("-alpine"),
            Ok("nginx:1.25-alpine".into()),
        ),
        ("nginx", Tag, Add, Some("1.27"), Ok("nginx:1.27".into())),
        (
            &pinned,
            Tag,
            Replace,
            Some("2"),
            Ok("ghcr.io/org/app:2".into()),
        ),
        (&pinned, Tag, Remove, None, Ok("ghcr.io/org/app".into())),
        (
            "app:1",
            Tag,
            Replace,
            Some(DIGEST),
            Ok(format!("app@{DIGEST}")),
        ),
        ("app:1", Tag, Replace, None, Err(())),
        ("app:1", Tag, Replace, Some("a/b"), Err(())),
    ];
    for (image, component, operator, value, want) in cases {
        let overrider = ImageOverrider {
            predicate: None,
            component,
            operator,
            value: value.map(str::to_owned),
        };
        let mut parsed = ImageRef::parse(image).unwrap();
        let got = parsed
            .apply(&overrider)
            .map(|()| parsed.to_string())
            .map_err(|_| ());
        assert_eq!(got, want, "{image} {component:?} {operator:?} {value:?}");
    }
}
