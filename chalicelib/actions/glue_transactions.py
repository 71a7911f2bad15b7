"""TransactionId / QueryAsOfTime on Glue actions, and transactional table definitions.

Every Glue action whose request carries a TransactionId has it checked first: it must be one of
the caller's transactions and still usable (ACTIVE; READ_AND_WRITE for writes), with the same
exceptions Lake Formation uses. TransactionId and QueryAsOfTime exclude each other.

Table definitions are snapshot-isolated like governed-table objects (docs/design.md,
"Transactional table definitions"):

- CreateTable / UpdateTable / DeleteTable / BatchDeleteTable with a TransactionId are validated
  against the transaction's view at call time and recorded as pending changes
  (``store.pending_tables``); CommitTransaction checks and applies them with the transaction's
  object writes, at the same commit point, under the same locks and roll-forward
  (``actions.table_commit``). Cancel and idle expiry drop them with the other pending writes.
- Without a TransactionId a table write is a commit of its own (``autocommit``): it advances the
  catalog's commit counter and stamps the table with that sequence number, so transactions can
  tell what happened after their snapshot.
- Reads go through a ``DatabaseSnapshot``: with a TransactionId the committed tables as of the
  transaction's snapshot (older versions come from the archive) under its own pending changes;
  without, the latest tables under the changes of a commit that is past its commit point but
  not applied yet. GetTable / GetTables with QueryAsOfTime read the table version that was
  current then (``table_as_of``), as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, Optional, TypeVar

from chalicelib import clock
from chalicelib.context import RequestContext
from chalicelib.errors import (ConcurrentModificationException, EntityNotFoundException, InvalidInputException,
                               TransactionCommitInProgressException)
from chalicelib.store import catalog
from chalicelib.store import transactions as tx_store
from chalicelib.store.documents import encode_document
from chalicelib.store.models import DatabaseItem, PendingWriteItem, TableItem, TransactionItem
from chalicelib.store.retry import attempts
from chalicelib.store.pending_tables import (TableChange, as_table_item, change_of, get_pending_table, meta_scope,
                                             pending_item, pending_tables)

_WRITE_PREFIXES = ("Create", "Update", "Delete", "BatchCreate", "BatchUpdate", "BatchDelete")
T = TypeVar("T")
# A table as a reader sees it: the item (uid, key types, indexes), the document, the version.
Seen = tuple[TableItem, dict[str, Any], int]


def checking_transaction(operation: str, handler: Callable) -> Callable:
    """Wrap a Glue action so a TransactionId in its request is validated before it runs."""
    write = operation.startswith(_WRITE_PREFIXES)

    def run(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
        transaction_id = params.get("TransactionId")
        if transaction_id and params.get("QueryAsOfTime") is not None:
            raise InvalidInputException("TransactionId and QueryAsOfTime cannot both be specified")
        if transaction_id:
            from chalicelib.actions.transactions import load_transaction, require_active
            require_active(load_transaction(ctx, transaction_id), write=write)
        return handler(ctx, params)

    run.__doc__, run.__name__ = handler.__doc__, handler.__name__
    return run


# ------------------------------------------------------------------------------ time travel
def table_as_of(item: TableItem, when: Optional[float]) -> Optional[tuple[dict[str, Any], int]]:
    """(Table document, version) current at ``when`` (None: now): the newest version whose
    UpdateTime is not after it; None if the table did not exist yet (or that version was
    dropped with SkipArchive / DeleteTableVersion)."""
    doc = catalog.load(item)
    if when is None or doc.get("UpdateTime", 0) <= when:
        return doc, item.version
    for archived in catalog.query_archived_versions(item.uid, item.version, 100):
        old = catalog.load(archived)
        if old.get("UpdateTime", 0) <= when:
            return old, archived.version
    return None


def require_table_as_of(item: TableItem, when: Optional[float]) -> tuple[dict[str, Any], int]:
    """Like table_as_of, EntityNotFoundException when there is no such version."""
    found = table_as_of(item, when)
    if found is None:
        raise EntityNotFoundException(f"Table {item.name} did not exist at the requested QueryAsOfTime.")
    return found


def table_at_seq(item: TableItem, snapshot: int) -> Optional[tuple[dict[str, Any], int]]:
    """(document, version) of the table at commit ``snapshot``: the newest version stamped at or
    before it. None if the table was created after it, or the version it had then is no longer
    archived (SkipArchive, DeleteTableVersion): a gap in the version numbers says so."""
    if (item.changed_seq or 0) <= snapshot:
        return catalog.load(item), item.version
    expected = item.version - 1
    for archived in catalog.query_archived_versions(item.uid, item.version, 100):
        if archived.version != expected:
            return None
        if (archived.changed_seq or 0) <= snapshot:
            return catalog.load(archived), archived.version
        expected -= 1
    return None


# ------------------------------------------------------------------------------------ views
@dataclass
class DatabaseSnapshot:
    """The tables of one database as one reader sees them: committed tables as of ``snapshot``
    (None: the latest) under ``overlay`` (name -> the table, None when deleted), which holds the
    changes of a commit not applied yet and then the reader's own pending changes."""

    database: DatabaseItem
    snapshot: Optional[int]
    overlay: dict[str, Optional[TableItem]] = field(default_factory=dict)
    committing: set[str] = field(default_factory=set)  # names in the unapplied commit's overlay
    own: dict[str, PendingWriteItem] = field(default_factory=dict)
    transaction: Optional[TransactionItem] = None
    _items: dict[str, Optional[TableItem]] = field(default_factory=dict)

    def stored(self, name: str) -> Optional[TableItem]:
        """The table item as stored now (read once)."""
        if name not in self._items:
            self._items[name] = catalog.get_table(self.database.uid, name)
        return self._items[name]

    def get(self, name: str) -> Optional[Seen]:
        """The table this reader sees under ``name``, or None."""
        if name in self.overlay:
            table = self.overlay[name]
            return None if table is None else (table, catalog.load(table), int(table.version))
        return self._resolve(self.stored(name))

    def _resolve(self, item: Optional[TableItem]) -> Optional[Seen]:
        if item is None:
            return None
        if self.snapshot is None:
            return item, catalog.load(item), int(item.version)
        found = table_at_seq(item, self.snapshot)
        return None if found is None else (item, *found)

    def listing(self, after: Optional[str], page_size: int) -> Iterator[tuple[str, Seen]]:
        """(name, table) of every table seen, in name order, after ``after``."""
        extra = sorted(n for n in self.overlay if after is None or n > after)
        for item in catalog.query_tables(self.database.uid, after, page_size):
            while extra and extra[0] < item.name:
                yield from self._overlaid(extra.pop(0))
            if extra and extra[0] == item.name:
                yield from self._overlaid(extra.pop(0))
                continue
            found = self._resolve(item)
            if found is not None:
                yield item.name, found
        for name in extra:
            yield from self._overlaid(name)

    def _overlaid(self, name: str) -> Iterator[tuple[str, Seen]]:
        found = self.get(name)
        if found is not None:
            yield name, found


