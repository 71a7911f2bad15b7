"""Lake Formation permissions enforced on Glue and Lake Formation operations, through boto3.

Each test gets an account of its own in the open mode, where an access key id names the caller
(``<account>:user:<name>``; the bare account id is the account's root, which acts as its IAM
administrator and puts the data lake settings). The cast: a data lake administrator, an analyst
with SELECT and DESCRIBE on one table, a columnist with SELECT on some of its columns, a steward
holding SELECT with grant option, a builder with CREATE_TABLE on the database, and one with
nothing; boto3 and the AWS CLI meet the same checks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from infra.local.stack import REGION, client
from tests.integration.conftest import columns, random_account, table_input

IAM_ALLOWED = "IAM_ALLOWED_PRINCIPALS"
INSUFFICIENT = "Insufficient Lake Formation permission(s)"


@dataclass
class Catalog:
    """One account's catalog in the open mode, and clients acting as its principals."""

    endpoint: str
    account: str
    clients: dict[tuple[str, str], Any] = field(default_factory=dict)

    def arn(self, name: str) -> str:
        return f"arn:aws:iam::{self.account}:user/{name}"

    def as_(self, name: str, service: str = "glue") -> Any:
        if (name, service) not in self.clients:  # a boto3 client takes ~0.1 s to make
            self.clients[(name, service)] = client(self.endpoint, service, access_key=f"{self.account}:user:{name}")
        return self.clients[(name, service)]

    def root(self, service: str = "glue") -> Any:
        return client(self.endpoint, service, account=self.account)


def _principal(arn: str) -> dict[str, str]:
    return {"DataLakePrincipalIdentifier": arn}


def _denied(call: Any, message: str | None = None, **kwargs: Any) -> None:
    with pytest.raises(ClientError) as caught:
        call(**kwargs)
    error = caught.value.response["Error"]
    assert error["Code"] == "AccessDeniedException", caught.value.response
    if message is not None:
        assert error["Message"] == message


def _orders_input() -> dict[str, Any]:
    spec = table_input("orders")
    spec["StorageDescriptor"]["Columns"] = columns("id", "amount", "card_number")
    spec["PartitionKeys"] = [{"Name": "day", "Type": "string"}]
    return spec


@pytest.fixture
def governed(endpoint: str) -> Catalog:
    """A catalog switched to Lake Formation permissions: an administrator, no default grants to
    IAM_ALLOWED_PRINCIPALS on new databases and tables, database ``sales`` with ``orders``
    (partitioned, one partition) and ``customers``, made by the administrator."""
    catalog = Catalog(endpoint, random_account())
    catalog.root("lakeformation").put_data_lake_settings(DataLakeSettings={
        "DataLakeAdmins": [_principal(catalog.arn("admin"))],
        "CreateDatabaseDefaultPermissions": [], "CreateTableDefaultPermissions": []})
    admin = catalog.as_("admin")
    admin.create_database(DatabaseInput={"Name": "sales"})
    admin.create_table(DatabaseName="sales", TableInput=_orders_input())
    admin.create_table(DatabaseName="sales", TableInput=table_input("customers"))
    admin.create_partition(DatabaseName="sales", TableName="orders",
                           PartitionInput={"Values": ["2026-12-01"], "StorageDescriptor": {}})
    lf = catalog.as_("admin", "lakeformation")
    orders = {"Table": {"DatabaseName": "sales", "Name": "orders"}}
    lf.grant_permissions(Principal=_principal(catalog.arn("analyst")), Resource=orders,
                         Permissions=["SELECT", "DESCRIBE"])
    lf.grant_permissions(Principal=_principal(catalog.arn("columnist")), Permissions=["SELECT"], Resource={
        "TableWithColumns": {"DatabaseName": "sales", "Name": "orders", "ColumnNames": ["id", "amount"]}})
    lf.grant_permissions(Principal=_principal(catalog.arn("steward")), Resource=orders, Permissions=["SELECT"],
                         PermissionsWithGrantOption=["SELECT"])
    return catalog


