//! RFC 6902 JSON patch: the RFC's appendix A examples, then errors and atomicity.

use serde_json::json;

use super::{case, malformed, ok, run, unprocessable, Case, Dialect, Want};

fn jp(name: &'static str, doc: serde_json::Value, patch: serde_json::Value, want: Want) -> Case {
    case(name, Dialect::Json, doc, patch, want)
}

#[test]
fn rfc6902_appendix_a() {
    run(vec![
        jp(
            "A.1 add an object member",
            json!({"foo": "bar"}),
            json!([{"op": "add", "path": "/baz", "value": "qux"}]),
            ok(json!({"foo": "bar", "baz": "qux"})),
        ),
        jp(
            "A.2 add an array element",
            json!({"foo": ["bar", "baz"]}),
            json!([{"op": "add", "path": "/foo/1", "value": "qux"}]),
            ok(json!({"foo": ["bar", "qux", "baz"]})),
        ),
        jp(
            "A.3 remove an object member",
            json!({"baz": "qux", "foo": "bar"}),
            json!([{"op": "remove", "path": "/baz"}]),
            ok(json!({"foo": "bar"})),
        ),
        jp(
            "A.4 remove an array element",
            json!({"foo": ["bar", "qux", "baz"]}),
            json!([{"op": "remove", "path": "/foo/1"}]),
            ok(json!({"foo": ["bar", "baz"]})),
        ),
        jp(
            "A.5 replace a value",
            json!({"baz": "qux", "foo": "bar"}),
            json!([{"op": "replace", "path": "/baz", "value": "boo"}]),
            ok(json!({"baz": "boo", "foo": "bar"})),
        ),
        jp(
            "A.6 move a value",
            json!({"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}}),
            json!([{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}]),
            ok(json!({"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}})),
        ),
        jp(
            "A.7 move an array element",
            json!({"foo": ["all", "grass", "cows", "eat"]}),
            json!([{"op": "move", "from": "/foo/1", "path": "/foo/3"}]),
            ok(json!({"foo": ["all", "cows", "eat", "grass"]})),
        ),
        jp(
            "A.8 test a value: success",
            json!({"baz": "qux", "foo": ["a", 2, "c"]}),
            json!([{"op": "test", "path": "/baz", "value": "qux"},
                {"op": "test", "path": "/foo/1", "value": 2}]),
            ok(json!({"baz": "qux", "foo": ["a", 2, "c"]})),
        ),
        jp(
            "A.9 test a value: error",
            json!({"baz": "qux"}),
            json!([{"op": "test", "path": "/baz", "value": "bar"}]),
            unprocessable("test failed: /baz is \"qux\", not \"bar\""),
        ),
        jp(
            "A.10 add a nested member object",
            json!({"foo": "bar"}),
            json!([{"op": "add", "path": "/child", "value": {"grandchild": {}}}]),
            ok(json!({"foo": "bar", "child": {"grandchild": {}}})),
        ),
        jp(
            "A.11 ignore unrecognized elements",
            json!({"foo": "bar"}),
            json!([{"op": "add", "path": "/baz", "value": "qux", "xyz": 123}]),
            ok(json!({"foo": "bar", "baz": "qux"})),
        ),
        jp(
            "A.12 add to a nonexistent target",
            json!({"foo": "bar"}),
            json!([{"op": "add", "path": "/baz/bat", "value": "qux"}]),
            unprocessable("the parent of /baz/bat does not exist"),
        ),
        jp(
            "A.14 ~ escape ordering",
            json!({"/": 9, "~1": 10}),
            json!([{"op": "test", "path": "/~01", "value": 10}]),
            ok(json!({"/": 9, "~1": 10})),
        ),
        jp(
            "A.15 comparing strings and numbers",
            json!({"/": 9, "~1": 10}),
            json!([{"op": "test", "path": "/~01", "value": "10"}]),
            unprocessable("test failed"),
        ),
        jp(
            "A.16 add an array value",
            json!({"foo": ["bar"]}),
            json!([{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}]),
            ok(json!({"foo": ["bar", ["abc", "def"]]})),
        ),
    ]);
}

#[test]
fn operations_and_paths() {
    run(vec![
        jp(
            "add replaces an existing member in place",
            json!({"a": 1, "b": 2, "c": 3}),
            json!([{"op": "add", "path": "/b", "value": 20}]),
            ok(json!({"a": 1, "b": 20, "c": 3})),
        ),
        jp(
            "add at the end index equals append",
            json!({"l": [1]}),
            json!([{"op": "add", "path": "/l/1", "value": 2}]),
            ok(json!({"l": [1, 2]})),
        ),
        jp(
            "add with an empty path replaces the document",
            json!({"a": 1}),
            json!([{"op": "add", "path": "", "value": [1]}]),
            ok(json!([1])),
        ),
        jp(
            "replace the whole document",
            json!({"a": 1}),
            json!([{"op": "replace", "path": "", "value": {"b": 2}}]),
            ok(json!({"b": 2})),
        ),
        jp(
            "remove keeps the order of the other members",
            json!({"a": 1, "b": 2, "c": 3, "d": 4}),
            json!([{"op": "remove", "path": "/b"}]),
            ok(json!({"a": 1, "c": 3, "d": 4})),
        ),
        jp(
            "~1 addresses a label key containing a slash",
            json!({"metadata": {"labels": {"app.kubernetes.io/name": "web"}}}),
            json!([{"op": "replace", "path": "/metadata/labels/app.kubernetes.io~1name",
                "value": "api"}]),
            ok(json!({"metadata": {"labels": {"app.kubernetes.io/name": "api"}}})),
        ),
        jp(
            "copy a subtree",
            json!({"a": {"x": [1]}}),
            json!([{"op": "copy", "from": "/a", "path": "/b"}]),
            ok(json!({"a": {"x": [1]}, "b": {"x": [1]}})),
        ),
        jp(
            "move onto itself is a no-op",
            json!({"a": 1}),
            json!([{"op": "move", "from": "/a", "path": "/a"}]),
            ok(json!({"a": 1})),
        ),
        jp(
            "test compares numbers numerically",
            json!({"n": 1}),
            json!([{"op": "test", "path": "/n", "value": 1.0}]),
            ok(json!({"n": 1})),
        ),
        jp(
            "test compares objects whatever their key order",
            json!({"o": {"a": 1, "b": 2}}),
            json!([{"op": "test", "path": "/o", "value": {"b": 2, "a": 1}}]),
            ok(json!({"o": {"a": 1, "b": 2}})),
        ),
        jp(
            "an empty patch changes nothing",
            json!({"a": 1}),
            json!([]),
            ok(json!({"a": 1})),
        ),
    ]);
}

#[test]
fn unprocessable_paths() {
    run(vec![
        jp(
            "remove a missing member",
            json!({"a": 1}),
            json!([{"op": "remove", "path": "/b"}]),
            unprocessable("JSON patch operation 0 (remove /b): path /b does not exist"),
        ),
        jp(
            "replace a missing member",
            json!({"a": 1}),
            json!([{"op": "replace", "path": "/b", "value": 2}]),
            unprocessable("path /b does not exist"),
        ),
        jp(
            "add past the end of a list",
            json!({"l": [1]}),
            json!([{"op": "add", "path": "/l/5", "value": 2}]),
            unprocessable("index 5 is past the end of a list of 1"),
        ),
        jp(
            "an index with a leading zero",
            json!({"l": [1, 2]}),
            json!([{"op": "add", "path": "/l/01", "value": 3}]),
            unprocessable("\"01\" is not a list index"),
        ),
        jp(
            "remove at the - index",
            json!({"l": [1]}),
            json!([{"op": "remove", "path": "/l/-"}]),
            unprocessable("path /l/- does not exist"),
        ),
        jp(
            "add under a scalar",
            json!({"a": 1}),
            json!([{"op": "add", "path": "/a/b", "value": 2}]),
            unprocessable("the parent of /a/b is a number"),
        ),
        jp(
            "move into its own child",
            json!({"a": {"b": {}}}),
            json!([{"op": "move", "from": "/a", "path": "/a/b/c"}]),
            unprocessable("cannot move /a into its own child /a/b/c"),
        ),
        jp(
            "copy from a missing path",
            json!({}),
            json!([{"op": "copy", "from": "/x", "path": "/y"}]),
            unprocessable("path /x does not exist"),
        ),
        jp(
            "remove the whole document",
            json!({}),
            json!([{"op": "remove", "path": ""}]),
            unprocessable("cannot remove the whole document"),
        ),
        jp(
            "atomic: a failing test after a change leaves nothing applied",
            json!({"spec": {"replicas": 1}}),
            json!([
                {"op": "replace", "path": "/spec/replicas", "value": 3},
                {"op": "test", "path": "/spec/replicas", "value": 1}
            ]),
            unprocessable(
                "JSON patch operation 1 (test /spec/replicas): \
                 test failed: /spec/replicas is 3, not 1",
            ),
        ),
    ]);
}

#[test]
fn malformed_patches() {
    run(vec![
        jp(
            "the patch is an object",
            json!({}),
            json!({"op": "add"}),
            malformed("must be a list of operations, got an object"),
        ),
        jp(
            "an operation is not an object",
            json!({}),
            json!(["add"]),
            malformed("operation 0: an operation must be an object"),
        ),
        jp(
            "op is missing",
            json!({}),
            json!([{"path": "/a"}]),
            // kube-apiserver's JSON patch library fails to apply it: 422, not 400.
            unprocessable("\"op\" is missing"),
        ),
        jp(
            "unknown op",
            json!({}),
            json!([{"op": "delete"}]),
            unprocessable("unknown op \"delete\""),
        ),
        jp(
            "op is not a string",
            json!({}),
            json!([{"op": 1, "path": "/a"}]),
            malformed("\"op\" must be a string"),
        ),
        jp(
            "path is missing",
            json!({}),
            json!([{"op": "remove"}]),
            malformed("remove: \"path\" is missing"),
        ),
        jp(
            "value is missing",
            json!({}),
            json!([{"op": "add", "path": "/a"}]),
            malformed("add /a: \"value\" is missing"),
        ),
        jp(
            "from is missing",
            json!({}),
            json!([{"op": "move", "path": "/a"}]),
            malformed("\"from\" is missing"),
        ),
        jp(
            "a path without a leading slash",
            json!({}),
            json!([{"op": "add", "path": "a", "value": 1}]),
            malformed("is not a JSON pointer"),
        ),
        jp(
            "a bad ~ escape",
            json!({}),
            json!([{"op": "add", "path": "/a~2", "value": 1}]),
            malformed("not followed by 0 or 1"),
        ),
        jp(
            "a malformed operation later in the patch stops everything",
            json!({"a": 1}),
            json!([{"op": "remove", "path": "/a"}, {"op": 7, "path": "/a"}]),
            malformed("operation 1"),
        ),
    ]);
}
