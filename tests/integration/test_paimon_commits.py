"""Paimon commits, snapshots, time travel, tags, rollback and partition statistics, end to end:
pypaimon 2.1.0 writes pyarrow data through this catalog (its commits are POST .../commit) and reads
it back, older snapshots and tags from the table directory; the same partitions answer Glue
GetPartitions with an Expression. Raw HTTP where the point is the wire (a bad commit body)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pyarrow as pa
import pytest
import requests
from pypaimon.api.rest_exception import BadRequestException
from pypaimon.catalog.catalog_exception import (BranchAlreadyExistException, BranchNotExistException,
                                                IllegalArgumentError, IllegalStateError, TableNotExistException,
                                                TagAlreadyExistException, TagNotExistException)
from pypaimon.catalog.catalog_factory import CatalogFactory
from pypaimon.catalog.rest.rest_catalog import RESTCatalog
from pypaimon.common.identifier import Identifier
from pypaimon.common.json_util import JSON
from pypaimon.schema.schema import Schema
from pypaimon.snapshot.snapshot import Snapshot
from pypaimon.snapshot.snapshot_commit import PartitionStatistics
from pypaimon.table.instant import Instant

from infra.local.stack import REGION, REPO
from tests.integration.test_commit_faults import wait_until_stopped

WAREHOUSE = "paimon_commits_wh"
ACCOUNT = "123456789012"

PK_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False),
                       pa.field("v", pa.string())])
APPEND_SCHEMA = pa.schema([pa.field("region", pa.string()), pa.field("n", pa.int64())])


def options(endpoint: str) -> dict[str, str]:
    """RESTCatalog options for this service: a bearer token naming the account and region."""
    return {"metastore": "rest", "uri": endpoint, "warehouse": WAREHOUSE, "token.provider": "bear",
            "token": f"{ACCOUNT}/{REGION}"}


@pytest.fixture
def catalog(endpoint: str) -> RESTCatalog:
    made = CatalogFactory.create(options(endpoint))
    assert isinstance(made, RESTCatalog)
    return made


@pytest.fixture
def make_table(db, catalog):
    """A Paimon table in ``db`` created through pypaimon's RESTCatalog, loaded with get_table (so
    commits and the latest snapshot go through the server, older snapshots and tags come from the
    directory the table's path names)."""
    def make(name: str, arrow: pa.Schema, partition_keys: list[str], primary_keys: list[str] | None = None,
             extra: dict[str, str] | None = None) -> Any:
        table_options = {"bucket": "1" if primary_keys else "-1", **(extra or {})}
        identifier = Identifier.create(db, name)
        catalog.create_table(identifier, Schema.from_pyarrow_schema(arrow, partition_keys, primary_keys,
                                                                   table_options), False)
        return catalog.get_table(identifier)
    return make


def directory(table: Any, *parts: str) -> Path:
    """A local path inside the table's directory (the test server's warehouse is file://)."""
    return Path(unquote(urlsplit(table.table_path).path), *parts)


def setup(stack: Any, *args: str) -> str:
    """Run tests/integration/paimon_commit_crash.py on the session's store; its output."""
    return subprocess.run([sys.executable, "-m", "tests.integration.paimon_commit_crash", *args], cwd=REPO,
                          env=stack.env, check=True, capture_output=True, text=True).stdout.strip()


def write(table: Any, rows: dict[str, list]) -> None:
    builder = table.new_batch_write_builder()
    writer, committer = builder.new_write(), builder.new_commit()
    try:
        writer.write_arrow(pa.Table.from_pydict(rows, schema=_arrow(table)))
        committer.commit(writer.prepare_commit())
    finally:
        writer.close()
        committer.close()


def _arrow(table: Any) -> pa.Schema:
    from pypaimon.schema.data_types import PyarrowFieldParser
    return PyarrowFieldParser.from_paimon_schema(table.table_schema.fields)


def read(table: Any) -> list[dict]:
    builder = table.new_read_builder()
    splits = builder.new_scan().plan().splits()
    rows = builder.new_read().to_arrow(splits).to_pylist()
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))