def _same_catalog(transaction: TransactionItem, database: DatabaseItem) -> None:
    # Snapshots are commit numbers of the transaction's own catalog: they order nothing elsewhere.
    if transaction.catalog != database.catalog:
        raise InvalidInputException(
            f"Transaction {transaction.transaction_id} belongs to another catalog than database {database.name}")


def database_snapshot(ctx: RequestContext, params: dict[str, Any], database: DatabaseItem,
                      name: Optional[str] = None, transaction: Optional[TransactionItem] = None
                      ) -> DatabaseSnapshot:
    """How the request sees ``database``'s tables. ``name``: only that table will be read
    (point reads instead of Queries, and no snapshot needed for the latest state of one table).
    A reading transaction is loaded, checked and marked active unless given."""
    from chalicelib.actions.transactions import load_transaction, require_active
    if transaction is None and params.get("TransactionId"):
        transaction = load_transaction(ctx, params["TransactionId"])
        require_active(transaction)
        _same_catalog(transaction, database)
        tx_store.touch(transaction, clock.now())
    if transaction is not None:
        snapshot: Optional[int] = int(transaction.snapshot_seq)
    else:
        # Several tables: as of the last commit point, so a commit being applied meanwhile
        # shows whole (through the overlay) or not at all. One table is atomic by itself.
        snapshot = None if name is not None else tx_store.last_commit_seq(database.catalog)
    view = DatabaseSnapshot(database, snapshot, transaction=transaction)
    scope = meta_scope(database.uid)
    lock = tx_store.get_lock(scope)
    if lock is not None and (transaction is None or lock.transaction_id != transaction.transaction_id):
        holder = tx_store.get_transaction(database.catalog, lock.transaction_id)
        if holder is not None and holder.status == "COMMITTED" and (snapshot is None or holder.commit_seq <= snapshot):
            for write in _changes(holder.transaction_id, database.uid, name):
                view.overlay[write.uri] = as_table_item(database.uid, write)
                view.committing.add(write.uri)
    if transaction is not None:
        for write in _changes(transaction.transaction_id, database.uid, name):
            view.overlay[write.uri] = as_table_item(database.uid, write)
            view.own[write.uri] = write
    return view


