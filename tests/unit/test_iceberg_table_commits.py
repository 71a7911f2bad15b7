"""Iceberg REST table commits (chalicelib.domain.iceberg.table_commits), checked against
pyiceberg: the updates and requirements come from pyiceberg's own transactions (schema, spec,
sort order and property changes, real appends written to a temporary directory), and the
metadata apply_updates builds is compared with what pyiceberg's update_table_metadata builds
from the same base."""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.io.pyarrow import PyArrowFileIO
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import CreateTableTransaction, StagedTable, Table
from pyiceberg.table.metadata import TableMetadataUtil
from pyiceberg.table.metadata import new_table_metadata as pyiceberg_new_table_metadata
from pyiceberg.table.sorting import NullOrder, SortDirection, SortField, SortOrder
from pyiceberg.table.update import AssertCreate, update_table_metadata
from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform
from pyiceberg.types import (DoubleType, IntegerType, ListType, LongType, MapType, NestedField, StringType,
                             StructType, TimestamptzType)

from chalicelib.domain.iceberg import metadata as md
from chalicelib.domain.iceberg import table_commits as tc
from chalicelib.errors import ConcurrentModificationException, InvalidInputException

UUID = "9f4b7a62-8f2c-4a4e-9a43-4c1f5a1c2d3e"
NOW = 1_700_000_000_000
PREVIOUS = "file:///wh/t/metadata/00000-a.metadata.json"

# Deliberately odd ids: a create must renumber them as Iceberg does.
SCHEMA = Schema(NestedField(10, "id", LongType(), required=True),
                NestedField(20, "ts", TimestamptzType()),
                NestedField(30, "tags", ListType(40, StringType())),
                NestedField(50, "point", StructType(
                    NestedField(60, "x", DoubleType()),
                    NestedField(70, "attrs", MapType(80, StringType(), 90, IntegerType())))),
                identifier_field_ids=[10])
SPEC = PartitionSpec(PartitionField(20, 5000, DayTransform(), "ts_day"),
                     PartitionField(10, 5001, BucketTransform(8), "id_bucket"))
ORDER = SortOrder(SortField(10, IdentityTransform(), SortDirection.DESC, NullOrder.NULLS_LAST))


def rest(model: Any) -> dict:
    """A pyiceberg model as it goes over the wire."""
    return json.loads(model.model_dump_json())


def create_request(**extra: Any) -> dict:
    return {"name": "t", "schema": rest(SCHEMA), "partition-spec": rest(SPEC), "write-order": rest(ORDER),
            "properties": {"owner": "me"}, **extra}


def first(**extra: Any) -> dict:
    return tc.new_table_metadata(create_request(**extra), "file:///wh/t", UUID, NOW)


def parsed(metadata: dict) -> Any:
    return TableMetadataUtil.parse_obj(tc.load_result(metadata))


def table(metadata: dict, location: str = PREVIOUS) -> Table:
    # No catalog: the transactions below are only asked for their updates, never committed.
    return Table(("db", "t"), parsed(metadata), location, PyArrowFileIO(), None)  # type: ignore[arg-type]


def pending(transaction: Any) -> tuple[list[dict], list[dict]]:
    return [rest(u) for u in transaction._updates], [rest(r) for r in transaction._requirements]


def comparable(metadata: Any) -> dict:
    """A metadata as pyiceberg dumps it, without what legitimately differs (timestamps: pyiceberg
    reads the clock; Java's and this module's rules are checked on their own)."""
    dumped = json.loads(metadata.model_dump_json())
    for key in ("last-updated-ms", "metadata-log", "snapshot-log"):
        dumped.pop(key, None)
    return dumped


def both(base: dict, transaction: Any, location: str = PREVIOUS) -> tuple[dict, dict]:
    """(this module's next metadata, pyiceberg's) for a transaction's updates on ``base``."""
    updates, _ = pending(transaction)
    ours = tc.apply_updates(base, location, updates, NOW + 1000)
    theirs = update_table_metadata(parsed(base), tuple(transaction._updates), metadata_location=location)
    return ours, theirs


