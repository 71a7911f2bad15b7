"""Store operations for databases, tables and table versions.

Every multi-item change that must be all-or-nothing goes through one DynamoDB transaction;
conditions on those transactions are how races (two CreateTable, two UpdateTable with the same
VersionId, a CreateTable racing DeleteDatabase) get exactly one winner.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

from pynamodb.exceptions import TransactWriteError
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

from chalicelib import clock, metrics, settings
from chalicelib.errors import ConcurrentModificationException
from chalicelib.store.dynamo import dynamo_json as dj
from chalicelib.store.dynamo.conditions import CONDITION_FAILED, CONFLICT, classify, condition_failed, reason_codes
from chalicelib.store.documents import decode_document, encode_document
from chalicelib.store.dynamo.fence import Fence, transact
from chalicelib.store.dynamo.models import SEP, CleanupJobItem, CommitStateItem, DatabaseItem, TableItem, TableVersionItem
from chalicelib.attempts import Policy, attempts
from chalicelib.store.dynamo.retry import conditional
from chalicelib.store.errors import ConditionFailed, StampConflict, BudgetSpent  # noqa: F401  (callers reach them here too)
from chalicelib.store.records import CleanupJob, Database, Table, TableVersion


@dataclass(frozen=True)
class Stamp:
    """What makes a table write outside any transaction a commit of its own: its DynamoDB
    transaction checks that the catalog's commit counter (item ``counter``, read as
    ``previous``) is still below ``seq`` = ``previous + 1`` — no snapshot or commit point
    landed since — and that the table-metadata commit lock of every database it writes in
    (items ``locks``: one, or two for a rename into another database) is free, so it can never
    land between a transaction's commit point and its apply. It only checks the counter: writes
    of different tables write no common item."""

    counter: str
    previous: int
    seq: int
    locks: tuple[str, ...]


@dataclass(frozen=True)
class AlsoWrite:
    """Items a table write also puts and deletes in its own DynamoDB transaction (its
    SearchTables postings), unconditionally; a few, as a transaction holds 100 actions."""

    puts: Sequence[Model] = ()
    deletes: Sequence[Model] = ()

    def add_to(self, tx: TransactWrite) -> None:
        for item in self.puts:
            tx.save(item)
        for item in self.deletes:
            tx.delete(item)


NOTHING_ELSE = AlsoWrite()


def _add_stamp(tx: TransactWrite, stamp: Optional[Stamp]) -> None:
    """Add ``stamp``'s checks: first in a build, so they are the transaction's first actions
    after a fence's check (PynamoDB sends condition checks first, in the order added; the fence
    counts on that too), which is where ``_stamp_check_failed`` looks for them."""
    if stamp is None:
        return
    # A check, not an update: every snapshot S is taken by moving the counter to S, so a write
    # landing after it finds the counter >= S and needs a stamp > S; one landing before has a
    # stamp <= counter + 1 <= S. Concurrent checks of one item do not conflict.
    counter_condition = CommitStateItem.seq.does_not_exist() | (CommitStateItem.seq < stamp.seq)
    tx.condition_check(CommitStateItem, stamp.counter, condition=counter_condition)
    for lock in stamp.locks:
        tx.condition_check(CommitStateItem, lock, condition=CommitStateItem.transaction_id.does_not_exist())


def _stamp_check_failed(failed: Sequence[int], stamp: Stamp, fenced: bool) -> bool:
    """Whether DynamoDB's cancellation reasons name one of ``stamp``'s checks (the counter, then
    each lock; after the fence's check if ``fenced``, see ``_add_stamp``) among the failed actions."""
    first = 1 if fenced else 0
    return any(first <= index <= first + len(stamp.locks) for index in failed)


def _stamped_write_failed(error: Exception, stamp: Optional[Stamp], fenced: bool = False) -> Exception:
    """The exception a failed (possibly stamped) write stands for."""
    outcome = classify(error)
    kind = outcome.kind
    if stamp is not None and kind == CONFLICT:
        return StampConflict()
    if stamp is not None and kind == CONDITION_FAILED and reason_codes(error):
        # DynamoDB names the failed actions: the stamp's checks, or the write's own condition.
        return StampConflict() if _stamp_check_failed(outcome.failed, stamp, fenced) else ConditionFailed()
    if stamp is not None and kind == CONDITION_FAILED:
        # No reasons to go by: read what the stamp checked.
        counter = _get(CommitStateItem, stamp.counter)
        if int((counter.seq if counter else 0) or 0) >= stamp.seq:
            return StampConflict()
        for name in stamp.locks:
            lock = _get(CommitStateItem, name)
            if lock is not None and lock.transaction_id:
                return StampConflict()
    if kind == CONDITION_FAILED:
        return ConditionFailed()
    if kind == CONFLICT:
        return ConcurrentModificationException("The item is being changed by another request; retry")
    return error


def new_uid() -> str:
    """A fresh identity for a database, table or partition incarnation: ``uuid.uuid4().hex``
    (random, version 4), built without the UUID object, a third of the cost."""
    return _uuid4_hex(bytearray(os.urandom(16)), 0)


def new_uids(count: int) -> list[str]:
    """``count`` fresh identities (see new_uid) from one read of the system's randomness: a
    batch of partitions mints one each, and a read apiece was over half the cost of minting."""
    raw = bytearray(os.urandom(16 * count))
    return [_uuid4_hex(raw, start) for start in range(0, 16 * count, 16)]


def _uuid4_hex(raw: bytearray, start: int) -> str:
    """The 16 random bytes of ``raw`` at ``start`` as a version-4 UUID's hex."""
    raw[start + 6] = (raw[start + 6] & 0x0F) | 0x40  # version 4
    raw[start + 8] = (raw[start + 8] & 0x3F) | 0x80  # RFC 4122 variant
    return raw[start:start + 16].hex()


def _get(model: Any, *key: Any) -> Any:
    """One item by key (strongly consistent), or None; counted as one item read."""
    metrics.count_read()
    try:
        return model.get(*key, consistent_read=True)
    except model.DoesNotExist:
        return None


def get_many(model: Any, keys: Iterable[tuple]) -> Iterator[Any]:
    """Items by full key (BatchGetItem, strongly consistent; PynamoDB sends 100 keys a call),
    missing ones skipped, in no particular order; each distinct key counts as one item read."""
    unique = list(dict.fromkeys(keys))
    metrics.count_read(len(unique))
    if unique:
        yield from model.batch_get(unique, consistent_read=True)


def _counted(items: Iterator[Any]) -> Iterator[Any]:
    """Count each item of a Query as it is read."""
    for item in items:
        metrics.count_read()
        yield item


def _delete_if(item: Any, condition: Any) -> None:
    """Delete an item under a condition; ConditionFailed when it does not hold."""
    if not conditional(lambda: item.delete(condition=condition)):
        raise ConditionFailed()


# -------------------------------------------------------------------- records <-> items
# Both read the item's attribute values directly: what its attribute descriptors return (None
# where the item lacks one), at a tenth of their cost (about 1 µs each).
def as_database(item: DatabaseItem) -> Database:
    """The record of a database item."""
    get: Callable[[str], Any] = item.attribute_values.get
    return Database(get("catalog"), get("name"), get("uid"), get("doc"))


def as_table(item: TableItem) -> Table:
    """The record of a table item."""
    get: Callable[[str], Any] = item.attribute_values.get
    return Table(get("db_uid"), get("name"), get("uid"), get("version"), get("doc"), get("key_types"), get("indexes"),
                 get("index_epoch"), get("backfills"), get("column_epochs"), get("changed_seq"))


def table_item(table: Table) -> TableItem:
    """The item of a table record (to save whole, or to update or delete by its key)."""
    return TableItem(table.db_uid, table.name, uid=table.uid, version=table.version, doc=table.doc,
                     key_types=table.key_types, indexes=table.indexes_json, index_epoch=table.index_epoch,
                     backfills=table.backfills_json, column_epochs=table.column_epochs_json,
                     changed_seq=table.changed_seq)


def _database_item(database: Database) -> DatabaseItem:
    return DatabaseItem(database.catalog, database.name, uid=database.uid, doc=database.doc)


# ---------------------------------------------------------------------------------- databases
def get_database(catalog: str, name: str) -> Database | None:
    """The database, or None."""
    item = _get(DatabaseItem, catalog, name)
    return None if item is None else as_database(item)


def create_database(catalog: str, name: str, doc: dict[str, Any], uid: str, also: AlsoWrite = NOTHING_ELSE) -> None:
    """Insert a database with a fresh ``uid`` (and ``also``'s items, in one DynamoDB
    transaction: its default grants); ConditionFailed if the name is taken."""
    item = DatabaseItem(catalog, name, uid=uid, doc=encode_document(doc, "database"))
    if not also.puts and not also.deletes:
        if not conditional(lambda: item.save(condition=DatabaseItem.name.does_not_exist())):
            raise ConditionFailed()
        return

    def build(tx: TransactWrite) -> None:
        tx.save(item, condition=DatabaseItem.name.does_not_exist())
        also.add_to(tx)
    try:
        transact(None, build)
    except TransactWriteError as error:
        raise _stamped_write_failed(error, None) from None


def replace_database(database: Database, doc: dict[str, Any], unchanged: bool = False) -> None:
    """Overwrite a database's definition, provided it is still the same incarnation (and, with
    ``unchanged``, still holds the definition ``item`` was read with: a compare-and-set that
    lets a partial update retry instead of losing a concurrent one)."""
    condition = DatabaseItem.uid == database.uid
    if unchanged:
        condition &= DatabaseItem.doc == database.doc
    item = DatabaseItem(database.catalog, database.name, uid=database.uid, doc=encode_document(doc, "database"))
    if not conditional(lambda: item.save(condition=condition)):
        raise ConditionFailed()


def delete_database_item(database: Database, drop_files: bool = False) -> None:
    """Unlink a database and record the cleanup of its contents, in one DynamoDB transaction:
    from here on nothing below it is reachable, and a cleaner deletes it (``CleanupJobItem``;
    ``drop_files``: its tables' managed directories too). ConditionFailed unless it is still the
    incarnation ``database``."""
    item = _database_item(database)

    def build(tx: TransactWrite) -> None:
        tx.delete(item, condition=DatabaseItem.uid == item.uid)
        tx.save(cleanup_item(cleanup_job("database", item.uid, catalog=item.catalog, database=item.name,
                                         doc=item.doc, drop_files=drop_files or None)))
    try:
        transact(None, build)
    except TransactWriteError as error:
        raise _stamped_write_failed(error, None) from None


def query_databases(catalog: str, after: str | None, limit: int, descending: bool = False) -> Iterator[Database]:
    """Databases of a catalog in name order (``descending``: reversed), starting after ``after``."""
    start = {"catalog": {"S": catalog}, "name": {"S": after}} if after else None
    return map(as_database, _counted(DatabaseItem.query(catalog, last_evaluated_key=start, consistent_read=True,
                                                        page_size=limit, scan_index_forward=not descending)))


# ------------------------------------------------------------------------------------- tables
def get_table(db_uid: str, name: str) -> Table | None:
    """The current version of a table, or None."""
    item = _get(TableItem, db_uid, name)
    return None if item is None else as_table(item)


def get_tables(keys: Iterable[tuple[str, str]]) -> Iterator[Table]:
    """Tables by (database uid, name), in one BatchGetItem per 100 (see ``get_many``), missing
    ones skipped, in no particular order."""
    return map(as_table, get_many(TableItem, keys))


@dataclass(frozen=True)
class ExtraKey:
    """One more item to read along with a database and table (``get_path``): its table and key."""

    table_name: str
    key: dict[str, Any]  # wire form, e.g. {"table_uid": {"S": ...}, "key": {"S": ...}}


def get_path(catalog: str, database: str, db_uid: str, table: str,
             extra: Sequence[ExtraKey] = ()) -> tuple[Database | None, Table | None, list[dict[str, Any] | None]]:
    """The database, the table under ``db_uid`` and the ``extra`` items (wire form,
    None where missing), in ONE BatchGetItem instead of a GetItem each. The caller knows
    ``db_uid`` from an earlier read and must check that the database item still has it (else
    the table item read belongs to an earlier incarnation of the database)."""
    return path_from(get_keys(path_keys(catalog, database, db_uid, table, extra)))


def get_database_with(catalog: str, database: str,
                      extra: Sequence[ExtraKey]) -> tuple[Database | None, list[dict[str, Any] | None]]:
    """The database and the ``extra`` items (wire form, None where missing) in ONE
    BatchGetItem."""
    db_raw, *extras = get_keys([_database_key(catalog, database), *extra])
    return None if db_raw is None else as_database(DatabaseItem.from_raw_data(db_raw)), extras


def _database_key(catalog: str, database: str) -> ExtraKey:
    return ExtraKey(DatabaseItem.Meta.table_name, {"catalog": dj.s(catalog), "name": dj.s(database)})


def get_keys(keys: Sequence[ExtraKey]) -> list[dict[str, Any] | None]:
    """The items (wire form, None where missing) of ``keys``, in order, in one BatchGetItem."""
    by_table: dict[str, list[dict[str, Any]]] = {}
    for key in keys:
        by_table.setdefault(key.table_name, []).append(key.key)
    metrics.count_read(len(keys))
    return picked(dj.batch_get(by_table), keys)


def picked(found: dict[str, list[dict[str, Any]]], keys: Sequence[ExtraKey]) -> list[dict[str, Any] | None]:
    """The items of ``keys`` (None where missing), in order, among a BatchGetItem's ``found``."""
    def pick(key: ExtraKey) -> dict[str, Any] | None:
        return next((item for item in found.get(key.table_name, ())
                     if all(item.get(k) == v for k, v in key.key.items())), None)
    return [pick(key) for key in keys]


def path_keys(catalog: str, database: str, db_uid: str, table: str,
              extra: Sequence[ExtraKey] = ()) -> list[ExtraKey]:
    """The keys ``get_path`` reads: the database, the table under ``db_uid``, then ``extra``."""
    return [_database_key(catalog, database),
            ExtraKey(TableItem.Meta.table_name, {"db_uid": dj.s(db_uid), "name": dj.s(table)}), *extra]


def path_from(raws: Sequence[dict[str, Any] | None]
              ) -> tuple[Database | None, Table | None, list[dict[str, Any] | None]]:
    """What ``get_path`` answers, from the items of its ``path_keys`` read elsewhere."""
    db_raw, table_raw, *extras = raws
    return (None if db_raw is None else as_database(DatabaseItem.from_raw_data(db_raw)),
            None if table_raw is None else as_table(TableItem.from_raw_data(table_raw)), list(extras))


def key_types_of(doc: dict[str, Any]) -> list[str]:
    """Partition-key types a new table's partition sort keys are encoded with."""
    return [key.get("Type", "string") for key in doc.get("PartitionKeys", [])]


def _new_table_item(db_uid: str, name: str, doc: dict[str, Any], indexes_json: str | None,
                   uid: str | None = None, changed_seq: int | None = None) -> TableItem:
    """A table item at version 0 (not stored)."""
    return TableItem(db_uid, name, uid=uid or new_uid(), version=0, doc=encode_document(doc, "table"),
                     key_types=key_types_of(doc), indexes=indexes_json, index_epoch=0,
                     changed_seq=changed_seq)


def create_table(database: Database, name: str, doc: dict[str, Any],
                 indexes_json: str | None = None, stamp: Optional[Stamp] = None,
                 uid: str | None = None, also: AlsoWrite = NOTHING_ELSE) -> Table:
    """Insert a table at version 0 (with its partition index definitions), atomically with a
    check that its database still exists (and with ``stamp``, see Stamp; ``also``: more items to
    write in that transaction). ``uid``: the identity to give it (a fresh one by default)."""
    item = _new_table_item(database.uid, name, doc, indexes_json, uid=uid, changed_seq=stamp.seq if stamp else None)

    def build(tx: TransactWrite) -> None:
        _add_stamp(tx, stamp)
        tx.condition_check(DatabaseItem, database.catalog, database.name,
                           condition=DatabaseItem.uid == database.uid)
        tx.save(item, condition=TableItem.name.does_not_exist())
        # Born with an empty, complete partition digest: every partition it will ever have is
        # then written with its digest delta, and unindexed listings never need a rebuild.
        tx.save(empty_digest(item.uid))
        also.add_to(tx)
    # Imported at first use: the digest codec (domain.partition_digest) costs ~20 ms to import.
    from chalicelib.store.digests import empty_base as empty_digest
    try:
        transact(None, build)
    except TransactWriteError as error:
        raise _stamped_write_failed(error, stamp) from None
    return as_table(item)


def update_table(current: Table, new_doc: dict[str, Any], archive: bool,
                 stamp: Optional[Stamp] = None, seq: Optional[int] = None,
                 fence: Optional[Fence] = None, also: AlsoWrite = NOTHING_ELSE) -> Table:
    """Replace a table with version ``current.version + 1``, archiving the old one if asked.

    The write is conditional on the stored version still being ``current.version``: of two
    racing updates from the same version exactly one wins, the other gets ConditionFailed.
    Only the definition and version change: partition indexes and key types stay as stored.
    The new version is stamped with ``stamp.seq`` (or ``seq``, a transaction's commit, whose
    apply passes its ``fence``: Fenced if the commit no longer holds its lock). ``also``: more
    items to write in the same DynamoDB transaction.
    """
    old_version = current.version
    encoded = encode_document(new_doc, "table")
    changed = stamp.seq if stamp else seq

    def build(tx: TransactWrite) -> None:
        _add_stamp(tx, stamp)
        tx.update(table_item(current), actions=[TableItem.doc.set(encoded), TableItem.version.set(old_version + 1),
                                    TableItem.changed_seq.set(changed) if changed is not None
                                    else TableItem.changed_seq.remove()],
                  condition=(TableItem.version == old_version) & (TableItem.uid == current.uid))
        if archive:
            tx.save(TableVersionItem(current.uid, old_version, doc=current.doc,
                                     changed_seq=current.changed_seq))
        also.add_to(tx)
    try:
        transact(fence, build)
    except TransactWriteError as error:
        raise _stamped_write_failed(error, stamp, fenced=fence is not None) from None
    return replace(current, doc=encoded, version=old_version + 1, changed_seq=changed)


def rename_table(current: Table, target: Database, name: str, new_doc: dict[str, Any],
                 stamp: Optional[Stamp] = None, also: AlsoWrite = NOTHING_ELSE) -> Table:
    """Move a table to ``name`` in database ``target`` (maybe its own) as version + 1, archiving
    the old one: one transaction deletes the item under the old name (conditional on the same
    incarnation and version) and puts it under the new one (conditional on the name being free
    and ``target`` still existing). The uid stays, and with it everything keyed by it
    (partitions, indexes, statistics, archived versions). ConditionFailed if any condition
    fails; the caller tells which."""
    old_version = current.version
    moved = TableItem(target.uid, name, uid=current.uid, version=old_version + 1,
                      doc=encode_document(new_doc, "table"), key_types=current.key_types,
                      indexes=current.indexes_json, index_epoch=current.index_epoch,
                      backfills=current.backfills_json, column_epochs=current.column_epochs_json,
                      changed_seq=stamp.seq if stamp else None)

    def build(tx: TransactWrite) -> None:
        _add_stamp(tx, stamp)
        tx.delete(table_item(current), condition=(TableItem.uid == current.uid) & (TableItem.version == old_version))
        tx.condition_check(DatabaseItem, target.catalog, target.name, condition=DatabaseItem.uid == target.uid)
        tx.save(moved, condition=TableItem.name.does_not_exist())
        tx.save(TableVersionItem(current.uid, old_version, doc=current.doc, changed_seq=current.changed_seq))
        also.add_to(tx)  # its grants, moved with it
    try:
        transact(None, build)
    except TransactWriteError as error:
        raise _stamped_write_failed(error, stamp) from None
    return as_table(moved)


def put_committed_table(table: Table, fence: Fence, also: AlsoWrite = NOTHING_ELSE) -> bool:
    """Store a table a transaction created, under its apply's ``fence`` (idempotent: True if it
    is there now, also when an earlier roll-forward stored it; False if another incarnation
    holds the name; Fenced if the commit no longer holds its lock), with ``also``'s items (its
    default grants) in the same DynamoDB transaction."""
    item = table_item(table)

    def build(tx: TransactWrite) -> None:
        tx.save(item, condition=condition)
        also.add_to(tx)
    try:
        condition = TableItem.name.does_not_exist() | (TableItem.uid == item.uid)
        transact(fence, build)
        return True
    except TransactWriteError as error:
        if condition_failed(error):
            return False
        raise


def set_last_analyzed(table: Table, when: float, tries: int = 5) -> None:
    """Raise the table's LastAnalyzedTime to ``when`` without making a new table version."""
    item = table_item(table)
    for _ in attempts(Policy(attempts=tries)):
        doc = load(item)
        if (doc.get("LastAnalyzedTime") or 0) >= when:
            return
        doc["LastAnalyzedTime"] = when
        if conditional(lambda: item.update(actions=[TableItem.doc.set(encode_document(doc, "table"))],
                                           condition=(TableItem.version == item.version) & (TableItem.uid == item.uid))):
            return
        fresh = _get(TableItem, item.db_uid, item.name)
        if fresh is None or fresh.uid != item.uid:
            return
        item = fresh


def bump_column_epochs(table: Table, columns: list[str], fence: Optional[Fence] = None) -> None:
    """Mark columns as dropped: statistics written for them before are no longer shown. With
    ``fence`` (a commit's apply) only while the commit holds its lock (else Fenced)."""
    item = table_item(table)
    for _ in attempts(Policy(attempts=5)):
        epochs = json.loads(item.column_epochs or "{}")
        for column in columns:
            epochs[column.lower()] = epochs.get(column.lower(), 0) + 1
        condition = ((TableItem.uid == item.uid)
                     & (TableItem.column_epochs == item.column_epochs if item.column_epochs
                        else TableItem.column_epochs.does_not_exist()))
        if fence is None:
            if conditional(lambda: item.update(actions=[TableItem.column_epochs.set(json.dumps(epochs))],
                                               condition=condition)):
                return
        else:
            try:
                transact(fence, lambda tx: tx.update(item, actions=[TableItem.column_epochs.set(json.dumps(epochs))],
                                                     condition=condition))
                return
            except TransactWriteError as error:
                if not condition_failed(error):
                    raise
        fresh = _get(TableItem, item.db_uid, item.name)
        if fresh is None or fresh.uid != item.uid:
            return
        item = fresh


def delete_table_item(table: Table, stamp: Optional[Stamp] = None, fence: Optional[Fence] = None,
                      also: AlsoWrite = NOTHING_ELSE) -> None:
    """Unlink a table (only the incarnation we read; with ``stamp``, see Stamp; with ``fence``,
    a commit's apply: Fenced if the commit no longer holds its lock) and record the cleanup of
    what is below it, in one DynamoDB transaction (see ``CleanupJobItem``) with ``also``'s items."""
    item = table_item(table)

    def build(tx: TransactWrite) -> None:
        _add_stamp(tx, stamp)
        tx.delete(item, condition=TableItem.uid == item.uid)
        tx.save(cleanup_item(cleanup_job("table", item.uid, db_uid=item.db_uid, name=item.name,
                                         indexes_json=item.indexes)))
        also.add_to(tx)
    try:
        transact(fence, build)
    except TransactWriteError as error:
        raise _stamped_write_failed(error, stamp, fenced=fence is not None) from None


def query_tables(db_uid: str, after: str | None, page_size: int, descending: bool = False) -> Iterator[Table]:
    """Tables of a database in name order (``descending``: reversed), starting after ``after``."""
    start = {"db_uid": {"S": db_uid}, "name": {"S": after}} if after else None
    return map(as_table, _counted(TableItem.query(db_uid, last_evaluated_key=start, consistent_read=True,
                                                  page_size=page_size, scan_index_forward=not descending)))


def tables_from(db_uid: str, name: str | None, first: int, page_size: int,
                descending: bool = False) -> Iterator[Table]:
    """Tables of a database in name order (``descending``: reversed) from ``name`` on, that
    name included (None: from the first). The first Query reads ``first`` items, each next one
    twice as many, up to ``page_size``: a merge across many databases reads each one's head
    cheaply, and about as far as it advances through each one."""
    if name is None:
        condition = None
    else:
        condition = TableItem.name <= name if descending else TableItem.name >= name
    start: dict[str, Any] | None = None
    size = first
    while True:
        page = TableItem.query(db_uid, range_key_condition=condition, consistent_read=True, limit=size,
                               page_size=size, last_evaluated_key=start, scan_index_forward=not descending)
        items = list(page)  # one Query: counted as DynamoDB read it, whether the merge takes it all or not
        for _ in items:
            metrics.count_read()
        yield from map(as_table, items)
        start = page.last_evaluated_key
        if len(items) < size or not start:
            return
        size = min(page_size, size * 2)


# ----------------------------------------------------------------------------- table versions
def _as_version(item: TableVersionItem) -> TableVersion:
    get: Callable[[str], Any] = item.attribute_values.get
    return TableVersion(get("table_uid"), get("version"), get("doc"), get("changed_seq"))


def get_archived_version(table_uid: str, version: int) -> TableVersion | None:
    """An archived version, or None."""
    item = _get(TableVersionItem, table_uid, version)
    return None if item is None else _as_version(item)


def query_archived_versions(table_uid: str, below: int | None, page_size: int) -> Iterator[TableVersion]:
    """Archived versions, newest first, starting below version ``below``."""
    condition = TableVersionItem.version < below if below is not None else None
    return map(_as_version, _counted(TableVersionItem.query(table_uid, range_key_condition=condition,
                                                            scan_index_forward=False, consistent_read=True,
                                                            page_size=page_size)))


def delete_archived_version(table_uid: str, version: int) -> bool:
    """Delete one archived version; False if it did not exist."""
    try:
        _delete_if(TableVersionItem(table_uid, version), TableVersionItem.version.exists())
        return True
    except ConditionFailed:
        return False


# ------------------------------------------------------------------------------------ cascade
# Deleting a database or table only unlinks it and records a cleanup job (one transaction, its
# cost independent of the contents); a cleaner (service.cleanup) deletes the contents later, a
# bounded chunk at a time, through store.purge (the list of what a purge deletes) and the budget
# below. Every purge step deletes what is still there, so a chunk cut short by its budget or a
# crash is simply run again.
CLEANUP_QUEUE = "purge"
# A new job is free for any cleaner at once (``owner`` unset), but requests, which only take
# jobs whose lease ran out (service.cleanup.help_with_expired), leave it this long to the
# dedicated cleaners (the local server's thread, the scheduled function).
CLEANUP_GRACE_SECONDS = settings.current().cleanup_grace_seconds

def cleanup_job(kind: str, uid: str, **attributes: Any) -> CleanupJob:
    """A cleanup job for a just-unlinked table or database, or other background work of its
    ``kind`` (not stored; ``attributes``: the CleanupJob members its kind needs), see
    store.cleanup."""
    created = clock.now()
    return CleanupJob(CLEANUP_QUEUE, f"{int(created * 1000):015d}{SEP}{kind}{SEP}{uid}", kind, uid, created,
                      created + CLEANUP_GRACE_SECONDS, **attributes)


_JOB_MEMBERS = ("owner", "catalog", "database", "db_uid", "name", "doc", "drop_files", "path", "digest", "table_uid",
                "snapshots")


def cleanup_item(job: CleanupJob) -> CleanupJobItem:
    """The item of a cleanup job record (to save, or to update or delete by its key)."""
    return CleanupJobItem(job.queue, job.job, kind=job.kind, uid=job.uid, created=job.created,
                          lease_until=job.lease_until, indexes=job.indexes_json,
                          **{name: getattr(job, name) for name in _JOB_MEMBERS})


def as_cleanup_job(item: CleanupJobItem) -> CleanupJob:
    """The record of a cleanup job item."""
    get: Callable[[str], Any] = item.attribute_values.get
    return CleanupJob(get("queue"), get("job"), get("kind"), get("uid"), get("created"), get("lease_until"),
                      indexes_json=get("indexes"), **{name: get(name) for name in _JOB_MEMBERS})


@dataclass
class Budget:
    """How much one cleanup chunk may delete: items, and a deadline (``clock.monotonic``)."""

    items: int
    deadline: float

    def spend(self, count: int = 1) -> bool:
        """Count ``count`` deletions; False once the budget is used up."""
        self.items -= count
        return self.items > 0 and clock.monotonic() < self.deadline


_budget: ContextVar[Optional[Budget]] = ContextVar("purge_budget", default=None)


@contextmanager
def purging(budget: Budget) -> Iterator[Budget]:
    """Bound every ``delete_all`` / ``delete_items`` inside the block by ``budget`` (they raise
    BudgetSpent, after flushing what they deleted, once it is used up)."""
    token = _budget.set(budget)
    try:
        yield budget
    finally:
        _budget.reset(token)


def purge_deadline() -> Optional[float]:
    """The current purge budget's deadline (``clock.monotonic``), None outside ``purging``."""
    budget = _budget.get()
    return budget.deadline if budget is not None else None


def spend(count: int = 1) -> None:
    """Count deletions made outside ``delete_items`` against the current budget (if any)."""
    budget = _budget.get()
    if budget is not None and not budget.spend(count):
        raise BudgetSpent()


def delete_items(model: type[Model], items: Iterable[Any]) -> None:
    """Delete these items of ``model`` (batched, 25 a call), within the current budget: when it
    runs out, what was deleted so far is flushed and BudgetSpent raised."""
    budget = _budget.get()
    spent = False
    with model.batch_write() as batch:
        for item in items:
            batch.delete(item)
            if budget is not None and not budget.spend():
                spent = True
                break
    if spent:
        raise BudgetSpent()


def delete_all(model: type[Model], hash_key: str, range_attr: str) -> None:
    """Delete every item of ``model`` under one hash key (keys only; see ``delete_items``)."""
    hash_attr = next(name for name, attr in model.get_attributes().items() if attr.is_hash_key)
    budget = _budget.get()
    # Small pages within a budget: a cleaner thread then parses 100 keys at a time between
    # reads, never a 1 MB page at once, and the requests it runs beside keep their pace.
    page_size = max(25, min(budget.items, 100)) if budget is not None else None
    delete_items(model, model.query(hash_key, attributes_to_get=[hash_attr, range_attr], page_size=page_size))


def tables_of_unlinked_database(db_uid: str, page_size: int) -> Iterator[Table]:
    """The tables still stored under an unlinked database (no one can add any: creates and
    renames check the database item)."""
    return map(as_table, TableItem.query(db_uid, page_size=page_size))


def delete_unlinked_table_item(table: Table) -> None:
    """Delete the item of a table of an unlinked database, once its contents are gone."""
    TableItem(table.db_uid, table.name).delete()
    spend()


def load(item: Any) -> dict[str, Any]:
    """The API object stored in a record (a database's, a table's, an archived version's)."""
    return decode_document(item.doc)
