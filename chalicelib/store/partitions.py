"""Store operations for partitions and partition-index entries.

A partition and its index entries change together in one DynamoDB transaction, which also
checks that the table is the incarnation the caller read and that its index definitions have
not changed since (``index_epoch``): a partition can never be written without the entries of an
index that exists, nor an entry survive without its partition. Keys are computed by the domain
layer (``chalicelib.domain.partition_keys``); this module only moves items.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from pynamodb.exceptions import TransactWriteError
from pynamodb.transactions import TransactWrite

from chalicelib import faults, metrics
from chalicelib.lazy_pool import LazyPool
from chalicelib.store import digests
from chalicelib.store.dynamo import dynamo_json as dj
from chalicelib.store.catalog import as_table, cleanup_item, cleanup_job, delete_all, get_many, table_item
from chalicelib.store.dynamo.conditions import CONDITION_FAILED, classify
from chalicelib.store.dynamo.conditions import THROTTLED as THROTTLED_KIND
from chalicelib.store.dynamo.fence import transact
from chalicelib.store.dynamo.models import DatabaseItem, IndexEntryItem, PartitionItem, TableItem
from chalicelib.store.demand import Demand
from chalicelib.store.dynamo.ranges import query_key_range
from chalicelib.attempts import attempts
from chalicelib.store.dynamo.retry import conditional, given_up
from chalicelib.store.errors import TableChanged  # noqa: F401  (callers reach them here too)
from chalicelib.store.records import CleanupJob, Database, StoredPartition, Table

MAX_ACTIONS = 100  # TransactWriteItems limit
# The cleanup job kind that deletes the entries of a deleted (or failed) partition index.
INDEX_ENTRIES_JOB = "index-entries"
# Every transaction's fixed actions: the database and table condition checks, and the digest
# delta of the partitions it creates or moves (store/digests.py).
_CHECKS = 3
MAX_TRANSACTION_BYTES = 3_500_000  # of DynamoDB's 4 MB, leaving room for keys and overhead

EXISTS, MISSING, CHANGED = "exists", "missing", "changed"  # a write's own condition failed
STALE, THROTTLED = "stale", "throttled"  # its transaction did not land (see apply_writes)
BETWEEN_TRANSACTIONS = "between-partition-transactions"  # crash point (chalicelib.faults)


@dataclass
class PartitionWrite:
    """One partition's change, applied atomically with its index entries.

    ``create``: put ``key`` (must not exist). ``replace``: the partition stored at ``old_key``
    (with ``old_revision``) becomes ``key`` (which, when different, must not exist).
    ``delete``: remove ``old_key`` (with ``old_revision``). Entries are (index uid, entry key).
    """

    kind: str
    key: str | None = None
    values: list[str] | None = None
    doc: bytes | None = None
    segment: int = 0
    entries: list[tuple[str, str]] = field(default_factory=list)
    old_key: str | None = None
    old_revision: int | None = None
    old_entries: list[tuple[str, str]] = field(default_factory=list)
    uid: str | None = None  # the partition's identity (new on create, kept on replace)
    # Paimon statistics (``paimon_stats`` of the item replaced) that a replace in place keeps:
    # a Glue UpdatePartition must not reset what Paimon commits added up.
    carry: dict[str, int] = field(default_factory=dict)
    # A replace's values before (None: unknown): unchanged values and key need no digest delta.
    old_values: list[str] | None = None

    def touched(self) -> set[tuple[str, str]]:
        """Every item this write touches (a transaction may touch an item only once)."""
        if self.key is not None and self.old_key is None and not self.entries and not self.old_entries:
            return {("p", self.key)}  # a create with no index (most writes): one item
        items = {("p", k) for k in (self.key, self.old_key) if k is not None}
        items |= {("e", uid + "\x01" + k) for uid, k in list(self.entries) + list(self.old_entries)}
        return items

    def size(self) -> int:
        """Rough bytes this write adds to a transaction."""
        return (len(self.doc or b"") + 600) * (1 + len(self.entries)) + 300 * len(self.old_entries)


_PARTITIONS = PartitionItem.Meta.table_name
_ENTRIES = IndexEntryItem.Meta.table_name
_TABLES = TableItem.Meta.table_name
_DATABASES = DatabaseItem.Meta.table_name
_PARTITIONS_JSON = dj.text(_PARTITIONS)
_ENTRIES_JSON = dj.text(_ENTRIES)
_REVISION_IS = "#r = :r"


def _revision_is(revision: int | None) -> dict[str, Any]:
    return {"condition": _REVISION_IS, "names": {"#r": "revision"}, "values": {":r": dj.n(revision or 0)}}


def _content(write: PartitionWrite) -> tuple[str, list[str], bytes]:
    """The key, values and doc of a create or replace (which always carry all three)."""
    key, values, doc = write.key, write.values, write.doc
    assert key is not None and values is not None and doc is not None, write.kind
    return key, values, doc


def _partition_item(table_uid: str, write: PartitionWrite, revision: int) -> dict[str, Any]:
    key, values, doc = _content(write)
    item = {"table_uid": dj.s(table_uid), "key": dj.s(key), "values": dj.string_list(values),
            "doc": dj.document(doc), "segment": dj.n(write.segment), "revision": dj.n(revision)}
    if write.uid is not None:
        item["uid"] = dj.s(write.uid)
    item.update({name: dj.n(value) for name, value in write.carry.items()})
    return item


PAIMON_STATS = ("p_records", "p_bytes", "p_files", "p_last", "p_seq")


def paimon_stats(item: Any) -> dict[str, int]:
    """The Paimon statistics on a partition item (store/paimon.py), for a replace to carry."""
    return {name: int(value) for name in PAIMON_STATS if (value := getattr(item, name, None)) is not None}


def _entry_item(index_uid: str, entry_key: str, partition_key: str, values: Sequence[str], doc: bytes,
                segment: int) -> dict[str, Any]:
    return {"index_uid": dj.s(index_uid), "key": dj.s(entry_key), "partition_key": dj.s(partition_key),
            "values": dj.string_list(values), "doc": dj.document(doc), "segment": dj.n(segment)}


def _database_check(database: Database) -> dict[str, Any]:
    """The database is still the incarnation read. A deleted database's table items stay until
    its background clean-up (service/cleanup.py), so the table check alone would let a write
    built from a table read before the delete land in the old, unreachable table."""
    return dj.check(_DATABASES, {"catalog": dj.s(database.catalog), "name": dj.s(database.name)}, "#u = :u",
                    {"#u": "uid"}, {":u": dj.s(database.uid)})


def _table_check(table: Table) -> dict[str, Any]:
    """The table is still the incarnation read, at the version read (its partition keys), with
    the index definitions read."""
    return dj.check(_TABLES, {"db_uid": dj.s(table.db_uid), "name": dj.s(table.name)},
                    "#u = :u AND #v = :v AND #e = :e", {"#u": "uid", "#v": "version", "#e": "index_epoch"},
                    {":u": dj.s(table.uid), ":v": dj.n(table.version), ":e": dj.n(table.index_epoch or 0)})


def _add_write(actions: list[Any], table_uid: str, write: PartitionWrite) -> list[str]:
    """Append a write's actions; returns, per action, what its condition failing means."""
    meanings: list[str] = []
    if write.kind in ("replace", "delete") and (write.kind == "delete" or write.old_key != write.key):
        old_key = write.old_key
        assert old_key is not None, write.kind  # replace and delete always name the stored partition
        actions.append(dj.delete(_PARTITIONS, {"table_uid": dj.s(table_uid), "key": dj.s(old_key)},
                                 **_revision_is(write.old_revision)))
        meanings.append(CHANGED)
    shared = _Shared(write) if write.kind in ("create", "replace") else None
    if shared is not None:
        revision = (write.old_revision or 0) + 1 if write.kind == "replace" else 0
        if write.kind == "replace" and write.old_key == write.key:
            condition = _REPLACED_IN_PLACE % (write.old_revision or 0)
            meaning = CHANGED
        else:
            condition, meaning = _ABSENT, EXISTS
        actions.append(_partition_put(table_uid, write, shared, revision, condition))
        meanings.append(meaning)
    new_entries = set(write.entries)
    for index_uid, entry_key in write.old_entries:
        if (index_uid, entry_key) not in new_entries:
            actions.append(dj.delete(_ENTRIES, {"index_uid": dj.s(index_uid), "key": dj.s(entry_key)}))
            meanings.append("")
    if write.entries:  # only a create or a replace has entries
        assert shared is not None, write.kind
        for index_uid, entry_key in write.entries:
            actions.append(_entry_put(index_uid, entry_key, shared))
            meanings.append("")
    return meanings


