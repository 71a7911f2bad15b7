"""The routes Paimon's Java RESTCatalog calls beyond pypaimon's (issue #50), over HTTP: table by
id, snapshots by version and paged, consumers and their reset, rollback-schema, replace,
register; the 501 of an unrouted path; and the defects the Java client met (tag files invisible,
tags above a rollback target kept, ``tagTimeRetained`` as seconds, ``dropPrimaryKey`` refused,
no ``database`` in GetTableResponse). pypaimon writes the data and the client-side files (its
``table.create_tag`` and ConsumerManager write them into the table directory); plain HTTP with
the Java client's bodies (RESTApi.java) where pypaimon has no call.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import requests
from pypaimon.catalog.rest.rest_catalog import RESTCatalog
from pypaimon.common.identifier import Identifier
from pypaimon.consumer.consumer import Consumer
from pypaimon.consumer.consumer_manager import ConsumerManager
from pypaimon.schema.schema import Schema
from pypaimon.table.instant import Instant

from tests.integration.test_paimon_commits import (WAREHOUSE, catalog, directory, make_table, read,  # noqa: F401
                                                   write)
from tests.integration.test_commit_faults import wait_until_stopped
from tests.integration.test_paimon_protocol import ACCOUNT, error_of

PK_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False),
                       pa.field("v", pa.string())])
APPEND_ONLY = pa.schema([pa.field("dt", pa.string()), pa.field("n", pa.int64())])
HEADERS = {"Authorization": f"Bearer {ACCOUNT}", "Content-Type": "application/json"}


def http(method: str, endpoint: str, path: str, body: Any = None, **params: Any) -> requests.Response:
    return requests.request(method, f"{endpoint}/v1/{WAREHOUSE}/{path}", headers=HEADERS, timeout=60,
                            data=None if body is None else json.dumps(body), params=params or None)


def ok(response: requests.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json() if response.text else None


@pytest.fixture
def orders(make_table, db):  # noqa: F811
    """A primary-key table with three snapshots (ids 1..3)."""
    table = make_table("orders", PK_SCHEMA, ["dt"], ["dt", "id"])
    for i in range(3):
        write(table, {"id": [i], "dt": ["a"], "v": [f"v{i}"]})
    return table


def t(db: str, *parts: str) -> str:
    return "/".join([f"databases/{db}/tables/orders", *parts])


# ----------------------------------------------------------------------------- 501
@pytest.mark.parametrize("method, path", [
    ("GET", "databases/d/tables/t/no-such-thing"), ("POST", "databases/d/tables/t/partitions/nope/x"),
    ("DELETE", "databases/d/nothing"), ("GET", "nothing"),
])
def test_an_unrouted_path_is_501_never_404(endpoint: str, method: str, path: str) -> None:
    response = http(method, endpoint, path, {} if method == "POST" else None)
    assert response.status_code == 501
    assert error_of(response)["resourceType"] is None


def test_a_real_404_keeps_its_resource_type(endpoint: str, db: str) -> None:
    response = http("GET", endpoint, f"databases/{db}/tables/missing")
    assert response.status_code == 404 and error_of(response)["resourceType"] == "TABLE"


# ----------------------------------------------------------------------------- tables
def test_get_table_by_id_and_the_database_member(endpoint: str, catalog: RESTCatalog, orders, db: str) -> None:  # noqa: F811
    by_name = ok(http("GET", endpoint, t(db)))
    assert by_name["database"] == db and by_name["name"] == "orders"
    by_id = ok(http("GET", endpoint, f"tables/id/{by_name['id']}"))
    assert by_id == by_name
    # Renamed, the id still finds it (the locator follows the rename).
    catalog.rename_table(Identifier.create(db, "orders"), Identifier.create(db, "orders2"))
    assert ok(http("GET", endpoint, f"tables/id/{by_name['id']}"))["name"] == "orders2"
    missing = http("GET", endpoint, f"tables/id/{uuid.uuid4()}")
    assert missing.status_code == 404 and error_of(missing)["resourceType"] == "TABLE"
    assert http("GET", endpoint, "tables/id/not-a-uuid").status_code == 404
    details = ok(http("GET", endpoint, f"databases/{db}/table-details"))["tableDetails"]
    assert [d["database"] for d in details] == [db]


def test_drop_primary_key_as_flink_sends_it(endpoint: str, catalog: RESTCatalog, db: str) -> None:  # noqa: F811
    ident = Identifier.create(db, "keyed")
    catalog.create_table(ident, Schema.from_pyarrow_schema(PK_SCHEMA, [], ["id"], {"bucket": "1"}), False)
    ok(http("POST", endpoint, f"databases/{db}/tables/keyed", {"changes": [{"action": "dropPrimaryKey"}]}))
    assert ok(http("GET", endpoint, f"databases/{db}/tables/keyed"))["schema"]["primaryKeys"] == []


def test_replace_table_keeps_identity_and_path(endpoint: str, catalog: RESTCatalog, db: str,  # noqa: F811
                                               make_table) -> None:  # noqa: F811
    ident = Identifier.create(db, "r")
    catalog.create_table(ident, Schema.from_pyarrow_schema(PK_SCHEMA, ["dt"], None, {"bucket": "-1"}), False)
    before = ok(http("GET", endpoint, f"databases/{db}/tables/r"))
    schema = dict(before["schema"])
    schema["fields"] = schema["fields"][:2] + [{"id": 5, "name": "w", "type": "INT"}]
    schema["options"] = {"bucket": "-1", "owner-note": "replaced"}
    ok(http("POST", endpoint, f"databases/{db}/tables/r/replace", {"schema": schema}))
    after = ok(http("GET", endpoint, f"databases/{db}/tables/r"))
    assert (after["id"], after["path"]) == (before["id"], before["path"])
    assert after["schemaId"] == before["schemaId"] + 1
    assert [f["name"] for f in after["schema"]["fields"]] == ["id", "dt", "w"]
    assert after["schema"]["options"]["owner-note"] == "replaced"
    # Changing partition keys is Paimon's UnsupportedOperationException: 501.
    refused = http("POST", endpoint, f"databases/{db}/tables/r/replace", {"schema": {**schema, "partitionKeys": []}})
    assert refused.status_code == 501
    missing = http("POST", endpoint, f"databases/{db}/tables/none/replace", {"schema": schema})
    assert missing.status_code == 404 and error_of(missing)["resourceType"] == "TABLE"


def _java_replace_body(endpoint: str, db: str, name: str, fields: list[dict], options: dict[str, str]) -> dict:
    """ReplaceTableRequest as RESTApi.replaceTable sends it: the new Schema (fields,
    partitionKeys, primaryKeys, options, comment)."""
    schema = ok(http("GET", endpoint, f"databases/{db}/tables/{name}"))["schema"]
    return {"schema": {"fields": fields, "partitionKeys": schema["partitionKeys"],
                       "primaryKeys": schema["primaryKeys"], "options": options, "comment": None}}


def test_replace_of_a_table_with_data_truncates_it_first(endpoint: str, catalog: RESTCatalog, db: str, glue,  # noqa: F811
                                                         make_table) -> None:  # noqa: F811
    """Paimon's replaceTable on a table holding data: an OVERWRITE snapshot of its own holding
    no file (two empty manifest lists), then the new schema as latest + 1; same id and path.
    pypaimon then reads no row under the new schema, writes and reads with it, and still reads
    the old rows at the old snapshot and at a tag of it."""
    table = make_table("full", PK_SCHEMA, ["dt"], ["dt", "id"])
    write(table, {"id": [1, 2], "dt": ["a", "b"], "v": ["x", "y"]})
    write(table, {"id": [3], "dt": ["a"], "v": ["z"]})
    table.create_tag("before", snapshot_id=2)
    before = ok(http("GET", endpoint, f"databases/{db}/tables/full"))
    assert sorted(p["Values"][0] for p in glue.get_partitions(DatabaseName=db, TableName="full")["Partitions"]) \
        == ["a", "b"]
    fields = [{"id": 0, "name": "id", "type": "BIGINT NOT NULL"}, {"id": 1, "name": "dt", "type": "STRING NOT NULL"},
              {"id": 2, "name": "w", "type": "INT"}]
    ok(http("POST", endpoint, f"databases/{db}/tables/full/replace",
            _java_replace_body(endpoint, db, "full", fields, {"bucket": "1", "note": "replaced"})))
    after = ok(http("GET", endpoint, f"databases/{db}/tables/full"))
    assert (after["id"], after["path"], after["schemaId"]) == (before["id"], before["path"], before["schemaId"] + 1)
    truncating = ok(http("GET", endpoint, f"databases/{db}/tables/full/snapshots/LATEST"))["snapshot"]
    assert truncating["id"] == 3 and truncating["commitKind"] == "OVERWRITE" and truncating["operation"] == "TRUNCATE"
    assert truncating["totalRecordCount"] == 0 and truncating["deltaRecordCount"] == -3
    assert truncating["schemaId"] == before["schemaId"] and truncating["commitUser"].startswith("replace-table-")
    assert truncating["commitIdentifier"] == 2 ** 63 - 1 and "indexManifest" not in truncating
    for member in ("baseManifestList", "deltaManifestList"):
        assert directory(table, "manifest", truncating[member]).stat().st_size == truncating[member + "Size"]
    assert json.loads(directory(table, "snapshot", "snapshot-3").read_text())["id"] == 3
    assert directory(table, "snapshot", "LATEST").read_text() == "3"
    # The partitions are emptied (their Glue partitions gone), the totals zero.
    assert glue.get_partitions(DatabaseName=db, TableName="full")["Partitions"] == []
    assert ok(http("GET", endpoint, f"databases/{db}/tables/full/snapshot"))["snapshot"]["recordCount"] == 0
    replaced = catalog.get_table(Identifier.create(db, "full"))
    assert [f.name for f in replaced.table_schema.fields] == ["id", "dt", "w"]
    assert read(replaced) == []
    write(replaced, {"id": [7], "dt": ["c"], "w": [70]})
    assert read(replaced) == [{"id": 7, "dt": "c", "w": 70}]
    # Time travel under the old schema (pypaimon reads an old snapshot with the schema of the
    # table object; Java switches to the snapshot's): the old snapshot and its tag still read
    # the old rows, their files stay.
    assert sorted(r["v"] for r in read(table.copy({"scan.snapshot-id": "2"}))) == ["x", "y", "z"]
    assert sorted(r["v"] for r in read(table.copy({"scan.tag-name": "before"}))) == ["x", "y", "z"]
    # A branch from the old tag holds the old rows; the main branch is untouched by it.
    catalog.create_branch(Identifier.create(db, "full"), "old", "before")
    assert sorted(r["v"] for r in read(table.copy({"branch": "old"}))) == ["x", "y", "z"]
    assert read(catalog.get_table(Identifier.create(db, "full"))) == [{"id": 7, "dt": "c", "w": 70}]


def test_replace_of_an_unpartitioned_table_twice(endpoint: str, catalog: RESTCatalog, db: str) -> None:  # noqa: F811
    """No partition keys: the totals go to 0. A second replace reads the schema of its empty
    lists from the first one's (an empty list is a valid header for the next)."""
    ident = Identifier.create(db, "flat")
    catalog.create_table(ident, Schema.from_pyarrow_schema(APPEND_ONLY, [], None, {"bucket": "-1"}), False)
    write(catalog.get_table(ident), {"dt": ["a", "b"], "n": [1, 2]})
    fields = [{"id": 0, "name": "dt", "type": "STRING"}, {"id": 1, "name": "n", "type": "BIGINT"}]
    for round_ in range(2):
        ok(http("POST", endpoint, f"databases/{db}/tables/flat/replace",
                _java_replace_body(endpoint, db, "flat", fields, {"bucket": "-1"})))
        latest = ok(http("GET", endpoint, f"databases/{db}/tables/flat/snapshot"))["snapshot"]
        assert latest["recordCount"] == 0 and latest["snapshot"]["id"] == 2 + round_
        assert latest["snapshot"]["deltaRecordCount"] == (-2 if round_ == 0 else 0)
        assert read(catalog.get_table(ident)) == []
    assert ok(http("GET", endpoint, f"databases/{db}/tables/flat"))["schemaId"] == 2
    write(catalog.get_table(ident), {"dt": ["c"], "n": [3]})
    assert read(catalog.get_table(ident)) == [{"dt": "c", "n": 3}]


