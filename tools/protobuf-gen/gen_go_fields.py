#!/usr/bin/env python3
"""Generates crates/api/src/protobuf/k8s/go_fields.rs, the Go JSON facts protobuf does not carry
(which scalars Go writes even when zero, JSON names that are not the lowerCamelCase of the prost
name, embedded structs, named slices), by joining k8s-pb's prost fields with the json tags of the
Go API types.

FIELDS_TSV is what go_fields.go prints for the Go sources of the Kubernetes release k8s-pb was made
from; go_fields.sh fetches those, runs both steps and writes (or with --check compares) the file.

usage: gen_go_fields.py K8S_PB_SRC FIELDS_TSV OUT_GO_FIELDS"""
import re, sys, os, glob, collections

pb_src, tsv, out_go = sys.argv[1:4]

# --- Go facts: (package, lower type) -> {GoType, fields}
go_types = {}  # (pkg, lower name) -> real name
go_fields = collections.defaultdict(list)  # (pkg, Type) -> [(goname, json, omit, inline, ptr, gotype)]
slices = set()
for line in open(tsv):
    parts = line.rstrip('\n').split('\t')
    if len(parts) == 3 and parts[2] == 'SLICE':
        slices.add((parts[0], parts[1])); continue
    pkg, typ, goname, json, omit, inline, ptr, gotype = parts
    go_types[(pkg, typ.lower())] = typ
    go_fields[(pkg, typ)].append((goname, json, omit == 'true', inline == 'true', ptr == 'true', gotype))
for pkg, typ in slices:
    go_types.setdefault((pkg, typ.lower()), typ)

def norm(s): return s.replace('_', '').replace('-', '').replace('$', '').lower()
def lower_camel(rust):
    parts = rust.split('_')
    return parts[0] + ''.join(p[:1].upper() + p[1:] for p in parts[1:])

KINDS = {'string': 'String', 'bytes': 'Bytes', 'bool': 'Bool', 'int32': 'Int32', 'int64': 'Int64',
         'uint32': 'Uint32', 'uint64': 'Uint64', 'double': 'Double', 'float': 'Float', 'message': 'Message'}

messages = []  # (proto, openapi, [fields])
for path in sorted(glob.glob(os.path.join(pb_src, '**/mod.rs'), recursive=True)):
    mod = os.path.relpath(os.path.dirname(path), pb_src).split(os.sep)
    if mod == ['.']: continue
    pkg = 'k8s.io.' + '.'.join(mod)
    src = open(path).read()
    for m in re.finditer(r'\npub struct (\w+) \{(\}|.*?\n\})', src, re.S):
        rname, body = m.group(1), m.group(2)[:-1] + '\n'
        name = go_types.get((pkg, rname.lower()), rname)
        fields = []
        for f in re.finditer(r'#\[prost\(([^\]]*)\)\]\s*pub (?:r#)?(\w+):\s*(.*?),\n(?=\s*(?:///|#\[|\Z))', body, re.S):
            attr, fname, ty = f.group(1), f.group(2), re.sub(r'\s+', '', f.group(3))
            kind = attr.split(',')[0].split('=')[0].strip()
            tag = int(re.search(r'tag = "(\d+)"', attr).group(1))
            mp = None; msg = ''
            if kind == 'btree_map':
                k, v = [x.strip() for x in re.search(r'btree_map = "([^"]*)"', attr).group(1).split(',')]
                mp = (KINDS[k], KINDS[v]); kind = 'message' if v == 'message' else kind
            if 'message' in (kind,) or (mp and mp[1] == 'Message'):
                if mp: ty = [x for x in re.sub(r',>', '>', ty).split(',') if x.strip('>')][-1]
                found = re.findall(r"((?:super::|[a-z_0-9]+::)*[A-Z]\w*)>*$", re.sub(r",>", ">", ty))
                if not found: print("BAD", rname, fname, repr(ty), file=sys.stderr); continue
                tn = found[-1]
                segs = tn.split('::'); cur = list(mod)
                for s in segs[:-1]:
                    if s == 'super': cur.pop()
                    else: cur.append(s)
                tpkg = 'k8s.io.' + '.'.join(cur)
                msg = tpkg + '.' + go_types.get((tpkg, segs[-1].lower()), segs[-1])
            fields.append(dict(rust=fname, tag=tag, kind=('Message' if mp and mp[1] == 'Message' else KINDS.get(kind, 'Message') if not mp else 'Message'),
                               scalar_kind=KINDS.get(kind), message=msg, repeated='repeated' in attr,
                               optional='optional' in attr, map=mp))
        # map fields: kind reported as Message (a map entry); keep map tuple
        openapi = 'io.k8s.' + pkg[len('k8s.io.'):].replace('apiextensions_apiserver', 'apiextensions-apiserver').replace('kube_aggregator', 'kube-aggregator') + '.' + name
        messages.append((pkg + '.' + name, openapi, fields, pkg, name))