def _changes(transaction_id: str, db_uid: str, name: Optional[str]) -> list[PendingWriteItem]:
    if name is None:
        return list(pending_tables(transaction_id, db_uid))
    found = get_pending_table(transaction_id, db_uid, name)
    return [found] if found is not None else []


# ---------------------------------------------------------------------------------- writes
class TableWriter:
    """One table name as a writing transaction sees it, and the recording of its change."""

    def __init__(self, ctx: RequestContext, params: dict[str, Any], database: DatabaseItem, name: str) -> None:
        from chalicelib.actions.transactions import load_transaction, require_active
        self.ctx, self.database, self.name = ctx, database, name
        self.transaction = load_transaction(ctx, params["TransactionId"])
        require_active(self.transaction, write=True)
        _same_catalog(self.transaction, database)
        self.view = database_snapshot(ctx, params, database, name, self.transaction)
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
        table = self.seen[0]
        base_uid, base_version = self._base()
        earlier = change_of(self.mine).dropped if self.mine is not None else []
        version = base_version + 1 if table.uid == base_uid else int(table.version)
        self._record(TableChange(self.database.name, base_uid, base_version, uid=table.uid, version=version,
                                 archive=archive, dropped=sorted(set(earlier) | dropped),
                                 indexes=table.indexes, key_types=list(table.key_types or [])), doc)

    def delete(self) -> None:
        """Record the deletion of the seen table (of one created here: forget it)."""
        base_uid, base_version = self._base()
        if base_uid is None:
            self._save([], [self.mine])
        else:
            self._record(TableChange(self.database.name, base_uid, base_version, uid=None), None)

    def _record(self, change: TableChange, doc: Optional[dict[str, Any]]) -> None:
        encoded = encode_document(doc, "table") if doc is not None else None
        self._save([pending_item(self.transaction.transaction_id, self.database.uid, self.name, change, encoded)], [])

    def _save(self, puts: list[PendingWriteItem], removed: list[PendingWriteItem]) -> None:
        from chalicelib.actions.transactions import load_transaction, require_active
        if not tx_store.save_pending(self.transaction, clock.now(), meta_scope(self.database.uid), puts, removed):
            require_active(load_transaction(self.ctx, self.transaction.transaction_id), write=True)
            raise TransactionCommitInProgressException("Transaction changed while writing; retry")


def autocommit(database: DatabaseItem, write: Callable[[catalog.Stamp], T]) -> T:
    """Run a table write made without a TransactionId as a commit of its own: ``write`` gets
    the Stamp to add to its DynamoDB transaction (next commit number, metadata lock free). A
    transaction committing table changes to the database is waited for (or, crashed, cleared)."""
    from chalicelib.actions.transactions import LOCK_WAIT, clear_lock
    scope = meta_scope(database.uid)
    for _ in attempts(replace(LOCK_WAIT, base_delay=0.002, max_delay=0.1)):
        previous = tx_store.last_commit_seq(database.catalog)
        if tx_store.get_lock(scope) is None or clear_lock(scope, database.catalog):
            stamp = catalog.Stamp(tx_store.seq_name(database.catalog), previous,
                                  max(tx_store.now_micros(), previous + 1), tx_store.lock_name(scope))
            try:
                return write(stamp)
            except catalog.StampConflict:
                pass
    raise ConcurrentModificationException("Tables of this database are being committed; retry")
