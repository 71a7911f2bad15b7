"""Store operations for Lake Formation transactions and governed-table objects.

The commit protocol that uses them is in ``chalicelib.service.transactions``; docs/design.md
("Transactions") explains why each step is safe.
"""

from __future__ import annotations

import secrets
import time
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

from pynamodb.exceptions import TransactWriteError
from pynamodb.expressions.update import Action
from pynamodb.transactions import TransactWrite

from chalicelib import metrics
from chalicelib.errors import ConcurrentModificationException
from chalicelib.store.catalog import ExtraKey, delete_all, get_many
from chalicelib.store.dynamo.conditions import CONDITION_FAILED, CONFLICT, classify
from chalicelib.store.dynamo.config import connection
from chalicelib.store.dynamo.fence import Fence, Write, write_all
from chalicelib.store.manifest_partitions import apply_partition_changes
from chalicelib.store.dynamo.ranges import Record, query_key_range
from chalicelib.store.dynamo.retry import conditional as _conditional, retry
from chalicelib.store.dynamo.models import (SEP, CommitStateItem, ObjectItem, ObjectVersionItem,
                                     PendingWriteItem, TransactionItem)
from chalicelib.store.errors import TransactionStateChanged  # noqa: F401  (callers reach them here too)
from chalicelib.store.pending_tables import as_pending, write_item
from chalicelib.store.records import CommitLock, ObjectState, PendingWrite, Transaction

SEQ_DIGITS = 20


def now_micros() -> int:
    """Commit sequence numbers are microseconds since the epoch (so a time is a snapshot)."""
    return time.time_ns() // 1000


# ------------------------------------------------------------------------------ transactions
def seq_name(catalog: str) -> str:
    """The commit-counter item of a catalog."""
    return f"seq{SEP}{catalog}"


def last_commit_seq(catalog: str) -> int:
    """The catalog's commit counter: the last commit point or snapshot taken (0 before any)."""
    metrics.count_read()
    try:
        return CommitStateItem.get(seq_name(catalog), consistent_read=True).seq or 0
    except CommitStateItem.DoesNotExist:
        return 0


def counter_key(catalog: str) -> ExtraKey:
    """The commit counter's key, to read it along with other items (``catalog.get_database_with``)."""
    return ExtraKey(CommitStateItem.Meta.table_name, {"name": {"S": seq_name(catalog)}})


def counter_value(raw: Optional[dict[str, Any]]) -> int:
    """The commit counter from its item as read by ``counter_key`` (0 before any)."""
    seq = (raw or {}).get("seq")
    return int(seq["N"]) if seq else 0


def read_point(catalog: str) -> int:
    """The snapshot of a read made outside any transaction: counter + 1. Table writes outside
    transactions are stamped counter + 1 without moving the counter, and commit points take at
    least counter + 2, so this sees every such write that has landed (read-your-writes) and no
    commit whose commit point is still to come (a commit being applied shows whole or not at
    all). Read-only: readers never contend with writers."""
    return last_commit_seq(catalog) + 1


def take_snapshot(catalog: str) -> int:
    """A transaction's snapshot: advance the counter by one (an atomic ADD, never retried for a
    lost race) and return its new value S. Every table write that landed before carries a stamp
    <= S, and one landing after needs a stamp above the counter, so > S."""
    counter = CommitStateItem(seq_name(catalog))
    # An update of the counter conflicts (on real DynamoDB) with table writes in flight that
    # check it: retried, and a conflict outlasting the retries is a clear "retry", not a 500.
    # (It has no condition, so it always lands when it returns.)
    _conditional(lambda: counter.update(actions=[CommitStateItem.seq.add(1)]))
    return int(counter.seq)


# The record converters read an item's attribute values directly: what its attribute descriptors
# return (None where the item lacks one), at a tenth of their cost (about 1 µs each).
def _as_transaction(item: TransactionItem) -> Transaction:
    get: Callable[[str], Any] = item.attribute_values.get
    return Transaction(get("catalog"), get("transaction_id"), get("kind"), get("status"), get("start_time"),
                       get("last_activity"), get("snapshot_seq"), get("end_time"), get("commit_seq"), get("tables"),
                       get("applied"), get("handed_off"))


def _key(transaction: Transaction) -> TransactionItem:
    """The transaction's item by its key (to update or delete)."""
    return TransactionItem(transaction.catalog, transaction.transaction_id)


