"""Finding a database or table by name, as every protocol must (Glue's not-found wording)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from chalicelib.errors import database_not_found, table_not_found
from chalicelib.store import catalog
from chalicelib.store.records import Database, Table

# The handles service calls about a database or a table take and return (the store's records,
# re-exported here for the adapters). Adapters pass them back to the service; they never build
# or write one.

def fold(name: str) -> str:
    """Glue folds database and table names to lowercase (Hive compatibility)."""
    return name.lower()


def require_database(catalog_key: str, name: str) -> Database:
    """The database item, or EntityNotFoundException as Glue words it."""
    item = catalog.get_database(catalog_key, fold(name))
    if item is None:
        raise database_not_found(fold(name))
    return item


def require_table(database: Database, name: str) -> Table:
    """The current table item, or EntityNotFoundException."""
    item = catalog.get_table(database.uid, fold(name))
    if item is None:
        raise table_not_found(fold(name))
    return item


# ----------------------------------------------------------------------- identity hints
# (catalog key, database name, table name) -> (database uid, table uid) as last read by this
# process. Only a hint for reading a table's items in one BatchGetItem: the reader checks the
# uids it gets back and falls back to the plain reads when they differ (the database or table
# was dropped and re-created), so a stale hint costs one wasted read, never a wrong answer.
_HINTS: dict[tuple[str, str, str], tuple[str, str]] = {}
_MAX_HINTS = 4096


def table_hint(catalog_key: str, database: str, table: str) -> tuple[str, str] | None:
    """The (database uid, table uid) this process last saw under these names, or None."""
    return _HINTS.get((catalog_key, fold(database), fold(table)))


def remember_table(catalog_key: str, database: Database, table: Table) -> None:
    """Keep the uids of a table just read, for ``table_hint``."""
    if len(_HINTS) >= _MAX_HINTS:
        try:
            del _HINTS[next(iter(_HINTS))]  # the oldest: a dict keeps insertion order
        except (KeyError, RuntimeError, StopIteration):
            pass  # another thread changed it meanwhile: nothing to keep consistent in a hint
    _HINTS[(catalog_key, database.name, table.name)] = (database.uid, table.uid)


def read_hinted(catalog_key: str, database: str, table: str,
                extra: Callable[[str], Sequence[catalog.ExtraKey]] = lambda _uid: ()
                ) -> tuple[Database, Table, list[dict[str, Any] | None]] | None:
    """The database, the table and the items ``extra(table uid)`` names, in one BatchGetItem,
    when this process has a hint and it still holds; None: read the plain way."""
    hint = table_hint(catalog_key, database, table)
    if hint is None:
        return None
    db_item, table_item, extras = catalog.get_path(catalog_key, fold(database), hint[0], fold(table),
                                                   extra(hint[1]))
    if db_item is None or table_item is None or (db_item.uid, table_item.uid) != hint:
        return None
    return db_item, table_item, extras


def hinted_keys(catalog_key: str, database: str, table: str,
                extra: Callable[[str], Sequence[catalog.ExtraKey]] = lambda _uid: ()
                ) -> tuple[tuple[str, str], list[catalog.ExtraKey]] | None:
    """The hint and the keys ``read_hinted`` would read, for a caller that reads them along
    with something else (the permission check's grants: ``access.require_reading``); None
    without a hint. Hand what was read to ``hinted_from``."""
    hint = table_hint(catalog_key, database, table)
    if hint is None:
        return None
    return hint, catalog.path_keys(catalog_key, fold(database), hint[0], fold(table), extra(hint[1]))


def hinted_from(hint: tuple[str, str], raws: Sequence[dict[str, Any] | None]
                ) -> tuple[Database, Table, list[dict[str, Any] | None]] | None:
    """``read_hinted``'s answer from the items of ``hinted_keys``: None when the hint no longer
    holds (read the plain way)."""
    db_item, table_item, extras = catalog.path_from(raws)
    if db_item is None or table_item is None or (db_item.uid, table_item.uid) != hint:
        return None
    return db_item, table_item, extras
