"""Glue user-defined functions and connections in DynamoDB: one ``catalog_entries`` item each.

The item layout is described on ``models.CatalogEntryItem``. Every read is a GetItem or a Query;
every write is one conditional write, or one transaction where two items (a rename) or a check
on the database item (a function's create) must hold together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

from pynamodb.transactions import TransactWrite

from chalicelib import metrics
from chalicelib.errors import InvalidInputException
from chalicelib.store import catalog
from chalicelib.store.documents import decode_document, encode_document
from chalicelib.store.dynamo.fence import transact
from chalicelib.store.dynamo.models import SEP, CatalogEntryItem, DatabaseItem
from chalicelib.store.records import Database
from chalicelib.store.dynamo.retry import conditional

UDF = "udf"
CONNECTION = "connection"


@dataclass(frozen=True)
class Entry:
    """One stored function or connection: its range key, the database incarnation it belongs to
    (functions), its API object, and the stored bytes (the condition of a replace)."""

    key: str
    db_uid: Optional[str]
    doc: dict[str, Any]
    raw: bytes


def scope(catalog_key: str, kind: str) -> str:
    """The hash key of a catalog's functions (``UDF``) or connections (``CONNECTION``)."""
    return f"{catalog_key}{SEP}{kind}"


def function_key(database_name: str, function_name: str) -> str:
    """The range key of a function (names already folded)."""
    return f"{database_name}{SEP}{function_name}"


def split_function_key(key: str) -> tuple[str, str]:
    """(database name, function name) of a function's range key."""
    database_name, _, function_name = key.partition(SEP)
    return database_name, function_name


def _entry(item: CatalogEntryItem) -> Entry:
    raw = bytes(item.doc)
    return Entry(item.key, item.db_uid, decode_document(raw), raw)


def _not_live(db_uid: Optional[str]) -> Any:
    """Condition: no item under the key, or one of an older incarnation of the database (a
    function whose database was deleted, not yet purged: it is invisible and may be replaced)."""
    condition = CatalogEntryItem.key.does_not_exist()
    if db_uid is not None:
        condition |= CatalogEntryItem.db_uid != db_uid
    return condition


# DynamoDB's limit on a range key: no entry can be stored under a longer one (a 255-character
# name of 4-byte characters is 1,020 bytes before its database's name is added).
MAX_KEY_BYTES = 1024


def _storable(key: str) -> bool:
    return len(key.encode("utf-8")) <= MAX_KEY_BYTES


def get(scope_key: str, key: str) -> Optional[Entry]:
    """One entry (one strongly consistent GetItem), or None."""
    if not _storable(key):
        return None
    metrics.count_read()
    try:
        return _entry(CatalogEntryItem.get(scope_key, key, consistent_read=True))
    except CatalogEntryItem.DoesNotExist:
        return None


def create(scope_key: str, key: str, doc: dict[str, Any], what: str,
           database: Optional[Database] = None) -> bool:
    """Store a new entry; False if a live one holds the key. With ``database`` (a function), in
    one transaction with a check that the database is still that incarnation, so a create racing
    DeleteDatabase never leaves a function behind the purge."""
    if not _storable(key):
        raise InvalidInputException(f"The name is too long to be stored: at most {MAX_KEY_BYTES} bytes of UTF-8 "
                                    "together with its database's name")
    db_uid = database.uid if database is not None else None
    item = CatalogEntryItem(scope_key, key, db_uid=db_uid, doc=encode_document(doc, what))
    if database is None:
        return conditional(lambda: item.save(condition=_not_live(None)))

    def build(tx: TransactWrite) -> None:
        tx.condition_check(DatabaseItem, database.catalog, database.name, condition=DatabaseItem.uid == database.uid)
        tx.save(item, condition=_not_live(db_uid))
    return _transaction(build)


def replace(scope_key: str, old: Entry, key: str, doc: dict[str, Any], what: str,
            database: Optional[Database] = None) -> bool:
    """Replace ``old`` (still exactly as read) with ``doc`` under ``key``: in place when the key
    is the same, else a rename (old deleted, new created where no live entry is) in one
    transaction. With ``database`` (a function) a rename also checks, as ``create`` does, that
    the database is still that incarnation: a stale rename must not take the new key from a live
    function of a re-created database (``_not_live`` sees that one as another incarnation's).
    False when ``old`` changed or went meanwhile, the database was replaced, or the new key is
    taken."""
    if not _storable(key):
        raise InvalidInputException(f"The name is too long to be stored: at most {MAX_KEY_BYTES} bytes of UTF-8 "
                                    "together with its database's name")
    db_uid = database.uid if database is not None else None
    item = CatalogEntryItem(scope_key, key, db_uid=db_uid, doc=encode_document(doc, what))
    unchanged = CatalogEntryItem.doc == old.raw
    if key == old.key:
        return conditional(lambda: item.save(condition=unchanged))

    def build(tx: TransactWrite) -> None:
        if database is not None:
            tx.condition_check(DatabaseItem, database.catalog, database.name,
                               condition=DatabaseItem.uid == database.uid)
        tx.delete(CatalogEntryItem(scope_key, old.key), condition=unchanged)
        tx.save(item, condition=_not_live(db_uid))
    return _transaction(build)


def _transaction(build: Callable[[TransactWrite], None]) -> bool:
    """Run a transaction: True if it landed, False if a condition of it failed (conflicts and
    throttles retried, as for a single conditional write)."""
    return conditional(lambda: transact(None, build))


def delete(scope_key: str, key: str, db_uid: Optional[str] = None, raw: Optional[bytes] = None) -> bool:
    """Remove an entry (with ``db_uid``: only if it belongs to that database incarnation; with
    ``raw``: only if it is still exactly the entry read); False if there is none (or another)."""
    if not _storable(key):
        return False
    condition = CatalogEntryItem.key.exists()
    if db_uid is not None:
        condition &= CatalogEntryItem.db_uid == db_uid
    if raw is not None:
        condition &= CatalogEntryItem.doc == raw
    item = CatalogEntryItem(scope_key, key)
    return conditional(lambda: item.delete(condition=condition))


def query(scope_key: str, prefix: str = "", after: Optional[str] = None, page_size: int = 100) -> Iterator[Entry]:
    """Entries whose keys start with ``prefix``, in key order, after key ``after``: one Query,
    read lazily in pages of ``page_size`` items."""
    start = {"scope": {"S": scope_key}, "key": {"S": after}} if after is not None else None
    condition = CatalogEntryItem.key.startswith(prefix) if prefix else None
    for item in CatalogEntryItem.query(scope_key, condition, consistent_read=True, last_evaluated_key=start,
                                       page_size=page_size):
        metrics.count_read()
        yield _entry(item)


def purge_database_functions(catalog_key: str, database_name: str, db_uid: str) -> None:
    """Delete the functions of a deleted database incarnation (one Query of the database's
    function keys, one conditional delete each: a function of a re-created database of the same
    name, written meanwhile, is left alone). Each delete counts against the cleanup chunk's
    budget (``catalog.purging``): BudgetSpent once it is used up, the rest left for the next
    chunk, which queries again."""
    scope_key = scope(catalog_key, UDF)
    for item in CatalogEntryItem.query(scope_key, CatalogEntryItem.key.startswith(function_key(database_name, "")),
                                       attributes_to_get=["scope", "key", "db_uid"]):
        if item.db_uid == db_uid:
            delete(scope_key, item.key, db_uid)
            catalog.spend()
