"""Glue user-defined functions (Hive UDFs) of a catalog's databases: create, read, replace,
delete, and list by name pattern within one database or across all of them.

A function is stored as its Glue ``UserDefinedFunction`` object (the members of a
``UserDefinedFunctionInput`` plus ``DatabaseName`` and ``CreateTime``; CatalogId is added by the
adapter). Function names are folded to lowercase, as database and table names are (Hive's
metastore normalizes function names the same way). The items hang off the catalog, keyed by
(database name, function name), and carry the database's uid: see ``store.catalog_entries``.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from chalicelib.service import access
from chalicelib.domain.name_patterns import compile_name_pattern
from chalicelib.errors import (AlreadyExistsException, ConcurrentModificationException, EntityNotFoundException,
                               InvalidInputException)
from chalicelib.service.databases import now
from chalicelib.service.lookups import Database, fold, require_database
from chalicelib.service.paging import take_page
from chalicelib.store import catalog
from chalicelib.store import catalog_entries as store

_INPUT_MEMBERS = ("ClassName", "OwnerName", "OwnerType", "FunctionType", "ResourceUris", "ArtifactLocation",
                  "GovernanceMode")
_RESOURCE = "Function"


def _not_found(database_name: str, function_name: str) -> EntityNotFoundException:
    return EntityNotFoundException(f"Function {function_name} not found in database {database_name}.",
                                   _RESOURCE, function_name)


def _function_name(function_input: dict[str, Any], default: Optional[str] = None) -> str:
    name = function_input.get("FunctionName") or default
    if not name:
        raise InvalidInputException("FunctionInput.FunctionName is required")
    return fold(name)


def _document(database_name: str, function_name: str, function_input: dict[str, Any],
              create_time: float) -> dict[str, Any]:
    doc: dict[str, Any] = {"FunctionName": function_name, "DatabaseName": database_name}
    doc.update({k: function_input[k] for k in _INPUT_MEMBERS if k in function_input})
    doc["CreateTime"] = create_time
    return doc


def _live(database: Database, entry: Optional[store.Entry]) -> Optional[store.Entry]:
    """``entry`` if it belongs to this incarnation of the database (a function left behind by a
    deleted database of the same name is not its function)."""
    return entry if entry is not None and entry.db_uid == database.uid else None


def create_function(catalog_key: str, database_name: str, function_input: dict[str, Any]) -> None:
    """Create a function in a database from a ``UserDefinedFunctionInput``: one transaction,
    so of racing creates exactly one wins, and none lands in a database deleted meanwhile.
    EntityNotFoundException for the database; AlreadyExistsException if the name is taken."""
    access.require("CreateUserDefinedFunction", catalog_key, database_name)
    database = require_database(catalog_key, database_name)
    name = _function_name(function_input)
    doc = _document(database.name, name, function_input, now())
    if not store.create(store.scope(catalog_key, store.UDF), store.function_key(database.name, name), doc,
                        "function", database):
        require_database(catalog_key, database_name)
        raise AlreadyExistsException(f"Function {name} already exists in database {database.name}.",
                                     _RESOURCE, name)


def get_function(catalog_key: str, database_name: str, function_name: str) -> dict[str, Any]:
    """The stored ``UserDefinedFunction`` (without CatalogId): two GetItems (database, function).
    EntityNotFoundException for the database or the function."""
    access.require("GetUserDefinedFunction", catalog_key, database_name)
    database = require_database(catalog_key, database_name)
    name = fold(function_name)
    entry = _live(database, store.get(store.scope(catalog_key, store.UDF), store.function_key(database.name, name)))
    if entry is None:
        raise _not_found(database.name, name)
    return entry.doc


def update_function(catalog_key: str, database_name: str, function_name: str,
                    function_input: dict[str, Any]) -> None:
    """Replace a function's definition (CreateTime is kept). A different
    ``FunctionInput.FunctionName`` renames it, in one transaction with the removal of the old
    name (AlreadyExistsException if the new name is taken). The write is conditional on the
    definition read, so a concurrent update is never lost unseen (ConcurrentModificationException).
    """
    access.require("UpdateUserDefinedFunction", catalog_key, database_name)
    database = require_database(catalog_key, database_name)
    name = fold(function_name)
    scope = store.scope(catalog_key, store.UDF)
    old = _live(database, store.get(scope, store.function_key(database.name, name)))
    if old is None:
        raise _not_found(database.name, name)
    new_name = _function_name(function_input, default=name)
    doc = _document(database.name, new_name, function_input, old.doc["CreateTime"])
    if store.replace(scope, old, store.function_key(database.name, new_name), doc, "function", database):
        return
    if require_database(catalog_key, database_name).uid != database.uid:
        raise _not_found(database.name, name)  # the database was re-created: its functions went with it
    if new_name != name and _live(database, store.get(scope, store.function_key(database.name, new_name))):
        raise AlreadyExistsException(f"Function {new_name} already exists in database {database.name}.",
                                     _RESOURCE, new_name)
    raise ConcurrentModificationException(f"Function {name} in database {database.name} was changed "
                                          "concurrently; retry.", _RESOURCE, name)


def delete_function(catalog_key: str, database_name: str, function_name: str) -> None:
    """Delete a function: one conditional delete. EntityNotFoundException for the database or
    the function."""
    access.require("DeleteUserDefinedFunction", catalog_key, database_name)
    database = require_database(catalog_key, database_name)
    name = fold(function_name)
    if not store.delete(store.scope(catalog_key, store.UDF), store.function_key(database.name, name), database.uid):
        raise _not_found(database.name, name)


def list_functions(catalog_key: str, database_name: Optional[str], pattern: str, function_type: Optional[str],
                   after: Optional[str], limit: int,
                   render: Callable[[dict[str, Any]], Any]) -> tuple[list[Any], Optional[str]]:
    """Up to ``limit`` functions whose names match ``pattern`` (a Glue name pattern, as GetTables'
    Expression) and, if given, are of ``function_type``, in (database, name) order after position
    ``after``, each as ``render(UserDefinedFunction)``; the position to resume after (None after
    the last).

    With ``database_name``, that database's functions (EntityNotFoundException if it does not
    exist): one Query of its key range. Without, every database's: one Query of the catalog's
    functions, plus one GetItem per distinct database met, to tell live functions from those of
    a deleted database not yet purged.
    """
    matcher = compile_name_pattern(pattern, "Pattern")
    scope = store.scope(catalog_key, store.UDF)
    live_uids: dict[str, Optional[str]] = {}
    prefix = ""
    if database_name is not None:
        access.require("GetUserDefinedFunctions", catalog_key, database_name)
        database = require_database(catalog_key, database_name)
        live_uids[database.name] = database.uid
        prefix = store.function_key(database.name, "")

    def live_uid(name: str) -> Optional[str]:
        if name not in live_uids:
            item = catalog.get_database(catalog_key, name)
            live_uids[name] = item.uid if item is not None else None
        return live_uids[name]

    visible = access.database_filter(catalog_key)

    def rendered(entry: store.Entry) -> Any:
        database, function = store.split_function_key(entry.key)
        if not visible(database):
            return None
        if not matcher.matches(function) or entry.db_uid != live_uid(database):
            return None
        if function_type is not None and entry.doc.get("FunctionType") != function_type:
            return None
        return render(entry.doc)

    entries = store.query(scope, prefix, after, min(limit + 1, 100))
    return take_page(entries, limit, rendered, lambda entry: entry.key)
