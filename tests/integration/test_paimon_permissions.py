"""Lake Formation permissions on the Paimon REST catalog, through pypaimon 2.1.0 against the
running service: the same grants that govern Glue govern every Paimon route (docs/design.md,
"Permissions").

Each test works in a catalog of its own (a random account). The open mode names principals by
their bearer token: ``<account>:user:alice`` is ``arn:aws:iam::<account>:user/alice`` (the
account-qualified form of ``user:alice``, which names the default account's, whose catalog the
rest of the session shares). The account's root (boto3 with the account id as access key) puts
the data lake settings, which turns enforcement on, and grants. Raw HTTP is used for what
pypaimon 2.1.0 has no call for (views, table details, the global listings).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pytest
import requests
from botocore.exceptions import ClientError
from pypaimon.api.rest_api import RESTApi
from pypaimon.api.rest_exception import ForbiddenException
from pypaimon.catalog.catalog_exception import (DatabaseNoPermissionException, TableNoPermissionException,
                                                TableNotExistException)
from pypaimon.catalog.catalog_factory import CatalogFactory
from pypaimon.catalog.rest.rest_catalog import RESTCatalog
from pypaimon.common.identifier import Identifier
from pypaimon.function import FunctionDefinition, FunctionImpl
from pypaimon.schema.schema import Schema
from pypaimon.schema.schema_change import SchemaChange
from pypaimon.table.instant import Instant

from infra.local.stack import client
from tests.integration.conftest import random_account

WAREHOUSE = "paimon_perm_wh"
ROWS = pa.schema([pa.field("id", pa.int64()), pa.field("dt", pa.string()), pa.field("v", pa.string())])


def _principal(arn: str) -> dict[str, str]:
    return {"DataLakePrincipalIdentifier": arn}


@dataclass
class Lake:
    """One account's catalog, its root's Lake Formation client and a Paimon catalog per principal."""

    endpoint: str
    account: str
    lf: Any
    catalogs: dict[str, RESTCatalog] = field(default_factory=dict)

    def token(self, who: str) -> str:
        return f"{self.account}:user:{who}"

    def arn(self, who: str) -> str:
        return f"arn:aws:iam::{self.account}:user/{who}"

    def paimon(self, who: str) -> RESTCatalog:
        """pypaimon's RESTCatalog as ``who`` (one per principal)."""
        if who not in self.catalogs:
            made = CatalogFactory.create({"metastore": "rest", "uri": self.endpoint, "warehouse": WAREHOUSE,
                                          "token.provider": "bear", "token": self.token(who)})
            assert isinstance(made, RESTCatalog)
            self.catalogs[who] = made
        return self.catalogs[who]

    def http(self, who: str, method: str, path: str, body: Any = None, **params: Any) -> requests.Response:
        """A raw Paimon REST call as ``who``."""
        return requests.request(method, f"{self.endpoint}/v1/{WAREHOUSE}{path}", params=params, timeout=30,
                                headers={"Authorization": f"Bearer {self.token(who)}",
                                         "Content-Type": "application/json"},
                                data=None if body is None else json.dumps(body))

    def enforce(self) -> None:
        """Put the data lake settings: the root and ``admin`` administer the data lake, new
        databases and tables give IAM_ALLOWED_PRINCIPALS nothing (so grants decide)."""
        self.lf.put_data_lake_settings(DataLakeSettings={
            "DataLakeAdmins": [_principal(f"arn:aws:iam::{self.account}:root"), _principal(self.arn("admin"))],
            "CreateDatabaseDefaultPermissions": [], "CreateTableDefaultPermissions": []})

    def grant(self, who: str, database: str, table: str, *permissions: str) -> None:
        self.lf.grant_permissions(Principal=_principal(self.arn(who)),
                                  Resource={"Table": {"DatabaseName": database, "Name": table}},
                                  Permissions=list(permissions))

    def revoke(self, who: str, database: str, table: str, *permissions: str) -> None:
        self.lf.revoke_permissions(Principal=_principal(self.arn(who)),
                                   Resource={"Table": {"DatabaseName": database, "Name": table}},
                                   Permissions=list(permissions))


def _lake(endpoint: str) -> Lake:
    account = random_account()
    return Lake(endpoint, account, client(endpoint, "lakeformation", account=account))


def _create_table(catalog: RESTCatalog, database: str, name: str) -> Any:
    identifier = Identifier.create(database, name)
    catalog.create_table(identifier, Schema.from_pyarrow_schema(ROWS, ["dt"], None, {"bucket": "-1"}), False)
    return catalog.get_table(identifier)