def test_a_replace_racing_a_commit_loses_or_wins_cleanly(endpoint: str, catalog: RESTCatalog, db: str,  # noqa: F811
                                                         make_table) -> None:  # noqa: F811
    """A client commit built on the head the truncation replaced is refused (pypaimon retries it
    on the new head); the truncation itself never lands half: the head, the snapshot files and
    the rows agree."""
    table = make_table("racy", APPEND_ONLY, ["dt"])
    write(table, {"dt": ["a"], "n": [1]})
    stale = catalog.get_table(Identifier.create(db, "racy"))
    builder = stale.new_batch_write_builder()
    writer, committer = builder.new_write(), builder.new_commit()
    writer.write_arrow(pa.Table.from_pydict({"dt": ["a"], "n": [2]}, schema=APPEND_ONLY))
    messages = writer.prepare_commit()
    body = _java_replace_body(endpoint, db, "racy", [{"id": 0, "name": "dt", "type": "STRING"},
                                                     {"id": 1, "name": "n", "type": "BIGINT"}], {"bucket": "-1"})
    ok(http("POST", endpoint, f"databases/{db}/tables/racy/replace", body))
    committer.commit(messages)  # pypaimon's commit on the stale base: refused, retried on the truncation
    writer.close()
    committer.close()
    latest = ok(http("GET", endpoint, f"databases/{db}/tables/racy/snapshots/LATEST"))["snapshot"]
    assert latest["id"] == 3 and latest["commitKind"] == "APPEND"
    assert ok(http("GET", endpoint, f"databases/{db}/tables/racy/snapshots/2"))["snapshot"]["operation"] == "TRUNCATE"
    assert [r["n"] for r in read(catalog.get_table(Identifier.create(db, "racy")))] == [2]
    assert directory(table, "snapshot", "LATEST").read_text() == "3"


