"""Committing a transaction's table definitions (its metadata scopes, see store.pending_tables).

Called by the commit protocol in ``chalicelib.service.transactions``, with the scope's commit
lock held: ``check`` before the commit point (step 3), ``apply`` after it (step 5, and again by
whoever rolls a crashed commit forward, so it must be idempotent). Every write of ``apply`` that
could undo a later commit's is fenced (store.fence): it lands only while the commit still holds
the scope's lock. The rest cannot: unlinking checks the incarnation (uids are never reused), and
purging only touches an incarnation already unlinked.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from chalicelib.service import access, cleanup, search_index
from chalicelib.errors import ConcurrentModificationException
from chalicelib.store import catalog
from chalicelib.store import statistics as statistics_store
from chalicelib.store.documents import decode_document, encode_document
from chalicelib.store.records import Fence, PendingWrite, Transaction
from chalicelib.store.pending_tables import TableChange, as_table, change_of, db_uid_of


def check(item: Transaction, scope: str, writes: Sequence[PendingWrite]) -> None:
    """ConcurrentModificationException unless every table the transaction writes is still the
    incarnation and version it saw (so nobody created, changed or deleted it since its snapshot:
    what it saw *was* its snapshot, or the write would have failed at call time)."""
    db_uid = db_uid_of(scope)
    for write in writes:
        change = change_of(write)
        current = catalog.get_table(db_uid, write.uri)
        if change.base_uid is None:
            if current is not None:
                raise ConcurrentModificationException(
                    f"Table {write.uri} was created by another writer after this transaction started")
        elif current is None or current.uid != change.base_uid or current.version != change.base_version:
            raise ConcurrentModificationException(
                f"Table {write.uri} was changed by another writer after this transaction started")
    if writes:
        database = catalog.get_database(item.catalog, change_of(writes[0]).database)
        if database is None or database.uid != db_uid:
            raise ConcurrentModificationException(
                f"Database {change_of(writes[0]).database} was deleted after this transaction started")


def apply(item: Transaction, scope: str, writes: Sequence[PendingWrite], seq: int, fence: Fence) -> None:
    """Make the committed table changes current, each stamped with the commit's ``seq`` and
    with its UpdateTime (CreateTime for a new table) set to the commit time; under ``fence``
    (Fenced once the commit no longer holds the scope's lock: another applier did it all)."""
    db_uid = db_uid_of(scope)
    for write in writes:
        change = change_of(write)
        if change.removes_base:
            _remove(item.catalog, db_uid, write.uri, change, fence)
        new = as_table(db_uid, write)
        if new is None:  # the change deletes the table (removed above)
            continue
        doc = decode_document(new.doc)
        doc["UpdateTime"] = seq / 1_000_000
        if change.creates:
            doc["CreateTime"] = doc["UpdateTime"]
            grants = _default_grants(item.catalog, change.database, write.uri, doc.get("CreatedBy"))
            catalog.put_committed_table(replace(new, doc=encode_document(doc, "table"), changed_seq=seq), fence,
                                        catalog.AlsoWrite(puts=grants))
        else:
            _update(item.catalog, db_uid, write.uri, change, doc, seq, fence)


def _default_grants(catalog_key: str, database: str, name: str, creator: str | None) -> list:
    """A new table's default grants (service.access), written with it by the commit."""
    database_item = catalog.get_database(catalog_key, database)
    database_doc = catalog.load(database_item) if database_item is not None else {}
    grants = access.new_table_grants(catalog_key, database_doc, database, name, creator)
    return access.grant_items(catalog_key, grants, creator)


def _remove(catalog_key: str, db_uid: str, name: str, change: TableChange, fence: Fence) -> None:
    current = catalog.get_table(db_uid, name)
    if current is None or current.uid != change.base_uid:
        return  # already removed by an earlier roll-forward
    try:
        catalog.delete_table_item(current, fence=fence)
    except catalog.ConditionFailed:
        return
    cleanup.enqueued()  # the contents go in the background (service.cleanup)
    access.forget_table(catalog_key, change.database, name)
    search_index.after_table_write(catalog_key, change.database, None, catalog.load(current))


def _update(catalog_key: str, db_uid: str, name: str, change: TableChange, doc: dict, seq: int,
            fence: Fence) -> None:
    current = catalog.get_table(db_uid, name)
    if current is None or current.uid != change.uid or current.version != change.base_version:
        return  # applied already (or changed, which check() and the lock rule out)
    if change.dropped:
        # Before the new version shows: statistics of a dropped column must never show with
        # it. Bumping twice (a roll-forward after a crash here) only hides them once more.
        catalog.bump_column_epochs(current, change.dropped, fence)
        statistics_store.delete_columns(current.uid, "", change.dropped, fence)
    old = catalog.load(current)
    try:
        catalog.update_table(current, doc, archive=change.archive, seq=seq, fence=fence)
    except catalog.ConditionFailed:
        return
    search_index.after_table_write(catalog_key, change.database, doc, old)