def create_transaction(catalog: str, kind: str, when: float) -> Transaction:
    """Start and store a new ACTIVE transaction of ``kind`` at ``when``: a fresh, time-ordered
    id, and the catalog's latest commit as its snapshot (``take_snapshot``)."""
    transaction_id = f"{now_micros():016x}{secrets.token_hex(8)}"
    item = TransactionItem(catalog, transaction_id, kind=kind, status="ACTIVE", start_time=when,
                           last_activity=when, snapshot_seq=take_snapshot(catalog), tables=[])
    retry(lambda: item.save(condition=TransactionItem.transaction_id.does_not_exist()))
    return _as_transaction(item)


def get_transaction(catalog: str, transaction_id: str) -> Optional[Transaction]:
    """A transaction, or None."""
    metrics.count_read()
    try:
        return _as_transaction(TransactionItem.get(catalog, transaction_id, consistent_read=True))
    except TransactionItem.DoesNotExist:
        return None


def change_status(transaction: Transaction, expected: Sequence[str], status: str,
                  **values: Any) -> Optional[Transaction]:
    """Move a transaction to ``status`` if it is still in one of ``expected`` (``values``: other
    members to set with it): the transaction as stored after (its ``tables`` included, which a
    write of the same transaction may have added to since ``transaction`` was read); None when
    it was no longer in ``expected``."""
    actions: list[Action] = [TransactionItem.status.set(status)]
    actions += [getattr(TransactionItem, name).set(value) for name, value in values.items()]
    condition = TransactionItem.status.is_in(*expected)
    item = _key(transaction)  # refreshed by the update (ALL_NEW)
    if _conditional(lambda: item.update(actions=actions, condition=condition)):
        return _as_transaction(item)
    return None


def mark_applied(transaction: Transaction) -> None:
    """Record that a COMMITTED transaction is fully applied (its locks released, its pending
    writes gone), so reading it no longer looks into recovering it."""
    item = _key(transaction)
    _best_effort(lambda: item.update(actions=[TransactionItem.applied.set(1)],
                                     condition=TransactionItem.status == "COMMITTED"))


def renew_commit_lease(transaction: Transaction, when: float, read_as: Optional[float] = None,
                       status: str = "COMMITTED") -> bool:
    """Restart the commit lease of a transaction still in ``status`` (COMMITTED: and not yet
    applied; or COMMIT_IN_PROGRESS, marking it ``handed_off``) at ``when``: its commit has gone
    to a background job, and readers leave it to that job for a lease. With ``read_as`` (the
    ``last_activity`` read), only while that is still the lease: of several readers handing the
    same commit off, one wins. False when the condition failed."""
    condition = TransactionItem.status == status
    actions: list[Action] = [TransactionItem.last_activity.set(when)]
    if status == "COMMITTED":
        condition &= TransactionItem.applied.does_not_exist()
    else:
        actions.append(TransactionItem.handed_off.set(1))
    if read_as is not None:
        condition &= TransactionItem.last_activity == read_as
    item = _key(transaction)
    return _conditional(lambda: item.update(actions=actions, condition=condition))


def touch(transaction: Transaction, when: float, tables: Iterable[str] = ()) -> bool:
    """Record activity (and tables written) on an ACTIVE transaction."""
    actions: list[Action] = [TransactionItem.last_activity.set(when)]
    new_tables = sorted(set(tables) - set(_tables_of(transaction)))
    if new_tables:
        actions.append(TransactionItem.tables.set(sorted(set(_tables_of(transaction)) | set(new_tables))))
    item = _key(transaction)
    return _conditional(lambda: item.update(actions=actions, condition=TransactionItem.status == "ACTIVE"))


def _tables_of(transaction: Transaction) -> list[str]:
    """The uids of the tables a transaction wrote."""
    return transaction.tables or []


def list_transactions(catalog: str, after: Optional[str]) -> Iterator[Transaction]:
    """The catalog's transactions in id (start) order."""
    start = {"catalog": {"S": catalog}, "transaction_id": {"S": after}} if after else None
    for item in TransactionItem.query(catalog, last_evaluated_key=start, consistent_read=True):
        metrics.count_read()
        yield _as_transaction(item)


# ---------------------------------------------------------------------------- pending writes
def pending_key(table_uid: str, uri: str) -> str:
    """Range key of a pending write."""
    return f"{table_uid}{SEP}{uri}"


def pending_object(transaction_id: str, table_uid: str, uri: str, op: str, values: Sequence[str],
                   partition_key: str, etag: Optional[str] = None, size: Optional[int] = None) -> PendingWrite:
    """A pending write of one object of a governed table (``op`` add | delete | replace), not stored."""
    return PendingWrite(transaction_id, pending_key(table_uid, uri), op, uri, etag=etag, size=size,
                        values=list(values), partition_key=partition_key)