# The hot actions of partition writes, rendered straight as wire JSON text (dynamo_json.Rendered):
# byte for byte what json.dumps gives for the dicts _partition_item / _entry_item and dj.put
# build (tests/unit/test_partition_store.py compares them), without building those dicts, and
# with a partition's values and document turned into JSON once for its item and all its entries.
_ABSENT = ',"ConditionExpression":"attribute_not_exists(#k)","ExpressionAttributeNames":{"#k":"key"}'
_REPLACED_IN_PLACE = (',"ConditionExpression":"#r = :r","ExpressionAttributeNames":{"#r":"revision"},'
                      '"ExpressionAttributeValues":{":r":{"N":"%d"}}')


class _Shared:
    """A create's or replace's members common to its partition item and its entries, as JSON."""

    __slots__ = ("key", "values", "doc", "segment")

    def __init__(self, write: PartitionWrite) -> None:
        key, values, doc = _content(write)
        self.key = dj.text(key)
        # One join over the C escaper, not an f-string per value (~15% less for five values).
        self.values = '{"L":[{"S":' + '},{"S":'.join(map(dj.text, values)) + '}]}' if values else '{"L":[]}'
        self.doc = dj.document_json(doc)
        self.segment = f'{{"N":"{write.segment}"}}'


# Written as f-strings, which build the text in one allocation: a chain of ``+`` copies the
# growing text at every step (three times slower for a 1.5 KB put).
def _partition_put(table_uid: str, write: PartitionWrite, shared: _Shared, revision: int,
                   condition: str) -> dj.Rendered:
    extra = f',"uid":{{"S":{dj.text(write.uid)}}}' if write.uid is not None else ""
    for name, value in write.carry.items():
        extra += f',{dj.text(name)}:{{"N":"{value}"}}'
    return dj.Rendered(
        f'{{"Put":{{"TableName":{_PARTITIONS_JSON},"Item":{{"table_uid":{{"S":{dj.text(table_uid)}}},'
        f'"key":{{"S":{shared.key}}},"values":{shared.values},"doc":{shared.doc},"segment":{shared.segment},'
        f'"revision":{{"N":"{revision}"}}{extra}}}{condition}}}}}')


