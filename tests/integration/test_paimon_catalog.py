"""The Paimon catalog through pypaimon 2.1.0's RESTCatalog against the running service: databases,
tables, schema evolution, and the same entities seen through Glue (boto3).

Raw HTTP is used where pypaimon cannot send the request (an addColumn with a move,
updateColumnPosition: its JSON encoder cannot encode the MoveType enum) or where the point is the
wire (status codes, ErrorResponse members).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlparse

import pytest
import requests
from pypaimon.api.rest_exception import AlreadyExistsException, BadRequestException, NoSuchResourceException
from pypaimon.catalog.catalog_exception import (DatabaseAlreadyExistException, DatabaseNotExistException,
                                                TableAlreadyExistException, TableNotExistException)
from pypaimon.catalog.catalog_factory import CatalogFactory
from pypaimon.catalog.rest.rest_catalog import RESTCatalog
from pypaimon.common.file_io import FileIO
from pypaimon.common.json_util import JSON
from pypaimon.common.identifier import Identifier
from pypaimon.schema import data_types as pt
from pypaimon.schema.schema import Schema
from pypaimon.schema.schema_change import SchemaChange
from pypaimon.schema.schema_manager import SchemaManager

from infra.local.stack import REGION, client
from tests.integration.store_helpers import Store
from tests.integration.test_paimon_protocol import ACCOUNT, WAREHOUSE, error_of, options

HEADERS = {"Authorization": f"Bearer {ACCOUNT}", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def paimon(endpoint: str) -> RESTCatalog:
    """pypaimon's RESTCatalog on this service."""
    catalog = CatalogFactory.create(options(endpoint))
    assert isinstance(catalog, RESTCatalog)
    return catalog


@pytest.fixture
def db(paimon: RESTCatalog) -> str:
    """A fresh database for one test."""
    name = f"pdb_{uuid.uuid4().hex[:10]}"
    paimon.create_database(name, False, {"comment": "for a test", "k": "v"})
    return name


def url(endpoint: str, *parts: str) -> str:
    """A Paimon path under the test warehouse."""
    return "/".join([endpoint, "v1", WAREHOUSE, *parts])


def f(field_id: int, name: str, data_type: Any, description: str | None = None) -> pt.DataField:
    """A pypaimon DataField (atomic types given as text)."""
    if isinstance(data_type, str):
        data_type = pt.AtomicType(data_type)
    return pt.DataField(field_id, name, data_type, description)


def nested_schema() -> Schema:
    """A partitioned primary-key schema with ARRAY, MAP, MULTISET and ROW fields."""
    row = pt.RowType(True, [f(10, "x", "INT"), f(11, "y", pt.ArrayType(True, pt.AtomicType("STRING")))])
    fields = [
        f(0, "id", pt.AtomicType("BIGINT", False), "the key"),
        f(1, "tags", pt.ArrayType(True, pt.AtomicType("STRING"))),
        f(2, "attrs", pt.MapType(True, pt.AtomicType("STRING", False), pt.AtomicType("DOUBLE"))),
        f(3, "bag", pt.MultisetType(True, pt.AtomicType("INT"))),
        f(4, "point", row),
        f(5, "amount", "DECIMAL(10, 2)"),
        f(6, "dt", "STRING"),
    ]
    return Schema(fields=fields, partition_keys=["dt"], primary_keys=["id", "dt"],
                  options={"bucket": "2", "file.format": "parquet"}, comment="nested things")


def simple_schema(partitioned: bool = False) -> Schema:
    """An append table: (id INT, name STRING[, dt STRING])."""
    fields = [f(0, "id", "INT"), f(1, "name", "STRING")]
    if partitioned:
        fields.append(f(2, "dt", "STRING"))
    return Schema(fields=fields, partition_keys=["dt"] if partitioned else [], options={"bucket": "-1"})


# ---------------------------------------------------------------------------------- databases
def test_database_create_get_alter_drop(paimon: RESTCatalog, glue: Any) -> None:
    name = f"pdb_{uuid.uuid4().hex[:10]}"
    paimon.create_database(name, False, {"comment": "hello", "location": "file:///tmp/somewhere", "a": "1"})
    database = paimon.get_database(name)
    assert database.name == name
    assert database.options["a"] == "1"
    assert database.options["comment"] == "hello"
    assert database.options["location"] == "file:///tmp/somewhere"
    response = paimon.rest_api.get_database(name)
    assert response.location == "file:///tmp/somewhere" and response.id and response.created_at

    # The same entity through Glue: comment and location are Glue members, the rest Parameters.
    glue_db = glue.get_database(Name=name)["Database"]
    assert glue_db["Description"] == "hello"
    assert glue_db["LocationUri"] == "file:///tmp/somewhere"
    assert glue_db["Parameters"] == {"a": "1"}

    with pytest.raises(DatabaseAlreadyExistException):
        paimon.create_database(name, False)
    paimon.create_database(name, True)  # ignore_if_exists

    from pypaimon.catalog.rest.property_change import PropertyChange
    paimon.alter_database(name, [PropertyChange.set_property("b", "2"), PropertyChange.remove_property("a"),
                                 PropertyChange.set_property("comment", "changed")])
    glue_db = glue.get_database(Name=name)["Database"]
    assert glue_db["Parameters"] == {"b": "2"}
    assert glue_db["Description"] == "changed"
    assert glue_db["LocationUri"] == "file:///tmp/somewhere"
    # A Glue-side change is seen by Paimon.
    glue.update_database(Name=name, DatabaseInput={**{k: glue_db[k] for k in ("Name", "Parameters")},
                                                   "Parameters": {"b": "2", "from": "glue"}})
    assert paimon.get_database(name).options.get("from") == "glue"

    paimon.drop_database(name)
    with pytest.raises(DatabaseNotExistException):
        paimon.get_database(name)
    with pytest.raises(DatabaseNotExistException):
        paimon.drop_database(name)
    paimon.drop_database(name, ignore_if_not_exists=True)
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_database(Name=name)


