"""Paimon views and functions through the running service.

Functions: pypaimon 2.1.0's RESTApi and RESTCatalog. Views: raw HTTP with the JSON of Paimon's Java
client (paimon-api CreateViewRequest, AlterViewRequest with ViewChanges, RenameTableRequest,
GetViewResponse), since pypaimon has no view client; and across protocols with boto3 Glue.
Each test works in an account of its own (the bearer token and the access key name it).
"""

from __future__ import annotations

import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import requests
from pypaimon.api.rest_api import RESTApi
from pypaimon.api.rest_exception import AlreadyExistsException, BadRequestException, NoSuchResourceException
from pypaimon.catalog.catalog_exception import (DefinitionAlreadyExistException, DefinitionNotExistException,
                                                FunctionAlreadyExistException, FunctionNotExistException)
from pypaimon.catalog.catalog_factory import CatalogFactory
from pypaimon.common.identifier import Identifier
from pypaimon.function import FunctionChange, FunctionDefinition, FunctionImpl
from pypaimon.schema.data_types import AtomicType, DataField

from infra.local.stack import REGION
from tests.integration.store_helpers import Store

WAREHOUSE = "paimon_wh"


@pytest.fixture
def database(fresh_glue: Any) -> str:
    """A database (a Glue database is a Paimon database) in the test's own account."""
    name = f"db_{uuid.uuid4().hex[:10]}"
    fresh_glue.create_database(DatabaseInput={"Name": name})
    return name


def paimon_options(endpoint: str, account: str) -> dict[str, str]:
    return {"metastore": "rest", "uri": endpoint, "warehouse": WAREHOUSE, "token.provider": "bear",
            "token": f"{account}/{REGION}"}


@pytest.fixture
def api(endpoint: str, account: str) -> RESTApi:
    return RESTApi(paimon_options(endpoint, account))


class Http:
    """Raw Paimon REST calls for one account (the Java client's JSON)."""

    def __init__(self, endpoint: str, account: str) -> None:
        self.base = f"{endpoint}/v1/{WAREHOUSE}"
        self.headers = {"Authorization": f"Bearer {account}/{REGION}", "Content-Type": "application/json"}

    def call(self, method: str, path: str, body: Any = None, params: dict[str, Any] | None = None,
             expect: int = 200) -> Any:
        response = requests.request(method, self.base + path, headers=self.headers, params=params, timeout=30,
                                    data=None if body is None else json.dumps(body))
        assert response.status_code == expect, response.text
        if expect != 200:
            error = response.json()
            assert set(error) == {"message", "code", "resourceType", "resourceName"} and error["code"] == expect
            return error
        return response.json() if response.text else None


@pytest.fixture
def http(endpoint: str, account: str) -> Http:
    return Http(endpoint, account)


# --------------------------------------------------------------------------------- functions
def _function(database: str, name: str, **extra: Any) -> FunctionImpl:
    return FunctionImpl(Identifier.create(database, name),
                        input_params=[DataField(0, "x", AtomicType("INT")), DataField(1, "y", AtomicType("STRING"))],
                        return_params=[DataField(0, "r", AtomicType("BIGINT", nullable=False))], deterministic=True,
                        definitions={"spark": FunctionDefinition.sql("x + 1"),
                                     "flink": FunctionDefinition.lambda_def("(x, y) -> x", "JAVA")},
                        comment="adds one", options={"k": "v"}, **extra)


def test_function_round_trip_through_rest_catalog(endpoint: str, account: str, database: str) -> None:
    catalog = CatalogFactory.create(paimon_options(endpoint, account))
    identifier = Identifier.create(database, "add_one")
    created = _function(database, "add_one")
    catalog.create_function(identifier, created)
    got = catalog.get_function(identifier)
    assert got == created
    with pytest.raises(FunctionAlreadyExistException):
        catalog.create_function(identifier, created)
    catalog.create_function(identifier, created, ignore_if_exists=True)

    response = catalog.rest_api.get_function(identifier)
    assert uuid.UUID(response.uuid)
    assert response.owner == account and response.created_by == account
    assert response.created_at > 0 and response.updated_at >= response.created_at

    catalog.drop_function(identifier)
    with pytest.raises(FunctionNotExistException):
        catalog.get_function(identifier)
    with pytest.raises(FunctionNotExistException):
        catalog.drop_function(identifier)
    catalog.drop_function(identifier, ignore_if_not_exists=True)


