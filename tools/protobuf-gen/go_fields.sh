#!/usr/bin/env bash
# Regenerates crates/api/src/protobuf/k8s/go_fields.rs; `--check` fails instead when it is stale.
#
# Two steps: go_fields.go prints the json tags of the Go API types (k8s.io/api, apimachinery,
# apiextensions-apiserver, kube-aggregator, fetched through the Go module proxy at the release
# k8s-pb was made from), and gen_go_fields.py joins them with k8s-pb's prost fields (the version
# Cargo.lock pins, from cargo's registry). Re-run after bumping k8s-pb, with K8S_VERSION to match.
set -euo pipefail

K8S_VERSION=v0.35.0 # k8s-pb 0.9 was generated from Kubernetes 1.35

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out="$root/crates/api/src/protobuf/k8s/go_fields.rs"
check=false
[[ "${1:-}" == --check ]] && check=true

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

module_dir() {
    (cd "$tmp" && go mod download -json "$1@$K8S_VERSION") | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'
}
api=$(module_dir k8s.io/api)
machinery=$(module_dir k8s.io/apimachinery)
extensions=$(module_dir k8s.io/apiextensions-apiserver)
aggregator=$(module_dir k8s.io/kube-aggregator)
# dir:prefix, the prefix spelled like k8s-pb's module paths (underscores for dashes).
(cd "$tmp" && go run "$here/go_fields.go" \
    "$api:k8s.io/api" \
    "$machinery/pkg:k8s.io/apimachinery/pkg" \
    "$extensions/pkg:k8s.io/apiextensions_apiserver/pkg" \
    "$aggregator/pkg:k8s.io/kube_aggregator/pkg") >"$tmp/fields.tsv"

pb_src=$(cargo metadata --format-version 1 --manifest-path "$root/Cargo.toml" |
    python3 -c 'import json, os, sys
print(next(os.path.dirname(p["manifest_path"]) for p in json.load(sys.stdin)["packages"] if p["name"] == "k8s-pb") + "/src")')

python3 "$here/gen_go_fields.py" "$pb_src" "$tmp/fields.tsv" "$tmp/go_fields.rs"
if $check; then
    diff -u "$out" "$tmp/go_fields.rs" >&2 || { echo "$out is stale; run $0" >&2; exit 1; }
else
    cp "$tmp/go_fields.rs" "$out"
    echo "wrote $out" >&2
fi