def test_an_administrator_may_do_everything(governed: Catalog) -> None:
    admin = governed.as_("admin")
    assert [d["Name"] for d in admin.get_databases()["DatabaseList"]] == ["sales"]
    assert sorted(t["Name"] for t in admin.get_tables(DatabaseName="sales")["TableList"]) == ["customers", "orders"]
    admin.update_table(DatabaseName="sales", TableInput=table_input("customers", Description="changed"))
    assert len(admin.get_partitions(DatabaseName="sales", TableName="orders")["Partitions"]) == 1
    admin.delete_table(DatabaseName="sales", Name="customers")
    # The creator's grant went with the table: nothing is left on it.
    lf = governed.as_("admin", "lakeformation")
    assert lf.list_permissions(Resource={"Table": {"DatabaseName": "sales", "Name": "customers"}})[
        "PrincipalResourcePermissions"] == []


def test_an_analyst_reads_its_table_and_nothing_else(governed: Catalog) -> None:
    analyst = governed.as_("analyst")
    assert analyst.get_table(DatabaseName="sales", Name="orders")["Table"]["Name"] == "orders"
    assert [t["Name"] for t in analyst.get_tables(DatabaseName="sales")["TableList"]] == ["orders"]
    assert [d["Name"] for d in analyst.get_databases()["DatabaseList"]] == ["sales"]
    assert analyst.get_database(Name="sales")["Database"]["Name"] == "sales"
    assert len(analyst.get_partitions(DatabaseName="sales", TableName="orders")["Partitions"]) == 1
    assert analyst.get_partition(DatabaseName="sales", TableName="orders", PartitionValues=["2026-12-01"])
    assert [t["Name"] for t in analyst.search_tables()["TableList"]] == ["orders"]
    _denied(analyst.get_table, f"{INSUFFICIENT} on customers", DatabaseName="sales", Name="customers")
    # A table it may not see answers AccessDenied whether it exists or not (nothing to learn).
    _denied(analyst.get_table, f"{INSUFFICIENT} on no_such_table", DatabaseName="sales", Name="no_such_table")
    # Nothing it may not do changes anything.
    _denied(analyst.create_partition, DatabaseName="sales", TableName="orders",
            PartitionInput={"Values": ["2026-12-02"], "StorageDescriptor": {}})
    _denied(analyst.update_table, DatabaseName="sales", TableInput=_orders_input())
    _denied(analyst.delete_table, DatabaseName="sales", Name="orders")
    _denied(analyst.delete_database, Name="sales")
    _denied(analyst.create_table, f"{INSUFFICIENT}: Required Create Table on sales", DatabaseName="sales",
            TableInput=table_input("mine"))
    _denied(analyst.batch_delete_partition, DatabaseName="sales", TableName="orders",
            PartitionsToDelete=[{"Values": ["2026-12-01"]}])
    admin = governed.as_("admin")
    assert len(admin.get_partitions(DatabaseName="sales", TableName="orders")["Partitions"]) == 1
    assert sorted(t["Name"] for t in admin.get_tables(DatabaseName="sales")["TableList"]) == ["customers", "orders"]
    # BatchDeleteTable reports each table it may not drop.
    errors = analyst.batch_delete_table(DatabaseName="sales", TablesToDelete=["orders", "customers"])["Errors"]
    assert sorted((e["TableName"], e["ErrorDetail"]["ErrorCode"]) for e in errors) == [
        ("customers", "AccessDeniedException"), ("orders", "AccessDeniedException")]