def _write(table: Any, ids: list[int]) -> None:
    builder = table.new_batch_write_builder()
    writer, committer = builder.new_write(), builder.new_commit()
    try:
        writer.write_arrow(pa.Table.from_pydict({"id": ids, "dt": ["d1"] * len(ids), "v": ["x"] * len(ids)},
                                                schema=ROWS))
        committer.commit(writer.prepare_commit())
    finally:
        writer.close()
        committer.close()


def _ids(table: Any) -> list[int]:
    builder = table.new_read_builder()
    return sorted(builder.new_read().to_arrow(builder.new_scan().plan().splits()).column("id").to_pylist())


@dataclass
class Governed:
    """An enforced catalog: database ``db`` with tables ``orders`` (rows 1, 2) and ``customers``,
    a function and a view, and database ``other``, all made by ``admin``."""

    lake: Lake
    db: str
    other: str


@pytest.fixture(scope="module")
def governed(endpoint: str) -> Governed:
    lake = _lake(endpoint)
    lake.enforce()
    admin = lake.paimon("admin")
    db, other = f"pp_{uuid.uuid4().hex[:8]}", f"pq_{uuid.uuid4().hex[:8]}"
    admin.create_database(db, False)
    admin.create_database(other, False)
    _write(_create_table(admin, db, "orders"), [1, 2])
    _create_table(admin, db, "customers")
    _create_table(admin, other, "elsewhere")
    assert lake.http("admin", "POST", f"/databases/{db}/views", {
        "identifier": {"database": db, "object": "recent"},
        "schema": {"fields": [{"id": 0, "name": "id", "type": "BIGINT"}], "query": "SELECT id FROM orders",
                   "dialects": {}, "options": {}}}).status_code == 200
    admin.rest_api.create_function(Identifier.create(db, "plus_one"), FunctionImpl(
        Identifier.create(db, "plus_one"), definitions={"spark": FunctionDefinition.sql("x + 1")}))
    lake.grant("analyst", db, "orders", "SELECT", "DESCRIBE")
    lake.grant("writer", db, "orders", "INSERT")
    return Governed(lake, db, other)


# ------------------------------------------------------------------------------ enforced
def test_an_administrator_may_do_everything(governed: Governed) -> None:
    lake, db = governed.lake, governed.db
    admin = lake.paimon("admin")
    assert {db, governed.other} <= set(admin.list_databases())
    assert sorted(admin.list_tables(db)) == ["customers", "orders"]
    scratch = f"ps_{uuid.uuid4().hex[:8]}"
    admin.create_database(scratch, False)
    table = _create_table(admin, scratch, "t")
    _write(table, [7])
    assert _ids(admin.get_table(Identifier.create(scratch, "t"))) == [7]
    admin.alter_table(Identifier.create(scratch, "t"), [SchemaChange.set_option("k", "v")])
    admin.create_partitions(Identifier.create(scratch, "t"), [{"dt": "d2"}])
    assert {p.spec["dt"] for p in admin.list_partitions_paged(Identifier.create(scratch, "t")).elements} == {"d1", "d2"}
    admin.rename_table(Identifier.create(scratch, "t"), Identifier.create(scratch, "u"))
    admin.drop_table(Identifier.create(scratch, "u"))
    admin.drop_database(scratch)
    assert scratch not in admin.list_databases()


