"""``POST /_local/reset`` (infra/local/server.py, chalicelib/store/reset.py), of every account or
of one (``{"AccountId": ...}``), and the request log (app.py): driven over HTTP against a stack of
its own, since a reset empties every account of the DynamoDB tables it runs on (the session's
stack is shared by every test)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from infra.local.stack import CatalogStack, client


def post(endpoint: str, path: str, body: bytes = b"") -> tuple[int, dict[str, Any], dict[str, str]]:
    request = urllib.request.Request(endpoint + path, data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"{}"), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}"), dict(error.headers)


def log_text(path: Path, needle: str, timeout: float = 5.0) -> str:
    """The server's log once it holds ``needle`` (lines are written as requests finish)."""
    deadline = time.monotonic() + timeout
    while True:
        text = path.read_text(errors="replace") if path.exists() else ""
        if needle in text or time.monotonic() > deadline:
            return text
        time.sleep(0.05)


@pytest.fixture(scope="module")
def own_stack(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A stack for this module alone, emptied before each test (by the reset under test). No
    background cleaner: a deleted table's cleanup job and what is below it stay for a reset to find."""
    with CatalogStack(log_dir=tmp_path_factory.mktemp("reset-logs"), server_env={"GLUE_CLEANUP_THREAD": "0"}) as running:
        yield running


@pytest.fixture(autouse=True)
def emptied(own_stack: CatalogStack) -> None:
    assert post(own_stack.endpoint, "/_local/reset")[0] == 200


def test_reset_empties_every_account_and_the_catalog_works_on(own_stack: CatalogStack) -> None:
    first, other = own_stack.client("glue"), own_stack.client("glue", account="111122223333")
    first.create_database(DatabaseInput={"Name": "sales"})
    first.create_table(DatabaseName="sales", TableInput={"Name": "orders", "PartitionKeys": [
        {"Name": "day", "Type": "string"}], "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "int"}]}})
    first.create_partition(DatabaseName="sales", TableName="orders", PartitionInput={"Values": ["2024-01-01"]})
    other.create_database(DatabaseInput={"Name": "other"})

    status, body, _ = post(own_stack.endpoint, "/_local/reset")
    assert status == 200 and body["ItemsDeleted"] >= 4

    assert first.get_databases()["DatabaseList"] == []
    assert other.get_databases()["DatabaseList"] == []
    with pytest.raises(first.exceptions.EntityNotFoundException):
        first.get_table(DatabaseName="sales", Name="orders")
    first.create_database(DatabaseInput={"Name": "sales"})  # the same names again, from scratch
    first.create_table(DatabaseName="sales", TableInput={"Name": "orders"})
    assert first.get_partitions(DatabaseName="sales", TableName="orders")["Partitions"] == []
    # A second reset of an almost empty catalog is fine too.
    assert post(own_stack.endpoint, "/_local/reset")[0] == 200


@pytest.mark.parametrize("body", [b'{"CatalogId": "123456789012"}', b'{"AccountId": "123456789012", "x": 1}',
                                  b"not json", b"[]", b'{"AccountId": "12345678901"}', b'{"AccountId": 123456789012}',
                                  b'{"AccountId": "1234567890123"}', b'{"AccountId": "12345678901a"}',
                                  b'{"AccountId": ""}', b'{"AccountId": null}',
                                  '{"AccountId": "١٢٣٤٥٦٧٨٩٠١٢"}'.encode()])  # Arabic-Indic digits
def test_reset_takes_only_an_account_id_of_12_digits(own_stack: CatalogStack, body: bytes) -> None:
    own_stack.client("glue").create_database(DatabaseInput={"Name": "kept"})
    status, answer, headers = post(own_stack.endpoint, "/_local/reset", body)
    assert status == 400 and answer["__type"] == "InvalidInputException", answer
    assert headers["x-amzn-ErrorType"] == "InvalidInputException"
    assert [d["Name"] for d in own_stack.client("glue").get_databases()["DatabaseList"]] == ["kept"]


def every_item(stack: CatalogStack) -> dict[str, list[str]]:
    """Every item of the stack's catalog tables, as sorted JSON texts per table (the identities and
    the settings, which a reset keeps, left out)."""
    ddb = stack.ddb_client()
    names = [name for page in ddb.get_paginator("list_tables").paginate() for name in page["TableNames"]
             if name.startswith(stack.table_prefix) and not name.endswith(("identities", "settings"))]
    return {name: sorted(json.dumps(item, sort_keys=True, default=bytes.hex) for page in ddb.get_paginator("scan").paginate(
                TableName=name, ConsistentRead=True) for item in page["Items"]) for name in names}


def fill(stack: CatalogStack, account: str) -> None:
    """One of everything an account holds, through the real clients: Glue databases, tables, a
    table version, partitions, a partition index, statistics, a deleted table with a partition and
    a deleted database with a table (their cleanup jobs), functions, connections, tags, a crawler
    with a schedule; Lake Formation settings, a grant, a governed table's committed objects and an
    open transaction's pending write; a Paimon table (pypaimon); an Iceberg table (pyiceberg)."""
    from pypaimon.catalog.catalog_factory import CatalogFactory
    from pypaimon.schema import data_types as pt
    from pypaimon.schema.schema import Schema

    from tests.integration.lf_helpers import add, commit, governed_input
    from tests.integration.test_iceberg_rest import SCHEMA, rest_catalog
    from tests.integration.test_paimon_protocol import options

    glue, lf = stack.client("glue", account=account), stack.client("lakeformation", account=account)
    glue.create_database(DatabaseInput={"Name": "sales"})
    keys = [{"Name": "day", "Type": "string"}, {"Name": "shop", "Type": "int"}]
    columns = [{"Name": "id", "Type": "int"}, {"Name": "amount", "Type": "double"}]
    glue.create_table(DatabaseName="sales", TableInput={"Name": "orders", "PartitionKeys": keys,
                                                       "StorageDescriptor": {"Columns": columns},
                                                       "Description": "orders of every shop"})
    glue.batch_create_partition(DatabaseName="sales", TableName="orders", PartitionInputList=[
        {"Values": [f"2024-01-0{day}", str(shop)]} for day in (1, 2) for shop in (1, 2)])
    glue.create_partition_index(DatabaseName="sales", TableName="orders",
                                PartitionIndex={"IndexName": "by_day", "Keys": ["day"]})
    glue.update_column_statistics_for_table(DatabaseName="sales", TableName="orders", ColumnStatisticsList=[{
        "ColumnName": "id", "ColumnType": "int", "AnalyzedTime": 1700000000, "StatisticsData": {
            "Type": "LONG", "LongColumnStatisticsData": {"NumberOfNulls": 0, "NumberOfDistinctValues": 4}}}])
    glue.update_table(DatabaseName="sales", TableInput={"Name": "orders", "PartitionKeys": keys,  # a version
                                                       "StorageDescriptor": {"Columns": columns}})
    glue.create_table(DatabaseName="sales", TableInput={"Name": "gone", "PartitionKeys": keys})
    glue.create_partition(DatabaseName="sales", TableName="gone", PartitionInput={"Values": ["2024-01-01", "1"]})
    glue.delete_table(DatabaseName="sales", Name="gone")  # its partition stays for the cleaner (off here)
    glue.create_database(DatabaseInput={"Name": "dropped"})
    glue.create_table(DatabaseName="dropped", TableInput={"Name": "left"})
    glue.delete_database(Name="dropped")
    glue.create_user_defined_function(DatabaseName="sales", FunctionInput={
        "FunctionName": "tax", "ClassName": "com.example.Tax", "OwnerName": "me", "OwnerType": "USER"})
    glue.create_connection(ConnectionInput={"Name": "warehouse", "ConnectionType": "JDBC", "ConnectionProperties": {
        "JDBC_CONNECTION_URL": "jdbc:postgresql://db:5432/x", "USERNAME": "u", "PASSWORD": "p"}},
        Tags={"team": "data"})
    glue.create_crawler(Name="nightly", Role=f"arn:aws:iam::{account}:role/Crawl", DatabaseName="sales",
                        Targets={"S3Targets": [{"Path": "s3://lake/sales/"}]}, Schedule="cron(0 3 * * ? *)")
    lf.put_data_lake_settings(DataLakeSettings={"DataLakeAdmins": [  # the root too: it grants next
        {"DataLakePrincipalIdentifier": f"arn:aws:iam::{account}:{who}"} for who in ("root", "role/Admin")]})
    lf.grant_permissions(Principal={"DataLakePrincipalIdentifier": f"arn:aws:iam::{account}:role/Analyst"},
                         Resource={"Table": {"DatabaseName": "sales", "Name": "orders"}}, Permissions=["SELECT"])
    glue.create_table(DatabaseName="sales", TableInput=governed_input("governed"))
    transaction = lf.start_transaction()["TransactionId"]
    lf.update_table_objects(DatabaseName="sales", TableName="governed", TransactionId=transaction,
                            WriteOperations=[add("s3://lake/governed/a.parquet", ["2024", "eu"])])
    assert commit(lf, transaction) == "COMMITTED"
    open_one = lf.start_transaction()["TransactionId"]  # left open: its write is pending
    lf.update_table_objects(DatabaseName="sales", TableName="governed", TransactionId=open_one,
                            WriteOperations=[add("s3://lake/governed/b.parquet", ["2024", "eu"])])

    paimon = CatalogFactory.create(options(stack.endpoint, token=account))
    paimon.create_database("lake", {})
    paimon.create_table("lake.events", Schema(fields=[pt.DataField(0, "id", pt.AtomicType("BIGINT"))]), False)
    iceberg = rest_catalog(stack.endpoint, account)
    iceberg.create_namespace("ice")
    iceberg.create_table("ice.clicks", SCHEMA)


def test_reset_of_one_account_leaves_every_other_item_as_it_was(own_stack: CatalogStack) -> None:
    kept, emptied = "111122223333", "444455556666"
    fill(own_stack, kept)
    before = every_item(own_stack)
    fill(own_stack, emptied)  # the same names in another account
    assert every_item(own_stack) != before

    status, body, _ = post(own_stack.endpoint, "/_local/reset", json.dumps({"AccountId": emptied}).encode())
    assert status == 200 and body["AccountId"] == emptied and body["ItemsDeleted"] > 30, body

    # Nothing of it is left below the API, and the other account's items are exactly as they were.
    assert every_item(own_stack) == before
    glue = own_stack.client("glue", account=emptied)
    assert glue.get_databases()["DatabaseList"] == []
    assert glue.get_crawlers()["Crawlers"] == [] and glue.get_connections()["ConnectionList"] == []
    settings = own_stack.client("lakeformation", account=emptied).get_data_lake_settings()["DataLakeSettings"]
    assert not settings.get("DataLakeAdmins")
    assert [d["Name"] for d in own_stack.client("glue", account=kept).get_databases()["DatabaseList"]] \
        == ["ice", "lake", "sales"]
    # The account starts again from scratch, with the same names.
    fill(own_stack, emptied)
    assert own_stack.client("glue", account=emptied).get_partitions(
        DatabaseName="sales", TableName="orders", Expression="day = '2024-01-01'")["Partitions"]
    # An account that holds nothing: nothing to delete.
    assert post(own_stack.endpoint, "/_local/reset", b'{"AccountId": "777788889999"}')[1]["ItemsDeleted"] == 0


def test_reset_is_refused_when_signatures_are_verified(own_stack: CatalogStack) -> None:
    own_stack.client("glue").create_database(DatabaseInput={"Name": "kept"})
    signed = own_stack.extra_server({"GLUE_AUTH": "sigv4"}, name="sigv4").start()
    try:
        status, answer, headers = post(signed.endpoint, "/_local/reset")
    finally:
        signed.stop()
    assert status == 403 and answer["__type"] == "AccessDeniedException"
    assert "open mode only" in answer["Message"]
    assert [d["Name"] for d in own_stack.client("glue").get_databases()["DatabaseList"]] == ["kept"]


def test_one_log_line_per_request(own_stack: CatalogStack) -> None:
    glue = own_stack.client("glue")
    glue.create_database(DatabaseInput={"Name": "logged"})
    glue.get_database(Name="logged")
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_database(Name="missing")
    own_stack.client("lakeformation").get_data_lake_settings()
    post(own_stack.endpoint, "/no/such/path")
    assert own_stack.log_dir is not None
    text = log_text(own_stack.log_dir / "server.log", "/no/such/path")
    lines = text.splitlines()
    assert any(line.startswith("glue CreateDatabase 200 ") and " ms items_read=" in line for line in lines)
    reads = [line for line in lines if line.startswith("glue GetDatabase 200 ")]
    assert reads and int(reads[0].rsplit("items_read=", 1)[1]) >= 1
    assert any(line.startswith("glue GetDatabase 400 ") for line in lines)
    assert any(line.startswith("lakeformation GetDataLakeSettings 200 ") for line in lines)
    assert any(line.startswith("http POST /no/such/path 403 ") for line in lines)
    assert "Traceback" not in text  # a client's mistake logs no traceback


def test_the_request_log_turned_down(own_stack: CatalogStack) -> None:
    quiet = own_stack.extra_server({"GLUE_LOG_LEVEL": "warning"}, name="quiet").start()
    try:
        client(quiet.endpoint, "glue").get_databases()
        post(quiet.endpoint, "/no/such/path")
    finally:
        quiet.stop()
    assert own_stack.log_dir is not None
    text = (own_stack.log_dir / "server-quiet.log").read_text()
    assert "GetDatabases" not in text and "/no/such/path" not in text


def test_a_server_fault_is_logged_with_its_traceback(own_stack: CatalogStack) -> None:
    """Last in this module: it takes DynamoDB Local away (a store outage is the server's fault)."""
    assert own_stack.dynamodb is not None and own_stack.log_dir is not None
    own_stack.dynamodb.stop()
    glue = own_stack.client("glue")
    with pytest.raises(glue.exceptions.InternalServiceException):
        glue.get_databases()
    text = log_text(own_stack.log_dir / "server.log", "glue GetDatabases 500 ")
    assert "glue GetDatabases 500 " in text
    assert "Traceback (most recent call last)" in text and "unhandled error in glue:GetDatabases" in text