@pytest.mark.slow  # starts a server of its own
# chalicelib/service/paimon_truncate.py: STOP_BEFORE_DECISION
def test_a_truncation_that_loses_its_race_is_built_again(start_server, endpoint: str, catalog: RESTCatalog,  # noqa: F811
                                                         db: str, make_table) -> None:  # noqa: F811
    """A replace paused (SIGSTOP) with its truncation built on snapshot 1 and not yet decided;
    a client commits snapshot 2 meanwhile. Resumed, the truncation loses the head condition and
    is built again on snapshot 2 (as Paimon's commit retries): it truncates that one too."""
    table = make_table("lose", APPEND_ONLY, ["dt"])
    write(table, {"dt": ["a"], "n": [1]})
    body = _java_replace_body(endpoint, db, "lose", [{"id": 0, "name": "dt", "type": "STRING"},
                                                     {"id": 1, "name": "n", "type": "BIGINT"}], {"bucket": "-1"})
    paused = start_server(GLUE_FAULT_STOP_AT="paimon-before-truncate")
    # Read once there, so that server reads the table with its head in one BatchGetItem (a
    # hint) from then on: the retry must read the head afresh, not reuse the one read with it.
    for _ in range(2):
        assert requests.get(f"{paused.endpoint}/v1/{WAREHOUSE}/databases/{db}/tables/lose/snapshot", headers=HEADERS,
                            timeout=60).status_code == 200
    outcome: dict[str, Any] = {}

    def replace() -> None:
        outcome["response"] = requests.post(f"{paused.endpoint}/v1/{WAREHOUSE}/databases/{db}/tables/lose/replace",
                                            data=json.dumps(body), headers=HEADERS, timeout=300)
    thread = threading.Thread(target=replace, daemon=True)
    thread.start()
    try:
        wait_until_stopped(paused.process.pid)
        write(catalog.get_table(Identifier.create(db, "lose")), {"dt": ["b"], "n": [2]})
        assert directory(table, "snapshot", "LATEST").read_text() == "2"
    finally:
        os.kill(paused.process.pid, signal.SIGCONT)
    thread.join(120)
    assert outcome["response"].status_code == 200, outcome["response"].text
    latest = ok(http("GET", endpoint, f"databases/{db}/tables/lose/snapshots/LATEST"))["snapshot"]
    assert (latest["id"], latest["operation"], latest["deltaRecordCount"]) == (3, "TRUNCATE", -2)
    assert read(catalog.get_table(Identifier.create(db, "lose"))) == []
    # The lists the first build wrote are the ones snapshot 3 names: every list is named.
    named = {json.loads(directory(table, "snapshot", f"snapshot-{n}").read_text())[member]
             for n in (1, 2, 3) for member in ("baseManifestList", "deltaManifestList")}
    assert {p.name for p in directory(table, "manifest").iterdir() if p.name.startswith("manifest-list-")} == named
    assert ok(http("GET", endpoint, f"databases/{db}/tables/lose"))["schemaId"] == 1