def expected_partitions(table: Any) -> dict[str, tuple[int, int, int]]:
    """(records, bytes, files) per partition name, from the data files of the latest snapshot
    as pypaimon plans them (every file, before merging)."""
    out: dict[str, list[int]] = {}
    for split in table.new_read_builder().new_scan().plan().splits():
        values = split.partition.values
        name = "/".join(f"{k}={v}" for k, v in zip(table.partition_keys, values))
        got = out.setdefault(name, [0, 0, 0])
        for meta in split.files:
            got[0] += meta.row_count
            got[1] += meta.file_size
            got[2] += 1
    return {k: (v[0], v[1], v[2]) for k, v in out.items()}


def listed(catalog: RESTCatalog, identifier: Identifier, **kw: Any) -> dict[str, tuple[int, int, int]]:
    page = catalog.list_partitions_paged(identifier, **kw)
    return {"/".join(f"{k}={v}" for k, v in p.spec.items()): (p.record_count, p.file_size_in_bytes, p.file_count)
            for p in page.elements}


def glue_values(glue: Any, db: str, name: str, expression: str = "") -> list[list[str]]:
    pages = glue.get_paginator("get_partitions").paginate(DatabaseName=db, TableName=name, Expression=expression)
    return sorted(p["Values"] for page in pages for p in page["Partitions"])


# ----------------------------------------------------------------------------- scenarios
def test_primary_key_table_commits_time_travel_tags_and_rollback(make_table, catalog, glue, db):
    table = make_table("orders", PK_SCHEMA, ["dt"], ["dt", "id"])
    ident = Identifier.create(db, "orders")
    assert catalog.load_snapshot(ident) is None

    write(table, {"id": [1, 2, 3], "dt": ["a", "a", "b"], "v": ["x1", "x2", "x3"]})
    first = [{"id": 1, "dt": "a", "v": "x1"}, {"id": 2, "dt": "a", "v": "x2"}, {"id": 3, "dt": "b", "v": "x3"}]
    assert read(table) == first
    write(table, {"id": [2, 4], "dt": ["a", "c"], "v": ["y2", "y4"]})
    second = [{"id": 1, "dt": "a", "v": "x1"}, {"id": 2, "dt": "a", "v": "y2"}, {"id": 3, "dt": "b", "v": "x3"},
              {"id": 4, "dt": "c", "v": "y4"}]
    assert read(table) == second

    latest = catalog.load_snapshot(ident)
    assert latest.snapshot.id == 2
    expected = expected_partitions(table)
    assert latest.record_count == sum(v[0] for v in expected.values()) == latest.snapshot.total_record_count
    assert latest.file_count == sum(v[2] for v in expected.values())
    assert latest.file_size_in_bytes == sum(v[1] for v in expected.values())
    assert listed(catalog, ident) == expected
    assert glue_values(glue, db, "orders") == [["a"], ["b"], ["c"]]
    assert glue_values(glue, db, "orders", "dt > 'a'") == [["b"], ["c"]]

    # Time travel reads older snapshots and tags from the directory the commits filled.
    assert read(table.copy({"scan.snapshot-id": "1"})) == first
    catalog.create_tag(ident, "v1", snapshot_id=1)
    catalog.create_tag(ident, "v2")
    assert catalog.get_tag(ident, "v2").snapshot.id == 2
    assert read(table.copy({"scan.tag-name": "v1"})) == first
    assert catalog.list_tags_paged(ident).elements == ["v1", "v2"]

    catalog.rollback_to(ident, Instant.snapshot(1))
    assert catalog.load_snapshot(ident).snapshot.id == 1
    assert read(table) == first
    assert listed(catalog, ident) == expected_partitions(table)
    assert set(listed(catalog, ident)) == {"dt=a", "dt=b"}
    assert glue_values(glue, db, "orders") == [["a"], ["b"]]

    # Writing on after a rollback reuses the id; then roll back to a tag.
    write(table, {"id": [5], "dt": ["d"], "v": ["z5"]})
    assert catalog.load_snapshot(ident).snapshot.id == 2
    assert read(table) == first + [{"id": 5, "dt": "d", "v": "z5"}]
    assert listed(catalog, ident) == expected_partitions(table)
    catalog.rollback_to(ident, Instant.tag("v1"))
    assert read(table) == first
    assert set(listed(catalog, ident)) == {"dt=a", "dt=b"}