def assert_same_as_pyiceberg(base: dict, transaction: Any) -> dict:
    ours, theirs = both(base, transaction)
    assert comparable(parsed(ours)) == comparable(theirs)
    # The Glue path reads what the REST path writes.
    assert md.decode(md.encode(ours).encode(), "x")["schemas"] == ours["schemas"]
    return ours


# ------------------------------------------------------------------------------ create
def test_new_table_metadata_assigns_ids_as_pyiceberg_and_java_do() -> None:
    ours = first()
    theirs = pyiceberg_new_table_metadata(SCHEMA, SPEC, ORDER, "file:///wh/t", {"owner": "me"}, uuid.UUID(UUID))
    expected = comparable(theirs)
    # Java's newTableMetadata persists the writers' codec default into every new table.
    expected["properties"]["write.parquet.compression-codec"] = "zstd"
    assert comparable(parsed(ours)) == expected
    assert ours["last-updated-ms"] == NOW and ours["metadata-log"] == []
    assert [f["id"] for f in ours["schemas"][0]["fields"]] == [1, 2, 3, 4]
    assert ours["schemas"][0]["identifier-field-ids"] == [1]
    assert [f["field-id"] for f in ours["partition-specs"][0]["fields"]] == [1000, 1001]
    assert ours["default-sort-order-id"] == 1 and ours["last-column-id"] == 9


def test_new_table_metadata_drops_reserved_properties_and_defaults() -> None:
    metadata = tc.new_table_metadata({"name": "t", "schema": rest(SCHEMA),
                                      "properties": {"format-version": "2", "uuid": "x", "k": "v"}},
                                     "file:///wh/t/", UUID, NOW)
    assert metadata["properties"] == {"write.parquet.compression-codec": "zstd", "k": "v"}
    assert metadata["location"] == "file:///wh/t"
    assert metadata["partition-specs"] == [{"spec-id": 0, "fields": []}]
    assert metadata["last-partition-id"] == 999
    assert metadata["sort-orders"] == [{"order-id": 0, "fields": []}] and metadata["default-sort-order-id"] == 0


@pytest.mark.parametrize("version", ["1", "3", "two"])
def test_new_table_metadata_refuses_other_format_versions(version: str) -> None:
    with pytest.raises(InvalidInputException, match="format version"):
        first(properties={"format-version": version})


@pytest.mark.parametrize("request_change, message", [
    ({"partition-spec": {"fields": [{"source-id": 99, "name": "p", "transform": "identity"}]}}, "99 is not in"),
    ({"partition-spec": {"fields": [{"source-id": 20, "name": "p", "transform": "bucket[0]"}]}}, "positive"),
    ({"partition-spec": {"fields": [{"source-id": 20, "name": "id", "transform": "day"}]}},
     "sourced from different field"),
    ({"write-order": {"order-id": 1, "fields": [{"source-id": 10, "transform": "identity", "direction": "up",
                                                  "null-order": "nulls-first"}]}}, "asc or desc"),
    ({"schema": {"type": "struct", "fields": [{"id": 1, "name": "a", "required": False, "type": "timestamp_ns"}]}},
     "unknown Iceberg type"),
    ({"schema": {"type": "struct", "fields": [{"id": 1, "name": "a", "required": False, "type": "int",
                                               "write-default": 3}]}}, "format version 3"),
    ({"schema": {"type": "struct", "fields": [{"id": 1, "name": "a", "required": False, "type": "int"},
                                              {"id": 1, "name": "b", "required": False, "type": "int"}]}},
     "used twice"),
    ({"name": None}, "name"),
])
def test_new_table_metadata_refuses_bad_requests(request_change: dict, message: str) -> None:
    request = create_request(**request_change)
    if "schema" in request_change:
        request.pop("partition-spec")
        request.pop("write-order")
    with pytest.raises(InvalidInputException, match=message):
        tc.new_table_metadata(request, "file:///wh/t", UUID, NOW)