def test_column_grants_show_only_their_columns(governed: Catalog) -> None:
    columnist = governed.as_("columnist")
    table = columnist.get_table(DatabaseName="sales", Name="orders")["Table"]
    assert [c["Name"] for c in table["StorageDescriptor"]["Columns"]] == ["id", "amount"]
    assert [k["Name"] for k in table["PartitionKeys"]] == ["day"]
    assert len(columnist.get_partitions(DatabaseName="sales", TableName="orders")["Partitions"]) == 1
    assert [t["Name"] for t in columnist.get_tables(DatabaseName="sales")["TableList"]] == ["orders"]
    everything = governed.as_("analyst").get_table(DatabaseName="sales", Name="orders")["Table"]
    assert [c["Name"] for c in everything["StorageDescriptor"]["Columns"]] == ["id", "amount", "card_number"]


def test_one_with_nothing_sees_nothing(governed: Catalog) -> None:
    nobody = governed.as_("nobody")
    assert nobody.get_databases()["DatabaseList"] == []
    _denied(nobody.get_database, Name="sales")
    _denied(nobody.get_tables, DatabaseName="sales")
    _denied(nobody.get_table, f"{INSUFFICIENT} on orders", DatabaseName="sales", Name="orders")
    _denied(nobody.get_partitions, DatabaseName="sales", TableName="orders")
    _denied(nobody.get_column_statistics_for_table, DatabaseName="sales", TableName="orders", ColumnNames=["id"])
    _denied(nobody.get_table_versions, DatabaseName="sales", TableName="orders")
    _denied(nobody.get_partition_indexes, DatabaseName="sales", TableName="orders")
    assert nobody.search_tables()["TableList"] == []
    # The new account's grant to IAM_ALLOWED_PRINCIPALS still lets anyone create a database,
    # and its creator holds ALL on it; once revoked, only the administrators may.
    nobody.create_database(DatabaseInput={"Name": "scratch"})
    assert [d["Name"] for d in nobody.get_databases()["DatabaseList"]] == ["scratch"]
    nobody.create_table(DatabaseName="scratch", TableInput=table_input("notes"))
    assert [t["Name"] for t in nobody.get_tables(DatabaseName="scratch")["TableList"]] == ["notes"]
    governed.as_("admin", "lakeformation").revoke_permissions(
        Principal=_principal(IAM_ALLOWED), Resource={"Catalog": {}}, Permissions=["CREATE_DATABASE"])
    _denied(nobody.create_database, f"{INSUFFICIENT}: Required Create Database on Catalog",
            DatabaseInput={"Name": "another"})
    governed.as_("admin").create_database(DatabaseInput={"Name": "another"})


def test_a_grant_option_holder_shares_and_revokes_take_effect_at_once(governed: Catalog) -> None:
    steward, nobody = governed.as_("steward", "lakeformation"), governed.as_("nobody")
    orders = {"Table": {"DatabaseName": "sales", "Name": "orders"}}
    _denied(nobody.get_table, DatabaseName="sales", Name="orders")
    steward.grant_permissions(Principal=_principal(governed.arn("nobody")), Resource=orders, Permissions=["SELECT"])
    assert nobody.get_table(DatabaseName="sales", Name="orders")["Table"]["Name"] == "orders"
    steward.revoke_permissions(Principal=_principal(governed.arn("nobody")), Resource=orders, Permissions=["SELECT"])
    _denied(nobody.get_table, DatabaseName="sales", Name="orders")
    # Listings too (a process keeps a database's grants only while their version holds).
    assert nobody.get_databases()["DatabaseList"] == []
    governed.as_("admin", "lakeformation").grant_permissions(
        Principal=_principal(governed.arn("nobody")), Resource={"Database": {"Name": "sales"}}, Permissions=["DESCRIBE"])
    assert [d["Name"] for d in nobody.get_databases()["DatabaseList"]] == ["sales"]
    for _ in range(2):
        assert nobody.get_tables(DatabaseName="sales")["TableList"] == []
    steward.grant_permissions(Principal=_principal(governed.arn("nobody")), Resource=orders, Permissions=["SELECT"])
    assert [t["Name"] for t in nobody.get_tables(DatabaseName="sales")["TableList"]] == ["orders"]
    steward.revoke_permissions(Principal=_principal(governed.arn("nobody")), Resource=orders, Permissions=["SELECT"])
    assert nobody.get_tables(DatabaseName="sales")["TableList"] == []


