"""Databases of a catalog: create, read, list, replace and delete (with everything in them).

A database is stored as its Glue ``Database`` object (the members of a ``DatabaseInput`` plus
``CreateTime``; ``Parameters`` and every other member round-trip as given). Names are folded to
lowercase. Every write keeps SearchTables' postings in step (``service.search_index``).
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

from chalicelib.errors import ConcurrentModificationException, InvalidInputException, database_already_exists
from chalicelib.service import search_index
from chalicelib.service.lookups import fold, require_database
from chalicelib.service.paging import take_page
from chalicelib.store import catalog

# What Glue reports when a database is created without explicit default permissions
# (Lake Formation's "use only IAM access control" default).
DEFAULT_TABLE_PERMISSIONS = [
    {"Principal": {"DataLakePrincipalIdentifier": "IAM_ALLOWED_PRINCIPALS"}, "Permissions": ["ALL"]}
]
_INPUT_MEMBERS = ("Description", "LocationUri", "Parameters", "CreateTableDefaultPermissions",
                  "TargetDatabase", "FederatedDatabase")


def now() -> float:
    """A creation / update time as the catalog stores it: epoch seconds, to the millisecond."""
    return round(time.time(), 3)


def _database_document(database_input: dict[str, Any], create_time: float) -> dict[str, Any]:
    doc: dict[str, Any] = {"Name": fold(database_input["Name"])}
    doc.update({k: database_input[k] for k in _INPUT_MEMBERS if k in database_input})
    doc.setdefault("CreateTableDefaultPermissions", DEFAULT_TABLE_PERMISSIONS)
    doc["CreateTime"] = create_time
    return doc


def create_database(catalog_key: str, database_input: dict[str, Any]) -> None:
    """Create a database from a Glue ``DatabaseInput``, atomically: the name is taken by exactly
    one of several racing creates. AlreadyExistsException if the (lowercased) name is taken."""
    doc = _database_document(database_input, now())
    uid = catalog.new_uid()
    search_index.before_database_write(catalog_key, uid, doc)
    try:
        catalog.create_database(catalog_key, doc["Name"], doc, uid)
    except catalog.ConditionFailed:
        raise database_already_exists() from None


def get_database(catalog_key: str, name: str) -> dict[str, Any]:
    """The stored ``Database`` object (without CatalogId); EntityNotFoundException if none."""
    return catalog.load(require_database(catalog_key, name))


def list_databases(catalog_key: str, after: Optional[str], limit: int,
                   render: Callable[[dict[str, Any]], Any] = lambda doc: doc,
                   names_only: bool = False) -> tuple[list[Any], Optional[str]]:
    """Up to ``limit`` databases in name order after position ``after`` (None: from the first),
    within the response byte budget (``service.paging``), each as ``render(Database object)``
    or, with ``names_only``, as ``{"Name": name}`` (no document is decoded).

    Returns the page and the position to resume after (a database name), None after the last.
    """
    def rendered(item: Any) -> Any:
        return {"Name": item.name} if names_only else render(catalog.load(item))

    items = catalog.query_databases(catalog_key, after, limit)
    return take_page(items, limit, rendered, lambda item: item.name)


def update_database(catalog_key: str, name: str, database_input: dict[str, Any]) -> None:
    """Replace a database's definition with a ``DatabaseInput`` (CreateTime is kept, and so are
    the default permissions when the input leaves them out).

    EntityNotFoundException if there is no such database; InvalidInputException if the input
    names another database (databases cannot be renamed); ConcurrentModificationException if
    it was deleted or re-created meanwhile (the replace is conditional on the same database).
    """
    item = require_database(catalog_key, name)
    if fold(database_input["Name"]) != item.name:
        raise InvalidInputException(
            f"DatabaseInput.Name '{database_input['Name']}' differs from Name '{name}': "
            "databases cannot be renamed")
    old = catalog.load(item)
    doc = _database_document(database_input, old["CreateTime"])
    if "CreateTableDefaultPermissions" not in database_input:
        doc["CreateTableDefaultPermissions"] = old.get("CreateTableDefaultPermissions", DEFAULT_TABLE_PERMISSIONS)
    search_index.before_database_write(item.catalog, item.uid, doc, old)
    try:
        catalog.replace_database(item, doc)
    except catalog.ConditionFailed:
        raise ConcurrentModificationException("Database was deleted or re-created concurrently.") from None
    search_index.after_database_write(item.catalog, doc, old)


def delete_database(catalog_key: str, name: str) -> None:
    """Delete a database and everything in it (tables, versions, partitions, statistics...).

    The database item goes first, atomically (conditional on the same database): from then on
    the name is free and nothing below it is reachable; what is below is purged after.
    EntityNotFoundException if there is no such database; ConcurrentModificationException if
    it was deleted or re-created meanwhile.
    """
    item = require_database(catalog_key, name)
    try:
        catalog.delete_database_item(item)
    except catalog.ConditionFailed:
        raise ConcurrentModificationException("Database was deleted or re-created concurrently.") from None
    for table in catalog.purge_database(item.uid):
        search_index.after_table_write(item.catalog, item.name, None, catalog.load(table))
    search_index.after_database_write(item.catalog, None, catalog.load(item))