def test_append_table_statistics_paging_pattern_and_glue_expression(make_table, catalog, glue, db):
    table = make_table("events", APPEND_SCHEMA, ["region"])
    ident = Identifier.create(db, "events")
    write(table, {"region": ["eu", "eu", "us", "ap"], "n": [1, 2, 3, 4]})
    write(table, {"region": ["eu", "sa"], "n": [5, 6]})
    assert sorted(r["n"] for r in read(table)) == [1, 2, 3, 4, 5, 6]
    expected = expected_partitions(table)
    assert expected["region=eu"][0] == 3 and expected["region=eu"][2] == 2
    assert listed(catalog, ident) == expected

    pages, token = [], None
    while True:
        page = catalog.list_partitions_paged(ident, max_results=1, page_token=token)
        pages.append([p.spec["region"] for p in page.elements])
        token = page.next_page_token
        if not token:
            break
    assert pages == [["ap"], ["eu"], ["sa"], ["us"]]
    assert set(listed(catalog, ident, partition_name_pattern="region=e%")) == {"region=eu"}
    assert set(listed(catalog, ident, partition_name_pattern="region=us")) == {"region=us"}
    assert glue_values(glue, db, "events", "region in ('eu', 'us')") == [["eu"], ["us"]]
    assert read(table.copy({"scan.snapshot-id": "1"})) != read(table)

    # A Glue UpdatePartition keeps the Paimon statistics of the partition it rewrites.
    glue.update_partition(DatabaseName=db, TableName="events", PartitionValueList=["eu"],
                          PartitionInput={"Values": ["eu"], "Parameters": {"owner": "glue"}})
    assert listed(catalog, ident) == expected
    # Dropping partitions is a truncating commit: the partitions it empties are gone for both protocols.
    catalog.drop_partitions(ident, [{"region": "sa"}, {"region": "us"}])
    assert sorted(r["n"] for r in read(table)) == [1, 2, 4, 5]
    assert set(listed(catalog, ident)) == {"region=ap", "region=eu"}
    assert listed(catalog, ident) == expected_partitions(table)
    assert glue_values(glue, db, "events") == [["ap"], ["eu"]]
    assert catalog.load_snapshot(ident).file_count == sum(v[2] for v in expected_partitions(table).values())


