"""Malformed Iceberg REST requests get the spec's ErrorModel, never a 5xx: every route, with bodies
of the wrong shape at every level (the members' types, requirements and updates of unknown or
broken form, snapshots and schemas missing members), against a namespace, a table and a view that
exist, so the requests get past the lookups to the decoding and the domain's checks."""

from __future__ import annotations

import itertools
import random
import uuid
from typing import Any

import pytest
import requests

from chalicelib.protocol.iceberg.routes import PREFIXED, ROUTE_LIST
from infra.local.stack import REGION
from tests.integration.conftest import random_account

_NASTY: list[Any] = [None, 0, -1, 2**70, 1.5, True, "", "x" * 300, [], [None], {}, {"": None}, [[[[]]]],
                     "\u0000", "é", {"type": None}]


def _bodies(rng: random.Random) -> list[Any]:
    """Request bodies: each top-level member the spec names, given every nasty value, and nested
    requirements/updates whose members are nasty too."""
    members = ["name", "namespace", "properties", "schema", "location", "partition-spec", "write-order",
               "stage-create", "requirements", "updates", "identifier", "source", "destination",
               "metadata-location", "overwrite", "table-changes", "removals", "view-version", "sql"]
    bodies: list[Any] = [None, [], "text", 1]
    for member, value in itertools.product(members, _NASTY):
        bodies.append({member: value})
    actions = ["assign-uuid", "upgrade-format-version", "add-schema", "set-current-schema", "add-spec",
               "set-default-spec", "add-sort-order", "set-default-sort-order", "add-snapshot", "set-snapshot-ref",
               "remove-snapshots", "remove-snapshot-ref", "set-location", "set-properties", "remove-properties",
               "set-statistics", "remove-statistics", "set-partition-statistics", "remove-partition-statistics",
               "remove-partition-specs", "remove-schemas", "add-view-version", "set-current-view-version", "nope"]
    kinds = ["assert-create", "assert-table-uuid", "assert-ref-snapshot-id", "assert-last-assigned-field-id",
             "assert-current-schema-id", "assert-last-assigned-partition-id", "assert-default-spec-id",
             "assert-default-sort-order-id", "assert-view-uuid", "nope"]
    keys = ["uuid", "format-version", "schema", "schema-id", "spec", "spec-id", "sort-order", "sort-order-id",
            "snapshot", "ref-name", "type", "snapshot-id", "snapshot-ids", "location", "updates", "removals",
            "statistics", "view-version", "view-version-id", "ref", "last-assigned-field-id"]
    for action in actions:
        for _ in range(6):
            update = {"action": action, **{k: rng.choice(_NASTY) for k in rng.sample(keys, 3)}}
            bodies.append({"updates": [update]})
            bodies.append({"table-changes": [{"identifier": {"namespace": ["ns"], "name": "t"},
                                              "updates": [update]}]})
    for kind in kinds:
        for _ in range(4):
            requirement = {"type": kind, **{k: rng.choice(_NASTY) for k in rng.sample(keys, 2)}}
            bodies.append({"requirements": [requirement], "updates": []})
    return bodies


def test_no_malformed_request_gets_a_5xx(endpoint):
    account = random_account()
    session = requests.Session()
    session.headers["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={account}/20260101/{REGION}/glue/"
                                        "aws4_request, SignedHeaders=host, Signature=00")
    base = f"{endpoint}/iceberg/v1/catalogs/{account}"
    namespace = f"fz_{uuid.uuid4().hex[:8]}"
    schema = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "id", "type": "long", "required": False}]}
    assert session.post(f"{base}/namespaces", json={"namespace": [namespace]}).status_code == 200
    assert session.post(f"{base}/namespaces/{namespace}/tables", json={"name": "t", "schema": schema}).status_code \
        == 200
    view = {"name": "v", "schema": schema, "view-version": {
        "version-id": 1, "timestamp-ms": 1, "schema-id": 0, "summary": {},
        "representations": [{"type": "sql", "sql": "select 1", "dialect": "spark"}], "default-namespace": [namespace]}}
    assert session.post(f"{base}/namespaces/{namespace}/views", json=view).status_code == 200
    rng = random.Random(49)
    bodies = _bodies(rng)
    failures = []
    for method, template, _handler in ROUTE_LIST:
        if not template.startswith(PREFIXED):
            continue
        path = (template[len(PREFIXED):].replace("{namespace}", namespace).replace("{table}", "t")
                .replace("{view}", "v").replace("{plan_id}", "p"))
        chosen = bodies if method in ("POST", "PUT") else [None]
        for body in (chosen if method != "POST" else rng.sample(chosen, min(len(chosen), 150))):
            answer = session.request(method, base + path, json=body)
            if answer.status_code >= 500 and answer.status_code != 501:
                failures.append((method, path, body, answer.status_code, answer.text[:200]))
            elif answer.status_code >= 400 and method != "HEAD":
                error = answer.json().get("error")
                if not (isinstance(error, dict) and {"message", "type", "code"} <= set(error)):
                    failures.append((method, path, body, answer.status_code, "no ErrorModel: " + answer.text[:200]))
    assert not failures, failures[:10]


@pytest.mark.parametrize("raw", [b"{", b"[1]", b"\xff\xfe", b'{"name": "\\ud800"}', b"null", b"1" * 1000])
def test_bodies_that_are_no_json_object_are_400(endpoint, raw):
    account = random_account()
    answer = requests.post(f"{endpoint}/iceberg/v1/catalogs/{account}/namespaces", data=raw,
                           headers={"Authorization": f"AWS4-HMAC-SHA256 Credential={account}/20260101/{REGION}/"
                                                     "glue/aws4_request, SignedHeaders=host, Signature=00",
                                    "Content-Type": "application/json"})
    assert answer.status_code == 400
    assert answer.json()["error"]["type"] == "BadRequestException"
