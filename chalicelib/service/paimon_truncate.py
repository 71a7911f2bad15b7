"""A replace's truncation (protocol-free): the catalog's own commit of an OVERWRITE snapshot
that leaves no file, as Paimon's ``AbstractCatalog.truncateTable`` (``TableCommitImpl
.truncateTable``: ``FileStoreCommitImpl.tryOverwritePartition`` with no filter and no change).

Paimon's truncating snapshot names manifests that delete every live file; this one names two
EMPTY manifest lists instead (base and delta: no manifest at all), which reads the same (no
file, no row) and needs no Avro writer or codec here: each is an Avro object-container header
and no block, its ``avro.schema`` copied from a manifest list of the same table (so it is the
schema of the Paimon version that writes the table; headers are never compressed). The rest is
what Paimon's commit writes: commitUser ``replace-table-<uuid>``, commitIdentifier
``Long.MAX_VALUE`` (BatchWriteBuilder.COMMIT_IDENTIFIER), kind OVERWRITE, operation TRUNCATE,
the latest schema id, totalRecordCount 0, deltaRecordCount minus the previous total, the
watermark, statistics file and nextRowId carried over; no index manifest (Paimon's has every
index entry deleted), no changelog.

It is committed through ``paimon_snapshots.commit_on``, the path of a client's REST commit:
the manifest lists first (as a client writes its manifests before it posts the commit), then
the one conditional head update that decides it, then the snap item, the statistics (every
partition emptied, so its Glue partition deleted, as Paimon's server drops the table's
partitions) and the ``snapshot-N`` / ``LATEST`` files. A racing commit wins or loses on that
condition like any other: lost, the truncation is built again on the new head (Paimon's commit
retries the same way); lost every round, its two lists are deleted and the caller gets a
ConcurrentModificationException. A crash between the lists and the decision leaves two small
unnamed files (as a client's lost commit does; Paimon's remove-orphan-files takes them).

The old data files stay where they are: older snapshots and tags still read them (time
travel), and no expiry here ever deletes them (Paimon's expiry deletes the files a later
snapshot's delta marks deleted; this delta marks none, so once the old snapshots are expired
they are orphans for ``remove_orphan_files``).
"""

from __future__ import annotations

import re
import uuid as uuid_module
from dataclasses import replace
from typing import Any, Optional

from chalicelib import clock, faults
from chalicelib.domain.paimon.avro_container import AvroHeaderError, empty_container, writer_schema
from chalicelib.domain.paimon.snapshots import PartitionDelta, Snapshot, SnapshotFormatError, parse_snapshot
from chalicelib.errors import ConcurrentModificationException, InvalidInputException
from chalicelib.service import paging
from chalicelib.service import paimon_snapshots as snapshots
from chalicelib.service.table_ref import TableRef
from chalicelib.store import paimon as store
from chalicelib.store import warehouse

COMMIT_USER_PREFIX = "replace-table-"
COMMIT_IDENTIFIER = 2 ** 63 - 1  # Paimon's BatchWriteBuilder.COMMIT_IDENTIFIER (Long.MAX_VALUE)
_ROUNDS = 4  # commits lost to racing ones before the truncation gives up (409)
# Fault point (chalicelib.faults): the truncation built and its lists written, not yet decided.
STOP_BEFORE_DECISION = "paimon-before-truncate"
_LIST_NAME = re.compile(r"[A-Za-z0-9._-]{1,255}")


def truncate(ref: TableRef) -> Optional[int]:
    """Commit a snapshot of the table's main branch that holds no file (the caller checked the
    permission); its id, or None when the table has no snapshot (nothing to truncate)."""
    table = snapshots.open_table(ref)
    lists: Optional[tuple[str, str, int]] = None  # (base, delta) names and their size, once written
    deadline = paging.work_deadline()
    for round_ in range(_ROUNDS):
        if round_:
            table = replace(table, head=None)  # the head read with the table is stale: read it afresh
        # Settled with a budget: the partitions read below must hold every decided commit's
        # statistics, or a commit on this head would empty them by stale counts.
        head = snapshots.settle(table, deadline)
        if head.snapshot_id is None:
            return None
        if head.pending is not None:
            break  # a large commit's statistics are still being applied: a retry may find them done
        latest = _latest(table, head)
        if lists is None:
            lists = _write_empty_lists(table, latest)
        snapshot = _truncating(table, head, latest, lists)
        faults.fault_point(STOP_BEFORE_DECISION)
        if snapshots.commit_on(table, head.snapshot_uuid, snapshot, _emptying(table, head)):
            return snapshot.id
    if lists is not None:  # named by no snapshot: the commit never happened
        warehouse.delete_many([_list_file(table, lists[0]), _list_file(table, lists[1])])
    raise ConcurrentModificationException("The table was committed to meanwhile, every time: not truncated; retry.")