def test_an_analyst_reads_its_table_and_sees_nothing_else(governed: Governed) -> None:
    lake, db = governed.lake, governed.db
    analyst = lake.paimon("analyst")
    orders = Identifier.create(db, "orders")
    table = analyst.get_table(orders)
    snapshot = analyst.load_snapshot(orders)
    assert snapshot is not None and snapshot.snapshot.id == 1
    assert _ids(table) == [1, 2]
    assert [p.spec for p in analyst.list_partitions_paged(orders).elements] == [{"dt": "d1"}]

    # Listings show what the analyst holds something on: its table's database, and in it the table.
    assert analyst.list_databases() == [db]
    assert analyst.list_tables(db) == ["orders"]
    details = lake.http("analyst", "GET", f"/databases/{db}/table-details").json()["tableDetails"]
    assert [t["name"] for t in details] == ["orders"]
    everywhere = lake.http("analyst", "GET", "/tables").json()["tables"]
    assert everywhere == [{"database": db, "object": "orders"}]
    assert lake.http("analyst", "GET", f"/databases/{db}/views").json()["views"] == []
    assert lake.http("analyst", "GET", "/views").json()["views"] == []
    # Functions are governed through their database, which the analyst may see.
    assert analyst.rest_api.list_functions(db) == ["plus_one"]

    # Refused: commits, drops, schema changes, partition registration, other tables, other databases.
    # (The commit is sent as pypaimon's committer sends it; a whole table write retries a refused
    # commit ten times, for about 12 s, before it fails.)
    with pytest.raises(TableNoPermissionException):
        analyst.commit_snapshot(orders, analyst.rest_api.get_table(orders).id, None, snapshot.snapshot, [])
    with pytest.raises(TableNoPermissionException):
        analyst.drop_table(orders)
    with pytest.raises(TableNoPermissionException):
        analyst.alter_table(orders, [SchemaChange.set_option("k", "v")])
    with pytest.raises(TableNoPermissionException):
        analyst.create_partitions(orders, [{"dt": "d9"}])
    with pytest.raises(TableNoPermissionException):
        analyst.get_table(Identifier.create(db, "customers"))
    with pytest.raises(TableNoPermissionException):
        analyst.rename_table(orders, Identifier.create(db, "renamed"))
    with pytest.raises(DatabaseNoPermissionException):
        analyst.get_database(governed.other)
    assert lake.http("analyst", "GET", f"/databases/{db}/views/recent").status_code == 403
    # Grants on some tables do not tell which others exist: a missing one is denied too.
    with pytest.raises(TableNoPermissionException):
        analyst.get_table(Identifier.create(db, "missing"))

    # Nothing refused changed anything.
    admin = lake.paimon("admin")
    assert admin.load_snapshot(orders).snapshot.id == 1
    assert sorted(admin.list_tables(db)) == ["customers", "orders"]
    assert [p.spec for p in admin.list_partitions_paged(orders).elements] == [{"dt": "d1"}]


def test_a_writer_with_insert_commits(governed: Governed) -> None:
    lake, db = governed.lake, governed.db
    orders = Identifier.create(db, "orders")
    before = lake.paimon("admin").load_snapshot(orders).snapshot.id
    _write(lake.paimon("writer").get_table(orders), [100])
    assert lake.paimon("admin").load_snapshot(orders).snapshot.id == before + 1
    assert 100 in _ids(lake.paimon("admin").get_table(orders))
    with pytest.raises(TableNoPermissionException):
        lake.paimon("writer").rollback_to(orders, Instant.snapshot(before))


def test_one_with_no_grant_is_refused_and_sees_nothing(governed: Governed) -> None:
    lake, db = governed.lake, governed.db
    nobody = lake.paimon("nobody")
    with pytest.raises(TableNoPermissionException):
        nobody.get_table(Identifier.create(db, "orders"))
    with pytest.raises(TableNoPermissionException):
        nobody.load_snapshot(Identifier.create(db, "orders"))
    assert nobody.list_databases() == []
    with pytest.raises(DatabaseNoPermissionException):
        nobody.list_tables(db)
    with pytest.raises(DatabaseNoPermissionException):
        nobody.get_database(db)
    with pytest.raises(ForbiddenException):
        nobody.create_table(Identifier.create(db, "mine"), Schema.from_pyarrow_schema(ROWS, ["dt"]), False)
    assert lake.http("nobody", "GET", "/tables").json()["tables"] == []
    assert lake.http("nobody", "GET", "/functions").json()["functions"] == []
    assert lake.http("nobody", "GET", f"/databases/{db}/functions").status_code == 403
    assert lake.http("nobody", "GET", f"/databases/{db}/tables/orders/tags").status_code == 403
    assert lake.http("nobody", "GET", f"/databases/{db}/tables/orders/branches").status_code == 403
    # The same grants answer Glue: the principal's boto3 client is refused too.
    glue = client(lake.endpoint, "glue", account=lake.token("nobody"))
    with pytest.raises(ClientError) as caught:
        glue.get_table(DatabaseName=db, Name="orders")
    assert caught.value.response["Error"]["Code"] == "AccessDeniedException"
    # The account's IAM principals may still create databases (AWS keeps that grant for them).
    mine = f"pn_{uuid.uuid4().hex[:8]}"
    nobody.create_database(mine, False)
    assert nobody.list_databases() == [mine]
    nobody.drop_database(mine)


def test_the_analysts_glue_listing_matches_its_paimon_listing(governed: Governed) -> None:
    glue = client(governed.lake.endpoint, "glue", account=governed.lake.token("analyst"))
    assert [t["Name"] for t in glue.get_tables(DatabaseName=governed.db)["TableList"]] == ["orders"]
    assert [d["Name"] for d in glue.get_databases()["DatabaseList"]] == [governed.db]