def test_racing_commits_from_one_base_have_exactly_one_winner(make_table, catalog, db):
    table = make_table("race", APPEND_SCHEMA, ["region"])
    ident = Identifier.create(db, "race")
    write(table, {"region": ["eu"], "n": [1]})
    base = catalog.load_snapshot(ident).snapshot
    results: list[bool] = []

    def commit() -> None:
        proposed = Snapshot(**{**base.__dict__, "id": base.id + 1, "uuid": str(uuid.uuid4())})
        stats = [PartitionStatistics(spec={"region": "eu"}, record_count=10, file_size_in_bytes=100, file_count=1,
                                     last_file_creation_time=1)]
        results.append(catalog.rest_api.commit_snapshot(ident, table.catalog_environment.uuid, base.uuid, proposed,
                                                        stats))

    threads = [threading.Thread(target=commit) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 5 + [True]
    after = catalog.load_snapshot(ident)
    assert after.snapshot.id == 2
    records, _, files = listed(catalog, ident)["region=eu"]
    assert (records, files) == (1 + 10, 1 + 1)  # the winner's deltas, once


def test_a_table_or_database_created_again_under_its_name_is_the_new_one(make_table, catalog, glue, db):
    """The server reads a table it has seen before (its database, table and head) in one batch
    keyed by the uids it saw: a table or database re-created under the same name must not answer
    with the old one's snapshots."""
    ident = Identifier.create(db, "again")
    old = make_table("again", APPEND_SCHEMA, ["region"])
    write(old, {"region": ["eu"], "n": [1]})
    assert catalog.load_snapshot(ident).snapshot.id == 1
    assert catalog.load_snapshot(ident).snapshot.id == 1  # now read through the remembered uids

    glue.delete_table(DatabaseName=db, Name="again")
    new = make_table("again", APPEND_SCHEMA, ["region"])
    assert catalog.load_snapshot(ident) is None
    write(new, {"region": ["us"], "n": [2]})
    assert read(new) == [{"region": "us", "n": 2}]
    assert catalog.load_snapshot(ident).snapshot.id == 1

    catalog.drop_database(db, ignore_if_not_exists=False, cascade=True)
    with pytest.raises(TableNotExistException):
        catalog.load_snapshot(ident)
    catalog.create_database(db, False)
    newest = make_table("again", APPEND_SCHEMA, ["region"])
    assert catalog.load_snapshot(ident) is None
    write(newest, {"region": ["ap"], "n": [3]})
    assert read(newest) == [{"region": "ap", "n": 3}]


def test_a_bad_commit_changes_nothing(make_table, catalog, endpoint, db):
    table = make_table("guarded", APPEND_SCHEMA, ["region"])
    ident = Identifier.create(db, "guarded")
    write(table, {"region": ["eu"], "n": [1]})
    before = catalog.load_snapshot(ident)
    files_before = sorted(p.name for p in directory(table, "snapshot").iterdir())
    partitions_before = listed(catalog, ident)
    url = f"{endpoint}/v1/{WAREHOUSE}/databases/{db}/tables/guarded/commit"
    headers = {"Authorization": f"Bearer {ACCOUNT}/{REGION}"}
    good = json.loads(JSON.to_json(before.snapshot))
    bodies = [
        {"tableId": table.catalog_environment.uuid, "baseSnapshotUuid": before.snapshot.uuid,
         "snapshot": {**good, "id": 2, "totalRecordCount": "many"},
         "statistics": [{"spec": {"region": "us"}, "recordCount": 5, "fileCount": 1}]},
        {"tableId": table.catalog_environment.uuid, "baseSnapshotUuid": before.snapshot.uuid,
         "snapshot": {**good, "id": 2}, "statistics": [{"spec": {"nope": "us"}, "recordCount": 5, "fileCount": 1}]},
        {"tableId": table.catalog_environment.uuid, "baseSnapshotUuid": before.snapshot.uuid,
         "snapshot": {**good, "id": 7}, "statistics": []},
    ]
    for body in bodies:
        response = requests.post(url, json=body, headers=headers, timeout=30)
        assert response.status_code == 400, response.text
        assert response.json()["code"] == 400
    wrong_table = requests.post(url, json={**bodies[2], "tableId": str(uuid.uuid4())}, headers=headers, timeout=30)
    assert wrong_table.status_code == 404
    after = catalog.load_snapshot(ident)
    assert JSON.to_json(after.snapshot) == JSON.to_json(before.snapshot)
    assert (after.record_count, after.file_count) == (before.record_count, before.file_count)
    assert sorted(p.name for p in directory(table, "snapshot").iterdir()) == files_before
    assert listed(catalog, ident) == partitions_before


def test_tags_errors_and_listing(make_table, catalog, db):
    table = make_table("tagged", APPEND_SCHEMA, ["region"])
    ident = Identifier.create(db, "tagged")
    with pytest.raises(ValueError):
        catalog.create_tag(ident, "early")  # no snapshot yet
    write(table, {"region": ["eu"], "n": [1]})
    for name in ("b", "a2", "a1", "c"):
        catalog.create_tag(ident, name, time_retained="1 d")
    with pytest.raises(TagAlreadyExistException):
        catalog.create_tag(ident, "a1")
    catalog.create_tag(ident, "a1", ignore_if_exists=True)
    got = catalog.get_tag(ident, "a1")
    assert got.tag_name == "a1" and got.snapshot.id == 1 and got.tag_create_time > 0
    assert catalog.list_tags_paged(ident, tag_name_prefix="a").elements == ["a1", "a2"]
    first = catalog.list_tags_paged(ident, max_results=3)
    assert first.elements == ["a1", "a2", "b"] and first.next_page_token
    assert catalog.list_tags_paged(ident, max_results=3, page_token=first.next_page_token).elements == ["c"]
    catalog.delete_tag(ident, "b")
    with pytest.raises(TagNotExistException):
        catalog.get_tag(ident, "b")
    with pytest.raises(TagNotExistException):
        catalog.delete_tag(ident, "b")
    assert not directory(table, "tag", "tag-b").exists()
    with pytest.raises(ValueError):
        catalog.rollback_to(ident, Instant.tag("b"))
    with pytest.raises(ValueError):
        catalog.rollback_to(ident, Instant.snapshot(9))
    with pytest.raises(BadRequestException):
        catalog.rest_api.create_tag(ident, "t", time_retained="soon")


def test_create_partitions_registers_them_for_both_protocols(make_table, catalog, glue, db):
    make_table("registered", APPEND_SCHEMA, ["region"])
    ident = Identifier.create(db, "registered")
    made = catalog.rest_api.create_partitions(ident, [{"region": "eu"}, {"region": "us"}])
    assert made.created == [{"region": "eu"}, {"region": "us"}] and made.existed == []
    again = catalog.rest_api.create_partitions(ident, [{"region": "eu"}, {"region": "ap"}])
    assert again.created == [{"region": "ap"}] and again.existed == [{"region": "eu"}]
    with pytest.raises(IllegalStateError):  # the client's mapping of 409
        catalog.create_partitions(ident, [{"region": "sa"}, {"region": "us"}], ignore_if_exists=False)
    assert glue_values(glue, db, "registered") == [["ap"], ["eu"], ["us"]]  # "sa" was not created either
    assert listed(catalog, ident) == {"region=ap": (0, 0, 0), "region=eu": (0, 0, 0), "region=us": (0, 0, 0)}
    with pytest.raises(BadRequestException):
        catalog.rest_api.create_partitions(ident, [{"nope": "x"}])


def test_a_commit_that_stopped_after_its_decision_is_finished_by_the_next_call(stack, make_table, catalog, glue,
                                                                              db):
    table = make_table("crashed", APPEND_SCHEMA, ["region"])
    ident = Identifier.create(db, "crashed")
    write(table, {"region": ["eu"], "n": [1]})
    base = json.loads(JSON.to_json(catalog.load_snapshot(ident).snapshot))
    decided = {**base, "id": 2, "uuid": str(uuid.uuid4())}
    stats = [{"spec": {"region": "us"}, "recordCount": 7, "fileSizeInBytes": 70, "fileCount": 1,
              "lastFileCreationTime": 5}]
    assert setup(stack, "decide", ACCOUNT, REGION, db, "crashed", json.dumps(decided), json.dumps(stats)) == "True"
    snapshot_dir = directory(table, "snapshot")
    assert not (snapshot_dir / "snapshot-2").exists() and (snapshot_dir / "LATEST").read_text() == "1"

    # The next call that reads the head applies the statistics (creating the partition the Glue
    # way) and writes the files, with the snapshot text the client sent.
    assert listed(catalog, ident)["region=us"] == (7, 70, 1)
    assert glue_values(glue, db, "crashed") == [["eu"], ["us"]]
    assert json.loads((snapshot_dir / "snapshot-2").read_text()) == decided
    assert (snapshot_dir / "LATEST").read_text() == "2"
    latest = catalog.load_snapshot(ident)
    assert latest.snapshot.uuid == decided["uuid"] and latest.file_count == 2
    # Settled once: a further write counts on from there.
    write(table, {"region": ["us"], "n": [2]})
    assert listed(catalog, ident)["region=us"][2] == 2
    # The decision alone wrote no snapshot item; the settling call saved it from the head, so
    # snapshot 2 is there to roll back to, with its statistics to undo snapshot 3's.
    catalog.rollback_to(ident, Instant.snapshot(2))
    assert catalog.load_snapshot(ident).snapshot.uuid == decided["uuid"]
    assert listed(catalog, ident)["region=us"] == (7, 70, 1)


@pytest.mark.slow  # starts a server of its own
# chalicelib/service/paimon_snapshots.py: STOP_BEFORE_LATEST, STOP_WRITING_LATEST
@pytest.mark.parametrize("stop_at", ["paimon-before-latest", "paimon-writing-latest"])
def test_a_paused_committer_that_resumes_does_not_move_latest_back(start_server, make_table, catalog, db, stop_at):
    """A committer stopped (SIGSTOP) with its snapshot decided and LATEST not yet written: the
    next call finishes its publication and commits over it; when it resumes, LATEST stays at
    the later snapshot (before the check of the head, it wrote its own id over it, 3 of 3
    rounds)."""
    table = make_table("paused", APPEND_SCHEMA, ["region"])
    ident = Identifier.create(db, "paused")
    write(table, {"region": ["eu"], "n": [1]})
    latest_file = directory(table, "snapshot", "LATEST")
    assert latest_file.read_text() == "1"
    first = json.loads(JSON.to_json(catalog.load_snapshot(ident).snapshot))
    second = {**first, "id": 2, "uuid": str(uuid.uuid4())}
    stats = [{"spec": {"region": "eu"}, "recordCount": 1, "fileSizeInBytes": 10, "fileCount": 1,
              "lastFileCreationTime": 1}]
    paused = start_server(GLUE_FAULT_STOP_AT=stop_at)
    body = {"tableId": table.catalog_environment.uuid, "baseSnapshotUuid": first["uuid"], "snapshot": second,
            "statistics": stats}
    outcome: dict[str, Any] = {}

    def commit() -> None:
        outcome["response"] = requests.post(f"{paused.endpoint}/v1/{WAREHOUSE}/databases/{db}/tables/paused/commit",
                                            json=body, headers={"Authorization": f"Bearer {ACCOUNT}/{REGION}"},
                                            timeout=300)
    thread = threading.Thread(target=commit, daemon=True)
    thread.start()
    try:
        wait_until_stopped(paused.process.pid)
        # Another writer reads the latest snapshot (which finishes the stopped commit's
        # publication) and commits snapshot 3 over it.
        assert catalog.load_snapshot(ident).snapshot.uuid == second["uuid"]
        assert latest_file.read_text() == "2"
        third = Snapshot(**{**catalog.load_snapshot(ident).snapshot.__dict__, "id": 3, "uuid": str(uuid.uuid4())})
        assert catalog.rest_api.commit_snapshot(ident, table.catalog_environment.uuid, second["uuid"], third,
                                                [PartitionStatistics(spec={"region": "eu"}, record_count=1,
                                                                     file_size_in_bytes=10, file_count=1,
                                                                     last_file_creation_time=2)])
        assert latest_file.read_text() == "3"
    finally:
        os.kill(paused.process.pid, signal.SIGCONT)
    thread.join(120)
    assert outcome["response"].status_code == 200 and outcome["response"].json()["success"] is True
    assert latest_file.read_text() == "3"
    assert catalog.load_snapshot(ident).snapshot.id == 3
    # A rollback holds the head it moves back: LATEST follows it to the older id.
    catalog.rollback_to(ident, Instant.snapshot(2))
    assert latest_file.read_text() == "2"
    assert not directory(table, "snapshot", "snapshot-3").exists()


def test_schema_evolution_between_writes_and_time_travel_across_it(make_table, catalog, db):
    from pypaimon.schema.data_types import AtomicType
    from pypaimon.schema.schema_change import SchemaChange
    table = make_table("evolving", APPEND_SCHEMA, ["region"])
    ident = Identifier.create(db, "evolving")
    write(table, {"region": ["eu"], "n": [1]})
    catalog.alter_table(ident, [SchemaChange.add_column("note", AtomicType("STRING"))])
    table = catalog.get_table(ident)
    write(table, {"region": ["eu", "us"], "n": [2, 3], "note": ["b", "c"]})
    assert read(table) == [{"region": "eu", "n": 1, "note": None}, {"region": "eu", "n": 2, "note": "b"},
                           {"region": "us", "n": 3, "note": "c"}]
    assert catalog.load_snapshot(ident).snapshot.schema_id == 1
    assert [r["n"] for r in read(table.copy({"scan.snapshot-id": "1"}))] == [1]
    assert listed(catalog, ident) == expected_partitions(table)


def test_branches_from_a_tag_written_read_renamed_fast_forwarded_and_dropped(make_table, catalog, db):
    table = make_table("branched", APPEND_SCHEMA, ["region"])
    ident = Identifier.create(db, "branched")
    write(table, {"region": ["eu"], "n": [1]})
    catalog.create_tag(ident, "t1")
    write(table, {"region": ["us"], "n": [2]})
    catalog.create_branch(ident, "b1", "t1")
    catalog.create_branch(ident, "empty")
    assert catalog.list_branches(ident) == ["b1", "empty"]
    assert directory(table, "branch", "branch-b1", "snapshot", "snapshot-1").is_file()
    assert directory(table, "branch", "branch-b1", "schema", "schema-0").is_file()
    with pytest.raises(ValueError):
        table.branch_manager().create_branch("b1")
    with pytest.raises(TagNotExistException):
        catalog.create_branch(ident, "b2", "no-such-tag")
    with pytest.raises(BranchAlreadyExistException):
        catalog.create_branch(ident, "b1")
    with pytest.raises(IllegalArgumentError):
        catalog.create_branch(ident, "123")

    branch = table.copy({"branch": "b1"})
    assert [r["n"] for r in read(branch)] == [1]
    write(branch, {"region": ["ap"], "n": [3]})
    assert sorted(r["n"] for r in read(table.copy({"branch": "b1"}))) == [1, 3]
    assert sorted(r["n"] for r in read(table)) == [1, 2]  # main is untouched
    assert catalog.rest_api.load_snapshot(Identifier.create(db, "branched", branch="b1")).snapshot.id == 2
    assert set(listed(catalog, ident)) == {"region=eu", "region=us"}  # partitions are main's

    # A branch by name, as Paimon's identifiers address it: GetTable of "branched$branch_b1".
    by_name = catalog.get_table(f"{db}.branched$branch_b1")
    assert sorted(r["n"] for r in read(by_name)) == [1, 3]
    write(by_name, {"region": ["ap"], "n": [4]})
    assert sorted(r["n"] for r in read(table.copy({"branch": "b1"}))) == [1, 3, 4]
    assert sorted(r["n"] for r in read(table)) == [1, 2]
    assert catalog.rest_api.get_table(Identifier.create(db, "branched", branch="b1")).name == "branched$branch_b1"
    assert catalog.get_table(f"{db}.branched$branch_empty").table_schema.id == 0
    with pytest.raises(TableNotExistException):
        catalog.get_table(f"{db}.branched$branch_nope")
    write(branch, {"region": ["ap"], "n": [5]})  # the copy read before: still the same branch
    assert sorted(r["n"] for r in read(by_name)) == [1, 3, 4, 5]

    # Renamed, the branch keeps its snapshots and files.
    catalog.rename_branch(ident, "b1", "b9")
    assert catalog.list_branches(ident) == ["b9", "empty"]
    assert sorted(r["n"] for r in read(table.copy({"branch": "b9"}))) == [1, 3, 4, 5]
    with pytest.raises(TableNotExistException):
        catalog.get_table(f"{db}.branched$branch_b1")
    assert not directory(table, "branch", "branch-b1").exists()
    with pytest.raises(BranchNotExistException):
        catalog.rename_branch(ident, "b1", "b3")
    with pytest.raises(BranchAlreadyExistException):
        catalog.rename_branch(ident, "b9", "empty")

    # Fast-forward: main takes the branch's snapshots and statistics (its own snapshot 2 is replaced).
    catalog.fast_forward(ident, "b9")
    table = catalog.get_table(ident)
    assert sorted(r["n"] for r in read(table)) == [1, 3, 4, 5]
    assert catalog.load_snapshot(ident).snapshot.id == 4
    assert listed(catalog, ident) == expected_partitions(table)
    assert set(listed(catalog, ident)) == {"region=ap", "region=eu"}
    assert read(table.copy({"scan.snapshot-id": "1"})) == [{"region": "eu", "n": 1}]
    with pytest.raises(BranchNotExistException):
        catalog.fast_forward(ident, "nope")

    catalog.drop_branch(ident, "b9")
    assert catalog.list_branches(ident) == ["empty"]
    assert not directory(table, "branch", "branch-b9").exists()
    with pytest.raises(BranchNotExistException):
        catalog.drop_branch(ident, "b9")


def test_listing_partitions_page_by_page_reads_about_one_item_per_partition(make_table, catalog, endpoint, db):
    make_table("wide", APPEND_SCHEMA, ["region"])
    ident = Identifier.create(db, "wide")
    specs = [{"region": f"r{n:04d}"} for n in range(250)]
    for start in range(0, len(specs), 100):
        catalog.rest_api.create_partitions(ident, specs[start:start + 100])
    url = f"{endpoint}/v1/{WAREHOUSE}/databases/{db}/tables/wide/partitions"
    headers = {"Authorization": f"Bearer {ACCOUNT}/{REGION}"}
    returned, items_read, token = [], 0, None
    while True:
        response = requests.get(url, params={"maxResults": "100", **({"pageToken": token} if token else {})},
                                headers=headers, timeout=30)
        assert response.status_code == 200, response.text
        body = response.json()
        returned += [p["spec"]["region"] for p in body["partitions"]]
        items_read += int(response.headers["x-glue-items-read"])
        token = body.get("nextPageToken")
        if not token:
            break
    assert returned == [s["region"] for s in specs]
    assert items_read / len(returned) <= 1.2, items_read


def test_a_commit_reads_as_many_items_at_snapshot_30_as_at_snapshot_2(make_table, catalog, endpoint, db):
    table = make_table("long", APPEND_SCHEMA, ["region"])
    ident = Identifier.create(db, "long")
    write(table, {"region": ["eu"], "n": [1]})
    base = json.loads(JSON.to_json(catalog.load_snapshot(ident).snapshot))
    url = f"{endpoint}/v1/{WAREHOUSE}/databases/{db}/tables/long/commit"
    headers = {"Authorization": f"Bearer {ACCOUNT}/{REGION}"}
    reads = {}
    for number in range(2, 31):
        proposed = {**base, "id": number, "uuid": str(uuid.uuid4())}
        response = requests.post(url, headers=headers, timeout=30, json={
            "tableId": table.catalog_environment.uuid, "baseSnapshotUuid": base["uuid"], "snapshot": proposed,
            "statistics": [{"spec": {"region": "eu"}, "recordCount": 1, "fileSizeInBytes": 1, "fileCount": 0,
                            "lastFileCreationTime": number}]})
        assert response.json() == {"success": True}, response.text
        reads[number] = int(response.headers["x-glue-items-read"])
        base = proposed
    assert reads[30] == reads[2], reads
    assert catalog.load_snapshot(ident).record_count == 1 + 29


def test_a_prefix_pattern_on_the_first_key_reads_its_matches_only(make_table, catalog, endpoint, db):
    """``dt=2024-01-05%`` is a key range on the first partition key: the listing reads the
    partitions it returns (plus a constant), not every partition of the table."""
    make_table("daily", pa.schema([pa.field("dt", pa.string()), pa.field("hr", pa.int32()),
                                   pa.field("n", pa.int64())]), ["dt", "hr"])
    ident = Identifier.create(db, "daily")
    specs = [{"dt": f"2024-01-{day:02d}", "hr": str(hour)} for day in range(1, 21) for hour in range(10)]
    for start in range(0, len(specs), 100):
        catalog.rest_api.create_partitions(ident, specs[start:start + 100])
    url = f"{endpoint}/v1/{WAREHOUSE}/databases/{db}/tables/daily/partitions"
    headers = {"Authorization": f"Bearer {ACCOUNT}/{REGION}"}

    def listing(pattern: str, page_size: int = 100) -> tuple[list[str], int]:
        names, items_read, token = [], 0, None
        while True:
            params = {"partitionNamePattern": pattern, "maxResults": str(page_size),
                      **({"pageToken": token} if token else {})}
            response = requests.get(url, params=params, headers=headers, timeout=30)
            assert response.status_code == 200, response.text
            body = response.json()
            names += [f"dt={p['spec']['dt']}/hr={p['spec']['hr']}" for p in body["partitions"]]
            items_read += int(response.headers["x-glue-items-read"])
            token = body.get("nextPageToken")
            if not token:
                return names, items_read

    names, overhead = listing("x%")  # no name starts so: the table and its head only
    assert names == []
    every = [f"dt={s['dt']}/hr={s['hr']}" for s in specs]
    for pattern, expected in [
        ("dt=2024-01-05%", [n for n in every if n.startswith("dt=2024-01-05/")]),
        ("dt=2024-01-1%", [n for n in every if n.startswith("dt=2024-01-1")]),
        ("dt=2024-01-05/hr=3", ["dt=2024-01-05/hr=3"]),
        ("dt=2024-01-05/hr=%", [n for n in every if n.startswith("dt=2024-01-05/")]),
    ]:
        names, items_read = listing(pattern)
        assert names == expected, pattern
        # The matches and one look-ahead; an exact name reads its first value's 10 partitions.
        assert items_read <= overhead + max(len(expected), 10) + 1, (pattern, items_read)
    # Paged: the range resumes after the token's position.
    assert listing("dt=2024-01-05%", page_size=4)[0] == [n for n in every if n.startswith("dt=2024-01-05/")]
    names, items_read = listing("dt=%")  # every partition matches: all are read, once
    assert names == every and items_read <= 2 * overhead + len(specs) + 2
