"""Paimon functions of a database: create, get, alter, drop, list (protocol-free rules).

A function lives in its database (a Glue database item) as one item (``store.paimon_functions``),
so a drop of the database, through Paimon or Glue, removes its functions.

Lake Formation governs functions through their database, as Glue's user-defined functions:
every entry point checks the caller's permissions (``service.access``) under the Glue action it
is (Create/Get/Update/DeleteUserDefinedFunction, GetUserDefinedFunctions) before it reads or
writes anything; the global listing shows the functions of the databases the caller may see.
"""

from __future__ import annotations

import uuid
from typing import Any, Callable, Optional

from chalicelib.domain.paimon.functions import FUNCTION_NAME_CHARS, RESOURCE_FUNCTION, Function, apply_changes
from chalicelib.domain.paimon.like_patterns import PrefixPattern
from chalicelib.errors import AlreadyExistsException, ConcurrentModificationException, EntityNotFoundException
from chalicelib.service import access
from chalicelib.service.databases import now
from chalicelib.service.paimon_databases import MAX_NAME_CHARS, databases_from, require_database
from chalicelib.service.paging import take_page
from chalicelib.store import paimon_functions as store



def _nothing_matches(pattern: Optional[PrefixPattern]) -> bool:
    """Whether no function name can match: a prefix too long, or with a character no function
    name has (such a prefix is also kept from DynamoDB, whose key it could overflow)."""
    return pattern is not None and (len(pattern.prefix) > MAX_NAME_CHARS
                                    or not FUNCTION_NAME_CHARS.fullmatch(pattern.prefix))


def _not_found(database: str, name: str) -> EntityNotFoundException:
    return EntityNotFoundException(f"Function {database}.{name} does not exist.", RESOURCE_FUNCTION, name)


def _ms(seconds: float) -> int:
    return int(round(seconds * 1000))


def create_function(catalog_key: str, database_name: str, body: dict[str, Any], owner: str) -> None:
    """Create a function from a CreateFunctionRequest body: one conditional put, so of racing
    creates exactly one wins. 404 for the database, 409 if the name is taken, 400 if invalid."""
    access.require("CreateUserDefinedFunction", catalog_key, database_name)
    database = require_database(catalog_key, database_name)
    function = Function.from_request(body)
    stamp = _ms(now())
    data = {"uuid": str(uuid.uuid4()), **function.to_json(), "owner": owner, "createdAt": stamp,
            "createdBy": owner, "updatedAt": stamp, "updatedBy": owner}
    if not store.create_function(database.uid, function.name, data):
        raise AlreadyExistsException(f"Function {database.name}.{function.name} already exists.",
                                     RESOURCE_FUNCTION, function.name)


def get_function(catalog_key: str, database_name: str, name: str) -> dict[str, Any]:
    """The GetFunctionResponse JSON; 404 for the database or the function."""
    access.require("GetUserDefinedFunction", catalog_key, database_name)
    database = require_database(catalog_key, database_name)
    found = store.get_function(database.uid, name)
    if found is None:
        raise _not_found(database.name, name)
    return found.data


def alter_function(catalog_key: str, database_name: str, name: str, changes: Any, caller: str) -> None:
    """Apply FunctionChanges (all or none): one read and one put conditional on the item read,
    so a concurrent alter is never overwritten unseen (409 ConcurrentModification, retry)."""
    access.require("UpdateUserDefinedFunction", catalog_key, database_name)
    database = require_database(catalog_key, database_name)
    found = store.get_function(database.uid, name)
    if found is None:
        raise _not_found(database.name, name)
    changed = apply_changes(Function.from_json(found.data), changes)
    data = {**found.data, **changed.to_json(), "updatedAt": _ms(now()), "updatedBy": caller}
    if not store.replace_function(database.uid, found, data):
        if store.get_function(database.uid, name) is None:
            raise _not_found(database.name, name)
        raise ConcurrentModificationException(f"Function {database.name}.{name} was changed concurrently; retry.",
                                              RESOURCE_FUNCTION, name)


def drop_function(catalog_key: str, database_name: str, name: str) -> None:
    """Delete a function; 404 for the database or the function."""
    access.require("DeleteUserDefinedFunction", catalog_key, database_name)
    database = require_database(catalog_key, database_name)
    if not store.delete_function(database.uid, name):
        raise _not_found(database.name, name)


def list_functions(catalog_key: str, database_name: str, pattern: Optional[PrefixPattern], after: Optional[str],
                   limit: int, render: Callable[[dict[str, Any]], Any]) -> tuple[list[Any], Optional[str]]:
    """Up to ``limit`` functions in name order after ``after``, each as ``render(JSON)``, and the
    name to resume after (None after the last). One Query of about ``limit`` + 1 items, from the
    pattern's prefix on."""
    access.require("GetUserDefinedFunctions", catalog_key, database_name)
    database = require_database(catalog_key, database_name)
    if _nothing_matches(pattern):
        return [], None
    if pattern is not None and pattern.exact:
        found = store.get_function(database.uid, pattern.prefix) if after is None else None
        return ([render(found.data)] if found is not None else []), None
    items = store.query_functions(database.uid, pattern.prefix if pattern else "", after, min(limit + 1, 1000))
    return take_page(items, limit, lambda f: render(f.data), lambda f: f.name)


def list_functions_globally(catalog_key: str, database_pattern: Optional[PrefixPattern],
                            pattern: Optional[PrefixPattern], after: Optional[list[str]],
                            limit: int) -> tuple[list[dict[str, str]], Optional[list[str]]]:
    """Identifiers (``{"database", "object"}``) of the functions of every database whose name
    matches ``database_pattern`` and that the caller may see (``databases_from``), in (database,
    name) order after ``after`` ([database, name]): one Query per database visited, databases
    read a page at a time."""
    page: list[dict[str, str]] = []
    if _nothing_matches(pattern) or (database_pattern is not None and len(database_pattern.prefix) > MAX_NAME_CHARS):
        return page, None
    for database in databases_from(catalog_key, database_pattern, after[0] if after else None):
        resume = after[1] if after and database.name == after[0] else None
        for function in store.query_functions(database.uid, pattern.prefix if pattern else "", resume,
                                              min(limit + 1, 1000)):
            if pattern is not None and not pattern.matches(function.name):
                continue
            if len(page) == limit:
                last = page[-1]
                return page, [last["database"], last["object"]]
            page.append({"database": database.name, "object": function.name})
    return page, None