def get_pending(transaction_id: str, keys: Sequence[str]) -> dict[str, PendingWrite]:
    """Pending writes by key."""
    return {item.key: as_pending(item) for item in get_many(PendingWriteItem, [(transaction_id, k) for k in keys])}


def get_pending_object(transaction_id: str, table_uid: str, uris: Sequence[str]) -> dict[str, PendingWrite]:
    """A transaction's pending writes of these objects of one table, by uri."""
    found = get_pending(transaction_id, [pending_key(table_uid, uri) for uri in uris])
    return {write.uri: write for write in found.values()}


def save_pending(transaction: Transaction, when: float, table_uid: str,
                 puts: Sequence[PendingWrite], removed: Sequence[PendingWrite]) -> bool:
    """Record pending writes atomically with the transaction's activity, only while it is
    ACTIVE (False otherwise: nothing written). 100 operations need two DynamoDB transactions;
    both carry the ACTIVE condition, so only a commit racing the same transaction's own
    UpdateTableObjects call could split them."""
    tables = sorted(set(_tables_of(transaction)) | {table_uid})
    item = _key(transaction)
    actions = [("put", write_item(p)) for p in puts] + [("delete", write_item(r)) for r in removed]
    for start in range(0, max(len(actions), 1), 99):
        chunk = actions[start:start + 99]

        def send() -> None:
            with TransactWrite(connection=connection()) as tx:
                tx.update(item, actions=[TransactionItem.last_activity.set(when),
                                         TransactionItem.tables.set(tables)],
                          condition=TransactionItem.status == "ACTIVE")
                for kind, pending in chunk:
                    if kind == "put":
                        tx.save(pending)
                    else:
                        tx.delete(pending)
        try:
            retry(send)
        except TransactWriteError as error:
            # The status update is the only conditional action; PynamoDB reorders actions
            # (checks, deletes, puts, updates), so any failed condition is its.
            if classify(error).kind == CONDITION_FAILED:
                return False
            raise
    return True


def pending_of(transaction_id: str, table_uid: Optional[str] = None) -> Iterator[PendingWrite]:
    """A transaction's pending writes (of one table, or all)."""
    condition = PendingWriteItem.key.startswith(table_uid + SEP) if table_uid else None
    for item in PendingWriteItem.query(transaction_id, range_key_condition=condition, consistent_read=True):
        metrics.count_read()
        yield as_pending(item)


def drop_pending(transaction_id: str) -> None:
    """Forget a transaction's pending writes (after apply or abort)."""
    delete_all(PendingWriteItem, transaction_id, "key")


# ------------------------------------------------------------------------------------- locks
def lock_name(table_uid: str) -> str:
    """The commit-lock item of a table."""
    return f"lock{SEP}{table_uid}"


def get_lock(table_uid: str) -> Optional[CommitLock]:
    """The table's commit lock if some transaction holds it."""
    metrics.count_read()
    try:
        item = CommitStateItem.get(lock_name(table_uid), consistent_read=True)
    except CommitStateItem.DoesNotExist:
        return None
    return CommitLock(table_uid, item.transaction_id, item.since) if item.transaction_id else None


def acquire_lock(table_uid: str, transaction_id: str, when: float) -> bool:
    """Take a table's commit lock (True), or find it held by another transaction (False)."""
    item = CommitStateItem(lock_name(table_uid), transaction_id=transaction_id, since=when)
    condition = CommitStateItem.transaction_id.does_not_exist() | (CommitStateItem.transaction_id == transaction_id)
    return _conditional(lambda: item.save(condition=condition))


def fence_of(table_uid: str, transaction_id: str) -> Fence:
    """The fence of a transaction's apply to one scope: its writes land only while it holds
    that scope's lock."""
    return Fence(lock_name(table_uid), transaction_id)


def release_lock(table_uid: str, transaction_id: str) -> None:
    """Release a lock this transaction holds (no-op otherwise)."""
    item = CommitStateItem(lock_name(table_uid))
    _best_effort(lambda: item.delete(condition=CommitStateItem.transaction_id == transaction_id))


def _best_effort(call) -> None:
    """A write recovery repeats if it is lost (a lock a finished commit still holds is cleared
    by the next reader): a conflict that outlasts the retries is not the caller's failure."""
    try:
        _conditional(call)
    except ConcurrentModificationException:
        pass


# ---------------------------------------------------------------------------------- objects
def get_objects(table_uid: str, uris: Sequence[str]) -> dict[str, ObjectState]:
    """Latest committed state of objects by uri (tombstones included)."""
    return {state.uri: state for state in map(_as_object, get_many(ObjectItem, [(table_uid, u) for u in uris]))}


