use std::collections::BTreeMap;

use super::*;

const CA: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

fn map(data: &[(&str, &str)], annotations: &[(&str, &str)]) -> ConfigMap {
    let owned = |kv: &[(&str, &str)]| -> BTreeMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(ROOT_CA_CONFIG_MAP.into()),
            resource_version: Some("7".into()),
            annotations: Some(owned(annotations)),
            ..ObjectMeta::default()
        },
        data: Some(owned(data)),
        ..ConfigMap::default()
    }
}

#[test]
fn root_ca_config_map_as_kube_keeps_it() {
    let good = map(
        &[(ROOT_CA_KEY, CA)],
        &[(DESCRIPTION_ANNOTATION, DESCRIPTION)],
    );
    // (current, should a write happen)
    let cases: Vec<(&str, Option<ConfigMap>, bool)> = vec![
        ("missing", None, true),
        ("as kept", Some(good.clone()), false),
        (
            "another description is kept",
            Some(map(&[(ROOT_CA_KEY, CA)], &[(DESCRIPTION_ANNOTATION, "x")])),
            false,
        ),
        ("changed CA", Some(map(&[(ROOT_CA_KEY, "bad")], &[])), true),
        (
            "extra key",
            Some(map(
                &[(ROOT_CA_KEY, CA), ("x", "y")],
                &[(DESCRIPTION_ANNOTATION, DESCRIPTION)],
            )),
            true,
        ),
        ("no description", Some(map(&[(ROOT_CA_KEY, CA)], &[])), true),
    ];
    for (name, current, writes) in cases {
        let got = desired_root_ca(current.as_ref(), CA);
        assert_eq!(got.is_some(), writes, "{name}");
        let Some(cm) = got else { continue };
        assert_eq!(cm.name_any(), ROOT_CA_CONFIG_MAP, "{name}");
        assert_eq!(
            cm.data,
            Some(BTreeMap::from([(ROOT_CA_KEY.into(), CA.into())])),
            "{name}"
        );
        assert_eq!(
            cm.annotations()
                .get(DESCRIPTION_ANNOTATION)
                .map(String::as_str),
            Some(DESCRIPTION),
            "{name}"
        );
        // An update carries the version it read.
        assert_eq!(
            cm.resource_version(),
            current.and_then(|c| c.resource_version()),
            "{name}"
        );
    }
}
