"""Lake Formation permissions on the Iceberg REST endpoint, through pyiceberg's RestCatalog: the
same grants that govern Glue govern every Iceberg route, with Glue's per-action mapping (the Glue
developer guide's Iceberg REST page: LoadTable needs SELECT or DESCRIBE, a commit ALTER, a create
CREATE_TABLE on the namespace, a drop DROP; listings show only what the caller may see).

Each test works in a catalog of its own (a random account). In the open mode the SigV4 access key
id names the caller: ``<account>:user:alice`` is ``arn:aws:iam::<account>:user/alice``.
"""

from __future__ import annotations

from typing import Any

import pytest
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import ForbiddenError
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

from infra.local.stack import client
from tests.integration.conftest import random_account
from tests.integration.test_iceberg_rest import rest_catalog

SCHEMA = Schema(NestedField(1, "id", LongType()), NestedField(2, "secret", StringType()))


def _principal(arn: str) -> dict[str, str]:
    return {"DataLakePrincipalIdentifier": arn}


class Lake:
    """One account's governed catalog: an administrator made ``sales.orders`` through REST; no
    defaults grant IAM_ALLOWED_PRINCIPALS anything."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint, self.account = endpoint, random_account()
        self.lakeformation = client(endpoint, "lakeformation", account=self.account)
        self.lakeformation.put_data_lake_settings(DataLakeSettings={
            "DataLakeAdmins": [_principal(self.arn("admin"))],
            "CreateDatabaseDefaultPermissions": [], "CreateTableDefaultPermissions": []})
        self.admin_lakeformation = client(endpoint, "lakeformation", access_key=f"{self.account}:user:admin")
        admin = self.as_("admin")
        admin.create_namespace("sales")
        admin.create_table("sales.orders", SCHEMA)
        admin.create_table("sales.customers", SCHEMA)

    def arn(self, name: str) -> str:
        return f"arn:aws:iam::{self.account}:user/{name}"

    def as_(self, name: str) -> RestCatalog:
        return rest_catalog(self.endpoint, self.account, (f"{self.account}:user:{name}", "testing"))

    def grant(self, name: str, resource: dict[str, Any], permissions: list[str]) -> None:
        self.admin_lakeformation.grant_permissions(Principal=_principal(self.arn(name)), Resource=resource,
                                             Permissions=permissions)


@pytest.fixture
def lake(endpoint: str) -> Lake:
    return Lake(endpoint)


def _table(name: str = "orders") -> dict[str, Any]:
    return {"Table": {"DatabaseName": "sales", "Name": name}}


def test_a_caller_without_grants_is_refused_and_sees_nothing(lake):
    stranger = lake.as_("stranger")
    assert stranger.list_namespaces() == []
    with pytest.raises(ForbiddenError, match="Insufficient Lake Formation permission"):
        stranger.load_table("sales.orders")
    with pytest.raises(ForbiddenError, match="Required Create Table on sales"):
        stranger.create_table("sales.mine", SCHEMA)
    with pytest.raises(ForbiddenError):
        stranger.list_tables("sales")


def test_select_reads_and_lists_only_its_table_but_may_not_commit_or_drop(lake):
    lake.grant("analyst", _table(), ["SELECT", "DESCRIBE"])
    analyst = lake.as_("analyst")
    assert analyst.list_namespaces() == [("sales",)]
    assert analyst.list_tables("sales") == [("sales", "orders")]
    table = analyst.load_table("sales.orders")
    with pytest.raises(ForbiddenError):
        table.update_schema().add_column("more", StringType()).commit()
    with pytest.raises(ForbiddenError):
        analyst.drop_table("sales.orders")
    with pytest.raises(ForbiddenError):
        analyst.load_table("sales.customers")


def test_alter_commits_create_table_creates_and_drop_drops(lake):
    lake.grant("engineer", _table(), ["ALTER", "DESCRIBE"])
    lake.grant("engineer", {"Database": {"Name": "sales"}}, ["CREATE_TABLE"])
    engineer = lake.as_("engineer")
    engineer.load_table("sales.orders").update_schema().add_column("more", StringType()).commit()
    assert [f.name for f in lake.as_("admin").load_table("sales.orders").schema().fields][-1] == "more"
    engineer.create_table("sales.mine", SCHEMA)  # its creator holds ALL on it (AWS's default)
    engineer.drop_table("sales.mine")
    with pytest.raises(ForbiddenError):
        engineer.drop_table("sales.orders")


def test_views_are_governed_as_the_tables_they_are(lake):
    from tests.integration.test_iceberg_rest_views import view_version

    lake.as_("admin").create_view("sales.recent", SCHEMA, view_version(("spark", "SELECT id FROM sales.orders"),
                                                                        namespace="sales"))
    reader = lake.as_("reader")
    with pytest.raises(ForbiddenError):
        reader.list_views("sales")  # it holds nothing in the namespace
    with pytest.raises(ForbiddenError):
        reader.load_view("sales.recent")
    lake.grant("reader", _table("recent"), ["SELECT", "DESCRIBE"])
    metadata = reader.load_view("sales.recent").metadata
    [current] = [v for v in metadata.versions if v.version_id == metadata.current_version_id]
    assert current.representations[0].root.sql == "SELECT id FROM sales.orders"
    assert reader.list_views("sales") == [("sales", "recent")]
    with pytest.raises(ForbiddenError):
        reader.drop_view("sales.recent")