def _as_object(item: ObjectItem) -> ObjectState:
    get: Callable[[str], Any] = item.attribute_values.get
    return ObjectState(get("table_uid"), get("uri"), get("live"), get("changed_seq"), get("version_key"), get("etag"),
                       get("size"), get("values"))


def version_key(partition_key: str, added_seq: int, uri: str) -> str:
    """Range key of an object version: partition, then when it was added, then uri."""
    return f"{partition_key}{SEP}{added_seq:0{SEQ_DIGITS}d}{SEP}{uri}"


def split_version_key(key: str) -> tuple[str, int, str]:
    """Inverse of :func:`version_key`: (partition sort key, added_seq, uri)."""
    partition_key, added, uri = key.rsplit(SEP, 2)  # uris never hold SEP (API pattern)
    return partition_key, int(added), uri


def partition_versions(partition_key: str) -> tuple[str, str]:
    """The key range (both ends inclusive) holding every version key of one partition."""
    return partition_key + SEP, after_partition(partition_key)


def after_partition(partition_key: str) -> str:
    """A key after every version key of this partition and before the next partition's
    (``partition SEP added_seq SEP uri``: ':' sorts after every digit)."""
    return f"{partition_key}{SEP}:"


def next_commit_seq(previous_seq: int) -> int:
    """The sequence number of a commit point over counter ``previous_seq``: microseconds since
    the epoch, and at least ``previous_seq + 2`` (``previous_seq + 1`` is the stamp of table
    writes outside transactions that land before it, and the snapshot of reads made meanwhile)."""
    return max(now_micros(), previous_seq + 2)


def commit_point(catalog: str, transaction: Transaction, previous_seq: int, seq: int, end_time: float) -> bool:
    """The single atomic step that makes a transaction committed: advance the catalog's commit
    counter (read as ``previous_seq``) to ``seq`` and mark the transaction COMMITTED with it.
    False when another commit moved the counter to ``seq - 1`` or beyond first (retry with a
    fresh counter).

    The condition is ``counter < seq - 1``, not "unchanged since read": snapshots (an ADD of 1
    each, StartTransaction) and stamped table writes may move or use the counter meanwhile, and
    every one of them still lands below ``seq`` (a snapshot at most ``seq - 2``, a stamp or a
    read point at most ``seq - 1``), so the commit stays invisible to them and visible to all
    after it. Requiring "unchanged" let a stream of StartTransactions starve commits (64 lost
    attempts, then an abort)."""
    counter = CommitStateItem(seq_name(catalog))
    counter_condition = CommitStateItem.seq.does_not_exist() | (CommitStateItem.seq < seq - 1)
    item = _key(transaction)

    def send() -> None:
        with TransactWrite(connection=connection()) as tx:
            tx.update(counter, actions=[CommitStateItem.seq.set(seq)], condition=counter_condition)
            tx.update(item, actions=[TransactionItem.status.set("COMMITTED"), TransactionItem.commit_seq.set(seq),
                                     TransactionItem.end_time.set(end_time)],
                      condition=TransactionItem.status == "COMMIT_IN_PROGRESS")
    try:
        retry(send)
        return True
    except TransactWriteError as error:
        outcome = classify(error)
        # Both actions are updates, which PynamoDB sends in the order added: [counter, transaction].
        if outcome.kind == CONDITION_FAILED and 1 in outcome.failed:
            raise TransactionStateChanged() from None
        if outcome.kind in (CONDITION_FAILED, CONFLICT):
            return False
        raise


def apply_writes(fence: Fence, table_uid: str, writes: Sequence[PendingWrite], seq: int,
                 current: Optional[dict[str, ObjectState]], deadline: Optional[float] = None) -> None:
    """Apply a committed transaction's writes (ops add | delete | replace) to the object tables,
    under ``fence`` (Fenced once the transaction no longer holds the table's lock: then another
    applier has applied all of it).

    Idempotent — every applier of the commit writes the same items, and a write whose object
    already shows ``seq`` is not made again — so anyone may roll a committed transaction
    forward, as often as a crash or the work budget makes necessary, even alongside its own
    committer, and each picks up where the others stopped. (A write's object item is its last
    put, and every applier lands its DynamoDB transactions in order: once the object shows
    ``seq``, the write's other puts have landed too.)
    So the writes applied form a prefix of the commit's writes in key order (``applied_prefix``).
    Partition summaries go first, computed from ``current``, the objects as they were before the
    commit. ``current`` None: resuming past that prefix, with the summaries applied already;
    the objects are then read as the writes are made, a chunk at a time.
    OutOfTime (``fence.write_all``) once ``deadline`` has passed: the rest is the next applier's.
    """
    if current is not None:
        apply_partition_changes(fence, table_uid, writes, seq, current)
    write_all(fence, _object_puts(table_uid, writes, seq, current), deadline)


