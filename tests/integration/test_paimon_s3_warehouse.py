"""The Paimon warehouse on S3 (``PAIMON_WAREHOUSE=s3://bucket/prefix``), as deployed, against moto's
S3 server on a local port: the catalog-side files (schema-N, snapshot-N, LATEST, EARLIEST, tag-NAME)
land in the bucket at the keys the table's path names, through the running service; and the
warehouse module's S3 backend in-process.

pypaimon's RESTApi drives the catalog calls that touch no data files; the commit is raw HTTP with a
minimal valid snapshot (pypaimon would write manifests itself, which is not the catalog's part).
"""

from __future__ import annotations

import io
import json
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator

import fastavro
import pytest
import requests
from pypaimon.api.rest_api import RESTApi
from pypaimon.common.identifier import Identifier
from pypaimon.schema import data_types as pt
from pypaimon.schema.schema import Schema
from pypaimon.schema.schema_change import SchemaChange
from pypaimon.table.instant import Instant

from chalicelib.store import warehouse
from tests.integration.moto_s3 import moto_s3, s3_client
from infra.local.stack import REGION, CatalogStack, client

BUCKET = "paimon-warehouse-test"
ACCOUNT = "123456789012"
CATALOG = "s3_wh"
VENV_BIN = Path(__file__).resolve().parents[2] / ".venv" / "bin"


@pytest.fixture(scope="module")
def moto_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """moto's S3 server with the test bucket; stopped after the module."""
    with moto_s3(tmp_path_factory.mktemp("moto"), BUCKET) as url:
        yield url


# Allowed, but never created: the server's S3 calls there are refused by S3 itself.
MISSING_BUCKET = "no-such-bucket-here"


@pytest.fixture(scope="module")
def s3(moto_url: str) -> Any:
    return s3_client(moto_url)


@pytest.fixture(scope="module")
def s3_stack(moto_url: str, tmp_path_factory: pytest.TempPathFactory,
             allowed_locations: str) -> Iterator[CatalogStack]:
    """A stack of its own whose API server's warehouse is s3://BUCKET/wh on moto; Iceberg tables
    and external Paimon tables may also go under s3://BUCKET/iceberg and s3://BUCKET/external."""
    env = {"PAIMON_WAREHOUSE": f"s3://{BUCKET}/wh", "AWS_ENDPOINT_URL_S3": moto_url,
           "GLUE_ALLOWED_LOCATIONS": f"{allowed_locations},s3://{BUCKET}/iceberg,s3://{BUCKET}/external,"
                                     f"s3://{MISSING_BUCKET}"}
    with CatalogStack(log_dir=tmp_path_factory.mktemp("s3-stack-logs"), server_env=env) as running:
        yield running


@pytest.fixture(scope="module")
def api(s3_stack: CatalogStack) -> RESTApi:
    return RESTApi({"metastore": "rest", "uri": s3_stack.endpoint, "warehouse": CATALOG, "token.provider": "bear",
                    "token": ACCOUNT})


def keys(s3: Any, prefix: str) -> list[str]:
    """Every key under ``prefix``, relative to it, sorted."""
    found = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
        found += [entry["Key"][len(prefix):] for entry in page.get("Contents") or []]
    return sorted(found)


def body(s3: Any, key: str) -> bytes:
    return s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()  # type: ignore[no-any-return]


def table_prefix(path: str) -> str:
    """The bucket key prefix of a table path ``s3://BUCKET/...`` (with a trailing slash)."""
    assert path.startswith(f"s3://{BUCKET}/wh/"), path
    return path[len(f"s3://{BUCKET}/"):].rstrip("/") + "/"