@pytest.mark.slow  # starts a server of its own
# chalicelib/service/paimon_snapshots.py: STOP_BEFORE_LATEST (a crash point too)
def test_a_replace_that_dies_after_its_decision_is_settled_and_retried(start_server, endpoint: str,  # noqa: F811
                                                                       catalog: RESTCatalog, db: str,  # noqa: F811
                                                                       make_table) -> None:  # noqa: F811
    """The server dies (exit 137) with the truncation decided and its files not written: the
    next read settles it (snapshot-2 and LATEST written), the table is truncated under its old
    schema, and the client's retry of the replace truncates again (nothing) and appends it."""
    table = make_table("dies", APPEND_ONLY, ["dt"])
    write(table, {"dt": ["a"], "n": [1]})
    body = _java_replace_body(endpoint, db, "dies", [{"id": 0, "name": "dt", "type": "STRING"},
                                                     {"id": 1, "name": "n", "type": "BIGINT"}], {"bucket": "-1"})
    crashing = start_server(GLUE_FAULT_CRASH_AT="paimon-before-latest")
    with pytest.raises(requests.ConnectionError):
        requests.post(f"{crashing.endpoint}/v1/{WAREHOUSE}/databases/{db}/tables/dies/replace",
                      data=json.dumps(body), headers=HEADERS, timeout=120)
    assert directory(table, "snapshot", "LATEST").read_text() == "1"
    latest = ok(http("GET", endpoint, f"databases/{db}/tables/dies/snapshots/LATEST"))["snapshot"]
    assert (latest["id"], latest["operation"]) == (2, "TRUNCATE")
    assert directory(table, "snapshot", "LATEST").read_text() == "2"
    assert ok(http("GET", endpoint, f"databases/{db}/tables/dies"))["schemaId"] == 0
    assert read(catalog.get_table(Identifier.create(db, "dies"))) == []
    ok(http("POST", endpoint, f"databases/{db}/tables/dies/replace", body))
    latest = ok(http("GET", endpoint, f"databases/{db}/tables/dies/snapshots/LATEST"))["snapshot"]
    assert (latest["id"], latest["deltaRecordCount"]) == (3, 0)
    assert ok(http("GET", endpoint, f"databases/{db}/tables/dies"))["schemaId"] == 1