def test_database_grants_govern_the_database(governed: Catalog) -> None:
    lf = governed.as_("admin", "lakeformation")
    lf.grant_permissions(Principal=_principal(governed.arn("builder")), Resource={"Database": {"Name": "sales"}},
                         Permissions=["CREATE_TABLE", "DESCRIBE"])
    builder = governed.as_("builder")
    builder.create_table(DatabaseName="sales", TableInput=table_input("built"))
    # Its creator holds ALL on what it created; the others' tables stay hidden.
    assert [t["Name"] for t in builder.get_tables(DatabaseName="sales")["TableList"]] == ["built"]
    builder.delete_table(DatabaseName="sales", Name="built")
    # With a permission on the database, a table that does not exist is not found.
    with pytest.raises(ClientError) as caught:
        builder.get_table(DatabaseName="sales", Name="no_such_table")
    assert caught.value.response["Error"]["Code"] == "EntityNotFoundException"
    _denied(builder.update_database, DatabaseInput={"Name": "sales", "Description": "x"}, Name="sales")
    _denied(builder.create_user_defined_function, DatabaseName="sales", FunctionInput={
        "FunctionName": "f", "ClassName": "C", "OwnerName": "o", "OwnerType": "USER"})


def test_a_catalog_never_configured_is_under_iam_alone(endpoint: str) -> None:
    catalog = Catalog(endpoint, random_account())
    someone, other = catalog.as_("someone"), catalog.as_("other")
    someone.create_database(DatabaseInput={"Name": "open"})
    someone.create_table(DatabaseName="open", TableInput=table_input("t"))
    other.update_table(DatabaseName="open", TableInput=table_input("t", Description="mine too"))
    assert [t["Name"] for t in other.get_tables(DatabaseName="open")["TableList"]] == ["t"]
    database = other.get_database(Name="open")["Database"]
    assert database["CreateTableDefaultPermissions"] == [
        {"Principal": {"DataLakePrincipalIdentifier": IAM_ALLOWED}, "Permissions": ["ALL"]}]
    # The defaults were granted to IAM_ALLOWED_PRINCIPALS, so switching the catalog to Lake
    # Formation permissions later keeps what exists open until those grants are revoked.
    catalog.root("lakeformation").put_data_lake_settings(DataLakeSettings={
        "DataLakeAdmins": [_principal(catalog.arn("admin"))]})
    assert other.get_table(DatabaseName="open", Name="t")["Table"]["Name"] == "t"
    lf = catalog.as_("admin", "lakeformation")
    held = lf.list_permissions(Resource={"Table": {"DatabaseName": "open", "Name": "t"}})[
        "PrincipalResourcePermissions"]
    assert [(p["Principal"]["DataLakePrincipalIdentifier"], p["Permissions"]) for p in held] == [(IAM_ALLOWED, ["ALL"])]
    lf.revoke_permissions(Principal=_principal(IAM_ALLOWED), Resource={"Table": {"DatabaseName": "open", "Name": "t"}},
                          Permissions=["ALL"])
    _denied(other.get_table, f"{INSUFFICIENT} on t", DatabaseName="open", Name="t")
    # The database keeps its own default grant until that is revoked too.
    assert other.get_database(Name="open")["Database"]["Name"] == "open"


def _aws(catalog: Catalog, who: str, *args: str) -> subprocess.CompletedProcess:
    """The AWS CLI (the dev venv's) acting as ``who`` (a user name, or "" for the root)."""
    key = f"{catalog.account}:user:{who}" if who else catalog.account
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp"),
           "AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": REGION,
           "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull, "AWS_MAX_ATTEMPTS": "1"}
    return subprocess.run([str(Path(sys.executable).with_name("aws")), *args, "--endpoint-url", catalog.endpoint,
                           "--output", "json"], env=env, capture_output=True, text=True, timeout=60)


