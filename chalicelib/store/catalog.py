"""Store operations for databases, tables and table versions.

Every multi-item change that must be all-or-nothing goes through one DynamoDB transaction;
conditions on those transactions are how races (two CreateTable, two UpdateTable with the same
VersionId, a CreateTable racing DeleteDatabase) get exactly one winner.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Callable, Iterator

from pynamodb.exceptions import DeleteError, PutError, TransactWriteError, UpdateError
from pynamodb.transactions import TransactWrite

from chalicelib import metrics
from chalicelib.store.config import connection
from chalicelib.store.documents import decode_document, encode_document
from chalicelib.store.models import DatabaseItem, TableItem, TableVersionItem


class ConditionFailed(Exception):
    """A conditional write lost: the item existed, vanished or changed under us."""


def new_uid() -> str:
    """A fresh identity for a database or table incarnation."""
    return uuid.uuid4().hex


def _condition_failed(error: Exception) -> bool:
    cause = getattr(error, "cause_response_code", None)
    if cause in ("ConditionalCheckFailedException",):
        return True
    reasons = getattr(error, "cancellation_reasons", None) or []
    return any(r is not None and r.code in ("ConditionalCheckFailed", "TransactionConflict")
               for r in reasons) or cause == "TransactionCanceledException"


def _get(model: Any, *key: Any) -> Any:
    """One item by key (strongly consistent), or None; counted as one item read."""
    metrics.count_read()
    try:
        return model.get(*key, consistent_read=True)
    except model.DoesNotExist:
        return None


def _counted(items: Iterator[Any]) -> Iterator[Any]:
    """Count each item of a Query as it is read."""
    for item in items:
        metrics.count_read()
        yield item


def _delete_if(item: Any, condition: Any) -> None:
    """Delete an item under a condition; ConditionFailed when it does not hold."""
    try:
        item.delete(condition=condition)
    except DeleteError as error:
        if _condition_failed(error):
            raise ConditionFailed() from None
        raise


# ---------------------------------------------------------------------------------- databases
def get_database(catalog: str, name: str) -> DatabaseItem | None:
    """The database item, or None."""
    return _get(DatabaseItem, catalog, name)


def create_database(catalog: str, name: str, doc: dict[str, Any], uid: str) -> None:
    """Insert a database with a fresh ``uid``; ConditionFailed if the name is taken."""
    item = DatabaseItem(catalog, name, uid=uid, doc=encode_document(doc, "database"))
    try:
        item.save(condition=DatabaseItem.name.does_not_exist())
    except PutError as error:
        if _condition_failed(error):
            raise ConditionFailed() from None
        raise


def replace_database(item: DatabaseItem, doc: dict[str, Any]) -> None:
    """Overwrite a database's definition, provided it is still the same incarnation."""
    item.doc = encode_document(doc, "database")
    try:
        item.save(condition=DatabaseItem.uid == item.uid)
    except PutError as error:
        if _condition_failed(error):
            raise ConditionFailed() from None
        raise


def delete_database_item(item: DatabaseItem) -> None:
    """Unlink a database; from here on nothing below it is reachable."""
    _delete_if(item, DatabaseItem.uid == item.uid)


def query_databases(catalog: str, after: str | None, limit: int) -> Iterator[DatabaseItem]:
    """Databases of a catalog in name order, starting after ``after``."""
    start = {"catalog": {"S": catalog}, "name": {"S": after}} if after else None
    return _counted(DatabaseItem.query(catalog, last_evaluated_key=start, consistent_read=True,
                                       page_size=limit))


# ------------------------------------------------------------------------------------- tables
def get_table(db_uid: str, name: str) -> TableItem | None:
    """The current table item, or None."""
    return _get(TableItem, db_uid, name)


def create_table(database: DatabaseItem, name: str, doc: dict[str, Any],
                 indexes_json: str | None = None) -> TableItem:
    """Insert a table at version 0 (with its partition index definitions), atomically with a
    check that its database still exists."""
    item = TableItem(database.uid, name, uid=new_uid(), version=0,
                     doc=encode_document(doc, "table"),
                     key_types=[key.get("Type", "string") for key in doc.get("PartitionKeys", [])],
                     indexes=indexes_json, index_epoch=0)
    try:
        with TransactWrite(connection=connection()) as tx:
            tx.condition_check(DatabaseItem, database.catalog, database.name,
                               condition=DatabaseItem.uid == database.uid)
            tx.save(item, condition=TableItem.name.does_not_exist())
    except TransactWriteError as error:
        if _condition_failed(error):
            raise ConditionFailed() from None
        raise
    return item