def test_rollback_schema_drops_the_schemas_above(endpoint: str, catalog: RESTCatalog, db: str,  # noqa: F811
                                                 make_table) -> None:  # noqa: F811
    table = make_table("s", PK_SCHEMA, ["dt"], ["dt", "id"])
    path = f"databases/{db}/tables/s"
    for n in range(2):
        ok(http("POST", endpoint, path, {"changes": [{"action": "setOption", "key": f"k{n}", "value": "1"}]}))
    assert ok(http("GET", endpoint, path))["schemaId"] == 2
    ok(http("POST", endpoint, f"{path}/rollback-schema", {"schemaId": 0}))
    got = ok(http("GET", endpoint, path))
    assert got["schemaId"] == 0 and "k0" not in got["schema"]["options"]
    assert not directory(table, "schema", "schema-1").exists() and directory(table, "schema", "schema-0").exists()
    # A schema a snapshot uses cannot go.
    ok(http("POST", endpoint, path, {"changes": [{"action": "setOption", "key": "k", "value": "1"}]}))
    write(catalog.get_table(Identifier.create(db, "s")), {"id": [1], "dt": ["a"], "v": ["x"]})
    refused = http("POST", endpoint, f"{path}/rollback-schema", {"schemaId": 0})
    assert refused.status_code == 400 and "still referenced" in error_of(refused)["message"]
    assert http("POST", endpoint, f"{path}/rollback-schema", {"schemaId": 9}).status_code == 400