def _latest(table: snapshots.TableBranch, head: store.Head) -> dict[str, Any]:
    """The head's snapshot JSON (the head's copy, else its snap item)."""
    copy = head.latest_snapshot() if head.latest_text is not None else None
    if isinstance(copy, dict) and copy.get("id") == head.snapshot_id:
        return copy
    assert head.snapshot_id is not None
    stored = store.get_snapshot(table.uid, head.snapshot_id, table.branch)
    if stored is None:
        raise ConcurrentModificationException(f"Snapshot {head.snapshot_id} is not saved yet; retry.")
    return stored.snapshot()


def _list_file(table: snapshots.TableBranch, name: str) -> str:
    return f"{warehouse.branch_root(table.path, table.branch)}/manifest/{name}"


def _write_empty_lists(table: snapshots.TableBranch, latest: dict[str, Any]) -> tuple[str, str, int]:
    """Two empty manifest lists of the schema the latest snapshot's lists have, written under
    ``manifest/`` with Paimon's naming (``manifest-list-<uuid>-<n>``): (base, delta, size)."""
    schema = None
    for member in ("deltaManifestList", "baseManifestList"):
        name = latest.get(member)
        if not isinstance(name, str) or not _LIST_NAME.fullmatch(name) or name in (".", ".."):
            continue  # a name a client sent: only a plain file name of manifest/ is read
        raw = warehouse.get(_list_file(table, name))
        try:
            schema = writer_schema(raw) if raw is not None else None
        except AvroHeaderError:
            schema = None
        if schema is not None:
            break
    if schema is None:
        raise InvalidInputException(f"Snapshot {latest.get('id')} of table {table.ref.table} names no readable "
                                    "manifest list: the table cannot be truncated by the catalog.")
    unique = uuid_module.uuid4()
    data = empty_container(schema, uuid_module.uuid4().bytes)
    base, delta = f"manifest-list-{unique}-0", f"manifest-list-{unique}-1"
    for name in (base, delta):
        warehouse.put(_list_file(table, name), data)
    return base, delta, len(data)


def _truncating(table: snapshots.TableBranch, head: store.Head, latest: dict[str, Any],
                lists: tuple[str, str, int]) -> Snapshot:
    """The truncating snapshot on ``head`` (see the module docstring for each member)."""
    assert head.snapshot_id is not None
    schema = store.latest_schema(table.uid, table.branch)
    previous = latest.get("totalRecordCount")
    raw: dict[str, Any] = {
        "version": latest.get("version", 3), "id": head.snapshot_id + 1,
        "schemaId": schema[0] if schema is not None else latest.get("schemaId", 0),
        "baseManifestList": lists[0], "baseManifestListSize": lists[2],
        "deltaManifestList": lists[1], "deltaManifestListSize": lists[2],
        "commitUser": f"{COMMIT_USER_PREFIX}{uuid_module.uuid4()}", "commitIdentifier": COMMIT_IDENTIFIER,
        "commitKind": "OVERWRITE", "timeMillis": int(clock.now() * 1000), "totalRecordCount": 0,
        "deltaRecordCount": -previous if isinstance(previous, int) else 0, "changelogRecordCount": 0,
        "uuid": str(uuid_module.uuid4()), "operation": "TRUNCATE",
    }
    for carried in ("watermark", "statistics", "nextRowId"):
        if latest.get(carried) is not None:
            raw[carried] = latest[carried]
    try:
        return parse_snapshot(raw)
    except SnapshotFormatError as error:  # a carried member of the wrong type, from a client
        raise InvalidInputException(f"Cannot truncate table {table.ref.table}: {error}") from None


def _emptying(table: snapshots.TableBranch, head: store.Head) -> list[PartitionDelta]:
    """The statistics that empty every partition (all of its counts taken away: each Glue
    partition is then deleted), or the table's totals when it has no partition keys."""
    if not table.keys:
        totals = head.totals
        if not (totals.record_count or totals.file_size_in_bytes or totals.file_count):
            return []
        return [PartitionDelta({}, -totals.record_count, -totals.file_size_in_bytes, -totals.file_count,
                               totals.last_file_creation_time)]
    return [PartitionDelta(dict(zip(table.keys, record.values)), -int(record.p_records or 0),
                           -int(record.p_bytes or 0), -int(record.p_files or 0), int(record.p_last or 0))
            for record in store.partition_stats(table.uid)]