def test_alter_function_every_change_kind(endpoint: str, account: str, database: str) -> None:
    catalog = CatalogFactory.create(paimon_options(endpoint, account))
    identifier = Identifier.create(database, "fn")
    catalog.create_function(identifier, _function(database, "fn"))
    catalog.alter_function(identifier, [
        FunctionChange.set_option("k2", "v2"), FunctionChange.remove_option("k"),
        FunctionChange.update_comment("new comment"),
        FunctionChange.add_definition("trino", FunctionDefinition.sql("x + 2")),
        FunctionChange.update_definition("spark", FunctionDefinition.sql("x + 3")),
        FunctionChange.drop_definition("flink"),
    ])
    got = catalog.get_function(identifier)
    assert got.options() == {"k2": "v2"}
    assert got.comment() == "new comment"
    assert got.definitions() == {"trino": FunctionDefinition.sql("x + 2"), "spark": FunctionDefinition.sql("x + 3")}
    before = catalog.rest_api.get_function(identifier).to_dict()

    # A failing change anywhere in the list: Paimon's error, and nothing of the list applied.
    with pytest.raises(DefinitionAlreadyExistException):
        catalog.alter_function(identifier, [FunctionChange.set_option("k3", "v3"),
                                            FunctionChange.add_definition("spark", FunctionDefinition.sql("1"))])
    with pytest.raises(DefinitionNotExistException):
        catalog.alter_function(identifier, [FunctionChange.update_comment(None),
                                            FunctionChange.drop_definition("nope")])
    with pytest.raises(DefinitionNotExistException):
        catalog.alter_function(identifier, [FunctionChange.update_definition("nope", FunctionDefinition.sql("1"))])
    with pytest.raises(FunctionNotExistException):
        catalog.alter_function(Identifier.create(database, "missing"), [FunctionChange.set_option("a", "b")])
    assert catalog.rest_api.get_function(identifier).to_dict() == before

    catalog.alter_function(identifier, [FunctionChange.update_comment(None)])
    assert catalog.get_function(identifier).comment() is None


def test_list_functions_paged_with_patterns(api: RESTApi, database: str, fresh_glue: Any) -> None:
    names = ["f_a", "f_b", "f_c", "g_a", "g_b"]
    for name in names:
        api.create_function(Identifier.create(database, name), _function(database, name))
    seen: list[str] = []
    token = None
    while True:
        page = api.list_functions_paged(database, max_results=2, page_token=token)
        assert len(page.elements) <= 2
        seen += page.elements
        token = page.next_page_token
        if token is None:
            break
    assert seen == names
    assert api.list_functions_paged(database, function_name_pattern="g_%").elements == ["g_a", "g_b"]
    assert api.list_functions_paged(database, function_name_pattern="f_b").elements == ["f_b"]
    first = api.list_functions_paged(database, max_results=1, function_name_pattern="f%")
    assert first.elements == ["f_a"]
    rest = api.list_functions_paged(database, max_results=5, page_token=first.next_page_token,
                                    function_name_pattern="f%")
    assert rest.elements == ["f_b", "f_c"] and rest.next_page_token is None

    details = api.list_function_details_paged(database, max_results=3)
    assert [d.name for d in details.elements] == names[:3]
    assert details.elements[0].definitions["spark"] == FunctionDefinition.sql("x + 1")

    # A second database: the global listing, with a database pattern.
    other = f"{database}_z"
    fresh_glue.create_database(DatabaseInput={"Name": other})
    api.create_function(Identifier.create(other, "h"), _function(other, "h"))
    found = []
    token = None
    while True:
        page = api.list_functions_paged_globally(database_name_pattern=f"{database}%", max_results=2,
                                                 page_token=token)
        found += [(i.get_database_name(), i.get_object_name()) for i in page.elements]
        token = page.next_page_token
        if token is None:
            break
    assert found == [(database, n) for n in names] + [(other, "h")]
    page = api.list_functions_paged_globally(database_name_pattern=other.upper(), function_name_pattern="h%")
    assert [(i.get_database_name(), i.get_object_name()) for i in page.elements] == [(other, "h")]
    assert api.list_functions_paged_globally(function_name_pattern="f_c").elements == [
        Identifier.create(database, "f_c")]
    assert api.list_functions_paged_globally(function_name_pattern="é%").elements == []


