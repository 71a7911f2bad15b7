"""Paimon snapshot / tag / partition JSON (domain/paimon/snapshots.py) against pypaimon's own
classes, and warehouse files (store/warehouse.py) read back by pypaimon's managers."""

from __future__ import annotations

import json
from datetime import datetime

import pyarrow as pa
import pytest
from pypaimon.api.api_response import Partition
from pypaimon.common.file_io import FileIO
from pypaimon.common.json_util import JSON
from pypaimon.common.options import Options
from pypaimon.schema.schema import Schema
from pypaimon.schema.schema_manager import SchemaManager
from pypaimon.schema.table_schema import TableSchema
from pypaimon.snapshot.snapshot import Snapshot
from pypaimon.snapshot.snapshot_manager import SnapshotManager
from pypaimon.snapshot.table_snapshot import TableSnapshot
from pypaimon.tag.tag import Tag
from pypaimon.tag.tag_manager import TagManager

from chalicelib.domain.paimon import snapshots as sn
from chalicelib.store import warehouse


def _snapshot(snapshot_id: int, **extra: object) -> Snapshot:
    return Snapshot(version=3, id=snapshot_id, schema_id=0, base_manifest_list=f"manifest-list-b{snapshot_id}",
                    delta_manifest_list=f"manifest-list-d{snapshot_id}", total_record_count=10 * snapshot_id,
                    delta_record_count=10, commit_user="user", commit_identifier=snapshot_id,
                    commit_kind="APPEND", time_millis=1_700_000_000_000 + snapshot_id, **extra)  # type: ignore[arg-type]


def test_a_snapshot_round_trips_exactly_with_unknown_fields() -> None:
    sent = json.loads(JSON.to_json(_snapshot(3, properties={"k": "v"}, watermark=5)))
    sent["aFieldFromANewerClient"] = {"x": [1, 2]}
    parsed = sn.parse_snapshot(sent)
    assert (parsed.id, parsed.schema_id, parsed.uuid) == (3, 0, sent["uuid"])
    assert json.loads(parsed.text()) == sent
    assert list(json.loads(parsed.text())) == list(sent)  # field order kept
    assert JSON.from_json(parsed.text(), Snapshot) == JSON.from_json(json.dumps(sent), Snapshot)
    assert parsed.text() == JSON.to_json(_snapshot_from(sent))[:-1] + ', "aFieldFromANewerClient": {"x": [1, 2]}}'


def _snapshot_from(raw: dict) -> Snapshot:
    return JSON.from_json(json.dumps({k: v for k, v in raw.items() if k != "aFieldFromANewerClient"}), Snapshot)


@pytest.mark.parametrize("change, message", [
    ({"id": None}, "snapshot.id is required"), ({"id": "1"}, "snapshot.id must be an integer"),
    ({"id": 0}, "snapshot.id must be at least 1"), ({"commitUser": 5}, "snapshot.commitUser must be a str"),
    ({"timeMillis": 2 ** 63}, "64-bit"), ({"uuid": 7}, "snapshot.uuid must be a str"),
])
def test_a_bad_snapshot_names_the_field(change: dict, message: str) -> None:
    raw = json.loads(JSON.to_json(_snapshot(1)))
    raw.update(change)
    with pytest.raises(sn.SnapshotFormatError, match=message):
        sn.parse_snapshot(raw)