def test_the_aws_cli_meets_the_same_checks(governed: Catalog) -> None:
    denied = _aws(governed, "nobody", "glue", "get-table", "--database-name", "sales", "--name", "orders")
    assert denied.returncode != 0 and "AccessDeniedException" in denied.stderr, denied
    assert f"{INSUFFICIENT} on orders" in denied.stderr
    granted = _aws(governed, "admin", "lakeformation", "grant-permissions", "--principal",
                   f"DataLakePrincipalIdentifier={governed.arn('nobody')}", "--permissions", "DESCRIBE",
                   "--resource", json.dumps({"Table": {"DatabaseName": "sales", "Name": "orders"}}))
    assert granted.returncode == 0, granted
    shown = _aws(governed, "nobody", "glue", "get-table", "--database-name", "sales", "--name", "orders")
    assert shown.returncode == 0, shown
    assert json.loads(shown.stdout)["Table"]["Name"] == "orders"
    listed = _aws(governed, "nobody", "lakeformation", "list-permissions")
    assert [p["Permissions"] for p in json.loads(listed.stdout)["PrincipalResourcePermissions"]] == [["DESCRIBE"]]
    settings = _aws(governed, "nobody", "lakeformation", "get-data-lake-settings")
    assert settings.returncode != 0 and "AccessDeniedException" in settings.stderr
    assert _aws(governed, "", "lakeformation", "get-data-lake-settings").returncode == 0


def test_a_grant_to_another_account_lets_its_callers_in(governed: Catalog, start_server: Any) -> None:
    shared = start_server(GLUE_ALLOW_CROSS_ACCOUNT="1").endpoint
    other = random_account()
    partner = client(shared, "glue", access_key=f"{other}:user:reader")
    _denied(partner.get_table, f"{INSUFFICIENT} on orders", CatalogId=governed.account, DatabaseName="sales",
            Name="orders")
    governed.as_("admin", "lakeformation").grant_permissions(
        Principal=_principal(other), Resource={"Table": {"DatabaseName": "sales", "Name": "orders"}},
        Permissions=["SELECT", "DESCRIBE"])
    table = partner.get_table(CatalogId=governed.account, DatabaseName="sales", Name="orders")["Table"]
    assert (table["Name"], table["CatalogId"]) == ("orders", governed.account)
    assert len(partner.get_partitions(CatalogId=governed.account, DatabaseName="sales",
                                      TableName="orders")["Partitions"]) == 1
    _denied(partner.get_table, CatalogId=governed.account, DatabaseName="sales", Name="customers")
    # IAM_ALLOWED_PRINCIPALS is the catalog's own account's principals, never another's.
    governed.as_("admin", "lakeformation").grant_permissions(
        Principal=_principal(IAM_ALLOWED), Resource={"Table": {"DatabaseName": "sales", "Name": "customers"}},
        Permissions=["ALL"])
    _denied(partner.get_table, CatalogId=governed.account, DatabaseName="sales", Name="customers")
    assert governed.as_("nobody").get_table(DatabaseName="sales", Name="customers")["Table"]["Name"] == "customers"


def test_a_registered_location_needs_data_location_access(governed: Catalog) -> None:
    lf = governed.as_("admin", "lakeformation")
    lf.register_resource(ResourceArn="arn:aws:s3:::lake/governed", UseServiceLinkedRole=True)
    lf.grant_permissions(Principal=_principal(governed.arn("builder")), Resource={"Database": {"Name": "sales"}},
                         Permissions=["CREATE_TABLE"])
    builder = governed.as_("builder")

    def at(name: str, location: str) -> dict[str, Any]:
        spec = table_input(name)
        spec["StorageDescriptor"]["Location"] = location
        return spec
    builder.create_table(DatabaseName="sales", TableInput=at("elsewhere", "s3://scratch/elsewhere/"))
    _denied(builder.create_table, f"{INSUFFICIENT}: Required Data Location Access on s3://lake/governed/t/",
            DatabaseName="sales", TableInput=at("inside", "s3://lake/governed/t/"))
    _denied(builder.update_table, DatabaseName="sales", TableInput=at("elsewhere", "s3://lake/governed/moved/"))
    lf.grant_permissions(Principal=_principal(governed.arn("builder")), Permissions=["DATA_LOCATION_ACCESS"],
                         Resource={"DataLocation": {"ResourceArn": "arn:aws:s3:::lake/governed"}})
    builder.create_table(DatabaseName="sales", TableInput=at("inside", "s3://lake/governed/t/"))
    builder.update_table(DatabaseName="sales", TableInput=at("elsewhere", "s3://lake/governed/moved/"))