def test_a_revoke_takes_effect_on_the_next_request(governed: Governed) -> None:
    lake, db = governed.lake, governed.db
    customers = Identifier.create(db, "customers")
    reader = lake.paimon("reader")
    with pytest.raises(TableNoPermissionException):
        reader.get_table(customers)
    lake.grant("reader", db, "customers", "SELECT")
    assert reader.get_table(customers).table_schema.fields
    assert reader.list_tables(db) == ["customers"]
    lake.revoke("reader", db, "customers", "SELECT")
    with pytest.raises(TableNoPermissionException):
        reader.get_table(customers)
    assert reader.list_databases() == []


# ------------------------------------------------------------------------------ defaults
def test_under_the_defaults_everyone_may_do_everything(endpoint: str) -> None:
    lake = _lake(endpoint)  # data lake settings never put: IAM alone governs
    alice, bob = lake.paimon("alice"), lake.paimon("bob")
    db = f"pd_{uuid.uuid4().hex[:8]}"
    alice.create_database(db, False)
    _write(_create_table(alice, db, "t"), [1])
    table = bob.get_table(Identifier.create(db, "t"))
    _write(table, [2])
    assert _ids(alice.get_table(Identifier.create(db, "t"))) == [1, 2]
    assert bob.list_databases() == [db] and bob.list_tables(db) == ["t"]
    bob.alter_table(Identifier.create(db, "t"), [SchemaChange.set_option("k", "v")])
    assert RESTApi({"metastore": "rest", "uri": endpoint, "warehouse": WAREHOUSE, "token.provider": "bear",
                    "token": lake.token("carol")}).list_tables(db) == ["t"]
    bob.drop_table(Identifier.create(db, "t"))
    alice.drop_database(db)
    assert bob.list_databases() == []


def test_a_column_grant_shows_those_columns_and_the_keys(governed: Governed) -> None:
    lake, db = governed.lake, governed.db
    lake.lf.grant_permissions(Principal=_principal(lake.arn("columnist")), Permissions=["SELECT"], Resource={
        "TableWithColumns": {"DatabaseName": db, "Name": "customers", "ColumnNames": ["id"]}})
    customers = Identifier.create(db, "customers")
    seen = lake.paimon("columnist").rest_api.get_table(customers).get_schema()
    assert [f.name for f in seen.fields] == ["id", "dt"]  # dt: the partition key
    details = lake.http("columnist", "GET", f"/databases/{db}/table-details").json()["tableDetails"]
    assert [[f["name"] for f in t["schema"]["fields"]] for t in details] == [["id", "dt"]]
    assert [f.name for f in lake.paimon("admin").rest_api.get_table(customers).get_schema().fields] == ["id", "dt", "v"]


def test_a_database_grant_shows_the_database_not_its_tables(governed: Governed) -> None:
    lake, db = governed.lake, governed.db
    lake.lf.grant_permissions(Principal=_principal(lake.arn("surveyor")), Resource={"Database": {"Name": db}},
                              Permissions=["DESCRIBE"])
    surveyor = lake.paimon("surveyor")
    assert surveyor.get_database(db).name == db
    assert surveyor.list_databases() == [db]
    assert surveyor.list_tables(db) == []
    with pytest.raises(TableNoPermissionException):
        surveyor.get_table(Identifier.create(db, "orders"))
    # It knows what the database holds: a table that is not there is not found.
    with pytest.raises(TableNotExistException):
        surveyor.get_table(Identifier.create(db, "missing"))


def test_a_renamed_table_keeps_its_grants_and_leaves_none_behind(governed: Governed) -> None:
    lake, db = governed.lake, governed.db
    admin = lake.paimon("admin")
    _create_table(admin, db, "before")
    lake.grant("renamer", db, "before", "SELECT", "DESCRIBE")
    assert lake.paimon("renamer").get_table(Identifier.create(db, "before")) is not None
    admin.rename_table(Identifier.create(db, "before"), Identifier.create(db, "after"))
    assert lake.paimon("renamer").get_table(Identifier.create(db, "after")) is not None
    # A new table under the old name inherits nothing.
    _create_table(admin, db, "before")
    with pytest.raises(TableNoPermissionException):
        lake.paimon("renamer").get_table(Identifier.create(db, "before"))
    held = lake.lf.list_permissions(Principal=_principal(lake.arn("renamer")))["PrincipalResourcePermissions"]
    assert [p["Resource"]["Table"]["Name"] for p in held] == ["after"]