def test_racing_function_creates_and_alters_one_wins(endpoint: str, account: str, database: str) -> None:
    def create(_: int) -> str:
        try:
            RESTApi(paimon_options(endpoint, account)).create_function(Identifier.create(database, "raced"),
                                                                       _function(database, "raced"))
            return "won"
        except AlreadyExistsException:
            return "exists"
    with ThreadPoolExecutor(6) as pool:
        outcomes = list(pool.map(create, range(6)))
    assert sorted(outcomes) == ["exists"] * 5 + ["won"]

    def alter(i: int) -> str:
        try:
            RESTApi(paimon_options(endpoint, account)).alter_function(
                Identifier.create(database, "raced"), [FunctionChange.set_option(f"k{i}", "v")])
            return "applied"
        except AlreadyExistsException:  # 409: changed concurrently, nothing of this one applied
            return "conflict"
    with ThreadPoolExecutor(6) as pool:
        outcomes = list(pool.map(alter, range(6)))
    options = RESTApi(paimon_options(endpoint, account)).get_function(Identifier.create(database, "raced")).options
    assert "applied" in outcomes
    assert {k for k in options if k.startswith("k") and k[1:].isdigit()} == {
        f"k{i}" for i, outcome in enumerate(outcomes) if outcome == "applied"}


def test_function_errors(api: RESTApi, http: Http, database: str) -> None:
    with pytest.raises(NoSuchResourceException):
        api.create_function(Identifier.create("no_such_db", "f"), _function("no_such_db", "f"))
    with pytest.raises(NoSuchResourceException):
        api.list_functions_paged("no_such_db")
    with pytest.raises(BadRequestException):
        api.list_functions_paged(database, function_name_pattern="%abc")
    error = http.call("GET", f"/databases/{database}/functions", params={"maxResults": "ten"}, expect=400)
    assert "maxResults" in error["message"]
    with pytest.raises(BadRequestException):
        api.list_functions_paged(database, page_token="forged.token")
    error = http.call("GET", f"/databases/{database}/functions/nope", expect=404)
    assert (error["resourceType"], error["resourceName"]) == ("FUNCTION", "nope")
    # Bad bodies: 400 naming the member, nothing stored.
    for body, member in [({"name": "bad name!"}, "name"), ({"name": "f1", "deterministic": "yes"}, "deterministic"),
                         ({"name": "f1", "definitions": {"x": {"type": "cobol"}}}, "definitions[x].type"),
                         ({"name": "f1", "inputParams": [{"id": 0, "name": "a", "type": "NOPE"}]}, "inputParams[0]"),
                         ({"name": "f1", "options": {"a": 1}}, "options")]:
        error = http.call("POST", f"/databases/{database}/functions", body, expect=400)
        assert member in error["message"], error
    http.call("POST", f"/databases/{database}/functions", {"name": "f1"})
    error = http.call("POST", f"/databases/{database}/functions", {"name": "f1"}, expect=409)
    assert (error["resourceType"], error["resourceName"]) == ("FUNCTION", "f1")
    error = http.call("POST", f"/databases/{database}/functions/f1", {"changes": [{"action": "explode"}]}, expect=400)
    assert "changes[0].action" in error["message"]
    http.call("POST", f"/databases/{database}/functions/f1", {"changes": "no"}, expect=400)
    assert api.get_function(Identifier.create(database, "f1")).to_dict()["definitions"] == {}
    with pytest.raises(AlreadyExistsException):
        api.create_function(Identifier.create(database, "f1"), _function(database, "f1"))


