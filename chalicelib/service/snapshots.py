"""How a request sees a database's tables: snapshot views and time travel.

Reads go through a ``DatabaseSnapshot``: with a transaction, the committed tables as of the
transaction's snapshot (older versions come from the archive) under its own pending changes;
without, the latest tables under the changes of a commit that is past its commit point but not
applied yet. GetTable / GetTables with QueryAsOfTime read the table version that was current
then (``table_as_of``). See docs/design.md, "Transactional table definitions".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from chalicelib import clock
from chalicelib.context import RequestContext
from chalicelib.errors import EntityNotFoundException, InvalidInputException
from chalicelib.service.transactions import load_transaction, require_active
from chalicelib.store import catalog
from chalicelib.store import transactions as tx_store
from chalicelib.store.records import Database, PendingWrite, Table, Transaction
from chalicelib.store.pending_tables import as_table, get_pending_table, meta_scope, pending_tables

# A table as a reader sees it: the item (uid, key types, indexes), the document, the version.
Seen = tuple[Table, dict[str, Any], int]


# ------------------------------------------------------------------------------ time travel
def table_as_of(item: Table, when: Optional[float]) -> Optional[tuple[dict[str, Any], int]]:
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


def require_table_as_of(item: Table, when: Optional[float]) -> tuple[dict[str, Any], int]:
    """Like table_as_of, EntityNotFoundException when there is no such version."""
    found = table_as_of(item, when)
    if found is None:
        raise EntityNotFoundException(f"Table {item.name} did not exist at the requested QueryAsOfTime.")
    return found


def table_at_seq(item: Table, snapshot: int) -> Optional[tuple[dict[str, Any], int]]:
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

    database: Database
    snapshot: Optional[int]
    overlay: dict[str, Optional[Table]] = field(default_factory=dict)
    committing: set[str] = field(default_factory=set)  # names in the unapplied commit's overlay
    own: dict[str, PendingWrite] = field(default_factory=dict)
    transaction: Optional[Transaction] = None
    _items: dict[str, Optional[Table]] = field(default_factory=dict)

    def stored(self, name: str) -> Optional[Table]:
        """The table item as stored now (read once)."""
        if name not in self._items:
            self._items[name] = catalog.get_table(self.database.uid, name)
        return self._items[name]

    def get(self, name: str) -> Optional[Seen]:
        """The table this reader sees under ``name``, or None."""
        if name in self.overlay:
            table = self.overlay[name]
            return None if table is None else (table, catalog.load(table), table.version)
        return self._resolve(self.stored(name))

    def _resolve(self, item: Optional[Table]) -> Optional[Seen]:
        if item is None:
            return None
        if self.snapshot is None:
            return item, catalog.load(item), item.version
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


def same_catalog(transaction: Transaction, database: Database) -> None:
    """InvalidInputException unless ``transaction`` belongs to ``database``'s catalog."""
    # Snapshots are commit numbers of the transaction's own catalog: they order nothing elsewhere.
    if transaction.catalog != database.catalog:
        raise InvalidInputException(
            f"Transaction {transaction.transaction_id} belongs to another catalog than database {database.name}")


def database_snapshot(ctx: RequestContext, transaction_id: Optional[str], database: Database,
                      name: Optional[str] = None, transaction: Optional[Transaction] = None
                      ) -> DatabaseSnapshot:
    """How a request made in ``transaction_id`` (None: outside any) sees ``database``'s tables.
    ``name``: only that table will be read (point reads instead of Queries, and no snapshot
    needed for the latest state of one table). A reading transaction is loaded, checked and
    marked active unless given as ``transaction``."""
    if transaction is None and transaction_id:
        transaction = load_transaction(ctx, transaction_id)
        require_active(transaction)
        same_catalog(transaction, database)
        tx_store.touch(transaction, clock.now())
    if transaction is not None:
        snapshot: Optional[int] = transaction.snapshot_seq
    else:
        # Several tables: as of the read point, so a commit being applied meanwhile shows
        # whole (through the overlay) or not at all. One table is atomic by itself.
        snapshot = None if name is not None else tx_store.read_point(database.catalog)
    view = DatabaseSnapshot(database, snapshot, transaction=transaction)
    scope = meta_scope(database.uid)
    lock = tx_store.get_lock(scope)
    if lock is not None and (transaction is None or lock.transaction_id != transaction.transaction_id):
        holder = tx_store.get_transaction(database.catalog, lock.transaction_id)
        if holder is not None and holder.status == "COMMITTED" and (snapshot is None or holder.seq <= snapshot):
            for write in _changes(holder.transaction_id, database.uid, name):
                view.overlay[write.uri] = as_table(database.uid, write)
                view.committing.add(write.uri)
    if transaction is not None:
        for write in _changes(transaction.transaction_id, database.uid, name):
            view.overlay[write.uri] = as_table(database.uid, write)
            view.own[write.uri] = write
    return view


def _changes(transaction_id: str, db_uid: str, name: Optional[str]) -> list[PendingWrite]:
    if name is None:
        return list(pending_tables(transaction_id, db_uid))
    found = get_pending_table(transaction_id, db_uid, name)
    return [found] if found is not None else []
