"""Finding a database or table by name, as every protocol must (Glue's not-found wording)."""

from __future__ import annotations

from chalicelib.errors import database_not_found, table_not_found
from chalicelib.store import catalog
from chalicelib.store.models import DatabaseItem, TableItem

# The handles service calls about a database or a table take and return. Adapters pass them
# back to the service; they never build or write one.
Database = DatabaseItem
Table = TableItem


def fold(name: str) -> str:
    """Glue folds database and table names to lowercase (Hive compatibility)."""
    return name.lower()


def require_database(catalog_key: str, name: str) -> DatabaseItem:
    """The database item, or EntityNotFoundException as Glue words it."""
    item = catalog.get_database(catalog_key, fold(name))
    if item is None:
        raise database_not_found(fold(name))
    return item


def require_table(database: DatabaseItem, name: str) -> TableItem:
    """The current table item, or EntityNotFoundException."""
    item = catalog.get_table(database.uid, fold(name))
    if item is None:
        raise table_not_found(fold(name))
    return item