# ----------------------------------------------------------------------------- snapshots
def test_snapshot_by_version_and_the_snapshot_list(endpoint: str, orders, db: str) -> None:
    assert ok(http("GET", endpoint, t(db, "snapshots", "LATEST")))["snapshot"]["id"] == 3
    assert ok(http("GET", endpoint, t(db, "snapshots", "EARLIEST")))["snapshot"]["id"] == 1
    assert ok(http("GET", endpoint, t(db, "snapshots", "2")))["snapshot"]["id"] == 2
    for absent in ("4", "0", "no-such-tag"):
        response = http("GET", endpoint, t(db, "snapshots", absent))
        assert response.status_code == 404 and error_of(response)["resourceType"] == "SNAPSHOT"
    orders.create_tag("t1", snapshot_id=1)  # a tag file pypaimon writes itself
    tagged = ok(http("GET", endpoint, t(db, "snapshots", "t1")))["snapshot"]
    assert tagged["id"] == 1 and "tagCreateTime" not in tagged
    first = ok(http("GET", endpoint, t(db, "snapshots"), maxResults=2))
    assert [s["id"] for s in first["snapshots"]] == [3, 2] and first["nextPageToken"]
    rest = ok(http("GET", endpoint, t(db, "snapshots"), maxResults=2, pageToken=first["nextPageToken"]))
    assert [s["id"] for s in rest["snapshots"]] == [1] and rest["nextPageToken"] is None
    assert http("GET", endpoint, t(db, "snapshots"), pageToken="junk").status_code == 400


# ----------------------------------------------------------------------------- consumers
def test_consumers_listed_from_their_files_and_reset(endpoint: str, orders, db: str) -> None:
    manager = ConsumerManager(orders.file_io, orders.table_path)
    manager.reset_consumer("flink-job", Consumer(2))
    manager.reset_consumer("another", Consumer(3))
    listed = ok(http("GET", endpoint, t(db, "consumers")))
    assert listed == {"consumers": [{"consumerId": "another", "nextSnapshot": 3},
                                    {"consumerId": "flink-job", "nextSnapshot": 2}], "nextPageToken": None}
    page = ok(http("GET", endpoint, t(db, "consumers"), maxResults=1))
    assert [c["consumerId"] for c in page["consumers"]] == ["another"] and page["nextPageToken"]
    # RESTApi.resetConsumer: POST .../consumers/reset with ResetConsumerRequest.
    ok(http("POST", endpoint, t(db, "consumers", "reset"), {"consumerId": "flink-job", "nextSnapshotId": 1}))
    assert manager.consumer("flink-job").next_snapshot == 1
    missing = http("POST", endpoint, t(db, "consumers", "reset"), {"consumerId": "flink-job", "nextSnapshotId": 9})
    assert missing.status_code == 404 and error_of(missing)["resourceType"] == "SNAPSHOT"
    ok(http("POST", endpoint, t(db, "consumers", "reset"), {"consumerId": "flink-job", "nextSnapshotId": None}))
    assert manager.consumer("flink-job") is None
    bad = http("POST", endpoint, t(db, "consumers", "reset"), {"consumerId": "../x", "nextSnapshotId": 1})
    assert bad.status_code == 400


