"""Table API through boto3 over HTTP."""

from __future__ import annotations

import json
import urllib.request

import pytest

from tests.integration.conftest import columns, table_input


def test_create_table_stores_every_member_faithfully(glue, db):
    given = {
        "Name": "Orders",
        "Description": "all orders",
        "Owner": "analytics",
        "Retention": 7,
        "StorageDescriptor": {
            "Columns": [{"Name": "id", "Type": "bigint", "Comment": "key", "Parameters": {"pii": "no"}}],
            "Location": "s3://bucket/orders/",
            "InputFormat": "org.apache.hadoop.mapred.TextInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            "Compressed": False,
            "NumberOfBuckets": 4,
            "SerdeInfo": {"Name": "s", "SerializationLibrary": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                          "Parameters": {"field.delim": ","}},
            "BucketColumns": ["id"],
            "SortColumns": [{"Column": "id", "SortOrder": 1}],
            "Parameters": {"k": "v"},
            "SkewedInfo": {"SkewedColumnNames": ["id"], "SkewedColumnValues": ["1"],
                           "SkewedColumnValueLocationMaps": {"1": "s3://bucket/skew/"}},
            "StoredAsSubDirectories": False,
        },
        "PartitionKeys": [{"Name": "dt", "Type": "date", "Comment": "day"}],
        "ViewOriginalText": "/* original */",
        "ViewExpandedText": "/* expanded */",
        "TableType": "EXTERNAL_TABLE",
        "Parameters": {"classification": "csv", "big": "x" * 100_000},
        "TargetTable": {"CatalogId": "111122223333", "DatabaseName": "other", "Name": "t", "Region": "eu-west-1"},
    }
    glue.create_table(DatabaseName=db, TableInput=given)
    table = glue.get_table(DatabaseName=db.upper(), Name="ORDERS")["Table"]
    assert table["Name"] == "orders"
    assert table["DatabaseName"] == db
    for member in ("Description", "Owner", "Retention", "StorageDescriptor", "PartitionKeys",
                   "ViewOriginalText", "ViewExpandedText", "TableType", "Parameters", "TargetTable"):
        assert table[member] == given[member], member
    assert table["VersionId"] == "0"
    assert table["IsRegisteredWithLakeFormation"] is False
    assert table["CreateTime"] == table["UpdateTime"]


def test_create_table_errors(glue, db):
    with pytest.raises(glue.exceptions.EntityNotFoundException, match="Database"):
        glue.create_table(DatabaseName="no_such_db", TableInput=table_input("t"))
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    with pytest.raises(glue.exceptions.AlreadyExistsException):
        glue.create_table(DatabaseName=db, TableInput=table_input("T"))
    with pytest.raises(glue.exceptions.InvalidInputException, match="tableInput.name"):
        glue.create_table(DatabaseName=db, TableInput={"Name": "bad\nname"})


def test_get_table_not_found(glue, db):
    with pytest.raises(glue.exceptions.EntityNotFoundException, match="nope"):
        glue.get_table(DatabaseName=db, Name="nope")


