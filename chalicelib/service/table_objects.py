"""Governed-table objects (Lake Formation's manifest): which object versions a reader sees, and
the writes UpdateTableObjects records in a transaction. Protocol-free: callers pass names,
transaction ids and resume positions; NextToken and response shapes are the caller's.

Reads at snapshot S see object versions with ``added_seq <= S < removed_seq``, plus the
pending writes of a transaction that is COMMITTED but not yet fully applied (when its sequence
number is <= S), plus the reader's own pending writes. The PartitionPredicate is planned like a
GetPartitions expression over the version keys, which start with the partition sort key.
"""

from __future__ import annotations

import heapq
from typing import Any, Iterator, Optional

from chalicelib import clock
from chalicelib.service import access
from chalicelib.context import RequestContext
from chalicelib.domain import expressions, planner
from chalicelib.domain.keycodec import MAX_SORT_KEY_BYTES
from chalicelib.domain.partition_keys import partition_sort_key
from chalicelib.errors import (ConcurrentModificationException, EntityNotFoundException,
                               InvalidInputException, TransactionCommitInProgressException, table_not_found,
                               transaction_not_found)
from chalicelib.service.lookups import fold, require_database
from chalicelib.service.paging import out_of_time, work_deadline
from chalicelib.service.partition_indexes import key_types_of, partition_keys_of
from chalicelib.service.snapshots import database_snapshot
from chalicelib.service.table_ref import TableRef
from chalicelib.service.transactions import commit, load_transaction, require_active, start
from chalicelib.store import transactions as store
from chalicelib.store.records import ObjectState, PendingWrite, Table, Transaction

LATEST = 10 ** 19  # a snapshot after every commit
OWN = 10 ** 20 - 1  # own pending writes sort after every committed version of a partition

# uri -> (op, pending write, seq) of writes a snapshot sees that the object versions lack yet.
Overlay = dict[str, tuple[str, PendingWrite, int]]


def _values(item: Any) -> list[str]:
    """An object, object version or pending write's partition values (a copy)."""
    return list(item.values)


def governed_table(ctx: RequestContext, ref: TableRef, transaction_id: Optional[str]
                   ) -> tuple[Table, dict[str, Any]]:
    """The governed table ``ref`` names and its document, as a request in ``transaction_id``
    (None: outside any) sees it: a table the transaction created, not committed yet, is there.
    EntityNotFoundException if it is not; InvalidInputException unless TableType is GOVERNED."""
    database = require_database(ref.catalog_key, ref.database)
    name = fold(ref.table)
    found = database_snapshot(ctx, transaction_id, database, name).get(name)
    if found is None:
        raise table_not_found(name)
    table, doc, _ = found
    if (doc.get("TableType") or "").upper() != "GOVERNED":
        raise InvalidInputException(f"Table {table.name} is not a governed table (TableType GOVERNED)")
    return table, doc


def _partition_values(table: Table, keys: list[tuple[str, str]], given: Optional[list[str]], uri: str) -> list[str]:
    values = list(given or [])
    if len(values) != len(keys):
        raise InvalidInputException(
            f"Object {uri}: PartitionValues has {len(values)} value(s) but table {table.name} has "
            f"{len(keys)} partition key(s)")
    for value, (name, glue_type) in zip(values, keys):
        try:
            expressions.parse_value(value, glue_type)
        except InvalidInputException:
            raise InvalidInputException(
                f"Object {uri}: partition value '{value}' is not a valid {glue_type} for key '{name}'") from None
    return values


def _check_key_size(table: Table, uri: str, partition_key: Optional[str] = None) -> None:
    """Refuse an object whose store keys DynamoDB would refuse (over 1,024 bytes).

    Checked before anything is written: a key refused while a commit is applied, after its
    commit point, would fail that commit's roll-forward for ever and wedge the table.
    """
    keys = [store.pending_key(table.uid, uri)]
    if partition_key is not None:
        keys.append(store.version_key(partition_key, 0, uri))
    size = max(len(key.encode("utf-8", errors="surrogatepass")) for key in keys)
    if size > MAX_SORT_KEY_BYTES:
        raise InvalidInputException(
            f"Object {uri if len(uri) <= 64 else uri[:61] + '...'}: its Uri and PartitionValues need a {size}-byte key; this service "
            f"indexes objects by keys of at most {MAX_SORT_KEY_BYTES} bytes (shorten the Uri or the values)")


