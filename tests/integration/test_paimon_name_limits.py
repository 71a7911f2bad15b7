"""Names past the catalog's limits on every Paimon route: 4xx with an ErrorResponse, never 500.

A name longer than DynamoDB's key values allow once reached the store, which refused it with a
ValidationException (500, which pypaimon retries). Now a name that cannot exist is not found
(404, as Paimon's servers answer for reads, in the path or as a body's reference such as
``fromTag``) and a new object with such a name is a bad request (400).
"""

from __future__ import annotations

import re
import uuid
from typing import Any, Iterator
from urllib.parse import quote_plus

import pyarrow as pa
import pytest
import requests
from pypaimon.catalog.catalog_factory import CatalogFactory
from pypaimon.catalog.rest.rest_catalog import RESTCatalog
from pypaimon.common.identifier import Identifier
from pypaimon.schema import data_types as pt
from pypaimon.schema.schema import Schema

from chalicelib.protocol.paimon.routes import ROUTE_LIST
from tests.integration.test_paimon_protocol import ACCOUNT, WAREHOUSE, error_of, options

LONG = "n" * 2000
HEADERS = {"Authorization": f"Bearer {ACCOUNT}", "Content-Type": "application/json"}
SCHEMA = {"fields": [{"id": 0, "name": "a", "type": "INT"}], "partitionKeys": [], "primaryKeys": [],
          "options": {}, "comment": None}


@pytest.fixture(scope="module")
def names(endpoint: str) -> Iterator[dict[str, str]]:
    """A database holding table t (one tag, one branch), function f and view v: every name a
    route may take, existing, so that only the long one is wrong."""
    catalog = CatalogFactory.create(options(endpoint))
    assert isinstance(catalog, RESTCatalog)
    database = f"long_{uuid.uuid4().hex[:8]}"
    catalog.create_database(database, False)
    ident = Identifier.create(database, "t")
    catalog.create_table(ident, Schema([pt.DataField(0, "a", pt.AtomicType("INT"))]), False)
    table = catalog.get_table(ident)
    builder = table.new_batch_write_builder()
    writer, committer = builder.new_write(), builder.new_commit()
    writer.write_arrow(pa.table({"a": pa.array([1], pa.int32())}))
    committer.commit(writer.prepare_commit())
    writer.close()
    committer.close()
    catalog.create_tag(ident, "tg")

    def post(path: str, body: dict[str, Any]) -> requests.Response:
        return requests.post(f"{endpoint}/v1/{WAREHOUSE}/databases/{database}/{path}", json=body, headers=HEADERS,
                             timeout=30)
    assert post("tables/t/branches", {"branch": "b"}).status_code == 200
    function = {"name": "f", "inputParams": [], "returnParams": [], "deterministic": True, "definitions": {},
                "comment": None, "options": {}}
    response = post("functions", function)
    assert response.status_code == 200, response.text
    view = {"identifier": {"database": database, "object": "v"},
            "schema": {"fields": [{"id": 0, "name": "a", "type": "INT"}], "options": {}, "comment": None,
                       "query": "SELECT 1 AS a", "dialects": {}}}
    response = post("views", view)
    assert response.status_code == 200, response.text
    yield {"prefix": WAREHOUSE, "database": database, "table": "t", "tag": "tg", "branch": "b", "function": "f",
           "view": "v", "version": "1", "id": catalog.rest_api.get_table(ident).id}
    catalog.drop_database(database, ignore_if_not_exists=True, cascade=True)


def bodies(method: str, path: str, names: dict[str, str]) -> list[dict[str, Any]]:
    """A request body for the route that would be accepted with the fixture's names (the path's
    own parameters aside): what a long path parameter is sent with."""
    if method != "POST":
        return [{}]
    database = names["database"]
    by_route: dict[str, dict[str, Any]] = {
        "/databases": {"name": "newdb", "options": {}},
        "/databases/{database}": {"removals": [], "updates": {"k": "v"}},
        "/databases/{database}/tables": {"identifier": {"database": database, "object": "new"}, "schema": SCHEMA},
        "/tables/rename": {"source": {"database": database, "object": "t"},
                           "destination": {"database": database, "object": "t2"}},
        "/databases/{database}/tables/{table}": {"changes": [{"action": "setOption", "key": "k", "value": "v"}]},
        "/databases/{database}/tables/{table}/rollback": {"instant": {"type": "snapshot", "snapshotId": 1}},
        "/databases/{database}/tables/{table}/partitions": {"partitionSpecs": []},
        "/databases/{database}/tables/{table}/tags": {"tagName": "new"},
        "/databases/{database}/tables/{table}/branches": {"branch": "new"},
        "/databases/{database}/tables/{table}/branches/{branch}/rename": {"toBranch": "new"},
        "/databases/{database}/tables/{table}/branches/{branch}/forward": {},
        "/databases/{database}/tables/{table}/commit": {"tableId": str(uuid.uuid4()), "snapshot": {}},
        "/databases/{database}/functions": {"name": "new", "inputParams": [], "returnParams": [],
                                            "deterministic": True, "definitions": {}, "options": {}},
        "/databases/{database}/functions/{function}": {"changes": [{"action": "setOption", "key": "k", "value": "v"}]},
        "/databases/{database}/views": {"identifier": {"database": database, "object": "new"}},
        "/views/rename": {"source": {"database": database, "object": "v"},
                          "destination": {"database": database, "object": "v2"}},
        "/databases/{database}/views/{view}": {"changes": [{"action": "setOption", "key": "k", "value": "v"}]},
    }
    return [by_route.get(path[len("/v1/{prefix}"):], {})]