def test_create_by_commit_builds_what_new_table_metadata_builds() -> None:
    """pyiceberg's create transaction (and Java's) sends the staged table as updates from
    nothing; applying them to no table gives the same metadata."""
    staged = first()
    transaction = CreateTableTransaction(StagedTable(("db", "t"), parsed(staged), PREVIOUS, PyArrowFileIO(),
                                                     None))  # type: ignore[arg-type]
    updates, _ = pending(transaction)
    # What pyiceberg's commit_transaction sends along (AssertCreate, alone).
    tc.check_requirements(None, [rest(AssertCreate())])
    created = tc.apply_updates(None, None, updates, NOW)
    assert created == staged


def test_create_by_commit_needs_its_pieces() -> None:
    staged = first()
    transaction = CreateTableTransaction(StagedTable(("db", "t"), parsed(staged), PREVIOUS, PyArrowFileIO(),
                                                     None))  # type: ignore[arg-type]
    updates, _ = pending(transaction)
    for action, message in (("assign-uuid", "assign-uuid"), ("set-location", "set-location"),
                            ("add-schema", "no schema has been added")):
        with pytest.raises(InvalidInputException, match=message):
            tc.apply_updates(None, None, [u for u in updates if u["action"] != action], NOW)
    with pytest.raises(InvalidInputException, match="v3"):
        tc.apply_updates(None, None, [{"action": "upgrade-format-version", "format-version": 3}, *updates], NOW)


# ------------------------------------------------------------------------------ evolution, as pyiceberg does it
def test_schema_evolution_matches_pyiceberg() -> None:
    base = first()
    transaction = table(base).transaction()
    with transaction.update_schema() as update:
        update.add_column("extra", StringType(), doc="new")
        update.rename_column("ts", "event_ts")
        update.add_column(("point", "y"), DoubleType())
        update.delete_column("tags")
    ours = assert_same_as_pyiceberg(base, transaction)
    assert ours["current-schema-id"] == 1 and ours["last-column-id"] == 11
    assert ours["metadata-log"] == [{"metadata-file": PREVIOUS, "timestamp-ms": NOW}]
    assert ours["last-updated-ms"] == NOW + 1000


def test_reverting_to_an_earlier_schema_reuses_its_id() -> None:
    base = first()
    transaction = table(base).transaction()
    with transaction.update_schema() as update:
        update.add_column("extra", StringType())
    evolved = tc.apply_updates(base, PREVIOUS, pending(transaction)[0], NOW + 1)
    back = table(evolved).transaction()
    with back.update_schema() as update:
        update.delete_column("extra")
    reverted = assert_same_as_pyiceberg(evolved, back)
    assert reverted["current-schema-id"] == 0 and len(reverted["schemas"]) == 2


def test_an_identical_schema_added_again_keeps_its_id() -> None:
    base = first()
    schema = copy.deepcopy(base["schemas"][0])
    schema["schema-id"] = 7
    updated = tc.apply_updates(base, PREVIOUS, [{"action": "add-schema", "schema": schema}], NOW)
    assert updated == base  # nothing changed: no new metadata file
    with pytest.raises(InvalidInputException, match="no schema has been added"):
        tc.apply_updates(base, PREVIOUS, [{"action": "add-schema", "schema": schema},
                                          {"action": "set-current-schema", "schema-id": -1}], NOW)


def test_spec_and_sort_order_evolution_match_pyiceberg() -> None:
    base = first()
    transaction = table(base).transaction()
    with transaction.update_spec() as update:
        update.remove_field("id_bucket")
        update.add_identity("id")
    with transaction.update_sort_order() as update:
        update.asc("ts", IdentityTransform())
    ours = assert_same_as_pyiceberg(base, transaction)
    assert ours["default-spec-id"] == 1 and ours["last-partition-id"] == 1002
    assert ours["default-sort-order-id"] == 2


def test_properties_match_pyiceberg() -> None:
    base = first()
    transaction = table(base).transaction()
    transaction.set_properties(a="1", b="2")
    transaction.remove_properties("owner")
    ours = assert_same_as_pyiceberg(base, transaction)
    assert ours["properties"] == {"write.parquet.compression-codec": "zstd", "a": "1", "b": "2"}


