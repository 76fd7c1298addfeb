//! An OverridePolicy changes the object for one member only.

use std::time::Duration;

use crate::common::fleet::{eventually, kc};
use crate::common::Hub;
use flotilla_testkit::Members;

/// An image override for member-2 only.
pub(super) fn image_override(hub: &Hub, members: &Members) {
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    hub.ok_stdin(
        &["apply", "-f", "-"],
        r#"apiVersion: policy.flotilla.io/v1alpha1
kind: OverridePolicy
metadata: {name: mirror, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  overrideRules:
  - targetCluster: {clusterNames: [member-2]}
    overriders:
      imageOverrider:
      - {component: Registry, operator: replace, value: mirror.example.com}
"#,
    );
    let image = |c: &str| {
        let (_, out, _) = kc(
            &m(c),
            &[
                "get",
                "deploy",
                "web",
                "-n",
                "demo",
                "-o",
                "jsonpath={.spec.template.spec.containers[0].image}",
            ],
        );
        out.trim().to_owned()
    };
    eventually(
        hub,
        Duration::from_secs(30),
        "member-2 pulls from the mirror",
        || image("member-2") == "mirror.example.com/nginx:1.27",
    );
    assert_eq!(image("member-1"), "nginx:1.27");
    assert_eq!(image("member-3"), "nginx:1.27");
}
