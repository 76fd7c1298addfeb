//! Kubernetes' CEL libraries, evaluated as kube-apiserver evaluates them.

use serde_json::json;

use crate::{compile, Var};

fn eval(rule: &str) -> Result<serde_json::Value, String> {
    let obj = json!({"ints": [1, 2, 3], "unsorted": [3, 1], "names": ["a", "b", "a"], "empty": [],
        "size": "1500Mi", "url": "https://example.com:8443/a/b?x=1&x=2&y=3"});
    compile(rule)?.eval(&[("self", Var::from(&obj))])
}

#[test]
fn library_functions() {
    let cases: &[(&str, serde_json::Value)] = &[
        // lists
        ("self.ints.isSorted()", json!(true)),
        ("self.unsorted.isSorted()", json!(false)),
        ("self.ints.sum()", json!(6)),
        ("self.empty.sum()", json!(0)),
        ("self.unsorted.min()", json!(1)),
        ("self.unsorted.max()", json!(3)),
        ("self.names.indexOf('a')", json!(0)),
        ("self.names.lastIndexOf('a')", json!(2)),
        ("self.names.indexOf('z')", json!(-1)),
        ("'abc'.indexOf('c')", json!(2)),
        // regex
        ("'abc 123'.find('[0-9]+')", json!("123")),
        ("'abc'.find('[0-9]+')", json!("")),
        ("'a1b22c333'.findAll('[0-9]+')", json!(["1", "22", "333"])),
        ("'a1b22c333'.findAll('[0-9]+', 2)", json!(["1", "22"])),
        // quantity
        (
            "quantity(self.size).isLessThan(quantity('2Gi'))",
            json!(true),
        ),
        (
            "quantity(self.size).isGreaterThan(quantity('1G'))",
            json!(true),
        ),
        ("quantity('1k').compareTo(quantity('1000'))", json!(0)),
        ("quantity('1.5').isInteger()", json!(false)),
        ("quantity('2Ki').asInteger()", json!(2048)),
        ("quantity('500m').asApproximateFloat()", json!(0.5)),
        (
            "quantity('1').add(quantity('500m')).isGreaterThan(quantity('1'))",
            json!(true),
        ),
        ("quantity('1').sub(2).sign()", json!(-1)),
        ("isQuantity('1Gi') && !isQuantity('1 Gi')", json!(true)),
        // url
        ("url(self.url).getScheme()", json!("https")),
        ("url(self.url).getHost()", json!("example.com:8443")),
        ("url(self.url).getHostname()", json!("example.com")),
        ("url(self.url).getPort()", json!("8443")),
        ("url(self.url).getEscapedPath()", json!("/a/b")),
        ("url(self.url).getQuery()['x']", json!(["1", "2"])),
        ("isURL('/path') && !isURL('no scheme')", json!(true)),
        // ip and cidr
        ("ip('10.0.0.1').family()", json!(4)),
        ("ip('::1').isLoopback()", json!(true)),
        ("ip('fe80::1').isLinkLocalUnicast()", json!(true)),
        (
            "isIP('1.2.3.4') && !isIP('1.2.3') && !isIP('::ffff:1.2.3.4')",
            json!(true),
        ),
        (
            "ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:DB8::1')",
            json!(true),
        ),
        ("cidr('10.0.0.0/8').containsIP('10.1.2.3')", json!(true)),
        (
            "cidr('10.0.0.0/8').containsIP(ip('11.1.2.3'))",
            json!(false),
        ),
        (
            "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')",
            json!(true),
        ),
        (
            "cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8')",
            json!(true),
        ),
        ("cidr('10.0.0.0/8').prefixLength()", json!(8)),
        // sets
        ("sets.contains([1, 2, 3], [3, 1])", json!(true)),
        ("sets.contains([1, 2], [1.0])", json!(true)),
        ("sets.equivalent([1, 2, 2], [2, 1])", json!(true)),
        ("sets.intersects(['a'], ['b'])", json!(false)),
        // named formats
        (
            "format.dns1123Label().validate('my-name') == optional.none()",
            json!(true),
        ),
        (
            "format.dns1123Label().validate('My_Name').value().size()",
            json!(1),
        ),
        (
            "format.named('uuid').value().validate('not-a-uuid').hasValue()",
            json!(true),
        ),
        ("format.named('nosuch').hasValue()", json!(false)),
        (
            "format.dns1035Label().validate('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa').value()",
            json!(["must be no more than 63 characters"]),
        ),
        (
            "format.dns1123Subdomain().validate('--------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------').value().size()",
            json!(2),
        ),
        (
            "format.dns1123LabelPrefix().validate('abc-').hasValue()",
            json!(false),
        ),
        (
            "format.qualifiedName().validate('example.com/my.name').hasValue()",
            json!(false),
        ),
        // two-variable comprehensions
        ("self.ints.all(i, v, v == i + 1)", json!(true)),
        ("self.unsorted.all(i, v, v > i)", json!(false)),
        ("self.names.exists(i, v, i == 2 && v == 'a')", json!(true)),
        ("{'a': 1, 'b': 2}.all(k, v, v > 0 && k != '')", json!(true)),
        (
            "{'a': 1, 'b': 2}.exists(k, v, k == 'b' && v == 1)",
            json!(false),
        ),
        ("self.names.existsOne(i, v, v == 'b')", json!(true)),
        ("self.ints.transformList(i, v, v * i)", json!([0, 2, 6])),
        ("self.ints.transformList(i, v, i > 0, v)", json!([2, 3])),
        ("self.ints.all(x, x > 0)", json!(true)),
        // semver
        ("semver('1.2.3').isLessThan(semver('1.10.0'))", json!(true)),
        (
            "semver('1.0.0-alpha').isLessThan(semver('1.0.0'))",
            json!(true),
        ),
        (
            "semver('2.3.4').major() + semver('2.3.4').minor() + semver('2.3.4').patch()",
            json!(9),
        ),
        ("isSemver('1.2.3') && !isSemver('1.2')", json!(true)),
    ];
    for (rule, want) in cases {
        assert_eq!(eval(rule).as_ref(), Ok(want), "{rule}");
    }
}

#[test]
fn library_errors() {
    for (rule, wanted) in [
        ("self.empty.min()", "min called on empty list"),
        ("'a'.find('(')", "Illegal regex"),
        (
            "quantity('1.5').asInteger()",
            "cannot convert value to integer",
        ),
        ("quantity('x')", "quantities must match"),
        ("ip('1.2.3.4%eth0')", "zone value is not allowed"),
    ] {
        let err = eval(rule).unwrap_err();
        assert!(err.contains(wanted), "{rule}: {err}");
    }
}