def test_dropping_the_database_removes_its_functions(api: RESTApi, fresh_glue: Any, database: str, stack: Any,
                                                     account: str) -> None:
    api.create_function(Identifier.create(database, "f"), _function(database, "f"))
    store = Store(stack)
    uid = store.database_uid(database, account)
    assert store.query("paimon", "table_uid", uid)
    fresh_glue.delete_database(Name=database)
    fresh_glue.create_database(DatabaseInput={"Name": database})
    assert api.list_functions_paged(database).elements == []
    assert store.wait_empty("paimon", "table_uid", uid) == []


# ------------------------------------------------------------------------------------- views
def _view_schema() -> dict[str, Any]:
    return {"fields": [{"id": 0, "name": "id", "type": "BIGINT NOT NULL", "description": "the key"},
                       {"id": 1, "name": "tags", "type": {"type": "ARRAY", "element": "STRING"}},
                       {"id": 2, "name": "amount", "type": "DECIMAL(10, 2)"}],
            "query": "SELECT id, tags, amount FROM t",
            "dialects": {"spark": "SELECT id, tags, amount FROM spark_catalog.db.t",
                         "flink": "SELECT `id`, `tags`, `amount` FROM t"},
            "comment": "a view", "options": {"owner.team": "data"}}


def _create_view(http: Http, database: str, name: str, schema: dict[str, Any] | None = None) -> None:
    http.call("POST", f"/databases/{database}/views",
              {"identifier": {"database": database, "object": name}, "schema": schema or _view_schema()})


def test_view_created_through_paimon_is_a_glue_view(http: Http, fresh_glue: Any, database: str,
                                                    account: str) -> None:
    _create_view(http, database, "v1")
    view = http.call("GET", f"/databases/{database}/views/v1")
    assert view["name"] == "v1" and uuid.UUID(view["id"])
    assert view["schema"] == _view_schema()
    assert view["owner"] == account and view["createdAt"] > 0 and view["updatedAt"] >= view["createdAt"]

    table = fresh_glue.get_table(DatabaseName=database, Name="v1")["Table"]
    assert table["TableType"] == "VIRTUAL_VIEW"
    assert table["ViewOriginalText"] == table["ViewExpandedText"] == "SELECT id, tags, amount FROM t"
    assert table["Description"] == "a view"
    assert table["StorageDescriptor"]["Columns"] == [
        {"Name": "id", "Type": "bigint", "Comment": "the key"}, {"Name": "tags", "Type": "array<string>"},
        {"Name": "amount", "Type": "decimal(10,2)"}]
    assert table["ViewDefinition"]["Representations"] == [
        {"Dialect": "SPARK", "ViewOriginalText": "SELECT id, tags, amount FROM spark_catalog.db.t",
         "ViewExpandedText": "SELECT id, tags, amount FROM spark_catalog.db.t"}]
    assert table["Parameters"]["owner.team"] == "data"

    error = http.call("POST", f"/databases/{database}/views",
                      {"identifier": {"database": database, "object": "v1"}, "schema": _view_schema()}, expect=409)
    assert (error["resourceType"], error["resourceName"]) == ("VIEW", "v1")