# ----------------------------------------------------------------------------- tags
def test_tag_files_are_seen_and_a_rollback_removes_tags_above(endpoint: str, catalog: RESTCatalog, orders,  # noqa: F811
                                                              db: str) -> None:
    ident = Identifier.create(db, "orders")
    orders.create_tag("file-tag", snapshot_id=3, time_retained="1d")  # tag/tag-file-tag, no catalog item
    catalog.create_tag(ident, "api-tag", snapshot_id=1, time_retained="12h")
    assert catalog.list_tags_paged(ident).elements == ["api-tag", "file-tag"]
    got = ok(http("GET", endpoint, t(db, "tags", "file-tag")))
    assert got["snapshot"]["id"] == 3 and got["tagTimeRetained"] == "PT24H" and got["tagCreateTime"] > 0
    assert ok(http("GET", endpoint, t(db, "tags", "api-tag")))["tagTimeRetained"] == "PT12H"
    # A branch from a file tag.
    catalog.create_branch(ident, "b1", "file-tag")
    assert "b1" in catalog.list_branches(ident)
    # Rolling back to snapshot 2 removes the tag of snapshot 3 (item-less, a file) as Paimon does.
    catalog.rollback_to(ident, Instant.snapshot(2))
    assert catalog.list_tags_paged(ident).elements == ["api-tag"]
    assert not directory(orders, "tag", "tag-file-tag").exists()
    # Rollback to a file tag, and its deletion.
    orders2 = catalog.get_table(ident)
    orders2.create_tag("file-one", snapshot_id=1)
    catalog.rollback_to(ident, Instant.tag("file-one"))
    assert ok(http("GET", endpoint, t(db, "snapshots", "LATEST")))["snapshot"]["id"] == 1
    ok(http("DELETE", endpoint, t(db, "tags", "file-one")))
    assert http("GET", endpoint, t(db, "tags", "file-one")).status_code == 404
    # A name a tag file already holds is taken.
    orders2.create_tag("taken", snapshot_id=1)
    assert http("POST", endpoint, t(db, "tags"), {"tagName": "taken"}).status_code == 409


# ----------------------------------------------------------------------------- register
def test_register_adopts_a_directory_inside_the_roots_only(endpoint: str, catalog: RESTCatalog, orders,  # noqa: F811
                                                           db: str, tmp_path: Path) -> None:
    source = directory(orders)
    copy = tmp_path / "adopted"
    shutil.copytree(source, copy)
    body = {"identifier": {"database": db, "object": "adopted"}, "path": copy.as_uri()}
    ok(http("POST", endpoint, f"databases/{db}/register", body))
    got = ok(http("GET", endpoint, f"databases/{db}/tables/adopted"))
    assert got["isExternal"] and got["path"] == copy.as_uri()
    assert ok(http("GET", endpoint, f"databases/{db}/tables/adopted/snapshot"))["snapshot"]["snapshot"]["id"] == 3
    table = catalog.get_table(Identifier.create(db, "adopted"))
    write(table, {"id": [9], "dt": ["b"], "v": ["new"]})  # commits go on from the adopted head
    assert ok(http("GET", endpoint, f"databases/{db}/tables/adopted/snapshots/LATEST"))["snapshot"]["id"] == 4
    assert http("POST", endpoint, f"databases/{db}/register", body).status_code == 409
    # Never a caller's path outside the roots, nor the warehouse's managed directories.
    for path in ("file:///etc", source.as_uri(), (tmp_path / "empty").as_uri(), "file:///tmp/../etc"):
        response = http("POST", endpoint, f"databases/{db}/register",
                        {"identifier": {"database": db, "object": "x"}, "path": path})
        assert response.status_code in (400, 403), (path, response.text)
    other = http("POST", endpoint, f"databases/{db}/register",
                 {"identifier": {"database": "elsewhere", "object": "x"}, "path": copy.as_uri()})
    assert other.status_code == 400


