"""Paimon views: create, get, alter, drop, rename, list (protocol-free rules).

A Paimon view IS a Glue table of type VIRTUAL_VIEW (``domain.paimon.views`` maps one onto the
other), written and read through the ordinary table paths (``service.tables``): a view created
through Paimon is a Glue view with its Representations, and a Glue view reads as a Paimon view.
A Glue table of any other type is not a view (404 VIEW), and its name is taken for views (409).

Lake Formation governs views as the tables they are: every entry point checks the caller's
permissions (``service.access``) under the Glue action it is (CreateTable, GetTable, GetTables' GetDatabase,
UpdateTable, DeleteTable; PaimonRenameTable) before it reads or writes anything, and listings
show only the views the caller may see.
"""

from __future__ import annotations

import uuid
from itertools import dropwhile, takewhile
from typing import Any, Callable, Iterator, Optional

from chalicelib.context import RequestContext
from chalicelib.domain.paimon.like_patterns import PrefixPattern
from chalicelib.domain.paimon.views import (RESOURCE_VIEW, VIEW_TYPE, ViewSchema, apply_changes,
                                            check_view_name, from_glue, to_glue)
from chalicelib.errors import AlreadyExistsException, ConcurrentModificationException, EntityNotFoundException
from chalicelib.service import access, tables
from chalicelib.service.databases import start_position
from chalicelib.service.lookups import Database, Table, fold
from chalicelib.service.paging import take_page
from chalicelib.service.paimon_databases import MAX_NAME_CHARS, databases_from, require_database
from chalicelib.store import catalog


def _not_found(database: str, name: str) -> EntityNotFoundException:
    return EntityNotFoundException(f"View {database}.{name} does not exist.", RESOURCE_VIEW, name)


def _already_exists(database: str, name: str) -> AlreadyExistsException:
    return AlreadyExistsException(f"View {database}.{name} already exists.", RESOURCE_VIEW, name)


def _require_view(database: Database, name: str) -> tuple[Table, dict[str, Any]]:
    item = catalog.get_table(database.uid, fold(name)) if len(name) <= MAX_NAME_CHARS else None
    if item is None:
        raise _not_found(database.name, name)
    doc = catalog.load(item)
    if doc.get("TableType") != VIEW_TYPE:
        raise _not_found(database.name, name)
    return item, doc


def _ms(seconds: Any) -> int:
    return int(round(float(seconds or 0) * 1000))


def view_response(item: Table, doc: dict[str, Any]) -> dict[str, Any]:
    """GetViewResponse JSON: ``id`` (the table uid as a UUID), ``name``, ``schema`` and the audit
    fields (times in ms; owner, and creator and updater as the Glue Owner)."""
    owner = doc.get("Owner")
    return {"id": str(uuid.UUID(hex=item.uid)), "name": item.name, "schema": from_glue(doc).to_json(),
            "owner": owner, "createdAt": _ms(doc.get("CreateTime")), "createdBy": owner,
            "updatedAt": _ms(doc.get("UpdateTime")), "updatedBy": owner}


def create_view(ctx: RequestContext, catalog_key: str, database_name: str, name: str, schema: Any,
                owner: str) -> None:
    """Create a view from a ViewSchema JSON: one Glue CreateTable (atomic; of racing creates
    exactly one wins). 404 for the database, 409 if a view or table has the name, 400 if invalid."""
    access.require("CreateTable", catalog_key, database_name)
    database = require_database(catalog_key, database_name)
    check_view_name(name, "identifier.object")
    view = ViewSchema.from_json(schema)
    table_input = to_glue(fold(name), view)
    table_input["Owner"] = owner
    try:
        tables.create_table(ctx, catalog_key, database.name, table_input)
    except AlreadyExistsException:
        raise _already_exists(database.name, fold(name)) from None


def get_view(catalog_key: str, database_name: str, name: str) -> dict[str, Any]:
    """GetViewResponse JSON; 404 for the database, or if the name is no view."""
    access.require("GetTable", catalog_key, database_name, name)
    database = require_database(catalog_key, database_name)
    return view_response(*_require_view(database, name))


def alter_view(ctx: RequestContext, catalog_key: str, database_name: str, name: str, changes: Any) -> None:
    """Apply ViewChanges (all or none) as one Glue UpdateTable conditional on the version read:
    a concurrent change of the view is never overwritten unseen (409, retry)."""
    access.require("UpdateTable", catalog_key, database_name, name)
    database = require_database(catalog_key, database_name)
    item, doc = _require_view(database, name)
    changed = apply_changes(from_glue(doc), changes, f"{database.name}.{item.name}")
    try:
        tables.update_table(ctx, catalog_key, database.name, to_glue(item.name, changed, doc),
                            version_id=str(int(item.version)))
    except EntityNotFoundException:
        raise _not_found(database.name, item.name) from None
    except ConcurrentModificationException as error:
        raise ConcurrentModificationException(error.message, RESOURCE_VIEW, item.name) from None


