"""Table API through boto3 over HTTP."""

from __future__ import annotations

import datetime as dt
import json
import urllib.request

import pytest

from tests.integration.conftest import columns, random_account, table_input
from tests.integration.store_helpers import Store


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


# -------------------------------------------------------------------------------- hardening
def test_backtracking_patterns_do_not_stall_get_tables(glue, db):
    """(a+)+b used to take seconds per 26-letter name in Python's re, holding the GIL."""
    names = ["a" * 26, "a" * 200 + "c", "aab"]
    for name in names:
        glue.create_table(DatabaseName=db, TableInput=table_input(name))
    for expression, expected in [("(a+)+b", ["aab"]), ("(a|a)*c", ["a" * 200 + "c"]),
                                 ("(.*)*(.*)*(.*)*x", []), ("(a|aa)+", ["a" * 26])]:
        listed = [t["Name"] for t in glue.get_tables(DatabaseName=db, Expression=expression)["TableList"]]
        assert listed == expected, expression


@pytest.mark.parametrize("expression", ["a{1,3}", "(a)\\1", "(?=a).*", "x" * 513])
def test_unsupported_or_oversized_expressions_are_refused(glue, db, expression):
    with pytest.raises(glue.exceptions.InvalidInputException, match="Expression"):
        glue.get_tables(DatabaseName=db, Expression=expression)


@pytest.mark.parametrize("when", [
    dt.datetime(9999, 12, 31, 0, 0, 1, tzinfo=dt.timezone.utc),
    dt.datetime(1, 1, 1, 23, 59, 59, tzinfo=dt.timezone.utc),
])
def test_timestamps_clients_cannot_read_back_are_refused(glue, db, when):
    for member in ("LastAccessTime", "LastAnalyzedTime"):
        with pytest.raises(glue.exceptions.InvalidInputException, match=member[0].lower() + member[1:]):
            glue.create_table(DatabaseName=db, TableInput=table_input("t", **{member: when}))
    assert glue.get_tables(DatabaseName=db)["TableList"] == []


def test_timestamps_at_the_readable_bounds_round_trip(glue, db):
    latest = dt.datetime(9999, 12, 31, tzinfo=dt.timezone.utc)
    earliest = dt.datetime(1, 1, 2, tzinfo=dt.timezone.utc)
    glue.create_table(DatabaseName=db, TableInput=table_input("t", LastAccessTime=latest, LastAnalyzedTime=earliest))
    table = glue.get_tables(DatabaseName=db)["TableList"][0]
    assert table["LastAccessTime"] == latest and table["LastAnalyzedTime"] == earliest


def test_a_stored_unreadable_timestamp_does_not_break_listings(make_client, stack):
    """A table written before out-of-range timestamps were refused: every listing still reads."""
    account = random_account()
    glue = make_client("glue", account=account)
    glue.create_database(DatabaseInput={"Name": "d"})
    good = dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)
    for name in ("bad", "good"):
        glue.create_table(DatabaseName="d", TableInput=table_input(name, Description="planted", LastAccessTime=good))
    glue.update_table(DatabaseName="d", TableInput=table_input("bad", Description="planted", LastAccessTime=good))
    store = Store(stack)

    def plant(doc):
        doc["LastAccessTime"], doc["LastAnalyzedTime"] = 1e13, -10**400
    store.rewrite_doc("tables", store.table_item("d", "bad", account), plant)
    for version in store.query("table_versions", "table_uid", store.table_item("d", "bad", account)["uid"]["S"]):
        store.rewrite_doc("table_versions", version, plant)

    listed = {t["Name"]: t for t in glue.get_tables(DatabaseName="d")["TableList"]}
    assert "LastAccessTime" not in listed["bad"] and "LastAnalyzedTime" not in listed["bad"]
    assert listed["good"]["LastAccessTime"] == good
    assert "LastAccessTime" not in glue.get_table(DatabaseName="d", Name="bad")["Table"]
    found = {t["Name"] for t in glue.search_tables(SearchText="planted")["TableList"]}
    assert found == {"bad", "good"}
    versions = glue.get_table_versions(DatabaseName="d", TableName="bad")["TableVersions"]
    assert len(versions) == 2 and all("LastAccessTime" not in v["Table"] for v in versions)


def test_longest_cjk_names_work_everywhere(make_client):
    """255 CJK characters are 765 UTF-8 bytes: database + table overflowed a 1,024-byte sort key."""
    glue = make_client("glue", account=random_account())
    database, table = "数" * 255, "表" * 255
    glue.create_database(DatabaseInput={"Name": database, "Description": "描述"})
    given = table_input(table, Description="中文 说明", PartitionKeys=[{"Name": "键" * 255, "Type": "string"}])
    glue.create_table(DatabaseName=database, TableInput=given)
    assert glue.get_table(DatabaseName=database, Name=table)["Table"]["Name"] == table
    assert [t["Name"] for t in glue.get_tables(DatabaseName=database, Expression="表*")["TableList"]] == [table]
    for text in ("表" * 64, "说明", "描述"):
        assert [(t["DatabaseName"], t["Name"]) for t in glue.search_tables(SearchText=text)["TableList"]] == \
            [(database, table)], text
    glue.update_table(DatabaseName=database, TableInput={**given, "Description": "新的 说明"})
    assert len(glue.get_table_versions(DatabaseName=database, TableName=table)["TableVersions"]) == 2
    glue.create_partition(DatabaseName=database, TableName=table, PartitionInput={"Values": ["值" * 255]})
    partitions = glue.get_partitions(DatabaseName=database, TableName=table)["Partitions"]
    assert [p["Values"] for p in partitions] == [["值" * 255]]
    glue.delete_table(DatabaseName=database, Name=table)
    assert glue.search_tables(SearchText="说明")["TableList"] == []
    glue.delete_database(Name=database)


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