def test_racing_option_changes_are_all_kept(paimon: RESTCatalog, db: str, glue: Any) -> None:
    import threading

    from pypaimon.catalog.rest.property_change import PropertyChange

    def set_keys(prefix: str) -> None:
        for i in range(5):
            paimon.alter_database(db, [PropertyChange.set_property(f"{prefix}{i}", "x")])

    threads = [threading.Thread(target=set_keys, args=(p,)) for p in "abcd"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    options = paimon.get_database(db).options
    assert {f"{p}{i}" for p in "abcd" for i in range(5)} <= set(options)
    assert options["k"] == "v" and options["comment"] == "for a test"
    assert glue.get_database(Name=db)["Database"]["Description"] == "for a test"


def test_glue_database_is_a_paimon_database(paimon: RESTCatalog, glue: Any) -> None:
    name = f"gdb_{uuid.uuid4().hex[:10]}"
    glue.create_database(DatabaseInput={"Name": name, "Description": "from glue", "Parameters": {"x": "y"}})
    assert name in paimon.list_databases()
    database = paimon.get_database(name)
    assert database.options["comment"] == "from glue" and database.options["x"] == "y"
    assert paimon.list_tables(name) == []
    paimon.drop_database(name)
    assert name not in paimon.list_databases()


def test_alter_a_missing_database_is_404(paimon: RESTCatalog) -> None:
    from pypaimon.catalog.rest.property_change import PropertyChange
    with pytest.raises(DatabaseNotExistException):
        paimon.alter_database("no_such_db_here", [PropertyChange.set_property("a", "b")])


def test_database_listing_pages_and_patterns(paimon: RESTCatalog) -> None:
    stem = f"lst{uuid.uuid4().hex[:6]}"
    names = [f"{stem}_{i:02d}" for i in range(7)] + [f"{stem}x"]
    for name in names:
        paimon.create_database(name, False)
    api = paimon.rest_api
    seen: list[str] = []
    token = None
    pages = 0
    while True:
        page = api.list_databases_paged(max_results=3, page_token=token, database_name_pattern=f"{stem}\\_%")
        assert len(page.elements) <= 3
        seen.extend(page.elements)
        pages += 1
        token = page.next_page_token
        if not token:
            break
    assert seen == names[:7]
    assert pages == 3
    assert api.list_databases_paged(database_name_pattern=f"{stem}x").elements == [f"{stem}x"]
    assert api.list_databases_paged(database_name_pattern=f"{stem}").elements == []
    assert api.list_databases_paged(database_name_pattern=f"{stem}%").elements == names
    with pytest.raises(BadRequestException):
        api.list_databases_paged(database_name_pattern=f"%{stem}")
    # A token belongs to its listing: replayed with another pattern it is refused.
    token = api.list_databases_paged(max_results=1, database_name_pattern=f"{stem}%").next_page_token
    with pytest.raises(BadRequestException):
        api.list_databases_paged(max_results=1, page_token=token, database_name_pattern=f"{stem}\\_%")
    everything = paimon.list_databases()
    assert set(names) <= set(everything) and everything == sorted(everything)
    for name in names:
        paimon.drop_database(name)


def test_drop_database_cascades_on_the_server_and_pypaimon_checks_emptiness(paimon: RESTCatalog, db: str,
                                                                             glue: Any) -> None:
    paimon.create_table(Identifier.create(db, "t1"), simple_schema(), False)
    path = paimon.rest_api.get_table(Identifier.create(db, "t1")).path
    with pytest.raises(ValueError):
        paimon.drop_database(db)  # pypaimon refuses a non-empty database unless cascade
    paimon.drop_database(db, cascade=True)
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_database(Name=db)
    assert not FileIO.get(path).exists(f"{path}/schema/schema-0")


def test_bad_database_requests_are_400(endpoint: str) -> None:
    for body in [{}, {"name": ""}, {"name": 5}, {"name": "x" * 300}, {"name": "ok", "options": {"a": 1}},
                 {"name": "ok", "options": ["a"]}, {"name": "ok", "options": {"comment": "c" * 3000}},
                 {"name": "ok", "options": {"k" * 300: "v"}}, {"name": "ok", "options": {"": "v"}}]:
        response = requests.post(url(endpoint, "databases"), data=json.dumps(body), headers=HEADERS, timeout=30)
        assert response.status_code == 400, (body, response.text)
        error_of(response)
    response = requests.get(url(endpoint, "databases") + "?maxResults=abc", headers=HEADERS, timeout=30)
    assert response.status_code == 400
    assert "maxResults" in error_of(response)["message"]
    response = requests.get(url(endpoint, "databases") + "?pageToken=garbage", headers=HEADERS, timeout=30)
    assert response.status_code == 400
    response = requests.get(url(endpoint, "databases", "no_such_database_x"), headers=HEADERS, timeout=30)
    assert response.status_code == 404
    body = error_of(response)
    assert (body["resourceType"], body["resourceName"]) == ("DATABASE", "no_such_database_x")


# ------------------------------------------------------------------------------------- tables
def test_create_and_get_a_nested_primary_key_table(paimon: RESTCatalog, db: str, glue: Any) -> None:
    identifier = Identifier.create(db, "orders")
    paimon.create_table(identifier, nested_schema(), False)
    response = paimon.rest_api.get_table(identifier)
    assert response.name == "orders"
    assert uuid.UUID(response.id)
    assert response.schema_id == 0 and response.is_external is False
    assert response.path.endswith(f"/{db}.db/orders")
    assert response.created_at and response.updated_at
    schema = response.schema
    assert [x.name for x in schema.fields] == ["id", "tags", "attrs", "bag", "point", "amount", "dt"]
    assert schema.partition_keys == ["dt"] and schema.primary_keys == ["id", "dt"]
    assert schema.options == {"bucket": "2", "file.format": "parquet"}
    assert schema.comment == "nested things"
    assert schema.fields[4].to_dict() == nested_schema().fields[4].to_dict()
    # Primary key columns are NOT NULL, as Paimon's TableSchema makes them.
    assert schema.fields[6].type.nullable is False

    # pypaimon's catalog loads it, and its files are where the path says.
    table = paimon.get_table(identifier)
    assert table.table_schema.id == 0
    manager = SchemaManager(FileIO.get(response.path), response.path)
    assert manager.latest().id == 0
    assert [x.name for x in manager.latest().fields] == [x.name for x in schema.fields]

    # The same table through Glue.
    glue_table = glue.get_table(DatabaseName=db, Name="orders")["Table"]
    assert glue_table["Parameters"]["table_type"] == "PAIMON"
    assert glue_table["Parameters"]["paimon.schema-id"] == "0"
    assert glue_table["StorageDescriptor"]["Location"] == response.path
    assert glue_table["Description"] == "nested things"
    columns = {c["Name"]: c["Type"] for c in glue_table["StorageDescriptor"]["Columns"]}
    assert columns == {"id": "bigint", "tags": "array<string>", "attrs": "map<string,double>",
                       "bag": "map<int,int>", "point": "struct<x:int,y:array<string>>", "amount": "decimal(10,2)"}
    assert glue_table["PartitionKeys"] == [{"Name": "dt", "Type": "string"}]

    with pytest.raises(TableAlreadyExistException):
        paimon.create_table(identifier, simple_schema(), False)
    paimon.create_table(identifier, simple_schema(), True)
    assert paimon.rest_api.get_table(identifier).schema_id == 0


def test_table_errors(paimon: RESTCatalog, db: str, endpoint: str) -> None:
    with pytest.raises(TableNotExistException):
        paimon.get_table(Identifier.create(db, "nothing"))
    with pytest.raises(DatabaseNotExistException):
        paimon.list_tables("no_such_db_at_all")
    with pytest.raises(NoSuchResourceException):
        paimon.rest_api.create_table(Identifier.create("no_such_db_at_all", "t"), simple_schema())
    response = requests.get(url(endpoint, "databases", db, "tables", "nothing"), headers=HEADERS, timeout=30)
    assert response.status_code == 404
    assert (error_of(response)["resourceType"], error_of(response)["resourceName"]) == ("TABLE", f"{db}.nothing")
    bad_bodies = [
        {"identifier": {"database": db, "object": "t"}},
        {"identifier": {"database": db}, "schema": {"fields": []}},
        {"identifier": {"database": db, "object": "t"}, "schema": {"fields": [{"id": 0, "name": "a"}]}},
        {"identifier": {"database": db, "object": "t"}, "schema": {"fields": [
            {"id": 0, "name": "a", "type": "NOPE"}]}},
        {"identifier": {"database": db, "object": "t"}, "schema": {"fields": [
            {"id": 0, "name": "a", "type": "INT"}], "partitionKeys": ["b"]}},
        {"identifier": {"database": db, "object": "t"}, "schema": {"fields": [
            {"id": 0, "name": "a", "type": "INT"}, {"id": 1, "name": "a", "type": "INT"}]}},
        {"identifier": {"database": db, "object": "t$snapshots"}, "schema": {"fields": []}},
        {"identifier": {"database": "other", "object": "t"}, "schema": {"fields": []}},
        {"identifier": {"database": db, "object": "t"}, "schema": {"fields": [], "options": {"path": "hdfs://nn/x"}}},
        {"identifier": {"database": db, "object": "t"}, "schema": {"fields": [], "options": {"path": "relative/x"}}},
    ]
    for body in bad_bodies:
        response = requests.post(url(endpoint, "databases", db, "tables"), data=json.dumps(body), headers=HEADERS,
                                 timeout=30)
        assert response.status_code == 400, (body, response.text)
        error_of(response)
    assert paimon.list_tables(db) == []
    # Too large to store whole: 400, nothing written.
    huge = {"identifier": {"database": db, "object": "huge"}, "schema": {"fields": [
        {"id": i, "name": f"c{i}", "type": "INT", "description": "d" * 200} for i in range(2000)]}}
    response = requests.post(url(endpoint, "databases", db, "tables"), data=json.dumps(huge), headers=HEADERS,
                             timeout=60)
    assert response.status_code == 400, response.text
    assert "too large" in error_of(response)["message"]
    assert paimon.list_tables(db) == []


def test_table_listing_pages_patterns_and_details(paimon: RESTCatalog, db: str, glue: Any, endpoint: str) -> None:
    names = [f"t_{i:02d}" for i in range(7)] + ["u_1"]
    for name in names:
        paimon.create_table(Identifier.create(db, name), simple_schema(), False)
    # A Glue table that is not a Paimon table is not listed (Paimon's clients could not read it).
    glue.create_table(DatabaseName=db, TableInput={"Name": "t_hive", "StorageDescriptor": {"Columns": []}})
    assert paimon.list_tables(db) == names
    api = paimon.rest_api
    seen: list[str] = []
    token = None
    while True:
        page = api.list_tables_paged(db, max_results=3, page_token=token, table_name_pattern="t\\_%")
        seen.extend(page.elements)
        token = page.next_page_token
        if not token:
            break
    assert seen == names[:7]
    assert api.list_tables_paged(db, table_name_pattern="u_1").elements == ["u_1"]
    assert api.list_tables_paged(db, table_name_pattern="u%").elements == ["u_1"]
    assert api.list_tables_paged(db, table_type="format-table").elements == []
    assert api.list_tables_paged(db, table_type="table").elements == names
    with pytest.raises(BadRequestException):
        api.list_tables_paged(db, table_name_pattern="%_1")

    response = requests.get(url(endpoint, "databases", db, "table-details") + "?maxResults=5",
                            headers=HEADERS, timeout=30)
    assert response.status_code == 200, response.text
    body = response.json()
    assert [d["name"] for d in body["tableDetails"]] == names[:5]
    assert all(d["schemaId"] == 0 and d["schema"]["fields"][0]["name"] == "id" for d in body["tableDetails"])
    assert body["nextPageToken"]
    rest = requests.get(url(endpoint, "databases", db, "table-details"),
                        params={"maxResults": "5", "pageToken": body["nextPageToken"]}, headers=HEADERS,
                        timeout=30).json()
    assert [d["name"] for d in rest["tableDetails"]] == names[5:]
    assert rest["nextPageToken"] is None


def test_rename_keeps_identity_path_and_files(paimon: RESTCatalog, db: str, glue: Any) -> None:
    old, new = Identifier.create(db, "before"), Identifier.create(db, "after")
    paimon.create_table(old, simple_schema(partitioned=True), False)
    paimon.alter_table(old, [SchemaChange.set_option("a", "1")])
    before = paimon.rest_api.get_table(old)
    paimon.rename_table(old, new)
    with pytest.raises(TableNotExistException):
        paimon.get_table(old)
    after = paimon.rest_api.get_table(new)
    assert (after.id, after.path, after.schema_id) == (before.id, before.path, 1)
    assert after.schema.options == {"bucket": "-1", "a": "1"}
    assert glue.get_table(DatabaseName=db, Name="after")["Table"]["Parameters"]["table_type"] == "PAIMON"
    # Its history is still there, and a new table can take the old name without touching it.
    paimon.create_table(old, simple_schema(), False)
    fresh = paimon.rest_api.get_table(old)
    assert fresh.id != before.id and fresh.path != before.path
    assert SchemaManager(FileIO.get(after.path), after.path).latest().id == 1
    # Into another database, and the errors.
    other = f"{db}_other"
    paimon.create_database(other, False)
    paimon.rename_table(new, Identifier.create(other, "moved"))
    assert paimon.rest_api.get_table(Identifier.create(other, "moved")).id == before.id
    with pytest.raises(TableNotExistException):
        paimon.rename_table(new, Identifier.create(db, "x"))
    with pytest.raises(TableAlreadyExistException):
        paimon.rename_table(Identifier.create(other, "moved"), old)
    paimon.drop_database(other, cascade=True)


def test_drop_table_removes_it_everywhere(paimon: RESTCatalog, db: str, glue: Any, tmp_path: Any) -> None:
    identifier = Identifier.create(db, "gone")
    paimon.create_table(identifier, simple_schema(), False)
    path = paimon.rest_api.get_table(identifier).path
    io = FileIO.get(path)
    assert io.exists(f"{path}/schema/schema-0")
    paimon.drop_table(identifier)
    with pytest.raises(TableNotExistException):
        paimon.get_table(identifier)
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_table(DatabaseName=db, Name="gone")
    assert not io.exists(path)
    with pytest.raises(TableNotExistException):
        paimon.drop_table(identifier)
    paimon.drop_table(identifier, ignore_if_not_exists=True)
    # Re-created under the same name it starts from scratch (a new id, schema 0).
    paimon.create_table(identifier, simple_schema(partitioned=True), False)
    assert paimon.rest_api.get_table(identifier).schema_id == 0
    # An external table (``path`` option): dropped from the catalog, its files left alone.
    external = tmp_path / "ext"
    ext_schema = simple_schema()
    ext_schema.options["path"] = external.as_uri()
    ext_id = Identifier.create(db, "ext")
    paimon.create_table(ext_id, ext_schema, False)
    response = paimon.rest_api.get_table(ext_id)
    assert response.is_external is True and response.path == external.as_uri()
    assert "path" not in response.schema.options
    assert (external / "schema" / "schema-0").is_file()
    paimon.drop_table(ext_id)
    assert (external / "schema" / "schema-0").is_file()


# ------------------------------------------------------------------------- schema evolution
def raw_alter(endpoint: str, db: str, table: str, changes: list[dict[str, Any]]) -> requests.Response:
    """POST an AlterTableRequest as Paimon's Java client sends it."""
    return requests.post(url(endpoint, "databases", db, "tables", table), data=json.dumps({"changes": changes}),
                         headers=HEADERS, timeout=30)


def test_schema_evolution_keeps_the_whole_history(paimon: RESTCatalog, db: str, glue: Any, endpoint: str) -> None:
    identifier = Identifier.create(db, "evolving")
    paimon.create_table(identifier, nested_schema(), False)
    steps = [
        [SchemaChange.set_option("snapshot.num-retained.max", "5")],
        [SchemaChange.remove_option("snapshot.num-retained.max"), SchemaChange.update_comment("new comment")],
        [SchemaChange.add_column("note", pt.AtomicType("STRING"), "a note")],
        [SchemaChange.rename_column("note", "remark")],
        [SchemaChange.update_column_comment("remark", "renamed")],
        [SchemaChange.update_column_type("amount", pt.AtomicType("DECIMAL(12, 2)"))],
        [SchemaChange.update_column_nullability("remark", True)],
        [SchemaChange.add_column(["point", "z"], pt.AtomicType("BIGINT"))],
        [SchemaChange.drop_column("bag")],
    ]
    for step in steps:
        paimon.alter_table(identifier, step)
    # Raw HTTP for what pypaimon cannot encode: addColumn with a move, updateColumnPosition.
    response = raw_alter(endpoint, db, "evolving", [
        {"action": "addColumn", "fieldNames": ["first_col"], "dataType": "INT",
         "move": {"fieldName": "first_col", "referenceFieldName": None, "type": "FIRST"}}])
    assert response.status_code == 200, response.text
    response = raw_alter(endpoint, db, "evolving", [
        {"action": "updateColumnPosition",
         "move": {"fieldName": "remark", "referenceFieldName": "id", "type": "AFTER"}}])
    assert response.status_code == 200, response.text

    latest = paimon.rest_api.get_table(identifier)
    assert latest.schema_id == len(steps) + 2
    names = [x.name for x in latest.schema.fields]
    assert names == ["first_col", "id", "remark", "tags", "attrs", "point", "amount", "dt"]
    assert latest.schema.comment == "new comment"
    assert "snapshot.num-retained.max" not in latest.schema.options
    assert latest.schema.fields[6].type.type == "DECIMAL(12, 2)"
    point = latest.schema.fields[5].type
    assert [x.name for x in point.fields] == ["x", "y", "z"]

    # Every schema is in the table directory, readable by pypaimon's SchemaManager.
    manager = SchemaManager(FileIO.get(latest.path), latest.path)
    history = manager.list_all()
    assert [x.id for x in history] == list(range(len(steps) + 3))
    assert history[0].options.get("snapshot.num-retained.max") is None
    assert history[1].options["snapshot.num-retained.max"] == "5"
    assert [x.name for x in history[3].fields][-1] == "note"
    assert [x.name for x in history[-1].fields] == names
    # pypaimon's table sees the latest schema.
    assert paimon.get_table(identifier).table_schema.id == len(steps) + 2

    # Glue shows the latest columns.
    glue_table = glue.get_table(DatabaseName=db, Name="evolving")["Table"]
    assert glue_table["Parameters"]["paimon.schema-id"] == str(len(steps) + 2)
    assert [c["Name"] for c in glue_table["StorageDescriptor"]["Columns"]] == [n for n in names if n != "dt"]
    assert glue_table["Description"] == "new comment"
    types = {c["Name"]: c["Type"] for c in glue_table["StorageDescriptor"]["Columns"]}
    assert types["amount"] == "decimal(12,2)" and types["point"] == "struct<x:int,y:array<string>,z:bigint>"


@pytest.mark.parametrize("change, error", [
    (lambda: SchemaChange.drop_column("dt"), BadRequestException),  # a partition key
    (lambda: SchemaChange.drop_column("id"), BadRequestException),  # a primary key
    (lambda: SchemaChange.drop_column("nope"), NoSuchResourceException),
    (lambda: SchemaChange.rename_column("nope", "x"), NoSuchResourceException),
    (lambda: SchemaChange.add_column("tags", pt.AtomicType("INT")), AlreadyExistsException),
    (lambda: SchemaChange.rename_column("dt", "day"), BadRequestException),
    (lambda: SchemaChange.update_column_type("tags", pt.AtomicType("INT")), BadRequestException),
    (lambda: SchemaChange.update_column_type("amount", pt.AtomicType("BOOLEAN")), BadRequestException),
    (lambda: SchemaChange.add_column("strict", pt.AtomicType("INT", False)), BadRequestException),
    (lambda: SchemaChange.set_option("type", "format-table"), BadRequestException),
])
def test_invalid_changes_are_refused_and_change_nothing(paimon: RESTCatalog, db: str, glue: Any,
                                                        change: Callable[[], Any], error: type) -> None:
    identifier = Identifier.create(db, "strict_t")
    paimon.create_table(identifier, nested_schema(), False)
    before = paimon.rest_api.get_table(identifier)
    glue_before = glue.get_table(DatabaseName=db, Name="strict_t")["Table"]
    with pytest.raises(error):
        # The second change is invalid: the valid first one must not land either.
        paimon.rest_api.alter_table(identifier, [SchemaChange.set_option("fine", "1"), change()])
    after = paimon.rest_api.get_table(identifier)
    assert after.schema_id == 0 and JSON.to_json(after.schema) == JSON.to_json(before.schema)
    manager = SchemaManager(FileIO.get(after.path), after.path)
    assert [x.id for x in manager.list_all()] == [0]
    assert glue.get_table(DatabaseName=db, Name="strict_t")["Table"]["VersionId"] == glue_before["VersionId"]


def test_alter_errors_on_the_wire(paimon: RESTCatalog, db: str, endpoint: str) -> None:
    paimon.create_table(Identifier.create(db, "w"), simple_schema(), False)
    for changes in [[], [{"action": "nope"}], [{"action": "setOption", "key": "k"}], "x",
                    [{"action": "addColumn", "fieldNames": ["c"], "dataType": "WHAT"}]]:
        response = raw_alter(endpoint, db, "w", changes)  # type: ignore[arg-type]
        assert response.status_code == 400, (changes, response.text)
        error_of(response)
    response = raw_alter(endpoint, db, "w", [{"action": "dropColumn", "fieldNames": ["zzz"]}])
    assert response.status_code == 404
    assert (error_of(response)["resourceType"], error_of(response)["resourceName"]) == ("COLUMN", "zzz")
    response = raw_alter(endpoint, db, "nope", [{"action": "setOption", "key": "a", "value": "b"}])
    assert response.status_code == 404
    assert error_of(response)["resourceType"] == "TABLE"
    assert paimon.rest_api.get_table(Identifier.create(db, "w")).schema_id == 0


# ------------------------------------------------------------------- Glue tables seen by Paimon
def test_a_glue_parquet_table_is_a_paimon_format_table(paimon: RESTCatalog, db: str, glue: Any,
                                                       tmp_path: Any) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    location = tmp_path / "hive_t"
    (location / "dt=2024-01-01").mkdir(parents=True)
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "name": ["a", "b"]}),
                   location / "dt=2024-01-01" / "part-0.parquet")
    glue.create_table(DatabaseName=db, TableInput={
        "Name": "hive_t", "TableType": "EXTERNAL_TABLE", "Description": "from glue",
        "Parameters": {"classification": "parquet"},
        "StorageDescriptor": {
            "Columns": [{"Name": "id", "Type": "bigint"}, {"Name": "name", "Type": "string", "Comment": "c"}],
            "Location": location.as_uri(),
            "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"}},
        "PartitionKeys": [{"Name": "dt", "Type": "string"}]})
    # An Avro table has no Paimon counterpart: not listed, not found.
    glue.create_table(DatabaseName=db, TableInput={
        "Name": "avro_t", "StorageDescriptor": {
            "Columns": [{"Name": "id", "Type": "int"}], "Location": (tmp_path / "avro").as_uri(),
            "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.serde2.avro.AvroSerDe"}}})
    assert paimon.list_tables(db) == ["hive_t"]
    assert paimon.rest_api.list_tables_paged(db, table_type="format-table").elements == ["hive_t"]
    assert paimon.rest_api.list_tables_paged(db, table_type="table").elements == []
    with pytest.raises(TableNotExistException):
        paimon.get_table(Identifier.create(db, "avro_t"))

    response = paimon.rest_api.get_table(Identifier.create(db, "hive_t"))
    assert response.path == location.as_uri() and response.is_external is True
    assert response.schema.options["type"] == "format-table"
    assert response.schema.options["file.format"] == "parquet"
    assert [(x.name, x.type.type) for x in response.schema.fields] == [("id", "BIGINT"), ("name", "STRING"),
                                                                       ("dt", "STRING")]
    assert response.schema.partition_keys == ["dt"] and response.schema.comment == "from glue"

    table = paimon.get_table(Identifier.create(db, "hive_t"))
    builder = table.new_read_builder()
    data = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    assert sorted(data.column("id").to_pylist()) == [1, 2]

    # Its schema belongs to Glue.
    with pytest.raises(BadRequestException):
        paimon.rest_api.alter_table(Identifier.create(db, "hive_t"), [SchemaChange.set_option("a", "b")])
    paimon.drop_table(Identifier.create(db, "hive_t"))
    assert (location / "dt=2024-01-01" / "part-0.parquet").is_file()