def test_alter_view_every_change_kind(http: Http, fresh_glue: Any, database: str) -> None:
    _create_view(http, database, "v")
    path = f"/databases/{database}/views/v"
    http.call("POST", path, {"changes": [
        {"action": "setOption", "key": "k2", "value": "v2"},
        {"action": "removeOption", "key": "owner.team"},
        {"action": "updateComment", "comment": "changed"},
        {"action": "addDialect", "dialect": "athena", "query": "SELECT 1 AS id"},
        {"action": "updateDialect", "dialect": "spark", "query": "SELECT 2 AS id"},
        {"action": "dropDialect", "dialect": "flink"},
    ]})
    schema = http.call("GET", path)["schema"]
    assert schema["options"] == {"k2": "v2"}
    assert schema["comment"] == "changed"
    assert schema["dialects"] == {"athena": "SELECT 1 AS id", "spark": "SELECT 2 AS id"}
    assert schema["fields"] == _view_schema()["fields"]
    table = fresh_glue.get_table(DatabaseName=database, Name="v")["Table"]
    assert sorted((r["Dialect"], r["ViewOriginalText"]) for r in table["ViewDefinition"]["Representations"]) == [
        ("ATHENA", "SELECT 1 AS id"), ("SPARK", "SELECT 2 AS id")]
    assert table["Description"] == "changed" and table["Parameters"]["k2"] == "v2"

    before = http.call("GET", path)
    for changes, status, resource in [
        ([{"action": "setOption", "key": "x", "value": "y"}, {"action": "addDialect", "dialect": "spark", "query": "q"}],
         409, ("DIALECT", "spark")),
        ([{"action": "updateDialect", "dialect": "hive", "query": "q"}], 404, ("DIALECT", "hive")),
        ([{"action": "dropDialect", "dialect": "hive"}], 404, ("DIALECT", "hive")),
        ([{"action": "rename"}], 400, (None, None)),
        ([{"action": "setOption", "key": "paimon.view", "value": "x"}], 400, (None, None)),
    ]:
        error = http.call("POST", path, {"changes": changes}, expect=status)
        assert (error["resourceType"], error["resourceName"]) == resource, error
    assert http.call("GET", path) == before

    http.call("POST", path, {"changes": [{"action": "updateComment", "comment": None}]})
    assert "comment" not in http.call("GET", path)["schema"]
    error = http.call("POST", f"/databases/{database}/views/nope", {"changes": []}, expect=404)
    assert (error["resourceType"], error["resourceName"]) == ("VIEW", "nope")


def test_list_views_paged_with_pattern_and_details(http: Http, fresh_glue: Any, database: str) -> None:
    for name in ["va", "vb", "vc", "wa"]:
        _create_view(http, database, name)
    fresh_glue.create_table(DatabaseName=database, TableInput={"Name": "vt", "TableType": "EXTERNAL_TABLE"})
    seen: list[str] = []
    params: dict[str, Any] = {"maxResults": 2}
    while True:
        page = http.call("GET", f"/databases/{database}/views", params=params)
        seen += page["views"]
        if not page.get("nextPageToken"):
            break
        params["pageToken"] = page["nextPageToken"]
    assert seen == ["va", "vb", "vc", "wa"]  # the Glue table vt is no view
    page = http.call("GET", f"/databases/{database}/views", params={"viewNamePattern": "v%", "maxResults": 2})
    assert page["views"] == ["va", "vb"]
    rest = http.call("GET", f"/databases/{database}/views",
                     params={"viewNamePattern": "v%", "pageToken": page["nextPageToken"]})
    assert rest["views"] == ["vc"] and rest["nextPageToken"] is None
    # A token is bound to the pattern it was issued with.
    http.call("GET", f"/databases/{database}/views", params={"viewNamePattern": "w%",
                                                              "pageToken": page["nextPageToken"]}, expect=400)
    http.call("GET", f"/databases/{database}/views", params={"viewNamePattern": "%a"}, expect=400)
    assert http.call("GET", f"/databases/{database}/views", params={"viewNamePattern": "wa"})["views"] == ["wa"]
    assert http.call("GET", f"/databases/{database}/views", params={"viewNamePattern": "w%"})["views"] == ["wa"]
    assert http.call("GET", f"/databases/{database}/views", params={"viewNamePattern": "VB"})["views"] == ["vb"]

    details = http.call("GET", f"/databases/{database}/view-details", params={"maxResults": 3})
    assert [d["name"] for d in details["viewDetails"]] == ["va", "vb", "vc"]
    assert details["viewDetails"][0]["schema"] == _view_schema()
    everywhere = http.call("GET", "/views", params={"databaseNamePattern": database, "viewNamePattern": "w%"})
    assert everywhere["views"] == [{"database": database, "object": "wa"}]
    error = http.call("GET", "/databases/no_such_db/views", expect=404)
    assert error["resourceType"] == "DATABASE"