def update_table(current: TableItem, new_doc: dict[str, Any], archive: bool) -> TableItem:
    """Replace a table with version ``current.version + 1``, archiving the old one if asked.

    The write is conditional on the stored version still being ``current.version``: of two
    racing updates from the same version exactly one wins, the other gets ConditionFailed.
    Only the definition and version change: partition indexes and key types stay as stored.
    """
    old_version = current.version
    encoded = encode_document(new_doc, "table")
    try:
        with TransactWrite(connection=connection()) as tx:
            tx.update(current, actions=[TableItem.doc.set(encoded), TableItem.version.set(old_version + 1)],
                      condition=(TableItem.version == old_version) & (TableItem.uid == current.uid))
            if archive:
                tx.save(TableVersionItem(current.uid, old_version, doc=current.doc))
    except TransactWriteError as error:
        if _condition_failed(error):
            raise ConditionFailed() from None
        raise
    current.doc, current.version = encoded, old_version + 1
    return current


def set_last_analyzed(item: TableItem, when: float, attempts: int = 5) -> None:
    """Raise the table's LastAnalyzedTime to ``when`` without making a new table version."""
    for _ in range(attempts):
        doc = load(item)
        if (doc.get("LastAnalyzedTime") or 0) >= when:
            return
        doc["LastAnalyzedTime"] = when
        try:
            item.update(actions=[TableItem.doc.set(encode_document(doc, "table"))],
                        condition=(TableItem.version == item.version) & (TableItem.uid == item.uid))
            return
        except UpdateError as error:
            if not _condition_failed(error):
                raise
        fresh = get_table(item.db_uid, item.name)
        if fresh is None or fresh.uid != item.uid:
            return
        item = fresh


def bump_column_epochs(item: TableItem, columns: list[str]) -> None:
    """Mark columns as dropped: statistics written for them before are no longer shown."""
    for _ in range(5):
        epochs = json.loads(item.column_epochs or "{}")
        for column in columns:
            epochs[column.lower()] = epochs.get(column.lower(), 0) + 1
        try:
            item.update(actions=[TableItem.column_epochs.set(json.dumps(epochs))],
                        condition=(TableItem.uid == item.uid)
                        & (TableItem.column_epochs == item.column_epochs if item.column_epochs
                           else TableItem.column_epochs.does_not_exist()))
            return
        except UpdateError as error:
            if not _condition_failed(error):
                raise
        fresh = get_table(item.db_uid, item.name)
        if fresh is None or fresh.uid != item.uid:
            return
        item = fresh


def delete_table_item(item: TableItem) -> None:
    """Unlink a table (only the incarnation we read)."""
    _delete_if(item, TableItem.uid == item.uid)


def query_tables(db_uid: str, after: str | None, page_size: int) -> Iterator[TableItem]:
    """Tables of a database in name order, starting after ``after``."""
    start = {"db_uid": {"S": db_uid}, "name": {"S": after}} if after else None
    return _counted(TableItem.query(db_uid, last_evaluated_key=start, consistent_read=True,
                                    page_size=page_size))


# ----------------------------------------------------------------------------- table versions
def get_archived_version(table_uid: str, version: int) -> TableVersionItem | None:
    """An archived version, or None."""
    return _get(TableVersionItem, table_uid, version)


def query_archived_versions(table_uid: str, below: int | None, page_size: int) -> Iterator[TableVersionItem]:
    """Archived versions, newest first, starting below version ``below``."""
    condition = TableVersionItem.version < below if below is not None else None
    return _counted(TableVersionItem.query(table_uid, range_key_condition=condition, scan_index_forward=False,
                                           consistent_read=True, page_size=page_size))


def delete_archived_version(table_uid: str, version: int) -> bool:
    """Delete one archived version; False if it did not exist."""
    try:
        _delete_if(TableVersionItem(table_uid, version), TableVersionItem.version.exists())
        return True
    except ConditionFailed:
        return False


# ------------------------------------------------------------------------------------ cascade
# Each API family that stores items below a table registers how to purge them by table uid.
_table_purgers: list[Callable[[TableItem], None]] = []


def register_table_purger(purge: Callable[[TableItem], None]) -> None:
    """Add a function that deletes everything a family stores below an unlinked table."""
    _table_purgers.append(purge)


def delete_all(model: type, hash_key: str, range_attr: str) -> None:
    """Delete every item of ``model`` under one hash key (batched, keys only)."""
    hash_attr = model._hash_keyname
    with model.batch_write() as batch:
        for item in model.query(hash_key, attributes_to_get=[hash_attr, range_attr]):
            batch.delete(item)


register_table_purger(lambda table: delete_all(TableVersionItem, table.uid, "version"))


def purge_table(table: TableItem) -> None:
    """Delete everything stored below a table that has already been unlinked."""
    for purge in _table_purgers:
        purge(table)


def purge_database(db_uid: str) -> list[TableItem]:
    """Delete every table (and what is below it) of a database that has been unlinked;
    returns the deleted table items."""
    deleted = []
    for item in TableItem.query(db_uid):
        item.delete()
        purge_table(item)
        deleted.append(item)
    return deleted


def load(item: Any) -> dict[str, Any]:
    """The API object stored in an item."""
    return decode_document(item.doc)