def test_a_table_a_transaction_creates_gets_its_grants_at_commit(governed: Catalog) -> None:
    governed.as_("admin", "lakeformation").grant_permissions(
        Principal=_principal(governed.arn("builder")), Resource={"Database": {"Name": "sales"}},
        Permissions=["CREATE_TABLE"])
    builder, builder_lf = governed.as_("builder"), governed.as_("builder", "lakeformation")
    transaction = builder_lf.start_transaction(TransactionType="READ_AND_WRITE")["TransactionId"]
    builder.create_table(DatabaseName="sales", TableInput=table_input("staged"), TransactionId=transaction)
    builder_lf.commit_transaction(TransactionId=transaction)
    assert builder.get_table(DatabaseName="sales", Name="staged")["Table"]["Name"] == "staged"
    _denied(governed.as_("nobody").get_table, DatabaseName="sales", Name="staged")
    held = governed.as_("admin", "lakeformation").list_permissions(
        Resource={"Table": {"DatabaseName": "sales", "Name": "staged"}})["PrincipalResourcePermissions"]
    assert [(p["Principal"]["DataLakePrincipalIdentifier"], p["Permissions"], p["PermissionsWithGrantOption"])
            for p in held] == [(governed.arn("builder"), ["ALL"], ["ALL"])]


# Every governed Glue and Lake Formation operation, with arguments that would succeed for the
# administrator: refused to one holding nothing, before anything is read or written.
_DAY = ["2026-12-01"]
_FUNCTION = {"FunctionName": "f", "ClassName": "C", "OwnerName": "o", "OwnerType": "USER"}
_STATS = [{"ColumnName": "id", "ColumnType": "string", "AnalyzedTime": 1_700_000_000, "StatisticsData": {
    "Type": "STRING", "StringColumnStatisticsData": {"MaximumLength": 1, "AverageLength": 1.0, "NumberOfNulls": 0,
                                                     "NumberOfDistinctValues": 1}}}]