def test_partition_field_ids_are_recycled_for_the_same_source_and_transform() -> None:
    base = first()
    schema_columns = {f["name"]: f["id"] for f in base["schemas"][0]["fields"]}
    updated = tc.apply_updates(base, PREVIOUS, [
        {"action": "add-spec", "spec": {"fields": [{"source-id": schema_columns["ts"], "name": "ts_day",
                                                    "transform": "day"},
                                                   {"source-id": schema_columns["id"], "name": "id", "transform":
                                                    "identity"}]}},
        {"action": "set-default-spec", "spec-id": -1}], NOW)
    assert [f["field-id"] for f in updated["partition-specs"][1]["fields"]] == [1000, 1002]
    assert updated["last-partition-id"] == 1002


# ------------------------------------------------------------------------------ appends and refs
def unpartitioned() -> dict:
    return first(**{"partition-spec": None, "write-order": None})


def appended(base: dict, tmp_path: Any, rows: int = 3) -> tuple[dict, Any]:
    """``base`` and a transaction holding a real pyiceberg append of ``rows`` ids (data and
    manifests written under tmp_path)."""
    located = copy.deepcopy(base)
    located["location"] = f"file://{tmp_path}"
    transaction = table(located).transaction()
    transaction.append(pa.table({"id": pa.array(range(rows), pa.int64())},
                                schema=pa.schema([pa.field("id", pa.int64(), nullable=False)])))
    return located, transaction


def test_an_append_matches_pyiceberg_and_logs_the_snapshot(tmp_path: Any) -> None:
    base, transaction = appended(unpartitioned(), tmp_path)
    updates, requirements = pending(transaction)
    assert [u["action"] for u in updates] == ["add-snapshot", "set-snapshot-ref"]
    tc.check_requirements(base, requirements)
    ours = assert_same_as_pyiceberg(base, transaction)
    snapshot = ours["snapshots"][0]
    assert ours["current-snapshot-id"] == snapshot["snapshot-id"]
    assert ours["refs"] == {"main": {"snapshot-id": snapshot["snapshot-id"], "type": "branch"}}
    assert ours["last-sequence-number"] == 1
    assert ours["snapshot-log"] == [{"timestamp-ms": snapshot["timestamp-ms"], "snapshot-id": snapshot["snapshot-id"]}]
    # The same append again, as a client that did not refresh would send it: a conflict to retry.
    stale = copy.deepcopy(updates)
    stale[0]["snapshot"]["snapshot-id"] += 1
    stale[0]["snapshot"]["parent-snapshot-id"] = snapshot["snapshot-id"]
    with pytest.raises(ConcurrentModificationException, match="older than last sequence number 1"):
        tc.apply_updates(ours, PREVIOUS, stale, NOW + 2000)
    with pytest.raises(ConcurrentModificationException, match="branch main has changed: expected id"):
        tc.check_requirements(ours, [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 1}])
    with pytest.raises(ConcurrentModificationException, match="branch main was created concurrently"):
        tc.check_requirements(ours, requirements)


def test_a_second_append_and_a_tag(tmp_path: Any) -> None:
    base, transaction = appended(unpartitioned(), tmp_path)
    once = tc.apply_updates(base, PREVIOUS, pending(transaction)[0], NOW + 1)
    again = table(once).transaction()
    again.append(pa.table({"id": pa.array([7], pa.int64())},
                          schema=pa.schema([pa.field("id", pa.int64(), nullable=False)])))
    twice = assert_same_as_pyiceberg(once, again)
    first_id, second_id = (s["snapshot-id"] for s in twice["snapshots"])
    assert twice["snapshots"][1]["parent-snapshot-id"] == first_id and twice["last-sequence-number"] == 2
    tagged = tc.apply_updates(twice, PREVIOUS, [{"action": "set-snapshot-ref", "ref-name": "v1", "type": "tag",
                                                 "snapshot-id": first_id, "max-ref-age-ms": 1000}], NOW + 5000)
    assert tagged["refs"]["v1"] == {"snapshot-id": first_id, "type": "tag", "max-ref-age-ms": 1000}
    assert tagged["current-snapshot-id"] == second_id
    # Rolling main back to an earlier snapshot logs it at the commit's time.
    rolled = tc.apply_updates(tagged, PREVIOUS, [{"action": "set-snapshot-ref", "ref-name": "main",
                                                  "type": "branch", "snapshot-id": first_id}], NOW + 6000)
    assert rolled["current-snapshot-id"] == first_id
    assert rolled["snapshot-log"][-1] == {"timestamp-ms": NOW + 6000, "snapshot-id": first_id}
    with pytest.raises(ConcurrentModificationException, match="tag v1 has changed"):
        tc.check_requirements(rolled, [{"type": "assert-ref-snapshot-id", "ref": "v1", "snapshot-id": second_id}])