messages.sort(key=lambda m: m[0])

# --- (2) Go facts
notes = []; unmatched = []
for proto, openapi, fields, pkg, name in messages:
    gf = go_fields.get((pkg, name))
    if gf is None: continue
    for f in fields:
        cands = [g for g in gf if not g[3] and g[1] and norm(g[1]) == norm(f['rust'])]
        if not cands:
            cands = [g for g in gf if g[3] and norm(g[0]) == norm(f['rust'])]
        if not cands:  # Probe.handler embeds ProbeHandler
            cands = [g for g in gf if g[3] and norm(g[0]).endswith(norm(f['rust']))]
        if len(cands) != 1:
            unmatched.append((proto, f['rust'], len(cands))); continue
        goname, json, omit, inline, ptr, gotype = cands[0]
        scalar = f['scalar_kind'] not in (None, 'Message') and not f['repeated'] and not f['map']
        keep_zero = scalar and (ptr or not omit)
        rename = (not inline) and json != lower_camel(f['rust'])
        if inline or keep_zero or rename:
            notes.append((proto.lower(), f['rust'], json if rename else '', inline, keep_zero))
notes.sort()
by_msg = collections.OrderedDict()
for proto, rust, json, inline, keep in notes:
    e = by_msg.setdefault(proto, dict(keep=[], renamed=[], inline=[]))
    if keep: e['keep'].append(rust)
    if json: e['renamed'].append((rust, json))
    if inline: e['inline'].append(rust)
g = ['//! Go facts about Kubernetes API fields that protobuf does not carry, generated from the',
     '//! `json` tags of the Go types in k8s.io/api, apimachinery, apiextensions-apiserver and',
     '//! kube-aggregator (v0.35.0), joined with k8s-pb 0.9\'s prost fields by tools/protobuf-gen.',
     '//! Do not edit by hand: run `tools/protobuf-gen/go_fields.sh` instead.',
     '//!',
     '//! Only messages with exceptional fields are listed; every other field is named by',
     '//! lowerCamelCasing its prost name and omitted from JSON when zero (Go\'s `omitempty`).',
     '',
     '/// The exceptional fields of one message (prost field names).',
     'pub(crate) struct GoMessage {',
     '    /// The proto message\'s full name, lowercased.',
     '    pub proto: &\'static str,',
     '    /// Scalars whose zero value Go still writes to JSON: pointers, and fields without',
     '    /// `omitempty`.',
     '    pub keep_zero: &\'static [&\'static str],',
     '    /// Fields whose JSON name is not the lowerCamelCase of the prost name.',
     '    pub renamed: &\'static [(&\'static str, &\'static str)],',
     '    /// Embedded structs whose fields Go writes into the parent object (`json:",inline"`).',
     '    pub inline: &\'static [&\'static str],',
     '}',
     '',
     '/// Sorted by `proto` for binary search.',
     '#[rustfmt::skip]',
     'pub(crate) static GO_MESSAGES: &[GoMessage] = &[']
def strs(xs): return '&[' + ', '.join('"%s"' % x for x in xs) + ']'
for proto, e in by_msg.items():
    g.append('    GoMessage { proto: "%s", keep_zero: %s, renamed: &[%s], inline: %s },' % (
        proto, strs(e['keep']), ', '.join('("%s", "%s")' % r for r in e['renamed']), strs(e['inline'])))
g.append('];')
g.append('')
g.append('/// Messages that stand for a Go named slice (`type ExtraValue []string`): JSON writes the')
g.append('/// `items` field as a bare array. Lowercased proto names, sorted.')
g.append('pub(crate) static SLICE_MESSAGES: &[&str] = &[')
known = {m[0].lower() for m in messages}
for pkg, typ in sorted(slices):
    if (pkg + '.' + typ).lower() in known:
        g.append('    "%s",' % (pkg + '.' + typ).lower())
g.append('];')
open(out_go, 'w').write('\n'.join(g) + '\n')
print('messages', len(messages), 'notes', len(notes), 'unmatched', len(unmatched), file=sys.stderr)
for u in unmatched[:40]: print('  unmatched', u, file=sys.stderr)