# ------------------------------------------------------------------------ data through pypaimon
def test_pyarrow_write_and_read_of_an_append_table(paimon: RESTCatalog, db: str) -> None:
    import pyarrow as pa

    identifier = Identifier.create(db, "appended")
    paimon.create_table(identifier, simple_schema(partitioned=True), False)
    table = paimon.get_table(identifier)
    data = pa.table({"id": pa.array([1, 2, 3], pa.int32()), "name": ["a", "b", "c"], "dt": ["d1", "d1", "d2"]})
    builder = table.new_batch_write_builder()
    write, commit = builder.new_write(), builder.new_commit()
    try:
        write.write_arrow(data)
        commit.commit(write.prepare_commit())
    finally:
        write.close()
        commit.close()
    table = paimon.get_table(identifier)
    read_builder = table.new_read_builder()
    result = read_builder.new_read().to_arrow(read_builder.new_scan().plan().splits())
    assert sorted(result.column("id").to_pylist()) == [1, 2, 3]


# ---------------------------------------------------------------------- races and crash repair
def test_racing_alters_all_land_in_order(paimon: RESTCatalog, db: str, glue: Any) -> None:
    import threading

    identifier = Identifier.create(db, "raced")
    paimon.create_table(identifier, simple_schema(), False)
    errors: list[BaseException] = []

    def add(prefix: str) -> None:
        try:
            for i in range(4):
                paimon.alter_table(identifier, [SchemaChange.add_column(f"{prefix}{i}", pt.AtomicType("INT"))])
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=add, args=(p,)) for p in ("a", "b", "c")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    latest = paimon.rest_api.get_table(identifier)
    assert latest.schema_id == 12
    added = [x.name for x in latest.schema.fields][2:]
    assert sorted(added) == sorted(f"{p}{i}" for p in "abc" for i in range(4))
    # Each writer's columns in its own order; field ids unique and increasing with the schema.
    for p in "abc":
        assert [n for n in added if n.startswith(p)] == [f"{p}{i}" for i in range(4)]
    assert [x.id for x in latest.schema.fields] == list(range(14))
    history = SchemaManager(FileIO.get(latest.path), latest.path).list_all()
    assert [x.id for x in history] == list(range(13))
    assert [len(x.fields) for x in history] == list(range(2, 15))
    glue_table = glue.get_table(DatabaseName=db, Name="raced")["Table"]
    assert glue_table["Parameters"]["paimon.schema-id"] == "12"
    assert len(glue_table["StorageDescriptor"]["Columns"]) == 14