def test_rename_and_drop_view(http: Http, fresh_glue: Any, database: str) -> None:
    _create_view(http, database, "old")
    before = http.call("GET", f"/databases/{database}/views/old")
    fresh_glue.create_table(DatabaseName=database, TableInput={"Name": "tbl", "TableType": "EXTERNAL_TABLE"})
    rename = {"source": {"database": database, "object": "old"}, "destination": {"database": database,
                                                                                 "object": "new"}}
    http.call("POST", "/views/rename", rename)
    http.call("GET", f"/databases/{database}/views/old", expect=404)
    after = http.call("GET", f"/databases/{database}/views/new")
    # A rename moves the one Glue table (one transaction): same id, creation time and definition,
    # and its version history goes with it.
    assert (after["id"], after["createdAt"], after["schema"]) == (before["id"], before["createdAt"], _view_schema())
    versions = fresh_glue.get_table_versions(DatabaseName=database, TableName="new")["TableVersions"]
    assert sorted(int(v["VersionId"]) for v in versions) == [0, 1]
    error = http.call("POST", "/views/rename", rename, expect=404)
    assert (error["resourceType"], error["resourceName"]) == ("VIEW", "old")
    _create_view(http, database, "other")
    error = http.call("POST", "/views/rename", {"source": {"database": database, "object": "other"},
                                                "destination": {"database": database, "object": "tbl"}}, expect=409)
    assert error["resourceType"] == "VIEW"
    http.call("GET", f"/databases/{database}/views/other")
    # A Glue table is no view: not readable, droppable or renamable as one.
    http.call("GET", f"/databases/{database}/views/tbl", expect=404)
    http.call("DELETE", f"/databases/{database}/views/tbl", expect=404)
    fresh_glue.get_table(DatabaseName=database, Name="tbl")

    error = http.call("POST", "/views/rename", {"source": {"database": database, "object": "tbl"},
                                                "destination": {"database": database, "object": "t2"}}, expect=404)
    assert (error["resourceType"], error["resourceName"]) == ("VIEW", "tbl")

    # Into another database: still the same view.
    elsewhere = f"{database}_2"
    fresh_glue.create_database(DatabaseInput={"Name": elsewhere})
    http.call("POST", "/views/rename", {"source": {"database": database, "object": "new"},
                                        "destination": {"database": elsewhere, "object": "moved"}})
    assert http.call("GET", f"/databases/{elsewhere}/views/moved")["id"] == before["id"]
    http.call("GET", f"/databases/{database}/views/new", expect=404)
    http.call("POST", "/views/rename", {"source": {"database": elsewhere, "object": "moved"},
                                        "destination": {"database": database, "object": "new"}})

    http.call("DELETE", f"/databases/{database}/views/new")
    http.call("DELETE", f"/databases/{database}/views/new", expect=404)
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.get_table(DatabaseName=database, Name="new")


def test_bad_view_requests_are_400_and_store_nothing(http: Http, fresh_glue: Any, database: str) -> None:
    bad = [
        ({"identifier": {"database": database}, "schema": _view_schema()}, "identifier.object"),
        ({"identifier": {"database": "elsewhere", "object": "v"}, "schema": _view_schema()}, "identifier.database"),
        ({"identifier": {"database": database, "object": "v"}}, "schema"),
        ({"identifier": {"database": database, "object": "v"}, "schema": {**_view_schema(), "query": 3}},
         "schema.query"),
        ({"identifier": {"database": database, "object": "v"},
          "schema": {**_view_schema(), "fields": [{"id": 0, "name": "a", "type": "WHAT"}]}}, "schema.fields[0]"),
        ({"identifier": {"database": database, "object": "v"},
          "schema": {**_view_schema(), "dialects": {"spark": 1}}}, "schema.dialects"),
        ({"identifier": {"database": database, "object": "v"},
          "schema": {**_view_schema(), "comment": "x" * 3000}}, "comment"),
    ]
    for body, member in bad:
        error = http.call("POST", f"/databases/{database}/views", body, expect=400)
        assert member in error["message"], error
    assert fresh_glue.get_tables(DatabaseName=database)["TableList"] == []
    error = http.call("POST", "/databases/no_such_db/views",
                      {"identifier": {"database": "no_such_db", "object": "v"}, "schema": _view_schema()}, expect=404)
    assert (error["resourceType"], error["resourceName"]) == ("DATABASE", "no_such_db")