def snapshot_json(snapshot_id: int, snapshot_uuid: str) -> dict[str, Any]:
    """A minimal valid Snapshot, as pypaimon's JSON.to_json writes one."""
    return {"version": 3, "id": snapshot_id, "schemaId": 1, "baseManifestList": f"manifest-list-base-{snapshot_id}",
            "deltaManifestList": f"manifest-list-delta-{snapshot_id}", "totalRecordCount": 5 * snapshot_id,
            "deltaRecordCount": 5, "commitUser": "s3-test", "commitIdentifier": snapshot_id, "commitKind": "APPEND",
            "timeMillis": int(time.time() * 1000), "uuid": snapshot_uuid}


def commit(endpoint: str, db: str, table: str, table_id: str, base: str | None, snapshot: dict[str, Any]) -> Any:
    """POST .../commit as pypaimon sends it (CommitTableRequest with PartitionStatistics)."""
    response = requests.post(
        f"{endpoint}/v1/{CATALOG}/databases/{db}/tables/{table}/commit", timeout=30,
        headers={"Authorization": f"Bearer {ACCOUNT}", "Content-Type": "application/json"},
        data=json.dumps({"tableId": table_id, "baseSnapshotUuid": base, "snapshot": snapshot,
                         "statistics": [{"spec": {"dt": "a"}, "recordCount": 5, "fileSizeInBytes": 100,
                                         "fileCount": 1, "lastFileCreationTime": snapshot["timeMillis"],
                                         "totalBuckets": 1}]}))
    assert response.status_code == 200, response.text
    return response.json()


def test_table_files_live_in_the_bucket(api: RESTApi, s3_stack: CatalogStack, s3: Any) -> None:
    db = f"s3db_{uuid.uuid4().hex[:8]}"
    api.create_database(db, {})
    ident = Identifier.create(db, "events")
    fields = [pt.DataField(0, "id", pt.AtomicType("INT")), pt.DataField(1, "dt", pt.AtomicType("STRING"))]
    api.create_table(ident, Schema(fields=fields, partition_keys=["dt"], options={"bucket": "-1"}))

    got = api.get_table(ident)
    prefix = table_prefix(got.path)
    assert prefix == f"wh/{db}.db/events/"
    assert keys(s3, prefix) == ["schema/schema-0"]
    schema0 = json.loads(body(s3, prefix + "schema/schema-0"))
    assert schema0["id"] == 0 and [f["name"] for f in schema0["fields"]] == ["id", "dt"]

    api.alter_table(ident, [SchemaChange.add_column("v", pt.AtomicType("STRING"))])
    assert keys(s3, prefix) == ["schema/schema-0", "schema/schema-1"]
    assert [f["name"] for f in json.loads(body(s3, prefix + "schema/schema-1"))["fields"]] == ["id", "dt", "v"]

    # Two commits: snapshot-1 with LATEST and EARLIEST, then snapshot-2 moves LATEST only.
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    assert commit(s3_stack.endpoint, db, "events", got.id, None, snapshot_json(1, first)) == {"success": True}
    assert keys(s3, prefix + "snapshot/") == ["EARLIEST", "LATEST", "snapshot-1"]
    assert json.loads(body(s3, prefix + "snapshot/snapshot-1"))["uuid"] == first
    assert body(s3, prefix + "snapshot/LATEST").decode().strip() == "1"
    assert body(s3, prefix + "snapshot/EARLIEST").decode().strip() == "1"
    assert commit(s3_stack.endpoint, db, "events", got.id, first, snapshot_json(2, second)) == {"success": True}
    assert keys(s3, prefix + "snapshot/") == ["EARLIEST", "LATEST", "snapshot-1", "snapshot-2"]
    assert body(s3, prefix + "snapshot/LATEST").decode().strip() == "2"
    assert body(s3, prefix + "snapshot/EARLIEST").decode().strip() == "1"

    api.create_tag(ident, "v1", snapshot_id=1)
    tag = json.loads(body(s3, prefix + "tag/tag-v1"))
    assert tag["id"] == 1 and tag["uuid"] == first

    # A branch from the tag gets its own directory (schemas, the tag, its snapshot, LATEST, EARLIEST);
    # renamed, the directory moves; dropped, it goes.
    api.create_branch(ident, "b1", "v1")
    assert keys(s3, prefix + "branch/branch-b1/") == ["schema/schema-0", "schema/schema-1", "snapshot/EARLIEST",
                                                      "snapshot/LATEST", "snapshot/snapshot-1", "tag/tag-v1"]
    branch_files = {k: body(s3, prefix + "branch/branch-b1/" + k) for k in keys(s3, prefix + "branch/branch-b1/")}
    api.rename_branch(ident, "b1", "b2")
    assert keys(s3, prefix + "branch/branch-b1/") == []
    assert {k: body(s3, prefix + "branch/branch-b2/" + k)
            for k in keys(s3, prefix + "branch/branch-b2/")} == branch_files
    api.drop_branch(ident, "b2")
    assert keys(s3, prefix + "branch/") == []

    # Rollback deletes the files above the target and points LATEST at it.
    api.rollback_to(ident, Instant.snapshot(1))
    assert keys(s3, prefix + "snapshot/") == ["EARLIEST", "LATEST", "snapshot-1"]
    assert body(s3, prefix + "snapshot/LATEST").decode().strip() == "1"
    assert api.load_snapshot(ident).snapshot.id == 1

    api.delete_tag(ident, "v1")
    assert "tag/tag-v1" not in keys(s3, prefix)

    # A managed table's directory goes with it.
    api.drop_table(ident)
    assert keys(s3, prefix) == []