def _entry_put(index_uid: str, entry_key: str, shared: _Shared) -> dj.Rendered:
    return dj.Rendered(
        f'{{"Put":{{"TableName":{_ENTRIES_JSON},"Item":{{"index_uid":{{"S":{dj.text(index_uid)}}},'
        f'"key":{{"S":{dj.text(entry_key)}}},"partition_key":{{"S":{shared.key}}},"values":{shared.values},'
        f'"doc":{shared.doc},"segment":{shared.segment}}}}}}}')


def _actions(write: PartitionWrite) -> int:
    replaced_elsewhere = write.kind == "replace" and write.old_key != write.key
    stale = len(set(write.old_entries) - set(write.entries)) if write.old_entries else 0
    return (write.kind != "create") * (write.kind == "delete" or replaced_elsewhere) \
        + (write.kind != "delete") + stale + len(write.entries)


def _pack(writes: Sequence[PartitionWrite]) -> list[list[int]]:
    """Group writes (by position) into transactions within DynamoDB's limits, as evenly as
    the fewest transactions allow: 100 partitions plus the two checks are 102 actions, and
    two transactions of 51 and 49 (run in parallel) finish sooner than one of 98 and one of 2."""
    measures = [(_actions(w), w.size(), w.touched()) for w in writes]  # once, for both passes
    groups = _pack_within(measures, MAX_ACTIONS)
    if len(groups) > 1:
        total = sum(n for n, _, _ in measures) + _CHECKS * len(groups)
        even = _pack_within(measures, -(-total // len(groups)))
        if len(even) == len(groups):
            return even
    return groups


def _pack_within(measures: Sequence[tuple[int, int, set[tuple[str, str]]]], max_actions: int) -> list[list[int]]:
    groups: list[list[int]] = []
    current: list[int] = []
    touched: set[tuple[str, str]] = set()
    actions, size = _CHECKS, 0
    for i, (n, b, t) in enumerate(measures):
        if current and (actions + n > max_actions or size + b > MAX_TRANSACTION_BYTES or not touched.isdisjoint(t)):
            groups.append(current)
            current, actions, size, touched = [], _CHECKS, 0, set()
        current.append(i)
        actions, size = actions + n, size + b
        touched |= t
    if current:
        groups.append(current)
    return groups


def apply_writes(database: Database, table: Table, writes: Sequence[PartitionWrite]) -> dict[int, str]:
    """Apply writes, each atomically with its entries; returns {position: reason} for the writes
    not applied (every other write is): EXISTS, MISSING or CHANGED when the write's own
    condition failed, STALE when its transaction did not land because the table check failed
    (the database or table deleted or re-created, the table's version or index definitions
    changed) or because it kept meeting other transactions past the retries, THROTTLED when
    DynamoDB kept throttling it.

    The DynamoDB transactions of one call run in parallel (100 partitions plus the table check
    are 102 actions with the two checks: two transactions), so some may land while others fail:
    a STALE write is to be rebuilt from a fresh read and sent again, alone, never the writes
    that landed. When *no* write was applied and some transaction failed so, the call raises
    instead (nothing of it landed, so sending it all again is right): ThrottlingException for a
    throttle that outlasted the retries, else TableChanged.
    """
    groups = _pack(writes)
    if not groups:
        return {}
    if len(groups) == 1:
        outcomes = [_apply_group(database, table, writes, groups[0])]
    elif faults.armed(BETWEEN_TRANSACTIONS):
        # The crash test wants a definite point: the first transaction applied, none of the
        # others sent. (In parallel, any subset may be applied; each is still all-or-nothing.)
        outcomes = []
        for number, group in enumerate(groups):
            if number:
                faults.crash_point(BETWEEN_TRANSACTIONS)
            outcomes.append(_apply_group(database, table, writes, group))
    else:
        # The first transaction runs on this thread while the pool runs the others: one hand-off
        # fewer per call (its wake-ups cost CPU a Lambda bills), the same parallelism.
        others = [_executor().submit(_apply_group, database, table, writes, group) for group in groups[1:]]
        try:
            outcomes = [_apply_group(database, table, writes, groups[0])]
        except BaseException:
            for other in others:
                other.cancel()  # as Executor.map does when a result raises: what has not started never will
            raise
        outcomes += [other.result() for other in others]
    failures: dict[int, str] = {}
    for outcome in outcomes:
        failures.update(outcome.failures)
    given_up_with = next((o.given_up for o in outcomes if o.given_up is not None), None)
    if len(failures) == len(writes) and any(r in (STALE, THROTTLED) for r in failures.values()):
        raise given_up(given_up_with, TableChanged()) if given_up_with is not None else TableChanged()
    return failures


_executor = LazyPool(4, "partition-writes")


@dataclass
class _Outcome:
    """One transaction's end: the writes not applied, by position, and the error its retries
    ran out on (None: it landed, or the table check failed)."""

    failures: dict[int, str]
    given_up: Exception | None = None


def _apply_group(database: Database, table: Table, writes: Sequence[PartitionWrite],
                 group: list[int]) -> _Outcome:
    failures: dict[int, str] = {}
    pending = list(group)
    table_uid = table.uid  # read once, not per write: a PynamoDB attribute read costs ~1 µs
    tries = attempts()  # for conflicts and throttles: a failed condition is no reason to pause
    next(tries)
    while True:
        actions: list[Any] = [_database_check(database), _table_check(table)]
        # per action: (write position, meaning); -1: the checks
        owners: list[tuple[int, str]] = [(-1, "database"), (-1, "table")]
        for i in pending:
            owners.extend((i, meaning) for meaning in _add_write(actions, table_uid, writes[i]))
        # Unconditional: it never fails, and it lands exactly when the partitions do. Put even
        # with no rows (a delete, an update in place): every partition transaction then gives
        # the digest a new item key, which is what a warm listing's cache checks
        # (service/partition_cache.py).
        actions.append(digests.delta_action(table, _digest_rows(writes[i] for i in pending)))
        owners.append((-1, "digest"))
        try:
            dj.transact_write(actions)
            return _Outcome(failures)
        except Exception as error:  # noqa: BLE001 - classified; anything but a known outcome is re-raised
            outcome = classify(error)
            if outcome.kind == CONDITION_FAILED:
                failed_here = _failed_writes(owners, outcome.failed)
                if failed_here.pop(-1, None) is not None or not failed_here:
                    failures.update(dict.fromkeys(pending, STALE))
                    return _Outcome(failures)
                # Sent again without them at once: a smaller transaction each time, so this ends.
                failures.update(failed_here)
                pending = [i for i in pending if i not in failed_here]
                if not pending:
                    return _Outcome(failures)
            elif outcome.retryable:
                if next(tries, None) is None:
                    failures.update(dict.fromkeys(pending, THROTTLED if outcome.kind == THROTTLED_KIND else STALE))
                    return _Outcome(failures, error)
            else:
                raise


def _digest_rows(writes: Iterator[PartitionWrite]) -> list[tuple[tuple[str, ...], int]]:
    """The (values, segment) the digest must learn from these writes: every partition created,
    moved to a new key or given new values."""
    rows = []
    for write in writes:
        if write.kind == "create" or (write.kind == "replace" and (
                write.key != write.old_key or write.old_values is None or write.values != write.old_values)):
            rows.append((tuple(_content(write)[1]), write.segment))
    return rows


def _failed_writes(owners: list[tuple[int, str]], failed_actions: Sequence[int]) -> dict[int, str]:
    failed: dict[int, str] = {}
    for action in failed_actions:
        position, meaning = owners[action]
        failed.setdefault(position, meaning or CHANGED)
    return failed


# ----------------------------------------------------------------------------------- reads
def get_partition(table_uid: str, key: str) -> StoredPartition | None:
    """One partition by its sort key, or None."""
    metrics.count_read()
    try:
        return PartitionItem.get(table_uid, key, consistent_read=True)
    except PartitionItem.DoesNotExist:
        return None


def get_partitions(table_uid: str, keys: Sequence[str]) -> dict[str, StoredPartition]:
    """Partitions by sort key (BatchGetItem, 100 keys a call); missing keys are absent."""
    return {item.key: item for item in get_many(PartitionItem, [(table_uid, k) for k in keys])}


def scan_range(table_uid: str, low: str | None, high: str | None, after: str | None = None,
               index_uid: str | None = None, segments: tuple[int, int] | None = None,
               demand: Demand | None = None) -> Iterator[Any]:
    """Partitions (or, with ``index_uid``, index entries) with sort key in [low, high], in key
    order, starting after ``after``; with ``segments``, only those whose segment bucket is in
    that range; DynamoDB pages sized by ``demand`` (store.demand.Demand). Every item read is counted."""
    if index_uid is None:
        return query_key_range(PartitionItem, table_uid, low, high, after, segments, demand)
    return query_key_range(IndexEntryItem, index_uid, low, high, after, segments, demand)


def write_entries_checked(table_uid: str, entries: Sequence[tuple[PartitionItem, str, str]]) -> None:
    """Backfill: put entries, each only if its partition still has the revision read.

    ``entries`` are (partition item as read, index uid, entry key). A partition changed since
    was written by someone who saw the index, so its entry is theirs to write: skip it.
    """
    for start in range(0, len(entries), MAX_ACTIONS // 2):
        _write_entry_batch(table_uid, entries[start:start + MAX_ACTIONS // 2])


def _write_entry_batch(table_uid: str, batch: Sequence[tuple[PartitionItem, str, str]]) -> None:
    pending = list(batch)
    retried: Exception | None = None
    for _ in attempts():
        actions = []
        for item, index_uid, entry_key in pending:  # a check and a put per entry
            actions.append(dj.check(_PARTITIONS, {"table_uid": dj.s(table_uid), "key": dj.s(item.key)},
                                    **_revision_is(item.revision)))
            actions.append(dj.put(_ENTRIES, _entry_item(index_uid, entry_key, item.key, item.values,
                                                        item.doc, item.segment)))
        try:
            dj.transact_write(actions)
            return
        except Exception as error:  # noqa: BLE001 - classified; anything but a known outcome is re-raised
            outcome = classify(error)
            if outcome.kind == CONDITION_FAILED:
                stale = {i // 2 for i in outcome.failed}
                pending = [entry for i, entry in enumerate(pending) if i not in stale]
                if not pending:
                    return
            elif outcome.retryable:
                retried = error
            else:
                raise
    raise given_up(retried, TableChanged()) if retried is not None else TableChanged()


def delete_index_entries(index_uid: str) -> None:
    """Remove every entry of an index (after it was unlinked from its table), within the
    current purge budget (``catalog.purging``: BudgetSpent when it runs out)."""
    delete_all(IndexEntryItem, index_uid, "key")


def index_entries_job(index_uid: str) -> CleanupJob:
    """The cleanup job that deletes an unlinked index's entries (not stored)."""
    return cleanup_job(INDEX_ENTRIES_JOB, index_uid)


def drop_index(table: Table, indexes: list[dict[str, Any]], index_uid: str) -> None:
    """Store index definitions ``indexes``, without the index ``index_uid`` and bump the epoch (conditional
    on the epoch read), and record the deletion of its entries as a cleanup job, in one DynamoDB
    transaction: from the answer on no read reaches them (reads go through the definitions), and
    a cleaner deletes them however many there are. TableChanged when the table moved on."""
    def build(tx: TransactWrite) -> None:
        tx.update(table_item(table), actions=[TableItem.indexes.set(json.dumps(indexes)), TableItem.index_epoch.add(1)],
                  condition=(TableItem.uid == table.uid) & (TableItem.index_epoch == table.index_epoch))
        tx.save(cleanup_item(index_entries_job(index_uid)))
    try:
        transact(None, build)
    except TransactWriteError as error:
        if classify(error).kind == CONDITION_FAILED:
            raise TableChanged() from None
        raise


def _backfills_are(table: Table) -> Any:
    if table.backfills_json is None:
        return TableItem.backfills.does_not_exist()
    return TableItem.backfills == table.backfills_json


def update_backfills(table: Table, progress: dict[str, dict[str, Any]]) -> Table | None:
    """Store backfill progress (by index uid) if neither it nor the index definitions changed
    since ``table`` was read; the epoch is not bumped (partition writers do not care). The table
    as stored after; None: nothing written."""
    return _update_if_unchanged(table, [TableItem.backfills.set(json.dumps(progress))])


def save_index_state(table: Table, indexes: list[dict[str, Any]],
                     progress: dict[str, dict[str, Any]]) -> Table | None:
    """Store index definitions and backfill progress together, bumping the epoch, if neither
    changed since ``table`` was read. The table as stored after; None: nothing written."""
    return _update_if_unchanged(table, [TableItem.indexes.set(json.dumps(indexes)), TableItem.index_epoch.add(1),
                                        TableItem.backfills.set(json.dumps(progress))])


def _update_if_unchanged(table: Table, actions: list[Any]) -> Table | None:
    item = table_item(table)  # refreshed by the update (ALL_NEW)
    if conditional(lambda: item.update(
            actions=actions,
            condition=(TableItem.uid == table.uid) & (TableItem.index_epoch == table.index_epoch)
            & _backfills_are(table))):
        return as_table(item)
    return None