def test_update_table_replaces_definition(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t", Parameters={"a": "1"}))
    created = glue.get_table(DatabaseName=db, Name="t")["Table"]
    glue.update_table(DatabaseName=db, TableInput=table_input("t", Description="new", Parameters={"b": "2"}))
    table = glue.get_table(DatabaseName=db, Name="t")["Table"]
    assert table["Description"] == "new"
    assert table["Parameters"] == {"b": "2"}
    assert table["CreateTime"] == created["CreateTime"]
    assert table["UpdateTime"] >= created["UpdateTime"]
    assert table["VersionId"] == "1"
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.update_table(DatabaseName=db, TableInput=table_input("missing"))


def test_delete_table_and_batch_delete(glue, db):
    for name in ("a", "b", "c"):
        glue.create_table(DatabaseName=db, TableInput=table_input(name))
    glue.delete_table(DatabaseName=db, Name="A")
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.delete_table(DatabaseName=db, Name="a")
    errors = glue.batch_delete_table(DatabaseName=db, TablesToDelete=["b", "zzz", "c"])["Errors"]
    assert [(e["TableName"], e["ErrorDetail"]["ErrorCode"]) for e in errors] == [("zzz", "EntityNotFoundException")]
    assert glue.get_tables(DatabaseName=db)["TableList"] == []


def test_batch_delete_table_limit(glue, db):
    with pytest.raises(glue.exceptions.InvalidInputException, match="100"):
        glue.batch_delete_table(DatabaseName=db, TablesToDelete=[f"t{i}" for i in range(101)])


def test_deleted_table_recreated_starts_fresh(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    glue.update_table(DatabaseName=db, TableInput=table_input("t", Description="1"))
    glue.delete_table(DatabaseName=db, Name="t")
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    versions = glue.get_table_versions(DatabaseName=db, TableName="t")["TableVersions"]
    assert [v["VersionId"] for v in versions] == ["0"]


def test_get_tables_pattern_and_paging(glue, db):
    names = [f"sales_{i:02d}" for i in range(12)] + ["orders", "order_items", "customers"]
    for name in names:
        glue.create_table(DatabaseName=db, TableInput=table_input(name))
    listed = [t["Name"] for t in glue.get_tables(DatabaseName=db)["TableList"]]
    assert listed == sorted(names)

    def names_for(expression):
        pages = glue.get_paginator("get_tables").paginate(
            DatabaseName=db, Expression=expression, PaginationConfig={"PageSize": 4})
        return [t["Name"] for page in pages for t in page["TableList"]]

    assert names_for("sales*") == sorted(n for n in names if n.startswith("sales"))
    assert names_for("order*") == ["order_items", "orders"]
    assert names_for("orders|customers") == ["customers", "orders"]
    assert names_for("ORD.*S") == ["order_items", "orders"]
    assert names_for("sales_0[0-2]") == ["sales_00", "sales_01", "sales_02"]
    assert names_for("nomatch") == []
    with pytest.raises(glue.exceptions.InvalidInputException, match="pattern"):
        glue.get_tables(DatabaseName=db, Expression="sales[")


def test_get_tables_attributes_to_get(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input("t"))
    assert glue.get_tables(DatabaseName=db, AttributesToGet=["NAME"])["TableList"] == [{"Name": "t"}]
    assert glue.get_tables(DatabaseName=db, AttributesToGet=["NAME", "TABLE_TYPE"])["TableList"] == [
        {"Name": "t", "TableType": "EXTERNAL_TABLE"}]
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.get_tables(DatabaseName=db, AttributesToGet=["TABLE_TYPE"])


def test_get_tables_missing_database(glue):
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_tables(DatabaseName="no_such_database_here")


def test_large_parameters_round_trip(glue, db):
    value = "".join(chr(0x41 + (i * 7919) % 26) for i in range(512_000))
    glue.create_table(DatabaseName=db, TableInput=table_input("big", Parameters={"huge": value}))
    assert glue.get_table(DatabaseName=db, Name="big")["Table"]["Parameters"]["huge"] == value


def test_column_types_and_columns_kept(glue, db):
    glue.create_table(DatabaseName=db, TableInput=table_input(
        "wide", StorageDescriptor={"Columns": columns(*[f"c{i}" for i in range(300)], kind="int")}))
    table = glue.get_table(DatabaseName=db, Name="wide")["Table"]
    assert [c["Name"] for c in table["StorageDescriptor"]["Columns"]] == [f"c{i}" for i in range(300)]


def test_null_members_of_table_input_are_absent(endpoint, glue, db):
    """JSON null is how some clients spell "not given" (boto3 cannot send it, so raw HTTP); it
    must not reach the stored table (a null PartitionKeys was a 500)."""
    nulls = {"PartitionKeys": None, "Description": None, "Parameters": None, "StorageDescriptor": None}
    for operation, extra in (("CreateTable", {}), ("UpdateTable", {"TableType": "EXTERNAL_TABLE"})):
        body = json.dumps({"DatabaseName": db, "TableInput": {"Name": "nulls", **nulls, **extra}}).encode()
        request = urllib.request.Request(endpoint + "/", data=body, method="POST", headers={
            "Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": f"AWSGlue.{operation}"})
        with urllib.request.urlopen(request, timeout=30) as response:  # raises on a 4xx/5xx
            assert response.status == 200
    table = glue.get_table(DatabaseName=db, Name="nulls")["Table"]
    assert table["PartitionKeys"] == [] and table["TableType"] == "EXTERNAL_TABLE"
    assert not {"Description", "Parameters", "StorageDescriptor"} & set(table)
    assert [t["Name"] for t in glue.get_tables(DatabaseName=db)["TableList"]] == ["nulls"]