_ORDERS = {"DatabaseName": "sales", "TableName": "orders"}
EVERY_GOVERNED_CALL: list[tuple[str, str, dict[str, Any]]] = [
    ("glue", "create_database", {"DatabaseInput": {"Name": "another"}}),
    ("glue", "get_database", {"Name": "sales"}),
    ("glue", "update_database", {"Name": "sales", "DatabaseInput": {"Name": "sales"}}),
    ("glue", "delete_database", {"Name": "sales"}),
    ("glue", "create_table", {"DatabaseName": "sales", "TableInput": table_input("another")}),
    ("glue", "get_table", {"DatabaseName": "sales", "Name": "orders"}),
    ("glue", "get_tables", {"DatabaseName": "sales"}),
    ("glue", "update_table", {"DatabaseName": "sales", "TableInput": table_input("customers")}),
    ("glue", "delete_table", {"DatabaseName": "sales", "Name": "customers"}),
    ("glue", "get_table_version", {**_ORDERS, "VersionId": "0"}),
    ("glue", "get_table_versions", _ORDERS),
    ("glue", "delete_table_version", {**_ORDERS, "VersionId": "0"}),
    ("glue", "batch_delete_table_version", {**_ORDERS, "VersionIds": ["0"]}),
    ("glue", "get_partition", {**_ORDERS, "PartitionValues": _DAY}),
    ("glue", "get_partitions", _ORDERS),
    ("glue", "batch_get_partition", {**_ORDERS, "PartitionsToGet": [{"Values": _DAY}]}),
    ("glue", "create_partition", {**_ORDERS, "PartitionInput": {"Values": ["2026-12-02"]}}),
    ("glue", "batch_create_partition", {**_ORDERS, "PartitionInputList": [{"Values": ["2026-12-02"]}]}),
    ("glue", "update_partition", {**_ORDERS, "PartitionValueList": _DAY, "PartitionInput": {"Values": _DAY}}),
    ("glue", "batch_update_partition", {**_ORDERS, "Entries": [
        {"PartitionValueList": _DAY, "PartitionInput": {"Values": _DAY}}]}),
    ("glue", "delete_partition", {**_ORDERS, "PartitionValues": _DAY}),
    ("glue", "create_partition_index", {**_ORDERS, "PartitionIndex": {"Keys": ["day"], "IndexName": "by_day"}}),
    ("glue", "delete_partition_index", {**_ORDERS, "IndexName": "by_day"}),
    ("glue", "get_partition_indexes", _ORDERS),
    ("glue", "get_column_statistics_for_table", {**_ORDERS, "ColumnNames": ["id"]}),
    ("glue", "update_column_statistics_for_table", {**_ORDERS, "ColumnStatisticsList": _STATS}),
    ("glue", "delete_column_statistics_for_table", {**_ORDERS, "ColumnName": "id"}),
    ("glue", "get_column_statistics_for_partition", {**_ORDERS, "PartitionValues": _DAY, "ColumnNames": ["id"]}),
    ("glue", "update_column_statistics_for_partition", {**_ORDERS, "PartitionValues": _DAY,
                                                        "ColumnStatisticsList": _STATS}),
    ("glue", "delete_column_statistics_for_partition", {**_ORDERS, "PartitionValues": _DAY, "ColumnName": "id"}),
    ("glue", "create_user_defined_function", {"DatabaseName": "sales", "FunctionInput": _FUNCTION}),
    ("glue", "get_user_defined_function", {"DatabaseName": "sales", "FunctionName": "f"}),
    ("glue", "update_user_defined_function", {"DatabaseName": "sales", "FunctionName": "f",
                                              "FunctionInput": _FUNCTION}),
    ("glue", "delete_user_defined_function", {"DatabaseName": "sales", "FunctionName": "f"}),
    ("glue", "get_user_defined_functions", {"DatabaseName": "sales", "Pattern": "*"}),
    ("lakeformation", "get_table_objects", _ORDERS),
    ("lakeformation", "update_table_objects", {**_ORDERS, "WriteOperations": [{"AddObject": {
        "Uri": "s3://bucket/orders/a", "ETag": "e", "Size": 1, "PartitionValues": _DAY}}]}),
]


def test_every_governed_operation_refuses_one_with_nothing(governed: Catalog) -> None:
    lf = governed.as_("admin", "lakeformation")
    lf.revoke_permissions(Principal=_principal(IAM_ALLOWED), Resource={"Catalog": {}}, Permissions=["CREATE_DATABASE"])
    before = governed.as_("admin").get_table(DatabaseName="sales", Name="orders")["Table"]
    for service, operation, arguments in EVERY_GOVERNED_CALL:
        caller = governed.as_("nobody", service)
        with pytest.raises(ClientError) as caught:
            getattr(caller, operation)(**arguments)
        assert caught.value.response["Error"]["Code"] == "AccessDeniedException", (operation, caught.value.response)
        assert caught.value.response["Error"]["Message"].startswith(INSUFFICIENT), operation
    admin = governed.as_("admin")
    assert admin.get_table(DatabaseName="sales", Name="orders")["Table"] == before
    assert sorted(t["Name"] for t in admin.get_tables(DatabaseName="sales")["TableList"]) == ["customers", "orders"]
    assert [p["Values"] for p in admin.get_partitions(**_ORDERS)["Partitions"]] == [_DAY]