def update_table_objects(ctx: RequestContext, ref: TableRef, transaction_id: Optional[str],
                         operations: list[dict[str, Any]]) -> None:
    """Record WriteOperations (each ``{"AddObject": {Uri, ETag, Size, PartitionValues}}`` or
    ``{"DeleteObject": {Uri, ETag}}``) as pending writes of the transaction ``transaction_id``;
    without one, in a transaction of its own, committed before returning.

    All or nothing: every operation is checked (partition values, key sizes, the object's
    existence and ETag, no change committed after the transaction's snapshot) before any is
    written, and the writes are saved in one store transaction with the check that the
    transaction is still ACTIVE."""
    for kind in sorted({k for operation in operations for k in ("AddObject", "DeleteObject")
                        if operation.get(k) is not None}):
        access.require(f"UpdateTableObjects.{kind}", ref.catalog_key, ref.database, ref.table)
    table, doc = governed_table(ctx, ref, transaction_id)
    keys = partition_keys_of(doc)
    own_transaction = not transaction_id
    item = start(ctx) if not transaction_id else load_transaction(ctx, transaction_id)
    require_active(item, write=True)
    uris = []
    for operation in operations:
        chosen = [k for k in ("AddObject", "DeleteObject") if operation.get(k) is not None]
        if len(chosen) != 1:
            raise InvalidInputException("Each WriteOperation must hold exactly one of AddObject or DeleteObject")
        uris.append(operation[chosen[0]]["Uri"])
        _check_key_size(table, uris[-1])
    if len(set(uris)) != len(uris):
        raise InvalidInputException("WriteOperations name the same object Uri more than once")
    committed = store.get_objects(table.uid, uris)
    # A committed transaction whose writes are not applied yet (its committer is applying them,
    # or crashed): its writes are the objects' latest committed state.
    unapplied = overlay_of(table, item.catalog, LATEST, None)
    pending = store.get_pending_object(item.transaction_id, table.uid, uris)
    puts, removed = [], []
    for operation, uri in zip(operations, uris):
        state = committed.get(uri)
        if uri in unapplied:
            op, write, seq = unapplied[uri]
            state = ObjectState(table.uid, uri, live=int(op != "delete"), changed_seq=seq, etag=write.etag,
                                values=_values(write))
        if state is not None and state.changed_seq > item.snapshot_seq:
            raise ConcurrentModificationException(
                f"Object {uri} was changed by a transaction committed after this one started")
        mine = pending.get(uri)
        live = (mine.op != "delete") if mine else bool(state and state.live)
        if "AddObject" in operation and operation["AddObject"] is not None:
            add = operation["AddObject"]
            if live:
                raise InvalidInputException(f"Object {uri} already exists in table {table.name}")
            values = _partition_values(table, keys, add.get("PartitionValues"), uri)
            partition_key = partition_sort_key(values, key_types_of(table))
            _check_key_size(table, uri, partition_key)
            op = "replace" if mine and mine.op == "delete" else "add"
            puts.append(store.pending_object(item.transaction_id, table.uid, uri, op, values, partition_key,
                                             etag=add["ETag"], size=add["Size"]))
        else:
            delete = operation["DeleteObject"]
            if not live:
                raise EntityNotFoundException(f"Object {uri} does not exist in table {table.name}")
            # live: there is a pending add of ours, or a live committed state.
            current = mine if mine else state
            assert current is not None
            if delete.get("ETag") and delete["ETag"] != current.etag:
                raise InvalidInputException(f"Object {uri}: ETag {delete['ETag']} does not match {current.etag}")
            if mine and mine.op == "add":
                removed.append(mine)  # added and deleted in this transaction: nothing to do
            else:
                assert state is not None  # not an add of ours, so the live state is committed
                puts.append(store.pending_object(item.transaction_id, table.uid, uri, "delete", _values(state),
                                                 partition_sort_key(_values(state), key_types_of(table))))
    if not store.save_pending(item, clock.now(), table.uid, puts, removed):
        fresh = load_transaction(ctx, item.transaction_id)
        require_active(fresh, write=True)
        raise TransactionCommitInProgressException("Transaction changed while writing; retry")
    if own_transaction:
        saved = store.get_transaction(item.catalog, item.transaction_id)  # as save_pending left it
        if saved is None:
            raise transaction_not_found(item.transaction_id)
        commit(saved)