def named_routes() -> list[tuple[str, str]]:
    """The served routes whose path names an object (the unserved ones answer 501 to anything)."""
    return [(method, path) for method, path, handler in ROUTE_LIST
            if re.search(r"\{(?!prefix\})\w+\}", path) and not handler.__name__.startswith("unserved")]


def send(endpoint: str, method: str, template: str, values: dict[str, str], body: dict[str, Any]) -> requests.Response:
    path = re.sub(r"\{(\w+)\}", lambda m: quote_plus(values[m.group(1)]), template)
    return requests.request(method, endpoint + path, json=body if method == "POST" else None, headers=HEADERS,
                            timeout=60)


@pytest.mark.parametrize("method, template", named_routes())
def test_a_long_name_in_the_path_is_not_found(endpoint, names, method, template):
    """Each path parameter naming an object (not the warehouse) in turn 2,000 characters long:
    404, the object cannot exist; a long branch in ``t$branch_NAME`` too."""
    parameters = [p for p in re.findall(r"\{(\w+)\}", template) if p != "prefix"]
    for parameter in parameters:
        for long_value in [LONG] + ([f"t$branch_{LONG}"] if parameter == "table" else []):
            response = send(endpoint, method, template, {**names, parameter: long_value},
                            bodies(method, template, names)[0])
            assert response.status_code == 404, (parameter, response.status_code, response.text[:300])
            assert error_of(response)["resourceName"] is not None


def body_cases(names: dict[str, str]) -> list[tuple[str, str, dict[str, Any], int]]:
    """(method, path under the database, body, expected status): long names in bodies; new
    objects are 400, references to existing ones 404."""
    database = names["database"]
    table = "tables/t"
    return [
        ("POST", "", {"name": LONG, "options": {}}, 400),  # create database (path ".../databases")
        ("POST", "tables", {"identifier": {"database": database, "object": LONG}, "schema": SCHEMA}, 400),
        ("POST", "tables", {"identifier": {"database": LONG, "object": "x"}, "schema": SCHEMA}, 400),
        ("POST", "/tables/rename", {"source": {"database": database, "object": LONG},
                                    "destination": {"database": database, "object": "x"}}, 404),
        ("POST", "/tables/rename", {"source": {"database": LONG, "object": "t"},
                                    "destination": {"database": database, "object": "x"}}, 404),
        ("POST", "/tables/rename", {"source": {"database": database, "object": "t"},
                                    "destination": {"database": database, "object": LONG}}, 400),
        ("POST", f"{table}/rollback", {"instant": {"type": "tag", "tagName": LONG}}, 404),
        ("POST", f"{table}/tags", {"tagName": LONG}, 400),
        ("POST", f"{table}/branches", {"branch": LONG}, 400),
        ("POST", f"{table}/branches", {"branch": "fromlong", "fromTag": LONG}, 404),
        ("POST", f"{table}/branches/b/rename", {"toBranch": LONG}, 400),
        ("POST", "functions", {"name": LONG, "inputParams": [], "returnParams": [], "deterministic": True,
                               "definitions": {}, "options": {}}, 400),
        ("POST", "views", {"identifier": {"database": database, "object": LONG},
                           "schema": {"fields": [], "options": {}, "query": "SELECT 1", "dialects": {}}}, 400),
        ("POST", "/views/rename", {"source": {"database": database, "object": LONG},
                                   "destination": {"database": database, "object": "x"}}, 404),
        ("POST", "/views/rename", {"source": {"database": database, "object": "v"},
                                   "destination": {"database": database, "object": LONG}}, 400),
    ]


def test_a_long_name_in_a_body_is_a_bad_request_or_not_found(endpoint, names):
    database = names["database"]
    for method, where, body, status in body_cases(names):
        if where == "":
            path = f"/v1/{WAREHOUSE}/databases"
        elif where.startswith("/"):
            path = f"/v1/{WAREHOUSE}{where}"
        else:
            path = f"/v1/{WAREHOUSE}/databases/{database}/{where}"
        response = requests.request(method, endpoint + path, json=body, headers=HEADERS, timeout=60)
        assert response.status_code == status, (where, body, response.status_code, response.text[:300])
        error_of(response)


def test_long_query_patterns_and_prefixes_are_answered(endpoint, names):
    """A listing's name pattern or tag prefix longer than any name: an empty page or a 400, not 500."""
    database = names["database"]
    base = f"{endpoint}/v1/{WAREHOUSE}"
    failed = []
    for path, parameter in [("/databases", "databaseNamePattern"), (f"/databases/{database}/tables", "tableNamePattern"),
                            (f"/databases/{database}/table-details", "tableNamePattern"),
                            ("/tables", "tableNamePattern"), ("/tables", "databaseNamePattern"),
                            ("/views", "databaseNamePattern"), ("/views", "viewNamePattern"),
                            ("/functions", "databaseNamePattern"), ("/functions", "functionNamePattern"),
                            (f"/databases/{database}/views", "viewNamePattern"),
                            (f"/databases/{database}/functions", "functionNamePattern"),
                            (f"/databases/{database}/tables/t/tags", "tagNamePrefix"),
                            (f"/databases/{database}/tables/t/partitions", "partitionNamePattern")]:
        for value in (LONG, LONG + "%"):
            response = requests.get(base + path, params={parameter: value}, headers=HEADERS, timeout=60)
            if response.status_code not in (200, 400):
                failed.append((path, parameter, value[-1], response.status_code))
            elif response.status_code == 400:
                error_of(response)
    assert not failed