def test_statistics_merge_per_partition_and_table_snapshot_reads_in_pypaimon() -> None:
    deltas = sn.parse_statistics([
        {"spec": {"dt": "a"}, "recordCount": 3, "fileSizeInBytes": 30, "fileCount": 1, "lastFileCreationTime": 5},
        {"spec": {"dt": "a"}, "recordCount": -1, "fileSizeInBytes": -10, "fileCount": 0, "lastFileCreationTime": 9},
        {"spec": {"dt": "b"}, "recordCount": 2, "fileSizeInBytes": 20, "fileCount": 1, "lastFileCreationTime": 7},
    ])
    assert [(d.spec, d.record_count, d.file_count, d.last_file_creation_time) for d in deltas] == \
        [({"dt": "a"}, 2, 1, 9), ({"dt": "b"}, 2, 1, 7)]
    totals = sn.Totals().plus(deltas)
    assert totals == sn.Totals(4, 40, 2, 9)
    raw = json.loads(JSON.to_json(_snapshot(2)))
    read = JSON.from_json(json.dumps(sn.table_snapshot_json(raw, totals)), TableSnapshot)
    assert (read.snapshot.id, read.record_count, read.file_size_in_bytes, read.file_count,
            read.last_file_creation_time) == (2, 4, 40, 2, 9)
    part = JSON.from_json(json.dumps(sn.partition_json({"dt": "a"}, 2, 20, 1, 9)), Partition)
    assert (part.spec, part.record_count, part.file_count, part.done) == ({"dt": "a"}, 2, 1, False)
    with pytest.raises(sn.SnapshotFormatError, match=r"statistics\[0\].fileCount must be an integer"):
        sn.parse_statistics([{"spec": {}, "fileCount": "1"}])


def test_files_written_by_the_warehouse_are_what_pypaimon_reads(tmp_path) -> None:
    root = warehouse.local_uri(tmp_path)
    table = warehouse.table_path("db", "t", root)
    assert table == f"{root}/db.db/t"
    schema = TableSchema.from_schema(0, Schema.from_pyarrow_schema(pa.schema([("dt", pa.string()), ("v", pa.int64())]),
                                                                   partition_keys=["dt"]))
    warehouse.put(warehouse.schema_file(table, 0), JSON.to_json(schema))
    raws = [json.loads(JSON.to_json(_snapshot(i))) for i in (1, 2)]
    for raw in raws:
        warehouse.put(warehouse.snapshot_file(table, raw["id"]), sn.parse_snapshot(raw).text())
    warehouse.put(warehouse.latest_file(table), "2")
    warehouse.put(warehouse.earliest_file(table), "1")
    created = datetime(2024, 5, 6, 7, 8, 9, 123000)
    warehouse.put(warehouse.tag_file(table, "v1"), sn.tag_text(raws[0], created, 3600))
    warehouse.put(warehouse.snapshot_file(table, 1, "b1"), sn.parse_snapshot(raws[0]).text())

    file_io = FileIO.get(table, Options({}))
    manager = SnapshotManager(file_io, table)
    assert manager.get_latest_snapshot() == JSON.from_json(json.dumps(raws[1]), Snapshot)
    assert manager.get_snapshot_by_id(1).uuid == raws[0]["uuid"]
    assert SnapshotManager(file_io, table, "b1").get_snapshot_by_id(1).id == 1
    assert SchemaManager(file_io, table).latest().partition_keys == ["dt"]
    tag = TagManager(file_io, table).get("v1")
    assert isinstance(tag, Tag)
    assert (tag.id, tag.uuid, tag.tag_create_time, tag.tag_time_retained.total_seconds()) == \
        (1, raws[0]["uuid"], created, 3600)
    assert warehouse.get(warehouse.latest_file(table)) == b"2"
    assert warehouse.exists(warehouse.snapshot_file(table, 2))
    assert len(warehouse.list_prefix(table)) == 7
    assert not any(".tmp" in uri for uri in warehouse.list_prefix(table))
    warehouse.delete(warehouse.snapshot_file(table, 2))
    assert warehouse.get(warehouse.snapshot_file(table, 2)) is None
    warehouse.delete_tree(table)
    assert warehouse.list_prefix(table) == []


def test_a_warehouse_uri_of_another_scheme_is_refused() -> None:
    with pytest.raises(warehouse.WarehouseError, match="unsupported"):
        warehouse.put("hdfs://x/y", b"")
