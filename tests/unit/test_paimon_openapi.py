"""The Paimon route table (chalicelib/protocol/paimon/routes.py) held against Apache Paimon's
OpenAPI spec (docs/static/rest-catalog-open-api.yaml, vendored as tests/unit/data/
paimon-rest-catalog-open-api.yaml with its licence header): every path and method of the spec
is served or listed in UNSERVED with the reason, every route beyond it is in EXTRA, and sample
request and response bodies of the routes validate against the spec's schemas (jsonschema,
JSON Schema 2020-12 as OpenAPI 3.1 uses it).
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from chalicelib import errors
from chalicelib.domain.paimon.schema import Schema
from chalicelib.domain.paimon.snapshots import iso_duration
from chalicelib.protocol.paimon import routes, wire
from chalicelib.protocol.paimon.tables import table_response
from chalicelib.service.paimon_tables import PaimonTable

SPEC = Path(__file__).parent / "data" / "paimon-rest-catalog-open-api.yaml"

# (method, path) of the spec not served, and why (each answers 501, which the Java client reads as
# a capability the server lacks).
UNSERVED: dict[tuple[str, str], str] = {
    ("GET", "/v1/{prefix}/databases/{database}/tables/{table}/token"): "data tokens wait for STS credentials",
    ("POST", "/v1/{prefix}/databases/{database}/tables/{table}/auth"): "row/column query auth is not served",
}
# Routes beyond the spec, and whose they are.
EXTRA: dict[tuple[str, str], str] = {
    ("POST", "/v1/{prefix}/databases/{database}/tables/{table}/replace"): "RESTApi.replaceTable (not in the spec yet)",
    ("GET", "/v1/{prefix}/permissions"): "DLF's permission calls (unserved: 501)",
    ("POST", "/v1/{prefix}/permissions/grant"): "DLF's permission calls (unserved: 501)",
    ("POST", "/v1/{prefix}/permissions/revoke"): "DLF's permission calls (unserved: 501)",
}
_METHODS = ("get", "post", "put", "delete", "patch", "head")


@cache
def spec() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    # The spec's Snapshot declares commitIdentifier a string; Paimon's Snapshot.java (a long) and
    # pypaimon write a number, and the catalog answers snapshots as the client committed them.
    loaded["components"]["schemas"]["Snapshot"]["properties"]["commitIdentifier"]["type"] = ["integer", "string"]
    return loaded


def shape(path: str) -> str:
    """A path with its parameters unnamed (the spec's ``{tableId}`` is the routes' ``{id}``)."""
    return re.sub(r"\{[^}]+\}", "{}", path)


def spec_pairs() -> dict[tuple[str, str], str]:
    return {(m.upper(), shape(p)): p for p, ops in spec()["paths"].items() for m in ops if m in _METHODS}


def served() -> dict[tuple[str, str], str]:
    return {(m, shape(p)): p for m, p, handler in routes.ROUTE_LIST if not handler.__name__.startswith("unserved")}


def test_the_vendored_spec_keeps_its_licence_header() -> None:
    head = SPEC.read_text(encoding="utf-8")[:800]
    assert "Licensed to the Apache Software Foundation" in head and "Apache License, Version 2.0" in head


def test_every_spec_route_is_served_or_listed_unserved_with_a_reason() -> None:
    ours, unserved = served(), {(m, shape(p)) for m, p in UNSERVED}
    for pair, path in spec_pairs().items():
        assert (pair in ours) != (pair in unserved), f"{pair[0]} {path}: served and unserved, or neither"
    assert unserved <= set(spec_pairs()), "UNSERVED names a route the spec lacks"


def test_every_route_beyond_the_spec_is_accounted_for() -> None:
    in_spec = set(spec_pairs())
    beyond = {(m, shape(p)) for m, p, _ in routes.ROUTE_LIST} - in_spec
    assert beyond == {(m, shape(p)) for m, p in EXTRA}


def test_unserved_routes_that_are_in_the_table_answer_501() -> None:
    for method, path, handler in routes.ROUTE_LIST:
        if handler.__name__.startswith("unserved"):
            result = wire.handle(method, path, {"prefix": "w", "database": "d", "table": "t"}, {}, {}, b"{}", None)
            assert result.status == 501


# ------------------------------------------------------------------------ bodies against schemas
def _validator(name: str) -> jsonschema.protocols.Validator:
    root = Resource.from_contents(spec(), default_specification=DRAFT202012)
    registry: Registry = Registry().with_resource("urn:paimon", root)
    return jsonschema.Draft202012Validator({"$ref": f"urn:paimon#/components/schemas/{name}"}, registry=registry)


def _without_nulls(value: Any) -> Any:
    """Null members dropped: the spec marks few members nullable, and Paimon's Java mapper leaves
    out what is null; pypaimon and the Java client read an absent member and a null alike."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def check(name: str, body: Any) -> None:
    errors_found = sorted(_validator(name).iter_errors(_without_nulls(json.loads(json.dumps(body)))),
                          key=lambda e: list(e.path))
    assert not errors_found, [f"{list(e.path)}: {e.message}" for e in errors_found]