def snapshot(snapshot_id: int, sequence: int, parent: int | None = None, at: int = NOW) -> dict:
    out = {"snapshot-id": snapshot_id, "sequence-number": sequence, "timestamp-ms": at,
           "manifest-list": f"file:///wh/t/metadata/snap-{snapshot_id}.avro", "summary": {"operation": "append"}}
    if parent is not None:
        out["parent-snapshot-id"] = parent
    return out


def to_main(snapshot_id: int) -> dict:
    return {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": snapshot_id}


def with_snapshots() -> dict:
    return tc.apply_updates(first(), PREVIOUS, [
        {"action": "add-snapshot", "snapshot": snapshot(1, 1, at=NOW + 1)}, to_main(1),
        {"action": "add-snapshot", "snapshot": snapshot(2, 2, 1, at=NOW + 2)}, to_main(2),
        {"action": "add-snapshot", "snapshot": snapshot(3, 3, 2, at=NOW + 3)}, to_main(3)], NOW + 10)


def test_snapshots_made_current_and_replaced_in_one_commit_leave_no_log_entry() -> None:
    """Java's updateSnapshotLog: only the snapshot that stays current is logged."""
    metadata = with_snapshots()
    assert metadata["snapshot-log"] == [{"timestamp-ms": NOW + 3, "snapshot-id": 3}]
    assert metadata["current-snapshot-id"] == 3 and metadata["last-sequence-number"] == 3
    assert parsed(metadata).current_snapshot().snapshot_id == 3


def test_removing_snapshots_takes_their_refs_statistics_and_earlier_history() -> None:
    metadata = with_snapshots()
    statistics = {"snapshot-id": 2, "statistics-path": "file:///wh/t/s.puffin", "file-size-in-bytes": 10,
                  "file-footer-size-in-bytes": 5, "blob-metadata": [
                      {"type": "apache-datasketches-theta-v1", "snapshot-id": 2, "sequence-number": 2, "fields": [1]}]}
    metadata = tc.apply_updates(metadata, PREVIOUS, [
        to_main(2), to_main(3),  # history: 3, 2, 3
        {"action": "set-snapshot-ref", "ref-name": "old", "type": "branch", "snapshot-id": 2},
        {"action": "set-statistics", "statistics": statistics},
        {"action": "set-partition-statistics", "partition-statistics": {
            "snapshot-id": 2, "statistics-path": "file:///wh/t/p.parquet", "file-size-in-bytes": 3}}], NOW + 20)
    assert [e["snapshot-id"] for e in metadata["snapshot-log"]] == [3, 2, 3]
    assert parsed(metadata).statistics[0].snapshot_id == 2
    removed = tc.apply_updates(metadata, PREVIOUS, [{"action": "remove-snapshots", "snapshot-ids": [2, 99]}], NOW)
    assert [s["snapshot-id"] for s in removed["snapshots"]] == [1, 3]
    assert set(removed["refs"]) == {"main"} and removed["statistics"] == [] and removed["partition-statistics"] == []
    assert [e["snapshot-id"] for e in removed["snapshot-log"]] == [3]
    gone = tc.apply_updates(removed, PREVIOUS, [{"action": "remove-snapshot-ref", "ref-name": "main"}], NOW)
    assert gone["current-snapshot-id"] == -1 and gone["refs"] == {}
    assert parsed(gone).current_snapshot() is None


def test_statistics_replace_per_snapshot_and_go_on_removal() -> None:
    metadata = with_snapshots()
    def stats(path: str) -> dict:
        return {"snapshot-id": 3, "statistics-path": path, "file-size-in-bytes": 1, "file-footer-size-in-bytes": 1,
                "blob-metadata": []}
    metadata = tc.apply_updates(metadata, PREVIOUS, [{"action": "set-statistics", "statistics": stats("a")},
                                                     {"action": "set-statistics", "statistics": stats("b")}], NOW)
    assert [s["statistics-path"] for s in metadata["statistics"]] == ["b"]
    metadata = tc.apply_updates(metadata, PREVIOUS, [{"action": "remove-statistics", "snapshot-id": 3},
                                                     {"action": "remove-partition-statistics", "snapshot-id": 3}], NOW)
    assert metadata["statistics"] == []


@pytest.mark.parametrize("updates, message", [
    ([to_main(42)], "Cannot set main to unknown snapshot: 42"),
    ([{**to_main(3), "type": "tag"}], "Cannot set main to a tag"),
    ([{"action": "set-snapshot-ref", "ref-name": "t", "type": "tag", "snapshot-id": 3, "min-snapshots-to-keep": 2}],
     "Tags do not support"),
    ([{"action": "add-snapshot", "snapshot": snapshot(3, 9)}], "Snapshot already exists for id: 3"),
    ([{"action": "add-snapshot", "snapshot": {**snapshot(4, 4), "summary": {"operation": "merge"}}}], "operation"),
])
def test_snapshot_updates_iceberg_refuses(updates: list, message: str) -> None:
    with pytest.raises(InvalidInputException, match=message):
        tc.apply_updates(with_snapshots(), PREVIOUS, updates, NOW)


# ------------------------------------------------------------------------------ refusals
def column_ids(metadata: dict) -> dict[str, int]:
    return {f["name"]: f["id"] for f in metadata["schemas"][0]["fields"]}


def schema_without(metadata: dict, name: str) -> dict:
    schema = copy.deepcopy(metadata["schemas"][0])
    schema["fields"] = [f for f in schema["fields"] if f["name"] != name]
    return schema


@pytest.mark.parametrize("updates, message", [
    ([{"action": "remove-schemas", "schema-ids": [0]}], "Cannot remove the current schema"),
    ([{"action": "remove-partition-specs", "spec-ids": [0]}], "Cannot remove the default partition spec"),
    ([{"action": "upgrade-format-version", "format-version": 1}], "Cannot downgrade v2 table to v1"),
    ([{"action": "upgrade-format-version", "format-version": 3}], "unsupported format version: v3"),
    ([{"action": "set-current-schema", "schema-id": 5}], "unknown schema: 5"),
    ([{"action": "set-default-spec", "spec-id": -1}], "no spec has been added"),
    ([{"action": "set-default-sort-order", "sort-order-id": 9}], "unknown sort order: 9"),
    ([{"action": "assign-uuid", "uuid": "00000000-0000-0000-0000-000000000000"}], "cannot change it"),
    ([{"action": "merge-tables"}], "unknown table update action 'merge-tables'"),
    ([{"action": "add-encryption-key", "key": {}}], "format version 3"),
    ([{"action": "set-properties", "updates": {"a": 1}}], "string values"),
    ([{"action": "set-properties", "updates": {tc.PREVIOUS_VERSIONS_MAX: "many"}}], "not an integer"),
    ([{"action": "add-spec", "spec": {"fields": [{"source-id": 2, "name": "x", "transform": "bucket[4]"},
                                                 {"source-id": 2, "name": "X", "transform": "day"}]}}], "used twice"),
    (["not an update"], "unknown table update action None"),
])
def test_updates_iceberg_refuses(updates: list, message: str) -> None:
    with pytest.raises(InvalidInputException, match=message):
        tc.apply_updates(first(), PREVIOUS, updates, NOW)


def test_dropping_a_partition_source_column_is_refused() -> None:
    base = first()
    with pytest.raises(InvalidInputException, match="partition field 'ts_day'.*does not have"):
        tc.apply_updates(base, PREVIOUS, [{"action": "add-schema", "schema": schema_without(base, "ts")},
                                          {"action": "set-current-schema", "schema-id": -1}], NOW)
    # Added but not current, it breaks nothing.
    added = tc.apply_updates(base, PREVIOUS, [{"action": "add-schema", "schema": schema_without(base, "ts")}], NOW)
    assert len(added["schemas"]) == 2 and added["current-schema-id"] == 0


def test_a_type_change_data_files_cannot_read_is_refused_but_requiring_a_column_is_not() -> None:
    base = first()
    narrowed = copy.deepcopy(base["schemas"][0])
    narrowed["fields"][0]["type"] = "int"
    with pytest.raises(InvalidInputException, match="cannot change type from long to int"):
        tc.apply_updates(base, PREVIOUS, [{"action": "add-schema", "schema": narrowed}], NOW)
    required = copy.deepcopy(base["schemas"][0])
    required["fields"][1]["required"] = True  # pyiceberg's allow_incompatible_changes makes this
    updated = tc.apply_updates(base, PREVIOUS, [{"action": "add-schema", "schema": required},
                                                {"action": "set-current-schema", "schema-id": -1}], NOW)
    assert updated["current-schema-id"] == 1


def test_removing_old_schemas_and_specs() -> None:
    base = first()
    transaction = table(base).transaction()
    with transaction.update_spec() as update:
        update.remove_field("id_bucket")
    evolved = tc.apply_updates(base, PREVIOUS, pending(transaction)[0], NOW)
    pruned = tc.apply_updates(evolved, PREVIOUS, [{"action": "remove-partition-specs", "spec-ids": [0]}], NOW)
    assert [s["spec-id"] for s in pruned["partition-specs"]] == [1]
    assert pruned["last-partition-id"] == 1001  # ids once used stay used
    added = tc.apply_updates(base, PREVIOUS, [{"action": "add-schema", "schema": schema_without(base, "tags")}], NOW)
    assert tc.apply_updates(added, PREVIOUS, [{"action": "remove-schemas", "schema-ids": [1]}], NOW)["schemas"] == \
        base["schemas"]


# ------------------------------------------------------------------------------ logs and timestamps
def test_metadata_log_is_trimmed_to_previous_versions_max() -> None:
    metadata = tc.apply_updates(first(), PREVIOUS, [{"action": "set-properties",
                                                     "updates": {tc.PREVIOUS_VERSIONS_MAX: "2"}}], NOW)
    for n in range(1, 4):
        metadata = tc.apply_updates(metadata, f"file:///wh/t/metadata/0000{n}-a.metadata.json",
                                    [{"action": "set-properties", "updates": {"n": str(n)}}], NOW)
    assert [e["metadata-file"].rsplit("/", 1)[1] for e in metadata["metadata-log"]] == [
        "00002-a.metadata.json", "00003-a.metadata.json"]
    # The clock never runs backwards from the table's point of view.
    assert metadata["last-updated-ms"] == NOW + 4


def test_a_commit_that_changes_nothing_returns_the_base() -> None:
    base = first()
    updates = [{"action": "set-properties", "updates": {"owner": "me"}}, {"action": "remove-properties",
                                                                          "removals": ["absent"]},
               {"action": "set-location", "location": "file:///wh/t/"}, {"action": "assign-uuid", "uuid": UUID},
               {"action": "upgrade-format-version", "format-version": 2},
               {"action": "set-current-schema", "schema-id": 0}, {"action": "remove-snapshots", "snapshot-ids": [1]}]
    assert tc.apply_updates(base, PREVIOUS, updates, NOW + 5) == base


# ------------------------------------------------------------------------------ requirements
def test_pyicebergs_requirements_pass_on_the_base_and_fail_after_a_concurrent_change() -> None:
    base = first()
    transaction = table(base).transaction()
    with transaction.update_schema() as update:
        update.add_column("extra", StringType())
    with transaction.update_spec() as update:
        update.add_identity("extra")
    updates, requirements = pending(transaction)
    assert {r["type"] for r in requirements} >= {"assert-current-schema-id", "assert-default-spec-id"}
    tc.check_requirements(base, requirements)
    after = tc.apply_updates(base, PREVIOUS, updates, NOW)
    with pytest.raises(ConcurrentModificationException, match="Requirement failed: current schema changed: "
                                                              "expected id 0 != 1"):
        tc.check_requirements(after, requirements)


@pytest.mark.parametrize("requirement, message", [
    ({"type": "assert-create"}, "Requirement failed: table already exists"),
    ({"type": "assert-table-uuid", "uuid": "00000000-0000-0000-0000-000000000000"},
     f"Requirement failed: UUID does not match: expected {UUID} != 00000000-0000-0000-0000-000000000000"),
    ({"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": 5},
     "Requirement failed: branch or tag main is missing, expected 5"),
    ({"type": "assert-last-assigned-field-id", "last-assigned-field-id": 3},
     "Requirement failed: last assigned field id changed: expected id 3 != 9"),
    ({"type": "assert-current-schema-id", "current-schema-id": 1},
     "Requirement failed: current schema changed: expected id 1 != 0"),
    ({"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 999},
     "Requirement failed: last assigned partition id changed: expected id 999 != 1001"),
    ({"type": "assert-default-spec-id", "default-spec-id": 2},
     "Requirement failed: default partition spec changed: expected id 2 != 0"),
    ({"type": "assert-default-sort-order-id", "default-sort-order-id": 0},
     "Requirement failed: default sort order changed: expected id 0 != 1"),
])
def test_failed_requirements_say_what_java_says(requirement: dict, message: str) -> None:
    with pytest.raises(ConcurrentModificationException) as raised:
        tc.check_requirements(first(), [requirement])
    assert raised.value.message == message


def test_requirements_that_hold() -> None:
    tc.check_requirements(first(), [
        {"type": "assert-table-uuid", "uuid": UUID.upper()},
        {"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": None},
        {"type": "assert-ref-snapshot-id", "ref": "other"},
        {"type": "assert-last-assigned-field-id", "last-assigned-field-id": 9},
        {"type": "assert-current-schema-id", "current-schema-id": 0},
        {"type": "assert-last-assigned-partition-id", "last-assigned-partition-id": 1001},
        {"type": "assert-default-spec-id", "default-spec-id": 0},
        {"type": "assert-default-sort-order-id", "default-sort-order-id": 1}])
    tc.check_requirements(None, [{"type": "assert-create"}])
    tc.check_requirements(first(), [])


def test_requirements_on_a_missing_table() -> None:
    with pytest.raises(ConcurrentModificationException, match="current table metadata is missing"):
        tc.check_requirements(None, [{"type": "assert-current-schema-id", "current-schema-id": 0}])


@pytest.mark.parametrize("requirements, message", [
    ([{"type": "assert-everything"}], "unknown table requirement 'assert-everything'"),
    ([{"type": "assert-current-schema-id"}], "current-schema-id: is required"),
    ([{"type": "assert-current-schema-id", "current-schema-id": True}], "integer"),
    ([{"type": "assert-table-uuid", "uuid": "nope"}], "not a UUID"),
    ([{"type": "assert-create"}, {"type": "assert-default-spec-id", "default-spec-id": 0}],
     "Invalid create requirements: assert-default-spec-id"),
    (["assert-create"], "unknown table requirement"),
])
def test_malformed_requirements_are_bad_requests(requirements: list, message: str) -> None:
    # Malformed beats failed: the table exists (assert-create would fail), the request is refused first.
    with pytest.raises(InvalidInputException, match=message):
        tc.check_requirements(first(), requirements)


# ------------------------------------------------------------------------------ load results
def test_load_result_completes_what_a_metadata_file_may_leave_out() -> None:
    metadata = with_snapshots()
    sparse = {k: v for k, v in metadata.items() if k not in ("refs", "statistics", "partition-statistics",
                                                             "snapshot-log", "metadata-log")}
    result = tc.load_result(sparse)
    assert result["refs"] == {"main": {"snapshot-id": 3, "type": "branch"}}
    assert parsed(sparse).current_snapshot().snapshot_id == 3
    assert "refs" not in sparse  # the argument is left alone
