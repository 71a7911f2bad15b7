"""The server touches only files it owns (issue #45), tried as an attacker with an ordinary account
would, in open mode and with SigV4 (issued keys, Paimon bearer tokens):

- a Glue table claiming ``table_type=PAIMON`` at another account's table directory, then dropped
  through Paimon (DropTable, DropDatabase): nothing of the victim's is removed, and pypaimon still
  reads the victim's rows;
- a Paimon table moved by a Glue UpdateTable (Location, table_type, EXTERNAL): refused;
- names that climb (``../``): the directory stays inside its database's, and a drop removes only it;
- caller-chosen locations (Paimon ``options.path``, Iceberg ``Location``, a database's
  ``LocationUri``) outside the warehouse and GLUE_ALLOWED_LOCATIONS, or inside the warehouse's
  managed directories, or with ``..``: refused with the protocol's client error, nothing written.

The S3 side (an ``s3://`` warehouse on moto's S3 server) is in test_paimon_s3_warehouse.py.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import unquote, urlsplit

import boto3
import pyarrow as pa
import pytest
import requests
from pypaimon.api.rest_exception import BadRequestException, ForbiddenException
from pypaimon.catalog.catalog_factory import CatalogFactory
from pypaimon.common.identifier import Identifier
from pypaimon.schema.schema import Schema

from infra.local.stack import CLIENT_CONFIG, REGION, CatalogStack
from tests.integration import test_auth
from tests.integration.test_paimon_commits import read, write

VICTIM, ATTACKER = "123456789012", "111122223333"


@pytest.fixture(scope="module")
def signed(stack: CatalogStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[test_auth.AuthServer]:
    """A SigV4 server of this module's, with a key each for a victim and an attacker principal
    (issued by the admin command; principals of their own, so the module runs beside
    test_auth.py, which bootstraps the session's administrator)."""
    key_file = tmp_path_factory.mktemp("sandbox-auth") / "auth.key"
    server = stack.extra_server({"GLUE_AUTH": "sigv4", "GLUE_AUTH_KEY_FILE": str(key_file)}, name="sandbox").start()
    running = test_auth.AuthServer(server, {**stack.env, "GLUE_AUTH": "sigv4", "GLUE_AUTH_KEY_FILE": str(key_file)},
                                   ("", ""), ("", ""))
    suffix = uuid.uuid4().hex[:8]
    try:
        keys = []
        for account in (VICTIM, ATTACKER):
            principal = f"arn:aws:iam::{account}:user/sandbox-{suffix}"
            running.admin("principals", "create", principal)
            keys.append(running.new_key(principal))
        running.admin_key, running.other_key = keys
        yield running
    finally:
        server.stop()


@dataclass
class Tenant:
    """One account as a user has it: a Glue client and a Paimon catalog (pypaimon's RESTCatalog)."""

    glue: Any
    paimon: Any
    token: str
    endpoint: str

    def paimon_url(self, *parts: str) -> str:
        return "/".join([self.endpoint, "v1", "sandbox_wh", *parts])

    def raw(self, method: str, *parts: str, body: Any = None) -> requests.Response:
        return requests.request(method, self.paimon_url(*parts), json=body, timeout=30,
                                headers={"Authorization": f"Bearer {self.token}"})


def _tenant(endpoint: str, glue: Any, token: str) -> Tenant:
    paimon = CatalogFactory.create({"metastore": "rest", "uri": endpoint, "warehouse": "sandbox_wh",
                                    "token.provider": "bear", "token": token})
    return Tenant(glue, paimon, token, endpoint)


@pytest.fixture(scope="module", params=["open", "sigv4"])
def tenants(request: pytest.FixtureRequest, endpoint: str) -> tuple[Tenant, Tenant]:
    """(victim, attacker): accounts 123456789012 and 111122223333, in open mode (the access key
    and the bearer token name the account) or on the SigV4 server (issued keys and tokens)."""
    if request.param == "open":
        def open_tenant(account: str) -> Tenant:
            glue = boto3.client("glue", endpoint_url=endpoint, region_name=REGION, aws_access_key_id=account,
                                aws_secret_access_key="x", config=CLIENT_CONFIG)
            return _tenant(endpoint, glue, account)
        return open_tenant(VICTIM), open_tenant(ATTACKER)
    server = request.getfixturevalue("signed")

    def signed_tenant(key: tuple[str, str]) -> Tenant:
        token = server.admin("tokens", "create", "--key", key[0]).stdout.strip()
        return _tenant(server.endpoint, server.client(key), token)
    return signed_tenant(server.admin_key), signed_tenant(server.other_key)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory outside the warehouse and outside GLUE_ALLOWED_LOCATIONS (the pytest temporary
    directory), holding a file that was there before."""
    directory = Path(tempfile.mkdtemp(prefix="not-the-catalogs-"))
    (directory / "precious.txt").write_text("keep me")
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def _files(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())


def _local(uri: str) -> Path:
    return Path(unquote(urlsplit(uri).path))


def _warehouse(stack: CatalogStack) -> Path:
    return _local(stack.env["PAIMON_WAREHOUSE"]).resolve()


def _arrow() -> pa.Schema:
    return pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string())])


def _victim_table(victim: Tenant) -> tuple[Any, Path]:
    """A victim's Paimon table with two commits of rows: the table and its directory."""
    db = f"victim_{uuid.uuid4().hex[:8]}"
    victim.paimon.create_database(db, False, {})
    identifier = Identifier.create(db, "orders")
    victim.paimon.create_table(identifier, Schema.from_pyarrow_schema(_arrow(), [], None, {"bucket": "-1"}), False)
    table = victim.paimon.get_table(identifier)
    write(table, {"id": [1, 2], "name": ["a", "b"]})
    write(table, {"id": [3], "name": ["c"]})
    return victim.paimon.get_table(identifier), _local(table.table_path)


def _rows(table: Any) -> list[dict]:
    return sorted(read(table), key=lambda row: row["id"])


def test_a_forged_paimon_table_cannot_delete_another_accounts_directory(tenants: tuple[Tenant, Tenant]) -> None:
    victim, attacker = tenants
    table, directory = _victim_table(victim)
    before = _files(directory)
    assert len(before) >= 6 and "schema/schema-0" in before
    db = f"attacker_{uuid.uuid4().hex[:8]}"
    attacker.glue.create_database(DatabaseInput={"Name": db})
    for name in ("forged", "forged_external"):
        attacker.glue.create_table(DatabaseName=db, TableInput={
            "Name": name, "TableType": "MANAGED_TABLE", "Parameters": {"table_type": "PAIMON"},
            "StorageDescriptor": {"Location": table.table_path, "Columns": [{"Name": "id", "Type": "bigint"}]}})
    # Paimon's DropTable removes the Glue table, never a directory the catalog did not create.
    assert attacker.raw("DELETE", "databases", db, "tables", "forged").status_code == 200
    assert _files(directory) == before
    # DropDatabase cascades (its cleanup removes the managed tables' directories it created).
    assert attacker.raw("DELETE", "databases", db).status_code == 200
    assert _files(directory) == before
    assert _rows(victim.paimon.get_table(Identifier.create(table.identifier.get_database_name(), "orders"))) == [
        {"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": "c"}]


def test_glue_cannot_move_or_unmark_a_paimon_table(tenants: tuple[Tenant, Tenant]) -> None:
    victim, attacker = tenants
    table, directory = _victim_table(victim)
    before = _files(directory)
    db = f"mover_{uuid.uuid4().hex[:8]}"
    attacker.paimon.create_database(db, False, {})
    attacker.paimon.create_table(Identifier.create(db, "own"),
                                 Schema.from_pyarrow_schema(_arrow(), [], None, {"bucket": "-1"}), False)
    own = attacker.glue.get_table(DatabaseName=db, Name="own")["Table"]
    own_directory = _local(own["StorageDescriptor"]["Location"])
    assert (own_directory / "schema" / "schema-0").is_file()
    base = {k: own[k] for k in ("Name", "TableType", "Parameters", "StorageDescriptor", "PartitionKeys")}
    moved = {**base, "StorageDescriptor": {**own["StorageDescriptor"], "Location": table.table_path}}
    unmarked = {**base, "Parameters": {k: v for k, v in own["Parameters"].items() if k != "table_type"}}
    made_external = {**base, "TableType": "EXTERNAL_TABLE", "Parameters": {**own["Parameters"], "EXTERNAL": "TRUE"}}
    for table_input in (moved, unmarked, made_external):
        with pytest.raises(attacker.glue.exceptions.InvalidInputException) as refused:
            attacker.glue.update_table(DatabaseName=db, TableInput=table_input)
        assert "Paimon table" in refused.value.response["Error"]["Message"]
    assert attacker.glue.get_table(DatabaseName=db, Name="own")["Table"]["VersionId"] == own["VersionId"]
    # An update that keeps the Paimon catalog's members is an ordinary one.
    attacker.glue.update_table(DatabaseName=db, TableInput={**base, "Description": "mine"})
    assert attacker.raw("DELETE", "databases", db, "tables", "own").status_code == 200
    assert not own_directory.exists()
    assert _files(directory) == before
    assert len(_rows(victim.paimon.get_table(table.identifier))) == 3


@pytest.mark.parametrize("database, name", [("../../escape_db", "t"), ("ok_db", "../../../escape_t"),
                                            ("..", ".."), ("a/b", "c/../../d"), ("..%2fup", "%2e%2e")])
def test_names_never_reach_outside_their_database_directory(
        tenants: tuple[Tenant, Tenant], stack: CatalogStack, database: str, name: str) -> None:
    _, attacker = tenants
    warehouse = _warehouse(stack)
    database = f"{database}{uuid.uuid4().hex[:6]}" if database != ".." else database + uuid.uuid4().hex[:6]
    assert attacker.raw("POST", "databases", body={"name": database, "options": {}}).status_code == 200
    # pypaimon sends the names in the body and percent-encodes them in paths.
    attacker.paimon.create_table(Identifier.create(database, name),
                                 Schema.from_pyarrow_schema(_arrow(), [], None, {"bucket": "-1"}), False)
    # Read through Glue: a client's URL library folds a path segment `..` away before sending.
    location = attacker.glue.get_table(DatabaseName=database, Name=name)["Table"]["StorageDescriptor"]["Location"]
    path = _local(location).resolve()
    assert path.parent.parent == warehouse and path.parent.name.endswith(".db"), path
    assert (path / "schema" / "schema-0").is_file()
    assert _escaped(warehouse) == []
    if name.strip("."):
        write(attacker.paimon.get_table(Identifier.create(database, name)), {"id": [1], "name": ["x"]})
    attacker.paimon.drop_database(database, False, True)
    assert not path.exists()
    assert _escaped(warehouse) == []


def _escaped(warehouse: Path) -> list[Path]:
    """What a climbing name would have made above the warehouse (its parent, the root)."""
    return [p for where in (warehouse.parent, Path("/")) for p in where.iterdir()
            if p.name.endswith(".db") or "escape" in p.name or p.name in ("schema", "up", "d")]


def test_paimon_external_paths_must_be_the_servers_to_use(tenants: tuple[Tenant, Tenant], stack: CatalogStack,
                                                          outside: Path, tmp_path: Path) -> None:
    victim, attacker = tenants
    table, directory = _victim_table(victim)
    victim_files = _files(directory)
    db = f"external_{uuid.uuid4().hex[:8]}"
    attacker.paimon.create_database(db, False, {})
    warehouse = _warehouse(stack)
    refused = {
        outside.as_uri(): ForbiddenException,
        "FILE://" + str(outside / "sub"): ForbiddenException,
        f"file://localhost{outside}": ForbiddenException,
        f"{tmp_path.as_uri()}/../../../{outside.name}": BadRequestException,
        f"{tmp_path.as_uri()}/%2e%2e/%2e%2e/x": BadRequestException,
        f"file://{outside}//x": BadRequestException,
        f"file://otherhost{outside}": BadRequestException,
        table.table_path: ForbiddenException,  # another table's managed directory
        table.table_path + "/branch/branch-mine": ForbiddenException,
        warehouse.as_uri(): ForbiddenException,
        (warehouse / "nobody.db" / "t").as_uri(): ForbiddenException,  # where managed tables go
    }
    for n, (path, error) in enumerate(refused.items()):
        with pytest.raises(error):
            attacker.paimon.create_table(Identifier.create(db, f"t{n}"), Schema.from_pyarrow_schema(
                _arrow(), [], None, {"bucket": "-1", "path": path}), False)
    assert _files(outside) == ["precious.txt"]
    assert _files(directory) == victim_files
    assert attacker.paimon.list_tables(db) == []
    answer = attacker.raw("POST", "databases", db, "tables", body={
        "identifier": {"database": db, "object": "x"},
        "schema": {"fields": [{"id": 0, "name": "id", "type": "BIGINT"}], "partitionKeys": [], "primaryKeys": [],
                   "options": {"path": outside.as_uri()}}})
    assert answer.status_code == 403 and str(outside) in answer.json()["message"]
    # Inside the allowed locations (here the pytest directory) an external table works, and its
    # drop leaves its files.
    allowed = tmp_path / "external"
    attacker.paimon.create_table(Identifier.create(db, "fine"), Schema.from_pyarrow_schema(
        _arrow(), [], None, {"bucket": "-1", "path": allowed.as_uri()}), False)
    write(attacker.paimon.get_table(Identifier.create(db, "fine")), {"id": [7], "name": ["ok"]})
    assert _rows(attacker.paimon.get_table(Identifier.create(db, "fine"))) == [{"id": 7, "name": "ok"}]
    attacker.paimon.drop_table(Identifier.create(db, "fine"), False)
    assert (allowed / "schema" / "schema-0").is_file()


def test_tag_and_branch_names_stay_file_names(tenants: tuple[Tenant, Tenant]) -> None:
    victim, _ = tenants
    table, directory = _victim_table(victim)
    db = table.identifier.get_database_name()
    for name in ("../../../escape", "a/b", "x\\y"):
        answer = victim.raw("POST", "databases", db, "tables", "orders", "tags", body={"tagName": name})
        assert answer.status_code == 400, answer.text
        answer = victim.raw("POST", "databases", db, "tables", "orders", "branches", body={"branch": name})
        assert answer.status_code == 400, answer.text
    assert not (directory.parent / "escape").exists() and not (directory.parent.parent / "escape").exists()


def test_iceberg_locations_must_be_the_servers_to_use(tenants: tuple[Tenant, Tenant], stack: CatalogStack,
                                                      outside: Path, tmp_path: Path) -> None:
    _, attacker = tenants
    glue = attacker.glue
    db = f"ice_{uuid.uuid4().hex[:8]}"
    glue.create_database(DatabaseInput={"Name": db})
    fields = [{"Id": 1, "Name": "id", "Type": "long", "Required": True}]

    def create(name: str, location: str) -> None:
        glue.create_table(DatabaseName=db, Name=name, OpenTableFormatInput={"IcebergInput": {
            "MetadataOperation": "CREATE", "Version": "2", "CreateIcebergTableInput": {
                "Location": location, "Schema": {"Fields": fields}}}})

    refused = {
        outside.as_uri(): glue.exceptions.AccessDeniedException,
        "FILE://" + str(outside): glue.exceptions.AccessDeniedException,
        (_warehouse(stack) / "somedb.db" / "t").as_uri(): glue.exceptions.AccessDeniedException,
        f"{tmp_path.as_uri()}/../../../{outside.name}": glue.exceptions.InvalidInputException,
        f"{tmp_path.as_uri()}/a/%2E%2E/%2E%2E/%2E%2E/x": glue.exceptions.InvalidInputException,
    }
    for n, (location, error) in enumerate(refused.items()):
        with pytest.raises(error) as caught:
            create(f"t{n}", location)
        assert "Location" in caught.value.response["Error"]["Message"]
    # A database's LocationUri is where tables without a location go: the same rule.
    glue.create_database(DatabaseInput={"Name": db + "_loc", "LocationUri": outside.as_uri()})
    with pytest.raises(glue.exceptions.AccessDeniedException):
        glue.create_table(DatabaseName=db + "_loc", TableInput={"Name": "t", "StorageDescriptor": {
            "Columns": [{"Name": "id", "Type": "bigint"}]}}, OpenTableFormatInput={"IcebergInput": {
                "MetadataOperation": "CREATE", "Version": "2"}})
    assert _files(outside) == ["precious.txt"]
    assert glue.get_tables(DatabaseName=db)["TableList"] == []
    create("fine", (tmp_path / "fine").as_uri())
    assert (tmp_path / "fine" / "metadata").is_dir()


def test_an_iceberg_table_cannot_point_its_metadata_outside(tenants: tuple[Tenant, Tenant], outside: Path) -> None:
    """A Glue table whose ``metadata_location`` a caller set to any file: UpdateOpenTableFormatInput
    neither reads it nor writes next to it."""
    _, attacker = tenants
    glue = attacker.glue
    db = f"icemeta_{uuid.uuid4().hex[:8]}"
    glue.create_database(DatabaseInput={"Name": db})
    (outside / "metadata.json").write_text('{"format-version": 2}')
    glue.create_table(DatabaseName=db, TableInput={"Name": "t", "Parameters": {
        "table_type": "ICEBERG", "metadata_location": (outside / "metadata.json").as_uri()},
        "StorageDescriptor": {"Location": outside.as_uri()}})
    with pytest.raises(glue.exceptions.AccessDeniedException):
        glue.update_table(DatabaseName=db, Name="t", UpdateOpenTableFormatInput={"UpdateIcebergInput": {
            "UpdateIcebergTableInput": {"Updates": [{"Schema": {"Fields": [
                {"Id": 1, "Name": "id", "Type": "long", "Required": True}]}, "Location": outside.as_uri()}]}}})
    assert _files(outside) == ["metadata.json", "precious.txt"]