def check_objects_on_cancel(ctx: RequestContext, ref: TableRef, transaction_id: str) -> None:
    """DeleteObjectsOnCancel's checks: a governed table the transaction sees, and an ACTIVE
    transaction that may write. This service never deletes S3 objects itself."""
    access.require("DeleteObjectsOnCancel", ref.catalog_key, ref.database, ref.table)
    governed_table(ctx, ref, transaction_id)
    require_active(load_transaction(ctx, transaction_id), write=True)


def snapshot_of(ctx: RequestContext, catalog_key: str, transaction_id: Optional[str],
                as_of: Optional[float]) -> tuple[int, Optional[Transaction]]:
    """The snapshot sequence number to read ``catalog_key`` at, and the reading transaction
    (loaded, checked ACTIVE and marked active), if any. InvalidInputException when both a
    transaction and a time are given."""
    if transaction_id and as_of is not None:
        raise InvalidInputException("TransactionId and QueryAsOfTime cannot both be specified")
    if transaction_id:
        item = load_transaction(ctx, transaction_id)
        require_active(item)
        store.touch(item, clock.now())
        return item.snapshot_seq, item
    # Never past the last commit point: a commit that lands while this request reads is being
    # applied, and must stay invisible rather than show half applied.
    last = store.read_point(catalog_key)
    if as_of is not None:
        return min(round(as_of * 1_000_000), last), None
    return last, None


def overlay_of(table: Table, catalog_key: str, snapshot: int, reader: Optional[Transaction]) -> Overlay:
    """uri -> (op, pending write, seq) of writes the snapshot sees but the versions lack yet:
    a committed transaction's not yet applied (seq: its commit number), then the reader's own
    (seq: OWN)."""
    changes: Overlay = {}
    lock = store.get_lock(table.uid)
    if lock is not None and (reader is None or lock.transaction_id != reader.transaction_id):
        holder = store.get_transaction(catalog_key, lock.transaction_id)
        if holder is not None and holder.status == "COMMITTED" and holder.seq <= snapshot:
            for write in store.pending_of(holder.transaction_id, table.uid):
                changes[write.uri] = (write.op, write, holder.seq)
    if reader is not None:
        for write in store.pending_of(reader.transaction_id, table.uid):
            changes[write.uri] = (write.op, write, OWN)
    return changes


def visible_objects(table: Table, snapshot: int, bound: expressions.Node, overlay: Overlay,
                    low: Optional[str], high: Optional[str], after: Optional[str],
                    seek: bool = False, deadline: Optional[float] = None
                    ) -> Iterator[tuple[str, list[str], Optional[dict[str, Any]]]]:
    """(version key, partition values, TableObject) visible in one key range, in key order;
    ``seek``: skip each partition's versions added after the snapshot instead of reading them.
    With ``deadline`` (monotonic), once it has passed each version left out comes too, as
    (key, [], None): where a listing out of work budget can stop and resume exactly."""
    extra = []
    for uri, (op, write, seq) in overlay.items():
        if op == "delete":
            continue
        key = store.version_key(write.object_key, seq, uri)
        if (low is not None and key < low) or (high is not None and key > high) or (after is not None and key <= after):
            continue
        if expressions.evaluate(bound, _values(write)):
            extra.append((key, _values(write), {"Uri": uri, "ETag": write.etag, "Size": int(write.size or 0)}))
    extra.sort(key=lambda entry: entry[0])
    # A commit partly applied has stored some of its versions under the very keys its overlay
    # entries take: such a version is left out for its twin, and must not end a page at that
    # key either, or the page after it (``after`` that key) would leave out the twin too.
    twins = {entry[0] for entry in extra}

    def committed() -> Iterator[tuple[str, list[str], Optional[dict[str, Any]]]]:
        versions = (store.versions_as_of(table.uid, snapshot, low, high, after) if seek
                    else store.versions_in(table.uid, low, high, after))
        for version in versions:
            if (version.added_seq > snapshot or (version.removed_seq is not None and version.removed_seq <= snapshot)
                    or version.uri in overlay or not expressions.evaluate(bound, version.values)):
                if deadline is not None and out_of_time(deadline) and version.key not in twins:
                    yield version.key, [], None
                continue
            yield version.key, _values(version), {"Uri": version.uri, "ETag": version.etag, "Size": int(version.size)}

    return heapq.merge(committed(), extra, key=lambda entry: entry[0])