# ----------------------------------------------------------------------------- the module itself
@pytest.fixture
def on_moto(moto_url: str, monkeypatch: pytest.MonkeyPatch, configure: Callable[..., Any]) -> Iterator[str]:
    """This process's warehouse module on moto's S3: a fresh prefix; the client forgotten after."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", moto_url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    root = f"s3://{BUCKET}/unit-{uuid.uuid4().hex[:8]}"
    configure(paimon_warehouse=root)
    warehouse.reset_client()
    yield root
    warehouse.reset_client()


def test_warehouse_put_get_exists_list_and_delete_on_s3(on_moto: str, s3: Any) -> None:
    assert warehouse.warehouse_root() == on_moto
    table = warehouse.table_path("db", "t")
    schema = warehouse.schema_file(table, 0)
    assert warehouse.get(schema) is None
    assert not warehouse.exists(schema)
    assert warehouse.list_prefix(table) == []

    warehouse.put(schema, '{"id": 0}')
    warehouse.put(warehouse.snapshot_file(table, 1), b"snap")
    warehouse.put(warehouse.latest_file(table), "1")
    assert warehouse.get(schema) == b'{"id": 0}'
    assert warehouse.exists(schema)
    warehouse.put(schema, '{"id": 0, "again": true}')  # a put replaces
    assert warehouse.get(schema) == b'{"id": 0, "again": true}'
    assert body(s3, on_moto[len(f"s3://{BUCKET}/"):] + "/db.db/t/snapshot/LATEST") == b"1"
    assert warehouse.list_prefix(table) == sorted([schema, warehouse.snapshot_file(table, 1),
                                                   warehouse.latest_file(table)])
    # A sibling whose name starts like the table's is not under it.
    warehouse.put(warehouse.schema_file(table + "2", 0), "other")
    assert len(warehouse.list_prefix(table)) == 3

    warehouse.delete(warehouse.latest_file(table))
    warehouse.delete(warehouse.latest_file(table))  # absent: nothing
    assert not warehouse.exists(warehouse.latest_file(table))
    warehouse.delete_tree(table)
    assert warehouse.list_prefix(table) == []
    assert warehouse.exists(warehouse.schema_file(table + "2", 0))
    warehouse.delete_tree(table)  # absent: nothing

    # Keys are literal; an s3a:// directory lists as s3a:// URIs.
    odd = f"{on_moto}/x#y?z%41/f"
    warehouse.put(odd, "odd")
    assert warehouse.get(odd) == b"odd" and warehouse.get(f"{on_moto}/x") is None
    assert warehouse.list_prefix(f"{on_moto}/x#y?z%41") == [odd]
    assert warehouse.list_prefix("s3a" + on_moto[2:]) == sorted(
        "s3a" + u[2:] for u in [odd, warehouse.schema_file(table + "2", 0)])


def test_warehouse_s3_delete_tree_within_a_deadline_keeps_the_last_file_to_the_end(on_moto: str) -> None:
    """Past its deadline a removal stops after one DeleteObjects of 1,000 keys, keeping schema-0
    (which keeps the path taken); called again it removes the rest, schema-0 last."""
    from chalicelib import clock

    table = warehouse.table_path("db", "big")
    schema_0 = warehouse.schema_file(table, 0)
    warehouse.put(schema_0, "{}")
    for n in range(1500):
        warehouse.put(f"{table}/data/f-{n:04d}", b"x")
    assert warehouse.delete_tree(table, clock.monotonic(), last=schema_0) is False
    assert len(warehouse.list_prefix(table)) == 501 and warehouse.exists(schema_0)
    assert warehouse.delete_tree(table, clock.monotonic() + 60, last=schema_0) is True
    assert warehouse.list_prefix(table) == []


def test_warehouse_s3_delete_many_in_batches(on_moto: str, s3: Any) -> None:
    """delete_many: one DeleteObjects per 1,000 keys (a rollback's snapshot files), absent ones
    ignored, other keys kept."""
    calls: list[int] = []
    client = warehouse._s3()
    real = client.delete_objects

    def counted(**kwargs: Any) -> Any:
        calls.append(len(kwargs["Delete"]["Objects"]))
        return real(**kwargs)

    table = warehouse.table_path("db", "rolled")
    files = [warehouse.snapshot_file(table, n) for n in range(1, 1201)]
    for uri in files:
        warehouse.put(uri, b"s")
    client.delete_objects = counted
    try:
        warehouse.delete_many(files[:0:-1] + [warehouse.snapshot_file(table, 9999)])  # newest first, one absent
    finally:
        client.delete_objects = real
    assert calls == [1000, 200]
    assert warehouse.list_prefix(table) == [files[0]]


def test_warehouse_s3_uri_without_bucket_is_refused() -> None:
    with pytest.raises(warehouse.WarehouseError):
        warehouse.put("s3:///key", b"x")


def test_names_with_uri_characters_keep_their_own_keys(api: RESTApi, s3: Any) -> None:
    """``#``, ``?``, ``%`` and spaces in Glue names (which allows them) never reach a key as they
    are: such a name's directory is its safe characters and the table's uid, so two such tables
    never share (or truncate to) one key, and no name is read as a URI fragment, query or escape."""
    db = f"s3db_{uuid.uuid4().hex[:8]}"
    api.create_database(db, {})
    fields = [pt.DataField(0, "id", pt.AtomicType("INT"))]
    names = ["a#b", "a?b", "a%41b", "a b"]
    for name in names:
        api.create_table(Identifier.create(db, name), Schema(fields=fields, options={"bucket": "-1"}))
    directories = {}
    for name in names:
        path = api.get_table(Identifier.create(db, name)).path
        assert keys(s3, table_prefix(path)) == ["schema/schema-0"], (name, keys(s3, f"wh/{db}.db/"))
        directory = path.rsplit("/", 1)[1]
        assert not set(directory) & set("#?% "), path
        directories[name] = directory
    assert len(set(directories.values())) == len(names)
    assert keys(s3, f"wh/{db}.db/") == sorted(f"{d}/schema/schema-0" for d in directories.values())
    api.drop_table(Identifier.create(db, "a#b"))
    assert keys(s3, f"wh/{db}.db/") == sorted(f"{directories[n]}/schema/schema-0" for n in names[1:])
    api.drop_database(db)  # cascades, and removes its managed tables' directories
    assert keys(s3, f"wh/{db}.db/") == []


def test_an_s3_warehouse_is_a_sandbox_too(s3_stack: CatalogStack, api: RESTApi, s3: Any) -> None:
    """Issue #45 on S3: another account's Glue table forged at a victim's table prefix and dropped
    through Paimon removes no key; external paths outside the allowed prefixes (another bucket,
    the managed prefixes, ``..``) are refused (403 / 400) with nothing written; an allowed bucket
    that does not exist is a client error naming it, not a 500."""
    from pypaimon.api.rest_exception import BadRequestException, ForbiddenException

    db = f"victim_{uuid.uuid4().hex[:8]}"
    api.create_database(db, {})
    fields = [pt.DataField(0, "id", pt.AtomicType("INT"))]
    api.create_table(Identifier.create(db, "t"), Schema(fields=fields, options={"bucket": "-1"}))
    path = api.get_table(Identifier.create(db, "t")).path
    victim_keys = keys(s3, table_prefix(path))
    assert victim_keys == ["schema/schema-0"]

    attacker = "111122223333"
    glue = client(s3_stack.endpoint, "glue", account=attacker)
    forged_db = f"attacker_{uuid.uuid4().hex[:8]}"
    glue.create_database(DatabaseInput={"Name": forged_db})
    glue.create_table(DatabaseName=forged_db, TableInput={
        "Name": "forged", "Parameters": {"table_type": "PAIMON"}, "StorageDescriptor": {"Location": path}})
    headers = {"Authorization": f"Bearer {attacker}"}
    dropped = requests.delete(f"{s3_stack.endpoint}/v1/{CATALOG}/databases/{forged_db}/tables/forged",
                              headers=headers, timeout=30)
    assert dropped.status_code == 200
    assert requests.delete(f"{s3_stack.endpoint}/v1/{CATALOG}/databases/{forged_db}", headers=headers,
                           timeout=30).status_code == 200
    assert keys(s3, table_prefix(path)) == victim_keys

    before = keys(s3, "")
    refused = {f"s3://another-bucket/{db}": ForbiddenException, path + "/sub": ForbiddenException,
               f"s3://{BUCKET}/wh": ForbiddenException, f"s3://{BUCKET}/elsewhere/x": ForbiddenException,
               f"s3://{BUCKET}/external/../wh/{db}.db/t": BadRequestException,
               f"s3://{BUCKET}/external/%2e%2e/wh/x": BadRequestException,
               f"s3://{MISSING_BUCKET}/x": BadRequestException}
    for n, (location, error) in enumerate(refused.items()):
        with pytest.raises(error) as caught:
            api.create_table(Identifier.create(db, f"x{n}"), Schema(fields=fields, options={
                "bucket": "-1", "path": location}))
        assert location.split("://")[1][:20] in str(caught.value) or error is BadRequestException
    assert keys(s3, "") == before
    api.create_table(Identifier.create(db, "ext"), Schema(fields=fields, options={
        "bucket": "-1", "path": f"s3://{BUCKET}/external/{db}/ext"}))
    assert keys(s3, f"external/{db}/ext/") == ["schema/schema-0"]


def _manifest_list(schema: dict[str, Any], rows: int) -> bytes:
    """An Avro manifest list of ``rows`` records (deflate), as a writer's header would carry its schema."""
    buffer = io.BytesIO()
    fastavro.writer(buffer, fastavro.parse_schema(schema), [{"_FILE_NAME": f"manifest-{n}", "_FILE_SIZE": 9}
                                                             for n in range(rows)], codec="deflate")
    return buffer.getvalue()


def test_replace_truncates_and_register_reads_old_snapshots_on_s3(s3_stack: CatalogStack, api: RESTApi,
                                                                   s3: Any) -> None:
    """On S3: a replace of a table with a snapshot writes its two empty manifest lists (the
    header's schema read from the table's own list in the bucket) and snapshot-2 / LATEST; a
    register of an external prefix holding 300 snapshot objects adopts only the latest, and an
    old one, the EARLIEST and the paged list are read from the bucket."""
    db = f"s3db_{uuid.uuid4().hex[:8]}"
    api.create_database(db, {})
    ident = Identifier.create(db, "full")
    fields = [pt.DataField(0, "id", pt.AtomicType("INT")), pt.DataField(1, "dt", pt.AtomicType("STRING"))]
    api.create_table(ident, Schema(fields=fields, partition_keys=["dt"], options={"bucket": "-1"}))
    got = api.get_table(ident)
    prefix = table_prefix(got.path)
    avro_schema = {"type": "record", "name": "record", "fields": [{"name": "_FILE_NAME", "type": "string"},
                                                                  {"name": "_FILE_SIZE", "type": "long"}]}
    s3.put_object(Bucket=BUCKET, Key=prefix + "manifest/manifest-list-delta-1", Body=_manifest_list(avro_schema, 3))
    first = snapshot_json(1, str(uuid.uuid4()))
    first["schemaId"] = 0
    assert commit(s3_stack.endpoint, db, "full", got.id, None, first) == {"success": True}
    headers = {"Authorization": f"Bearer {ACCOUNT}", "Content-Type": "application/json"}
    schema = {"fields": [{"id": 0, "name": "id", "type": "INT"}, {"id": 1, "name": "dt", "type": "STRING"},
                         {"id": 2, "name": "w", "type": "INT"}],
              "partitionKeys": ["dt"], "primaryKeys": [], "options": {"bucket": "-1"}, "comment": None}
    replaced = requests.post(f"{s3_stack.endpoint}/v1/{CATALOG}/databases/{db}/tables/full/replace",
                             data=json.dumps({"schema": schema}), headers=headers, timeout=60)
    assert replaced.status_code == 200, replaced.text
    assert body(s3, prefix + "snapshot/LATEST").decode().strip() == "2"
    truncating = json.loads(body(s3, prefix + "snapshot/snapshot-2"))
    assert truncating["commitKind"] == "OVERWRITE" and truncating["totalRecordCount"] == 0
    for member in ("baseManifestList", "deltaManifestList"):
        reader = fastavro.reader(io.BytesIO(body(s3, prefix + "manifest/" + truncating[member])))
        assert list(reader) == [] and reader.writer_schema["fields"][0]["name"] == "_FILE_NAME"
    assert "schema/schema-1" in keys(s3, prefix)

    # Register an external prefix with 300 snapshots.
    external = f"external/{db}/long/"
    s3.put_object(Bucket=BUCKET, Key=external + "schema/schema-0", Body=body(s3, prefix + "schema/schema-0"))
    for number in range(1, 301):
        s3.put_object(Bucket=BUCKET, Key=f"{external}snapshot/snapshot-{number}",
                      Body=json.dumps({**snapshot_json(number, str(uuid.uuid4())), "schemaId": 0}))
    s3.put_object(Bucket=BUCKET, Key=external + "snapshot/LATEST", Body=b"300")
    s3.put_object(Bucket=BUCKET, Key=external + "snapshot/EARLIEST", Body=b"1")
    registered = requests.post(f"{s3_stack.endpoint}/v1/{CATALOG}/databases/{db}/register", headers=headers,
                               data=json.dumps({"identifier": {"database": db, "object": "long"},
                                                "path": f"s3://{BUCKET}/{external.rstrip('/')}"}), timeout=60)
    assert registered.status_code == 200, registered.text
    base = f"{s3_stack.endpoint}/v1/{CATALOG}/databases/{db}/tables/long/snapshots"
    assert requests.get(f"{base}/7", headers=headers, timeout=30).json()["snapshot"]["id"] == 7
    assert requests.get(f"{base}/EARLIEST", headers=headers, timeout=30).json()["snapshot"]["id"] == 1
    ids, token = [], None
    while True:
        page = requests.get(base, headers=headers, timeout=60,
                            params={"maxResults": 100, **({"pageToken": token} if token else {})}).json()
        ids += [s["id"] for s in page["snapshots"]]
        token = page["nextPageToken"]
        if not token:
            break
    assert ids == list(range(300, 0, -1))
