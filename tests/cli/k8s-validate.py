#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Validate `ringfence export k8s` output against the Kubernetes API models
of Debian's python3-kubernetes (the generated OpenAPI classes): every field
name must exist in its object's schema, with a value of the schema's type.
Fields newer than that client are listed in NEWER with the API version that
added them. Exit 0 valid, 1 invalid (the bad paths on stdout), 2 cannot run.

usage: k8s-validate.py MANIFEST.json
"""
import json
import re
import sys

try:
    import kubernetes.client as k8s
except ImportError:
    print("python3-kubernetes is not installed")
    sys.exit(2)

KINDS = {
    ("v1", "Pod"): "V1Pod",
    ("networking.k8s.io/v1", "NetworkPolicy"): "V1NetworkPolicy",
    ("node.k8s.io/v1", "RuntimeClass"): "V1RuntimeClass",
    ("apps/v1", "Deployment"): "V1Deployment",  # docs/containers.md's harness pod
}
# (model, json field): the Kubernetes version that added it.
NEWER = {("V1PodSpec", "hostUsers"): "1.25"}
PRIMITIVES = {"str": str, "int": int, "bool": bool, "float": (int, float), "object": object}


def check(value, typ, path, errors):
    if typ in PRIMITIVES:
        ok = isinstance(value, PRIMITIVES[typ]) and not (typ == "int" and isinstance(value, bool))
        if not ok:
            errors.append(f"{path}: {value!r} is not {typ}")
        return
    m = re.fullmatch(r"list\[(.+)\]", typ)
    if m:
        if not isinstance(value, list):
            errors.append(f"{path}: not a list")
            return
        for i, v in enumerate(value):
            check(v, m.group(1), f"{path}[{i}]", errors)
        return
    m = re.fullmatch(r"dict\(str, (.+)\)", typ)
    if m:
        if not isinstance(value, dict):
            errors.append(f"{path}: not an object")
            return
        for key, v in value.items():
            check(v, m.group(1), f"{path}.{key}", errors)
        return
    model = getattr(k8s, typ, None)
    if model is None:
        errors.append(f"{path}: unknown type {typ}")
        return
    if not isinstance(value, dict):
        errors.append(f"{path}: not an object ({typ})")
        return
    by_json = {j: a for a, j in model.attribute_map.items()}
    for key, v in value.items():
        if key not in by_json:
            if (typ, key) not in NEWER:
                errors.append(f"{path}.{key}: no such field in {typ}")
            continue
        check(v, model.openapi_types[by_json[key]], f"{path}.{key}", errors)


def main():
    doc = json.load(open(sys.argv[1]))
    errors = []
    if doc.get("kind") != "List" or not isinstance(doc.get("items"), list):
        errors.append("top: not a List with items")
    for i, item in enumerate(doc.get("items", [])):
        name = KINDS.get((item.get("apiVersion"), item.get("kind")))
        if not name:
            errors.append(f"items[{i}]: unexpected {item.get('apiVersion')}/{item.get('kind')}")
            continue
        check(item, name, f"items[{i}]", errors)
    for e in errors:
        print(e)
    return 1 if errors else 0


sys.exit(main())