def test_register_keeps_the_whole_history_reachable(endpoint: str, catalog: RESTCatalog, orders, db: str,  # noqa: F811
                                                    tmp_path: Path) -> None:
    """A directory of 1,205 snapshots: the register adopts only the latest as an item, and every
    older one is read from its file when asked: by version, in the paged list (newest first,
    all 1,205 across pages), as a consumer's next snapshot, tagged, branched from and rolled
    back to."""
    copy = tmp_path / "long"
    shutil.copytree(directory(orders), copy)
    third = json.loads((copy / "snapshot" / "snapshot-3").read_text())
    for number in range(4, 1206):
        (copy / "snapshot" / f"snapshot-{number}").write_text(json.dumps({**third, "id": number,
                                                                           "uuid": str(uuid.uuid4())}))
    (copy / "snapshot" / "LATEST").write_text("1200")  # a stale hint: the files after it are found
    ok(http("POST", endpoint, f"databases/{db}/register",
            {"identifier": {"database": db, "object": "long"}, "path": copy.as_uri()}))
    base = f"databases/{db}/tables/long"
    assert ok(http("GET", endpoint, f"{base}/snapshot"))["snapshot"]["snapshot"]["id"] == 1205
    for number in (1, 5, 700, 1204):
        assert ok(http("GET", endpoint, f"{base}/snapshots/{number}"))["snapshot"]["id"] == number
    assert ok(http("GET", endpoint, f"{base}/snapshots/EARLIEST"))["snapshot"]["id"] == 1
    for absent in ("0", "1206"):
        missing = http("GET", endpoint, f"{base}/snapshots/{absent}")
        assert missing.status_code == 404 and error_of(missing)["resourceType"] == "SNAPSHOT"
    ids, token = [], None
    while True:
        page = ok(http("GET", endpoint, f"{base}/snapshots", maxResults=100,
                       **({"pageToken": token} if token else {})))
        ids += [s["id"] for s in page["snapshots"]]
        token = page["nextPageToken"]
        if not token:
            break
    assert ids == list(range(1205, 0, -1))
    ok(http("POST", endpoint, f"{base}/consumers/reset", {"consumerId": "job", "nextSnapshotId": 2}))
    ident = Identifier.create(db, "long")
    catalog.create_tag(ident, "old", snapshot_id=7)
    assert ok(http("GET", endpoint, f"{base}/tags/old"))["snapshot"]["id"] == 7
    catalog.create_branch(ident, "from-old", "old")
    assert ok(http("GET", endpoint, f"databases/{db}/tables/long$branch_from-old/snapshots/LATEST"))["snapshot"][
        "id"] == 7
    # A rollback far below the adopted head: the files above go, commits go on from there.
    catalog.rollback_to(ident, Instant.snapshot(10))
    assert ok(http("GET", endpoint, f"{base}/snapshots/LATEST"))["snapshot"]["id"] == 10
    assert (copy / "snapshot" / "LATEST").read_text() == "10" and not (copy / "snapshot" / "snapshot-11").exists()
    assert ok(http("GET", endpoint, f"{base}/tags/old"))["snapshot"]["id"] == 7  # below the target: kept
    table = catalog.get_table(ident)
    write(table, {"id": [9], "dt": ["b"], "v": ["new"]})
    assert ok(http("GET", endpoint, f"{base}/snapshots/LATEST"))["snapshot"]["id"] == 11
    assert [s["id"] for s in ok(http("GET", endpoint, f"{base}/snapshots", maxResults=4))["snapshots"]] \
        == [11, 10, 9, 8]
    assert sorted(r["v"] for r in read(table)) == ["new", "v0", "v1", "v2"]


def test_a_latest_snapshot_read_is_one_dynamodb_round_trip(endpoint: str, orders, db: str) -> None:  # noqa: F811
    """The permission check's grants ride in the BatchGetItem of the database, table and head
    (pypaimon reads the latest snapshot six times per write and read); GetTable's latest schema
    too, once this server process has served the table (it reads schema items N and N + 1 of
    its last answer N), and the Query again when an alter disproved that guess."""
    for _ in range(2):  # the first may read the plain way (no hint yet in this server process)
        snapshot = http("GET", endpoint, t(db, "snapshot"))
    assert snapshot.status_code == 200
    assert snapshot.headers["x-glue-ddb-requests"] == "1" and snapshot.headers["x-glue-items-read"] == "3"
    first = ok(http("GET", endpoint, t(db)))["schemaId"]
    table = http("GET", endpoint, t(db))
    assert table.status_code == 200 and table.headers["x-glue-ddb-requests"] == "1"
    ok(http("POST", endpoint, t(db), {"changes": [{"action": "setOption", "key": "guess", "value": "1"}]}))
    table = http("GET", endpoint, t(db))
    assert ok(table)["schemaId"] == first + 1 and ok(table)["schema"]["options"]["guess"] == "1"
    assert table.headers["x-glue-ddb-requests"] == "2"  # the guess disproved: the Query
    assert http("GET", endpoint, t(db)).headers["x-glue-ddb-requests"] == "1"