SNAPSHOT = {"version": 3, "id": 3, "schemaId": 0, "baseManifestList": "manifest-list-a-0",
            "deltaManifestList": "manifest-list-a-1", "changelogManifestList": None, "commitUser": "u",
            "commitIdentifier": 9223372036854775807, "commitKind": "APPEND", "timeMillis": 1700000000000,
            "logOffsets": {}, "totalRecordCount": 3, "deltaRecordCount": 1, "changelogRecordCount": 0,
            "watermark": None}
SCHEMA = {"fields": [{"id": 0, "name": "id", "type": "BIGINT NOT NULL"}, {"id": 1, "name": "dt", "type": "STRING"}],
          "partitionKeys": ["dt"], "primaryKeys": ["id"], "options": {"bucket": "1"}, "comment": None}


def test_get_table_response() -> None:
    table = PaimonTable("0b7e2c1a-2f1e-4c51-9d55-4a9f5b1f0c3e", "orders", "file:///w/db.db/orders", False, 2,
                        Schema.from_json(SCHEMA), "123456789012", 1700000000000, 1700000001000)
    body = table_response(table, "DB")
    assert body["database"] == "db"
    check("GetTableResponse", body)


@pytest.mark.parametrize("error", [errors.EntityNotFoundException("Snapshot 4 does not exist.", "SNAPSHOT", "4"),
                                   wire.not_served("GET", "/v1/w/x"), errors.InvalidInputException("bad")])
def test_error_response(error: errors.ServiceError) -> None:
    check("ErrorResponse", wire.error_response(error)[1])
    assert json.loads(wire.unrouted("GET", "/v1/w/x").body)["code"] == 501


def _through_wire(monkeypatch: pytest.MonkeyPatch, name: str, result: Any, method: str, route: str,
                  body: bytes | None = None, path: dict[str, str] | None = None) -> Any:
    from chalicelib.service import paimon_history
    monkeypatch.setattr(paimon_history, name, lambda *args: result)
    answer = wire.handle(method, route, path or {"prefix": "w", "database": "d", "table": "t"}, {}, {}, body, None)
    assert answer.status == 200, answer.body
    return json.loads(answer.body) if answer.body else None


def test_history_responses(monkeypatch: pytest.MonkeyPatch) -> None:
    check("ListConsumersResponse", _through_wire(monkeypatch, "list_consumers", ([("flink", 3)], None), "GET",
                                                 routes.TABLE + "/consumers"))
    check("ListSnapshotsResponse", _through_wire(monkeypatch, "list_snapshots", ([SNAPSHOT], None), "GET",
                                                 routes.TABLE + "/snapshots"))
    check("GetVersionSnapshotResponse", _through_wire(
        monkeypatch, "snapshot_at", SNAPSHOT, "GET", routes.TABLE + "/snapshots/{version}",
        path={"prefix": "w", "database": "d", "table": "t", "version": "LATEST"}))


def test_tag_response_carries_an_iso_duration() -> None:
    body = {"tagName": "t1", "snapshot": SNAPSHOT, "tagCreateTime": 1700000000000,
            "tagTimeRetained": iso_duration(86400.0)}
    assert body["tagTimeRetained"] == "PT24H"
    check("GetTagResponse", body)


@pytest.mark.parametrize("name, body", [
    ("ResetConsumerRequest", {"consumerId": "flink", "nextSnapshotId": 3}),
    ("ResetConsumerRequest", {"consumerId": "flink"}),
    ("RollbackSchemaRequest", {"schemaId": 1}),
    ("RegisterTableRequest", {"identifier": {"database": "db", "object": "t"}, "path": "s3://b/t"}),
    ("SchemaChange", {"action": "dropPrimaryKey"}),
    ("CreateTableRequest", {"identifier": {"database": "db", "object": "t"}, "schema": SCHEMA}),
])
def test_the_java_client_bodies_the_routes_take_are_the_spec_s(name: str, body: dict[str, Any]) -> None:
    check(name, body)
