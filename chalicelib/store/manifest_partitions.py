"""Partition summaries of governed tables: how many objects (files) and bytes each partition's
manifest holds, now and at every commit that changed it, so GetPartitions reads one item per
partition instead of every object (docs/design.md, "Partitions of governed tables").

A table's summaries are kept only if they cover every commit of the table: a marker item
(``summaries SEP table uid`` in the commit-state table) is written at its first commit, when it
has no object yet. A table whose objects were committed before summaries existed has no marker,
and its partitions are counted from the objects instead.

Written while a commit is applied, *before* its objects: a partition's summary, its new version
and the end of its previous version change in one DynamoDB transaction (with the commit's fence,
see store.fence), and a summary already stamped with the commit's sequence number is skipped. So
a roll-forward after a crash applies each partition exactly once, computing from the objects'
state before the commit (untouched until every partition is done); two appliers of one commit
at once write the same values.
"""

from __future__ import annotations

from typing import Iterator, Optional, Sequence

from pynamodb.transactions import TransactWrite

from chalicelib import metrics
from chalicelib.store.catalog import get_many
from chalicelib.store.dynamo.fence import Fence, transact
from chalicelib.store.dynamo.models import (SEP, CommitStateItem, ManifestPartitionItem, ManifestPartitionVersionItem,
                                     ObjectItem)
from chalicelib.store.dynamo.ranges import Record, query_key_range
from chalicelib.store.records import ObjectState, PendingWrite

SEQ_DIGITS = 20
_PARTITIONS_PER_TRANSACTION = 33  # 3 actions each + the fence's check: DynamoDB's 100


def version_key(partition_key: str, added_seq: int) -> str:
    return f"{partition_key}{SEP}{added_seq:0{SEQ_DIGITS}d}"


def _changes(writes: Sequence[PendingWrite], seq: int,
             current: dict[str, ObjectState]) -> dict[str, list]:
    """partition key -> [values, files delta, bytes delta] of a commit's object writes, against
    the objects' state before the commit (``current``)."""
    deltas: dict[str, list] = {}
    for write in writes:
        old = current.get(write.uri)
        if old is not None and old.changed_seq == seq:
            continue  # this object is applied already, so every partition was before it
        if write.op in ("delete", "replace") and old is not None and old.live:
            delta = deltas.setdefault(old.version_key.rsplit(SEP, 2)[0], [list(old.values), 0, 0])
            delta[1] -= 1
            delta[2] -= int(old.size or 0)
        if write.op in ("add", "replace"):
            key = write.partition_key
            assert key is not None  # an object's write (never a table definition's)
            delta = deltas.setdefault(key, [list(write.values or ()), 0, 0])
            delta[1] += 1
            delta[2] += int(write.size or 0)
    # An unpartitioned table's objects (partition key "") are in no partition: nothing to
    # summarise, and DynamoDB refuses an empty key.
    return {key: delta for key, delta in deltas.items() if key and (delta[1] or delta[2])}


def summaries_marker(table_uid: str) -> str:
    """The commit-state item whose presence says a table's partition summaries are complete."""
    return f"summaries{SEP}{table_uid}"


def has_summaries(table_uid: str) -> bool:
    """Whether the table's partition summaries cover all its commits (one GetItem)."""
    metrics.count_read()
    try:
        CommitStateItem.get(summaries_marker(table_uid), consistent_read=True)
    except CommitStateItem.DoesNotExist:
        return False
    return True


def _start_summaries(fence: Fence, table_uid: str) -> bool:
    """Before a table's first commit is applied: mark its summaries complete (True); a table
    that has objects already (committed before summaries existed) gets none (False). Safe to
    repeat in a roll-forward: the marker is written before any object of the commit is."""
    if has_summaries(table_uid):
        return True
    for _ in ObjectItem.query(table_uid, limit=1, consistent_read=True):
        metrics.count_read()
        return False
    transact(fence, lambda tx: tx.save(CommitStateItem(summaries_marker(table_uid))))
    return True


def apply_partition_changes(fence: Fence, table_uid: str, writes: Sequence[PendingWrite], seq: int,
                            current: dict[str, ObjectState]) -> None:
    """Fold a committed transaction's object writes into its partitions' summaries (idempotent;
    under ``fence``: Fenced once the commit no longer holds the table's lock)."""
    if not _start_summaries(fence, table_uid):
        return
    changes = _changes(writes, seq, current)
    if not changes:
        return
    now = get_partitions(table_uid, list(changes))
    todo = [(key, delta) for key, delta in sorted(changes.items())
            if now.get(key) is None or now[key].changed_seq != seq]  # changed_seq == seq: applied
    for start in range(0, len(todo), _PARTITIONS_PER_TRANSACTION):
        chunk = todo[start:start + _PARTITIONS_PER_TRANSACTION]

        def build(tx: TransactWrite, chunk: list[tuple[str, list]] = chunk) -> None:
            for key, delta in chunk:
                _write_partition(tx, table_uid, key, delta, now.get(key), seq)
        transact(fence, build)


def _write_partition(tx: TransactWrite, table_uid: str, key: str, delta: list, before: Optional[ManifestPartitionItem],
                     seq: int) -> None:
    values, files, size = delta
    alive = before if before is not None and before.files > 0 else None
    files += int(alive.files) if alive is not None else 0
    size += int(alive.size) if alive is not None else 0
    files, size = max(files, 0), max(size, 0) if files > 0 else 0
    created = int(alive.created_seq) if alive is not None else seq
    tx.save(ManifestPartitionItem(table_uid, key, values=values, files=files, size=size,
                                  created_seq=created, changed_seq=seq))
    if alive is not None:
        tx.update(ManifestPartitionVersionItem(table_uid, version_key(key, int(alive.changed_seq))),
                  actions=[ManifestPartitionVersionItem.removed_seq.set(seq)])
    if files:
        tx.save(ManifestPartitionVersionItem(table_uid, version_key(key, seq), values=values, files=files,
                                             size=size, created_seq=created, added_seq=seq))


def partitions_in(table_uid: str, low: Optional[str], high: Optional[str],
                  after: Optional[str] = None) -> Iterator[Record]:
    """Partition summaries (emptied ones too) with key in [low, high] after ``after``, in key order."""
    return query_key_range(ManifestPartitionItem, table_uid, low, high, after)


def get_partitions(table_uid: str, keys: Sequence[str]) -> dict[str, ManifestPartitionItem]:
    """Partition summaries by key (those that exist)."""
    return {item.key: item for item in get_many(ManifestPartitionItem, [(table_uid, k) for k in keys])}


def partition_at(table_uid: str, partition_key: str, snapshot: int) -> Optional[ManifestPartitionVersionItem]:
    """The partition's state visible at ``snapshot``, or None (empty or not there yet): the
    newest version added at or before it, unless that one was removed by then."""
    key = ManifestPartitionVersionItem.key
    for version in ManifestPartitionVersionItem.query(
            table_uid, key.between(partition_key + SEP, version_key(partition_key, snapshot)),
            scan_index_forward=False, limit=1, consistent_read=True):
        metrics.count_read()
        if version.removed_seq is None or version.removed_seq > snapshot:
            return version
        return None
    return None