def test_a_lagging_glue_mirror_and_missing_schema_file_are_repaired(paimon: RESTCatalog, db: str,
                                                                    glue: Any) -> None:
    identifier = Identifier.create(db, "lagging")
    paimon.create_table(identifier, simple_schema(), False)
    old = glue.get_table(DatabaseName=db, Name="lagging")["Table"]
    # Read before the alter: this server then guesses schema 0 as the latest, which its next
    # GetTable must find disproved (schema 1 exists) although the Glue item shows 0 again.
    path = paimon.rest_api.get_table(identifier).path
    paimon.alter_table(identifier, [SchemaChange.add_column("extra", pt.AtomicType("INT"))])
    # As if the alter had crashed after storing schema 1: Glue one schema behind, no schema-1 file.
    keep = ("Name", "TableType", "Parameters", "StorageDescriptor", "PartitionKeys", "Description", "Owner")
    glue.update_table(DatabaseName=db, TableInput={k: old[k] for k in keep if k in old})
    FileIO.get(path).delete(f"{path}/schema/schema-1")
    assert glue.get_table(DatabaseName=db, Name="lagging")["Table"]["Parameters"]["paimon.schema-id"] == "0"

    latest = paimon.rest_api.get_table(identifier)
    assert latest.schema_id == 1 and [x.name for x in latest.schema.fields] == ["id", "name", "extra"]
    repaired = glue.get_table(DatabaseName=db, Name="lagging")["Table"]
    assert repaired["Parameters"]["paimon.schema-id"] == "1"
    assert [c["Name"] for c in repaired["StorageDescriptor"]["Columns"]] == ["id", "name", "extra"]
    assert SchemaManager(FileIO.get(path), path).latest().id == 1


