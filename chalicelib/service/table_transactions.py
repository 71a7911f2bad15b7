"""Transactional table definitions: table writes made in a transaction, and autocommit.

Table definitions are snapshot-isolated like governed-table objects (docs/design.md,
"Transactional table definitions"):

- CreateTable / UpdateTable / DeleteTable / BatchDeleteTable with a TransactionId are validated
  against the transaction's view at call time and recorded as pending changes
  (``store.pending_tables``) by a ``TableWriter``; CommitTransaction checks and applies them with
  the transaction's object writes, at the same commit point, under the same locks and
  roll-forward (``service.table_commit``). Cancel and idle expiry drop them with the other
  pending writes.
- Without a TransactionId a table write is a commit of its own (``autocommit``): it stamps the
  table with the catalog's commit counter + 1, on condition that the counter has not moved
  (it does not move it: writes of different tables never contend), so transactions can tell
  what happened after their snapshot.

Every Glue request carrying a TransactionId has it checked first, by the wire
(``service.transactions.check_transaction_use``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Optional, TypeVar

from chalicelib import clock
from chalicelib.context import RequestContext
from chalicelib.errors import ConcurrentModificationException, TransactionCommitInProgressException, database_not_found
from chalicelib.service.lookups import fold
from chalicelib.service.snapshots import database_snapshot, same_catalog
from chalicelib.service.paging import work_deadline
from chalicelib.service.transactions import LOCK_WAIT, clear_lock, load_transaction, lock_wait, require_active
from chalicelib.store import catalog
from chalicelib.store import transactions as tx_store
from chalicelib.store.documents import encode_document
from chalicelib.store.records import Database, PendingWrite
from chalicelib.store.pending_tables import TableChange, change_of, meta_scope, pending_table_write
from chalicelib.attempts import attempts

T = TypeVar("T")


# ---------------------------------------------------------------------------------- writes
class TableWriter:
    """One table name as a writing transaction sees it, and the recording of its change."""

    def __init__(self, ctx: RequestContext, transaction_id: str, database: Database, name: str) -> None:
        self.ctx, self.database, self.name = ctx, database, name
        self.transaction = load_transaction(ctx, transaction_id)
        require_active(self.transaction, write=True)
        same_catalog(self.transaction, database)
        self.view = database_snapshot(ctx, transaction_id, database, name, self.transaction)
        self.mine = self.view.own.get(name)
        self.seen = self.view.get(name)

    def require_fresh(self) -> None:
        """ConcurrentModificationException if the table changed after the snapshot: the
        transaction could never commit a change of it (first committer wins)."""
        if self.mine is not None or self.name in self.view.committing:
            return  # the base is fixed already / the commit check decides
        current = self.view.stored(self.name)
        if self.seen is None and current is not None:
            raise ConcurrentModificationException(
                f"Table {self.name} was created by another writer after transaction "
                f"{self.transaction.transaction_id} started")
        if self.seen is not None and (current is None or current.uid != self.seen[0].uid
                                      or current.version != self.seen[2]):
            raise ConcurrentModificationException(
                f"Table {self.name} was changed by another writer after transaction "
                f"{self.transaction.transaction_id} started")

    def _base(self) -> tuple[Optional[str], Optional[int]]:
        if self.mine is not None:
            change = change_of(self.mine)
            return change.base_uid, change.base_version
        if self.seen is None:
            return None, None
        return self.seen[0].uid, self.seen[2]

    def create(self, doc: dict[str, Any], indexes: Optional[str]) -> None:
        """Record the creation of the (unseen) table at version 0."""
        base_uid, base_version = self._base()
        self._record(TableChange(self.database.name, base_uid, base_version, uid=catalog.new_uid(), version=0,
                                 indexes=indexes, key_types=catalog.key_types_of(doc)), doc)

    def update(self, doc: dict[str, Any], archive: bool, dropped: set[str]) -> None:
        """Record a new definition of the seen table. However many updates a transaction
        makes, its commit adds one version (the last definition); a table it created stays
        at version 0."""
        assert self.seen is not None  # callers update only a table they see
        table = self.seen[0]
        base_uid, base_version = self._base()
        earlier = change_of(self.mine).dropped if self.mine is not None else []
        if table.uid == base_uid:
            assert base_version is not None  # a base table has a version
            version = base_version + 1
        else:
            version = table.version
        self._record(TableChange(self.database.name, base_uid, base_version, uid=table.uid, version=version,
                                 archive=archive, dropped=sorted(set(earlier) | dropped),
                                 indexes=table.indexes_json, key_types=list(table.key_types or [])), doc)

    def delete(self) -> None:
        """Record the deletion of the seen table (of one created here: forget it)."""
        base_uid, base_version = self._base()
        if base_uid is None:
            assert self.mine is not None  # no base: the table was created by this transaction
            self._save([], [self.mine])
        else:
            self._record(TableChange(self.database.name, base_uid, base_version, uid=None), None)

    def _record(self, change: TableChange, doc: Optional[dict[str, Any]]) -> None:
        encoded = encode_document(doc, "table") if doc is not None else None
        self._save([pending_table_write(self.transaction.transaction_id, self.database.uid, self.name, change, encoded)], [])

    def _save(self, puts: list[PendingWrite], removed: list[PendingWrite]) -> None:
        if not tx_store.save_pending(self.transaction, clock.now(), meta_scope(self.database.uid), puts, removed):
            require_active(load_transaction(self.ctx, self.transaction.transaction_id), write=True)
            raise TransactionCommitInProgressException("Transaction changed while writing; retry")


def require_database_and_counter(catalog_key: str, name: str) -> tuple[Database, int]:
    """The database a table write goes to and the commit counter its ``autocommit`` starts
    from, in one read instead of two (EntityNotFoundException as ``require_database``)."""
    item, (counter,) = catalog.get_database_with(catalog_key, fold(name), [tx_store.counter_key(catalog_key)])
    if item is None:
        raise database_not_found(fold(name))
    return item, tx_store.counter_value(counter)


_RACE_SECONDS = 1.0


def autocommit(database: Database, write: Callable[[catalog.Stamp], T],
               target: Optional[Database] = None, counter: Optional[int] = None) -> T:
    """Run a table write made without a TransactionId as a commit of its own: ``write`` gets
    the Stamp to add to its DynamoDB transaction (counter + 1 while the counter stays below it,
    metadata locks free: the database's, and ``target``'s for a rename into another database).
    A snapshot or commit point moving the counter meanwhile means a retry with a fresh stamp; a
    transaction committing table changes to either database is waited for (or, crashed, cleared).
    ``counter``: the commit counter as read with the database, for the first try."""
    # One lock, or two for a rename into another database (a rename within it names it twice).
    scopes = list(dict.fromkeys(meta_scope(d.uid) for d in (database, target) if d is not None))
    # Waits for a committer at most the work budget; a second at least, for races with the
    # counter (each retried at once-ish), which a budget of 0 would otherwise turn into errors.
    deadline = max(work_deadline(), clock.monotonic() + _RACE_SECONDS)
    for number in attempts(lock_wait(deadline, replace(LOCK_WAIT, base_delay=0.002, max_delay=0.1))):
        previous = counter if number == 0 and counter is not None else tx_store.last_commit_seq(database.catalog)
        # The first try does not read the locks: the write's own checks refuse a held one (a
        # StampConflict), and only then are they read, and a crashed holder's lock cleared.
        # Locks are seldom held, so most writes save a read (a round trip, ~2 ms of DynamoDB
        # Local's CPU, a third of a table write's reads).
        if number == 0 or all(tx_store.get_lock(scope) is None or clear_lock(scope, database.catalog, deadline)
                              for scope in scopes):
            stamp = catalog.Stamp(tx_store.seq_name(database.catalog), previous, previous + 1,
                                  tuple(tx_store.lock_name(scope) for scope in scopes))
            try:
                return write(stamp)
            except catalog.StampConflict:
                pass
    raise ConcurrentModificationException("Tables of this database are being committed; retry")