def drop_view(ctx: RequestContext, catalog_key: str, database_name: str, name: str) -> None:
    """Delete a view (a Glue DeleteTable); 404 for the database, or if the name is no view."""
    access.require("DeleteTable", catalog_key, database_name, name)
    database = require_database(catalog_key, database_name)
    item, _ = _require_view(database, name)
    try:
        tables.delete_table(ctx, catalog_key, database.name, item.name)
    except EntityNotFoundException:
        raise _not_found(database.name, item.name) from None


def rename_view(ctx: RequestContext, catalog_key: str, source: tuple[str, str], destination: tuple[str, str]) -> None:
    """Rename (or move to another database) a view: ``tables.rename_table``, one transaction
    that keeps the uid (so the view's ``id``) and applies only to the view read. 404 if the
    source is no view (or went meanwhile), 409 if the destination name is taken or the view
    changed meanwhile. Needs ALTER on the view and, into another database, CREATE_TABLE there."""
    access.require("PaimonRenameTable", catalog_key, source[0], source[1])
    if fold(destination[0]) != fold(source[0]):
        access.require("CreateTable", catalog_key, destination[0])
    source_db = require_database(catalog_key, source[0])
    target_db = require_database(catalog_key, destination[0])
    item, _ = _require_view(source_db, source[1])
    target = fold(check_view_name(destination[1], "destination.object"))
    if (source_db.uid, item.name) == (target_db.uid, target):
        raise _already_exists(target_db.name, target)  # Paimon's servers: the destination exists
    try:
        tables.rename_table(ctx, catalog_key, source_db.name, item.name, target_db.name, target, current=item)
    except AlreadyExistsException:
        raise _already_exists(target_db.name, target) from None
    except EntityNotFoundException:
        raise _not_found(source_db.name, item.name) from None
    except ConcurrentModificationException as error:
        raise ConcurrentModificationException(error.message, RESOURCE_VIEW, item.name) from None


def list_views(catalog_key: str, database_name: str, pattern: Optional[PrefixPattern], after: Optional[str],
               limit: int, render: Callable[[Table, dict[str, Any]], Any]) -> tuple[list[Any], Optional[str]]:
    """Up to ``limit`` views in name order after ``after``, each as ``render(item, Table)``, and
    the name to resume after (None after the last). Reads the database's table items from the
    pattern's prefix on (views and tables share the namespace; only views are returned), of
    those the caller may see."""
    # As GetTables: the database must be visible (any permission on it or in it); the listing
    # is then filtered.
    access.require("GetDatabase", catalog_key, database_name)
    database = require_database(catalog_key, database_name)
    if pattern is not None and len(pattern.prefix) > MAX_NAME_CHARS:
        return [], None
    return take_page(_views(database, pattern, after, limit), limit, lambda entry: render(*entry),
                     lambda entry: entry[0].name)


def _views(database: Database, pattern: Optional[PrefixPattern], after: Optional[str],
           limit: int) -> Iterator[tuple[Table, dict[str, Any]]]:
    if pattern is not None:
        pattern = PrefixPattern(fold(pattern.prefix), pattern.exact)  # view names are Glue names
    start = start_position(after, pattern.prefix if pattern is not None else "")
    items: Iterator[Table] = catalog.query_tables(database.uid, start, min(limit + 1, 100))
    if pattern is not None and pattern.prefix:
        prefix = pattern.prefix
        items = takewhile(lambda item: item.name.startswith(prefix),
                          dropwhile(lambda item: item.name < prefix, items))
    visible = access.table_filter(database.catalog, database.name)
    for item in items:
        if (pattern is not None and not pattern.matches(item.name)) or not visible(item.name):
            continue
        doc = catalog.load(item)
        if doc.get("TableType") == VIEW_TYPE:
            yield item, doc


def list_views_globally(catalog_key: str, database_pattern: Optional[PrefixPattern],
                        pattern: Optional[PrefixPattern], after: Optional[list[str]],
                        limit: int) -> tuple[list[dict[str, str]], Optional[list[str]]]:
    """Identifiers (``{"database", "object"}``) of the views of every database whose name matches
    ``database_pattern``, in (database, name) order after ``after`` ([database, name]): those the
    caller may see, in the databases it may see."""
    page: list[dict[str, str]] = []
    if any(p is not None and len(p.prefix) > MAX_NAME_CHARS for p in (database_pattern, pattern)):
        return page, None
    for database in databases_from(catalog_key, database_pattern, after[0] if after else None):
        resume = after[1] if after and database.name == after[0] else None
        for item, _ in _views(database, pattern, resume, limit):
            if len(page) == limit:
                last = page[-1]
                return page, [last["database"], last["object"]]
            page.append({"database": database.name, "object": item.name})
    return page, None