def test_tables_listed_globally(paimon: RESTCatalog, endpoint: str) -> None:
    stem = f"glb{uuid.uuid4().hex[:6]}"
    expected = []
    for d in ("a", "b", "c"):
        paimon.create_database(f"{stem}_{d}", False)
        for t in ("t1", "t2"):
            paimon.create_table(Identifier.create(f"{stem}_{d}", t), simple_schema(), False)
            expected.append({"database": f"{stem}_{d}", "object": t})
    paimon.create_database(f"{stem}_empty", False)
    seen: list[dict[str, str]] = []
    params: dict[str, str] = {"databaseNamePattern": f"{stem}%", "maxResults": "4"}
    while True:
        response = requests.get(url(endpoint, "tables"), params=params, headers=HEADERS, timeout=30)
        assert response.status_code == 200, response.text
        body = response.json()
        seen.extend(body["tables"])
        if not body["nextPageToken"]:
            break
        params["pageToken"] = body["nextPageToken"]
    assert seen == expected
    response = requests.get(url(endpoint, "tables"), params={"databaseNamePattern": f"{stem}_b",
                                                             "tableNamePattern": "t2"}, headers=HEADERS, timeout=30)
    assert response.json()["tables"] == [{"database": f"{stem}_b", "object": "t2"}]
    for d in ("a", "b", "c", "empty"):
        paimon.drop_database(f"{stem}_{d}", cascade=True)