def can_seek(bound: expressions.Node, keys: list[tuple[str, str]], reading_past: bool) -> bool:
    """Reading the past (as of a time, or a transaction's snapshot) from a few whole partitions:
    seek past their later history rather than read it (see store.versions_as_of)."""
    ranges = expressions.plan_ranges(bound, [name for name, _ in keys]) if keys else None
    if not reading_past or not ranges:
        return False
    return all(len(r.equals) == len(keys) for r in ranges)


class ObjectListing:
    """The objects of a governed table at a transaction's snapshot (``transaction_id``), a time
    (``as_of``) or the latest commit, filtered by a PartitionPredicate, a page at a time.
    Made by :func:`list_table_objects`; ``scope``: what a resume position is only valid for."""

    def __init__(self, ctx: RequestContext, ref: TableRef, transaction_id: Optional[str], as_of: Optional[float],
                 predicate: Optional[str], limit: Optional[int]) -> None:
        self.table, doc = governed_table(ctx, ref, transaction_id)
        self.catalog_key = ref.catalog_key
        self.snapshot, self.reader = snapshot_of(ctx, ref.catalog_key, transaction_id, as_of)
        self.keys = partition_keys_of(doc)
        self.bound = expressions.bind(expressions.parse_partition_predicate(predicate), self.keys)
        self.plan = planner.choose_plan(self.bound, self.keys, key_types_of(self.table), [])
        self.as_of, self.limit = as_of, limit or 1000
        self.scope = (self.table.uid, round(as_of * 1_000_000) if as_of is not None else None,
                      transaction_id, predicate)

    def page(self, position: Any) -> tuple[list[dict[str, Any]], Any]:
        """Objects after ``position`` (None: from the start) grouped by partition
        (``[{PartitionValues, Objects: [{Uri, ETag, Size}]}]``), and the position to resume
        after (None: no more). Later pages of a read outside a transaction read at the first
        page's snapshot, which the position carries."""
        table, reader, snapshot = self.table, self.reader, self.snapshot
        start_range, after = position[:2] if position else (0, None)
        if position and reader is None:
            snapshot = position[2]  # later pages of a read without a transaction: the first page's snapshot
        overlay = overlay_of(table, self.catalog_key, snapshot, reader)
        seek = can_seek(self.bound, self.keys, reader is not None or self.as_of is not None)
        groups: list[dict[str, Any]] = []
        count, last, more = 0, None, False
        deadline = work_deadline()
        for number in range(start_range, len(self.plan.bounds)):
            low, high = self.plan.bounds[number]
            for key, values, obj in visible_objects(table, snapshot, self.bound, overlay, low, high,
                                                    after if number == start_range else None, seek, deadline):
                if obj is not None:
                    if count == self.limit:
                        more = True
                        break
                    if groups and groups[-1]["PartitionValues"] == values:
                        groups[-1]["Objects"].append(obj)
                    else:
                        groups.append({"PartitionValues": values, "Objects": [obj]})
                    count += 1
                last = [number, key, snapshot]
                if out_of_time(deadline):
                    # Out of work budget: what we have, to resume after the last version examined.
                    more = True
                    break
            if more:
                break
        return groups, last if more else None


def list_table_objects(ctx: RequestContext, ref: TableRef, transaction_id: Optional[str], as_of: Optional[float],
                       predicate: Optional[str], limit: Optional[int]) -> ObjectListing:
    """The objects of the governed table ``ref`` names as a reader sees them, ready to page.
    Raises (before any page is read) what a bad table, transaction, time or predicate deserves."""
    access.require("GetTableObjects", ref.catalog_key, ref.database, ref.table)
    return ObjectListing(ctx, ref, transaction_id, as_of, predicate, limit)
