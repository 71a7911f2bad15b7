"""Iceberg REST views at ``<endpoint>/iceberg``, driven by pyiceberg's RestCatalog (SigV4 for glue)
where it has the call (create, load, list, exists, drop) and by the spec's JSON over ``requests``
where it has none (replace, rename, register), each view cross-checked through boto3's Glue
client: an Iceberg view IS a Glue VIRTUAL_VIEW with its Representations."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
import requests
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import NoSuchTableError, NoSuchViewError, TableAlreadyExistsError, ViewAlreadyExistsError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType
from pyiceberg.view.metadata import SQLViewRepresentation, ViewVersion

from infra.local.stack import REGION
from tests.integration.test_iceberg_rest import rest_catalog

SCHEMA = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "name", StringType()))


def view_version(*dialects: tuple[str, str], namespace: str = "ns") -> ViewVersion:
    return ViewVersion(version_id=1, schema_id=0, timestamp_ms=1_700_000_000_000,
                       summary={"engine-name": "spark", "engine-version": "3.5.1"},
                       representations=[SQLViewRepresentation(type="sql", sql=sql, dialect=dialect)
                                        for dialect, sql in dialects],
                       default_namespace=[namespace])


@pytest.fixture
def rest(endpoint: str, account: str) -> RestCatalog:
    return rest_catalog(endpoint, account)


@pytest.fixture
def namespace(rest: RestCatalog) -> str:
    name = f"vns_{uuid.uuid4().hex[:10]}"
    rest.create_namespace(name)
    return name


class Api:
    """The REST API as JSON over HTTP, in the open mode (the Credential names the account)."""

    def __init__(self, endpoint: str, account: str) -> None:
        self.base = f"{endpoint}/iceberg/v1/catalogs/{account}"
        self.headers = {"Authorization": f"AWS4-HMAC-SHA256 Credential={account}/20260101/{REGION}/glue/aws4_request, "
                                         "SignedHeaders=host, Signature=00"}

    def __call__(self, method: str, path: str, body: Any = None, **params: str) -> requests.Response:
        return requests.request(method, self.base + path, json=body, params=params, headers=self.headers, timeout=30)


@pytest.fixture
def api(endpoint: str, account: str) -> Api:
    return Api(endpoint, account)


def replacement(base: dict[str, Any], sql: str, *extra_columns: str, dialect: str = "spark") -> dict[str, Any]:
    """A CommitViewRequest as Iceberg Java's replace sends it: the view's uuid asserted, the new
    schema, a version on it (schema -1: the one just added), made current (-1: the one just added)."""
    fields = [{"id": 1, "name": "id", "required": True, "type": "long"},
              *({"id": i + 2, "name": c, "required": False, "type": "string"} for i, c in enumerate(extra_columns))]
    return {"requirements": [{"type": "assert-view-uuid", "uuid": base["view-uuid"]}],
            "updates": [{"action": "add-schema", "schema": {"type": "struct", "schema-id": 0, "fields": fields}},
                        {"action": "add-view-version", "view-version": {
                            "version-id": 0, "timestamp-ms": 1_700_000_100_000, "schema-id": -1,
                            "summary": {"engine-name": "spark"}, "default-namespace": ["ns"],
                            "representations": [{"type": "sql", "sql": sql, "dialect": dialect}]}},
                        {"action": "set-current-view-version", "view-version-id": -1}]}


def local_dir(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))


def test_config_lists_the_view_endpoints(api):
    endpoints = requests.get(api.base.rsplit("/catalogs/", 1)[0] + "/config", headers=api.headers,
                             params={"warehouse": api.base.rsplit("/", 1)[1]}).json()["endpoints"]
    for route in ("GET /v1/{prefix}/namespaces/{namespace}/views", "POST /v1/{prefix}/namespaces/{namespace}/views",
                  "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
                  "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
                  "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
                  "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}", "POST /v1/{prefix}/views/rename",
                  "POST /v1/{prefix}/namespaces/{namespace}/register-view"):
        assert route in endpoints


def test_a_view_created_through_rest_is_a_glue_view(rest, fresh_glue, namespace):
    made = rest.create_view(f"{namespace}.v", SCHEMA,
                            view_version(("spark", "SELECT id, name FROM t"), ("trino", "SELECT id, name FROM t")),
                            properties={"comment": "people", "owner": "me"})
    loaded = rest.load_view(f"{namespace}.v")
    assert loaded.metadata == made.metadata
    assert loaded.current_version().version_id == 1 and loaded.sql_for("trino").sql == "SELECT id, name FROM t"
    assert [f.name for f in loaded.schema().fields] == ["id", "name"]
    assert loaded.properties == {"comment": "people", "owner": "me"}
    assert rest.view_exists(f"{namespace}.v") and not rest.view_exists(f"{namespace}.nothing")
    assert rest.list_views(namespace) == [(namespace, "v")]

    table = fresh_glue.get_table(DatabaseName=namespace, Name="v")["Table"]
    assert table["TableType"] == "VIRTUAL_VIEW" and table["IsMultiDialectView"]
    assert table["ViewDefinition"]["Representations"] == [
        {"Dialect": "SPARK", "DialectVersion": "3.5.1", "ViewOriginalText": "SELECT id, name FROM t",
         "ViewExpandedText": "SELECT id, name FROM t"}]  # trino has no Glue dialect: it is in the file only
    assert table["ViewOriginalText"] == table["ViewExpandedText"] == "SELECT id, name FROM t"
    assert [(c["Name"], c["Type"]) for c in table["StorageDescriptor"]["Columns"]] == [("id", "bigint"),
                                                                                       ("name", "string")]
    assert table["Parameters"]["table_type"] == "ICEBERG-VIEW"
    assert table["Parameters"]["owner"] == "me" and table["Description"] == "people"
    location = table["Parameters"]["metadata_location"]
    assert location.startswith(loaded.metadata.location + "/metadata/00000-") and location.endswith(".metadata.json")
    assert local_dir(location).is_file()


def test_names_views_and_tables_share(rest, fresh_glue, api, namespace):
    fresh_glue.create_table(DatabaseName=namespace, TableInput={
        "Name": "plain", "TableType": "EXTERNAL_TABLE", "StorageDescriptor": {"Columns": [{"Name": "a", "Type": "int"}]}})
    rest.create_view(f"{namespace}.v", SCHEMA, view_version(("spark", "SELECT 1")))
    with pytest.raises(ViewAlreadyExistsError):
        rest.create_view(f"{namespace}.v", SCHEMA, view_version(("spark", "SELECT 2")))
    with pytest.raises(ViewAlreadyExistsError, match="Table with same name already exists"):
        rest.create_view(f"{namespace}.plain", SCHEMA, view_version(("spark", "SELECT 2")))
    assert rest.list_views(namespace) == [(namespace, "v")]  # a table is no view
    assert not rest.view_exists(f"{namespace}.plain")
    with pytest.raises(NoSuchViewError):
        rest.load_view(f"{namespace}.plain")
    with pytest.raises(NoSuchViewError):
        rest.drop_view(f"{namespace}.plain")
    missing = api("GET", f"/namespaces/{namespace}/views/nothing").json()["error"]
    assert (missing["code"], missing["type"]) == (404, "NoSuchViewException")
    gone = api("GET", "/namespaces/no_such_namespace_here/views/v").json()["error"]
    assert (gone["code"], gone["type"]) == (404, "NoSuchNamespaceException")
    assert api("GET", "/namespaces/no_such_namespace_here/views").json()["error"]["type"] == "NoSuchNamespaceException"


def test_views_are_no_tables_to_the_table_routes(rest, namespace):
    rest.create_view(f"{namespace}.v", SCHEMA, view_version(("spark", "SELECT 1")))
    rest.create_table(f"{namespace}.t", SCHEMA)
    assert rest.list_tables(namespace) == [(namespace, "t")]
    assert rest.list_views(namespace) == [(namespace, "v")]
    with pytest.raises(ViewAlreadyExistsError, match="Table with same name"):
        rest.create_view(f"{namespace}.t", SCHEMA, view_version(("spark", "SELECT 1")))
    with pytest.raises(TableAlreadyExistsError):
        rest.create_table(f"{namespace}.v", SCHEMA)
    assert not rest.table_exists(f"{namespace}.v")
    with pytest.raises(NoSuchTableError):
        rest.load_table(f"{namespace}.v")


def test_replace_writes_the_next_file_and_glue_follows(rest, fresh_glue, api, namespace):
    base = rest.create_view(f"{namespace}.v", SCHEMA, view_version(("spark", "SELECT id FROM t"))).metadata
    first = fresh_glue.get_table(DatabaseName=namespace, Name="v")["Table"]["Parameters"]["metadata_location"]
    answer = api("POST", f"/namespaces/{namespace}/views/v",
                 {**replacement(base.model_dump(by_alias=True), "SELECT id, city FROM t", "city"),
                  "identifier": {"namespace": [namespace], "name": "v"}})
    assert answer.status_code == 200, answer.text
    result = answer.json()
    metadata = result["metadata"]
    assert metadata["current-version-id"] == 2 and [s["schema-id"] for s in metadata["schemas"]] == [0, 1]
    assert [e["version-id"] for e in metadata["version-log"]] == [1, 2]
    assert result["metadata-location"].startswith(base.location + "/metadata/00001-")

    loaded = rest.load_view(f"{namespace}.v")
    assert loaded.sql_for("spark").sql == "SELECT id, city FROM t" and loaded.schema().schema_id == 1
    table = fresh_glue.get_table(DatabaseName=namespace, Name="v")["Table"]
    assert table["Parameters"]["metadata_location"] == result["metadata-location"]
    assert table["Parameters"]["previous_metadata_location"] == first
    assert table["ViewDefinition"]["Representations"][0]["ViewOriginalText"] == "SELECT id, city FROM t"
    assert [c["Name"] for c in table["StorageDescriptor"]["Columns"]] == ["id", "city"]

    properties = api("POST", f"/namespaces/{namespace}/views/v", {"updates": [
        {"action": "set-properties", "updates": {"a": "1", "b": "2"}},
        {"action": "remove-properties", "removals": ["b"]}]}).json()["metadata"]["properties"]
    assert properties == {"a": "1"}
    assert fresh_glue.get_table(DatabaseName=namespace, Name="v")["Table"]["Parameters"]["a"] == "1"


def test_replace_errors_are_the_specs(rest, api, namespace):
    base = rest.create_view(f"{namespace}.v", SCHEMA, view_version(("spark", "SELECT 1"))).metadata
    before = rest.load_view(f"{namespace}.v").metadata
    request = replacement(base.model_dump(by_alias=True), "SELECT 2", "x")
    request["requirements"][0]["uuid"] = str(uuid.uuid4())
    failed = api("POST", f"/namespaces/{namespace}/views/v", request)
    assert (failed.status_code, failed.json()["error"]["type"]) == (409, "CommitFailedException")
    dropping = api("POST", f"/namespaces/{namespace}/views/v",
                   replacement(base.model_dump(by_alias=True), "SELECT 2", "x", dialect="trino"))
    assert dropping.status_code == 400 and "loss of view dialects" in dropping.json()["error"]["message"]
    bad = api("POST", f"/namespaces/{namespace}/views/v", {"updates": [{"action": "add-snapshot"}]})
    assert (bad.status_code, bad.json()["error"]["type"]) == (400, "BadRequestException")
    missing = api("POST", f"/namespaces/{namespace}/views/nothing", {"updates": []})
    assert (missing.status_code, missing.json()["error"]["type"]) == (404, "NoSuchViewException")
    assert rest.load_view(f"{namespace}.v").metadata == before


def test_of_racing_replaces_none_is_lost(endpoint, account, rest, namespace):
    base = rest.create_view(f"{namespace}.raced", SCHEMA, view_version(("spark", "SELECT 0"))).metadata
    request = base.model_dump(by_alias=True)
    outcomes: list[int] = []
    barrier = threading.Barrier(6)

    def replace(i: int) -> None:
        caller = Api(endpoint, account)
        barrier.wait()
        answer = caller("POST", f"/namespaces/{namespace}/views/raced", replacement(request, f"SELECT {i + 1}", f"c{i}"))
        assert answer.status_code in (200, 409), answer.text
        if answer.status_code == 409:
            assert answer.json()["error"]["type"] == "CommitFailedException"
        outcomes.append(answer.status_code)

    threads = [threading.Thread(target=replace, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wins = outcomes.count(200)
    assert len(outcomes) == 6 and wins >= 1
    final = rest.load_view(f"{namespace}.raced").metadata
    # Every winner's version is there (none overwrote another unseen), and only a winner's file.
    assert len(final.versions) == 1 + wins and len(final.version_log) == 1 + wins
    assert len(list((local_dir(final.location) / "metadata").iterdir())) == 1 + wins


def test_a_glue_view_loads_as_an_iceberg_view_and_replaces_into_one(rest, fresh_glue, api, namespace):
    fresh_glue.create_table(DatabaseName=namespace, TableInput={
        "Name": "glued", "TableType": "VIRTUAL_VIEW", "ViewOriginalText": "SELECT 1 AS n",
        "ViewExpandedText": "SELECT 1 AS n", "Parameters": {"made": "by glue"},
        "StorageDescriptor": {"Columns": [{"Name": "n", "Type": "int"}]},
        "ViewDefinition": {"Representations": [{"Dialect": "SPARK", "DialectVersion": "3.5",
                                                "ViewOriginalText": "SELECT 1 AS n", "ViewExpandedText": "SELECT 1 AS n"}]}})
    assert rest.list_views(namespace) == [(namespace, "glued")]
    view = rest.load_view(f"{namespace}.glued")
    assert view.sql_for("spark").sql == "SELECT 1 AS n"
    assert [(f.name, str(f.field_type)) for f in view.schema().fields] == [("n", "int")]
    assert view.properties == {"made": "by glue"} and view.metadata.version_log
    assert rest.load_view(f"{namespace}.glued").metadata == view.metadata  # built the same each time

    answer = api("POST", f"/namespaces/{namespace}/views/glued",
                 replacement(view.metadata.model_dump(by_alias=True), "SELECT 2 AS id", "extra"))
    assert answer.status_code == 200, answer.text
    replaced = rest.load_view(f"{namespace}.glued")
    assert replaced.uuid() == view.uuid() and replaced.sql_for("spark").sql == "SELECT 2 AS id"
    assert len(replaced.versions) == 2
    table = fresh_glue.get_table(DatabaseName=namespace, Name="glued")["Table"]
    assert table["Parameters"]["table_type"] == "ICEBERG-VIEW"
    assert table["Parameters"]["made"] == "by glue"
    assert table["ViewDefinition"]["Representations"][0]["DialectVersion"] == "3.5"  # Glue's detail kept
    assert local_dir(table["Parameters"]["metadata_location"]).is_file()


def test_rename_register_and_drop(rest, fresh_glue, api, namespace, tmp_path):
    made = rest.create_view(f"{namespace}.before", SCHEMA, view_version(("spark", "SELECT 1")))
    other = f"vns_{uuid.uuid4().hex[:10]}"
    rest.create_namespace(other)

    def rename(source: tuple[str, str], destination: tuple[str, str]) -> requests.Response:
        return api("POST", "/views/rename", {"source": {"namespace": [source[0]], "name": source[1]},
                                             "destination": {"namespace": [destination[0]], "name": destination[1]}})

    assert rename((namespace, "before"), (other, "after")).status_code == 204
    assert not rest.view_exists(f"{namespace}.before")
    moved = rest.load_view(f"{other}.after")
    assert moved.metadata == made.metadata
    assert fresh_glue.get_table(DatabaseName=other, Name="after")["Table"]["TableType"] == "VIRTUAL_VIEW"
    assert rename((namespace, "before"), (other, "x")).json()["error"]["type"] == "NoSuchViewException"
    assert rename((other, "after"), ("no_such_namespace_here", "x")).json()["error"]["type"] == \
        "NoSuchNamespaceException"
    rest.create_view(f"{other}.taken", SCHEMA, view_version(("spark", "SELECT 2")))
    for destination in ((other, "taken"), (other, "after")):
        taken = rename((other, "after"), destination)
        assert (taken.status_code, taken.json()["error"]["type"]) == (409, "AlreadyExistsException")

    # A view in the managed area is the catalog's own: its file registers as no other view.
    managed = fresh_glue.get_table(DatabaseName=other, Name="after")["Table"]["Parameters"]["metadata_location"]
    refused = api("POST", f"/namespaces/{namespace}/register-view", {"name": "twin", "metadata-location": managed})
    assert (refused.status_code, refused.json()["error"]["type"]) == (403, "ForbiddenException")
    outside = rest.create_view(f"{namespace}.outside", SCHEMA, view_version(("spark", "SELECT 3")),
                               location=(tmp_path / "outside").as_uri())
    location = fresh_glue.get_table(DatabaseName=namespace, Name="outside")["Table"]["Parameters"]["metadata_location"]
    assert location.startswith((tmp_path / "outside").as_uri() + "/metadata/")
    registered = api("POST", f"/namespaces/{namespace}/register-view", {"name": "again", "metadata-location": location})
    assert registered.status_code == 200, registered.text
    assert registered.json()["metadata-location"] == location
    assert rest.load_view(f"{namespace}.again").metadata == outside.metadata
    again = api("POST", f"/namespaces/{namespace}/register-view", {"name": "again", "metadata-location": location})
    assert (again.status_code, again.json()["error"]["type"]) == (409, "AlreadyExistsException")

    rest.drop_view(f"{namespace}.again")
    rest.drop_view(f"{namespace}.outside")  # a location the caller chose keeps its files, as Glue leaves data
    assert local_dir(location).is_file()
    rest.drop_view(f"{other}.after")  # the catalog placed this one: its directory goes with it
    assert not local_dir(managed).exists()
    with pytest.raises(NoSuchViewError):
        rest.drop_view(f"{other}.after")
    assert rest.list_views(other) == [(other, "taken")]
    with pytest.raises(fresh_glue.exceptions.EntityNotFoundException):
        fresh_glue.get_table(DatabaseName=other, Name="after")


def test_pages_follow_the_token(endpoint, account, fresh_glue, api, namespace):
    paged = rest_catalog(endpoint, account, **{"rest-page-size": "2"})
    for i in range(5):
        paged.create_view(f"{namespace}.v{i}", SCHEMA, view_version(("spark", f"SELECT {i}")))
        fresh_glue.create_table(DatabaseName=namespace, TableInput={"Name": f"t{i}", "TableType": "EXTERNAL_TABLE"})
    assert sorted(paged.list_views(namespace)) == [(namespace, f"v{i}") for i in range(5)]
    first = api("GET", f"/namespaces/{namespace}/views", pageSize="2").json()
    assert len(first["identifiers"]) == 2 and first["next-page-token"]
    bad = api("GET", f"/namespaces/{namespace}/views", pageToken="forged")
    assert bad.status_code == 400