def test_a_glue_delete_on_a_fresh_server_purges_the_paimon_items(paimon: RESTCatalog, db: str, stack: Any,
                                                                  start_server: Callable[..., Any]) -> None:

    from infra.local.stack import client

    identifier = Identifier.create(db, "purged")
    paimon.create_table(identifier, simple_schema(), False)
    paimon.alter_table(identifier, [SchemaChange.set_option("a", "b")])
    uid = uuid.UUID(paimon.rest_api.get_table(identifier).id).hex
    dynamodb = stack.ddb_client()

    def items() -> int:
        return int(dynamodb.query(TableName=stack.table_prefix + "paimon", KeyConditionExpression="table_uid = :u",
                                  ExpressionAttributeValues={":u": {"S": uid}}, Select="COUNT")["Count"])
    assert items() == 4  # schema 0, schema 1, head, locator (GetTable by id)
    # A server that has served no Paimon call deletes the table through Glue.
    fresh = start_server()
    client(fresh.endpoint, "glue").delete_table(DatabaseName=db, Name="purged")
    deadline = time.monotonic() + 60  # the contents go in the background (service/cleanup.py)
    while items() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert items() == 0


@pytest.mark.parametrize("round_", range(3))
def test_racing_creates_have_one_winner_whose_files_stand(paimon: RESTCatalog, db: str, round_: int) -> None:
    identifier = Identifier.create(db, f"contested{round_}")
    outcomes: list[str] = []

    def create(n: int) -> None:
        schema = Schema(fields=[f(0, "id", "INT"), f(1, f"only_{n}", "STRING")], options={"bucket": "-1"})
        try:
            paimon.create_table(identifier, schema, False)
            outcomes.append(f"only_{n}")
        except TableAlreadyExistException:
            outcomes.append("lost")
        except Exception as error:  # noqa: BLE001 - shown by the assertion below
            outcomes.append(f"error: {error!r}")

    threads = [threading.Thread(target=create, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [o for o in outcomes if o.startswith("only_")]
    # Every racer ends (6 outcomes), exactly one wins, and every loser is told the table exists.
    # (A loser that checked the default path before the winner wrote there and again after was
    # once told "the path already holds a Paimon table" instead.)
    assert len(outcomes) == 6 and len(winners) == 1 and outcomes.count("lost") == 5, outcomes
    response = paimon.rest_api.get_table(identifier)
    assert [x.name for x in response.schema.fields] == ["id", winners[0]]
    on_disk = SchemaManager(FileIO.get(response.path), response.path).latest()
    assert on_disk.id == 0 and [x.name for x in on_disk.fields] == ["id", winners[0]]
    # A loser that moved to a directory of its own (named after its uid) removed it.
    winner_dir = Path(urlparse(response.path).path)
    assert [p.name for p in winner_dir.parent.iterdir()
            if p.name.startswith(f"contested{round_}-") and p != winner_dir] == []


def test_a_rename_into_another_database_waits_for_that_databases_commit(paimon: RESTCatalog, db: str,
                                                                          endpoint: str, stack: Any) -> None:
    """A rename is a table write of both databases: while a Lake Formation commit of table
    changes holds the target's metadata lock (planted here, under the API, as a live committer
    within its lease), the renamed table must not land there; it lands once the lock is free."""
    other = f"{db}_target"
    paimon.create_database(other, False)
    paimon.create_table(Identifier.create(db, "moving"), simple_schema(), False)
    store = Store(stack)
    ddb, prefix = store.client, store.prefix
    holder = client(endpoint, "lakeformation", account=ACCOUNT).start_transaction()["TransactionId"]
    ddb.update_item(TableName=prefix + "lf_transactions",
                    Key={"catalog": {"S": f"{REGION}\x01{ACCOUNT}"}, "transaction_id": {"S": holder}},
                    UpdateExpression="SET #s = :s, last_activity = :now", ExpressionAttributeNames={"#s": "status"},
                    ExpressionAttributeValues={":s": {"S": "COMMIT_IN_PROGRESS"}, ":now": {"N": str(time.time())}})
    lock = {"name": {"S": f"lock\x01meta\x01{store.database_uid(other, ACCOUNT)}"}}
    ddb.put_item(TableName=prefix + "lf_commit_state",
                 Item={**lock, "transaction_id": {"S": holder}, "since": {"N": str(time.time())}})
    released = threading.Event()

    def release_later() -> None:
        time.sleep(1.0)
        released.set()  # before the delete: a rename that waited can only return after both
        ddb.delete_item(TableName=prefix + "lf_commit_state", Key=lock)
    releaser = threading.Thread(target=release_later)
    releaser.start()
    try:
        paimon.rename_table(Identifier.create(db, "moving"), Identifier.create(other, "moved"))
        assert released.is_set(), "the rename landed while the target database's commit held its lock"
    finally:
        releaser.join()
    assert paimon.get_table(Identifier.create(other, "moved")) is not None