_OBJECTS_PER_READ = 1000  # objects read at a time when resuming


def applied_prefix(table_uid: str, writes: Sequence[PendingWrite], seq: int) -> int:
    """How many of a commit's ``writes`` to one table (in key order) are applied: their objects
    show ``seq``. They form a prefix (``apply_writes``), so bisection finds it with a GetItem a
    step, instead of reading every object to know where a roll-forward stands."""
    low, high = 0, len(writes)  # writes[:low] are applied, writes[high:] are not
    while low < high:
        middle = (low + high) // 2
        state = get_objects(table_uid, [writes[middle].uri]).get(writes[middle].uri)
        if state is not None and state.changed_seq == seq:
            low = middle + 1
        else:
            high = middle
    return low


def _object_puts(table_uid: str, writes: Sequence[PendingWrite], seq: int,
                 current: Optional[dict[str, ObjectState]]) -> Iterator[Write]:
    """The puts of ``apply_writes``, in order, built as they are sent (and with ``current`` None,
    their objects read as they are needed)."""
    states: dict[str, ObjectState] = current if current is not None else {}
    for position, write in enumerate(writes):
        if current is None and position % _OBJECTS_PER_READ == 0:
            states = get_objects(table_uid, [w.uri for w in writes[position:position + _OBJECTS_PER_READ]])
        old = states.get(write.uri)
        if old is not None and old.changed_seq == seq:
            continue  # applied already
        if write.op in ("delete", "replace") and old is not None and old.live:
            added = split_version_key(old.version_key)[1]
            yield _saver(ObjectVersionItem(table_uid, old.version_key, uri=old.uri, etag=old.etag, size=old.size,
                                           values=old.values, added_seq=added, removed_seq=seq))
        if write.op in ("add", "replace"):
            assert write.partition_key is not None  # an object's write (never a table definition's)
            key = version_key(write.partition_key, seq, write.uri)
            yield _saver(ObjectVersionItem(table_uid, key, uri=write.uri, etag=write.etag, size=write.size,
                                           values=write.values, added_seq=seq))
            yield _saver(ObjectItem(table_uid, write.uri, live=1, changed_seq=seq, version_key=key,
                                    etag=write.etag, size=write.size, values=write.values))
        elif old is not None:
            yield _saver(ObjectItem(table_uid, write.uri, live=0, changed_seq=seq, version_key=old.version_key,
                                    etag=old.etag, size=old.size, values=old.values))


def _saver(item) -> Write:
    return lambda tx: tx.save(item)


def versions_in(table_uid: str, low: Optional[str], high: Optional[str],
                after: Optional[str] = None) -> Iterator[Record]:
    """Object versions with range key in [low, high] (after ``after``), in key order."""
    return query_key_range(ObjectVersionItem, table_uid, low, high, after)


def versions_as_of(table_uid: str, snapshot: int, low: Optional[str], high: Optional[str],
                   after: Optional[str] = None) -> Iterator[Record]:
    """Like :func:`versions_in`, but skipping every version added after ``snapshot``: a version
    key is ``partition SEP added_seq SEP uri``, so each partition's versions up to the snapshot
    are one key range. Finding each partition costs a one-item probe; worth it for a few
    partitions with history after the snapshot, not for a scan of many."""
    while True:
        probe = None
        key = ObjectVersionItem.key
        start = after if after is not None and (low is None or after >= low) else low
        condition = (key.between(start, high) if start is not None and high is not None else
                     key >= start if start is not None else key <= high if high is not None else None)
        for item in ObjectVersionItem.query(table_uid, range_key_condition=condition, consistent_read=True,
                                            limit=2, attributes_to_get=["key"]):
            metrics.count_read()
            if item.key != after:
                probe = item.key
                break
        if probe is None:
            return
        partition = split_version_key(probe)[0]
        top = f"{partition}{SEP}{snapshot:0{SEQ_DIGITS}d}\x02"  # every uri at seq <= snapshot
        if top >= probe:
            yield from query_key_range(ObjectVersionItem, table_uid, start, top if high is None or top < high else high,
                                       after)
        low, after = after_partition(partition), None
        if high is not None and low > high:
            return