def test_glue_view_reads_through_paimon(http: Http, fresh_glue: Any, database: str) -> None:
    fresh_glue.create_table(DatabaseName=database, TableInput={
        "Name": "gv", "TableType": "VIRTUAL_VIEW", "Description": "made by Glue",
        "ViewOriginalText": "SELECT a FROM t", "ViewExpandedText": "SELECT a FROM t",
        "StorageDescriptor": {"Columns": [{"Name": "a", "Type": "int"}, {"Name": "m", "Type": "map<string,bigint>"},
                                          {"Name": "s", "Type": "struct<x:varchar(5),y:double>"},
                                          {"Name": "d", "Type": "decimal(12,3)", "Comment": "money"}]},
        "Parameters": {"p": "1"},
        "ViewDefinition": {"Representations": [
            {"Dialect": "ATHENA", "DialectVersion": "3", "ViewOriginalText": "SELECT a FROM athena_t"},
            {"Dialect": "REDSHIFT", "DialectVersion": "1.0", "ViewOriginalText": "SELECT a FROM rs_t"}]},
    })
    view = http.call("GET", f"/databases/{database}/views/gv")
    schema = view["schema"]
    assert schema["query"] == "SELECT a FROM t"
    assert schema["dialects"] == {"athena": "SELECT a FROM athena_t", "redshift": "SELECT a FROM rs_t"}
    assert schema["comment"] == "made by Glue" and schema["options"] == {"p": "1"}
    fields = schema["fields"]
    assert [(f["id"], f["name"]) for f in fields] == [(0, "a"), (1, "m"), (2, "s"), (3, "d")]
    assert fields[0]["type"] == "INT" and fields[3]["type"] == "DECIMAL(12, 3)"
    assert fields[3]["description"] == "money"
    assert fields[1]["type"]["type"] == "MAP" and fields[1]["type"]["value"] == "BIGINT"
    assert [f["type"] for f in fields[2]["type"]["fields"]] == ["VARCHAR(5)", "DOUBLE"]
    assert "gv" in http.call("GET", f"/databases/{database}/views")["views"]

    # Altered through Paimon: the Glue client's own representation details are kept where they map.
    http.call("POST", f"/databases/{database}/views/gv",
              {"changes": [{"action": "addDialect", "dialect": "spark", "query": "SELECT a FROM spark_t"}]})
    table = fresh_glue.get_table(DatabaseName=database, Name="gv")["Table"]
    assert sorted((r["Dialect"], r.get("DialectVersion")) for r in table["ViewDefinition"]["Representations"]) == [
        ("ATHENA", "3"), ("REDSHIFT", "1.0"), ("SPARK", None)]
    assert table["StorageDescriptor"]["Columns"][0] == {"Name": "a", "Type": "int"}


def test_glue_update_of_a_paimon_view_wins_where_it_differs(http: Http, fresh_glue: Any, database: str) -> None:
    _create_view(http, database, "v")
    table = fresh_glue.get_table(DatabaseName=database, Name="v")["Table"]
    table_input = {k: table[k] for k in ("Name", "TableType", "StorageDescriptor", "Parameters",
                                         "ViewOriginalText", "ViewExpandedText", "Description")}
    table_input["ViewDefinition"] = {"Representations": [
        {"Dialect": "SPARK", "ViewOriginalText": "SELECT 9", "ViewExpandedText": "SELECT 9"}]}
    table_input["StorageDescriptor"]["Columns"].append({"Name": "extra", "Type": "string"})
    fresh_glue.update_table(DatabaseName=database, TableInput=table_input)
    schema = http.call("GET", f"/databases/{database}/views/v")["schema"]
    # Glue changed the Spark text: Glue's wins, and the dialect Glue has no name for stays.
    assert schema["dialects"] == {"spark": "SELECT 9", "flink": "SELECT `id`, `tags`, `amount` FROM t"}
    assert [f["name"] for f in schema["fields"]] == ["id", "tags", "amount", "extra"]

