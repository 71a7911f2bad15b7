"""Table API: CreateTable, UpdateTable, DeleteTable, BatchDeleteTable, GetTable, GetTables.

With a TransactionId, writes are recorded in the transaction and reads see its snapshot plus
its own changes; without, every write is a commit of its own (see ``service.table_transactions``).
"""

from __future__ import annotations

from typing import Any

from chalicelib import timestamps
from chalicelib.actions import action
from chalicelib.service.partition_indexes import (check_partition_key_change, indexes_for_new_table,
                                                  partition_keys_of)
from chalicelib.actions.common import (fold, make_token, now, page_size, parse_version, read_token,
                                       require_database, require_table, take_page)
from chalicelib.context import RequestContext
from chalicelib.domain.name_patterns import compile_name_pattern, matches
from chalicelib.errors import (ConcurrentModificationException, EntityNotFoundException,
                               InvalidInputException, database_not_found, table_already_exists,
                               table_not_found)
from chalicelib.service import search_index
from chalicelib.service.snapshots import database_snapshot, require_table_as_of, table_as_of
from chalicelib.service.table_transactions import TableWriter, autocommit
from chalicelib.store import catalog
from chalicelib.store import statistics as statistics_store

# TableInput members copied into the stored Table as given (Name is folded separately).
_TABLE_INPUT_MEMBERS = ("Description", "Owner", "LastAccessTime", "LastAnalyzedTime", "Retention",
                        "StorageDescriptor", "PartitionKeys", "ViewOriginalText", "ViewExpandedText",
                        "TableType", "Parameters", "TargetTable", "ViewDefinition")
_VALID_ATTRIBUTE_SETS = ({"NAME"}, {"NAME", "TABLE_TYPE"})


def table_document(table_input: dict[str, Any], database_name: str, create_time: float,
                   update_time: float) -> dict[str, Any]:
    """The stored Table object for a TableInput (VersionId and CatalogId are added on read)."""
    doc: dict[str, Any] = {"Name": fold(table_input["Name"]), "DatabaseName": database_name}
    # A member sent as JSON null is absent, as AWS's JSON protocols read it.
    doc.update({k: table_input[k] for k in _TABLE_INPUT_MEMBERS if table_input.get(k) is not None})
    doc.setdefault("PartitionKeys", [])
    doc["CreateTime"] = create_time
    doc["UpdateTime"] = update_time
    doc["IsRegisteredWithLakeFormation"] = False
    return doc


def render_table(ctx: RequestContext, params: dict[str, Any], doc: dict[str, Any],
                 version: int) -> dict[str, Any]:
    """A stored table document as the API returns it.

    Timestamps no client can parse (stored before they were refused) are left out: one would
    make the whole GetTables or SearchTables page unreadable.
    """
    return {**timestamps.drop_unreadable(doc), "CatalogId": ctx.catalog_id(params), "VersionId": str(version)}


def _table_name(params: dict[str, Any]) -> str:
    table_input = params.get("TableInput")
    if table_input is None:
        raise InvalidInputException("TableInput is required")
    name = params.get("Name")
    if name is not None and fold(name) != fold(table_input["Name"]):
        raise InvalidInputException(
            f"Name '{name}' differs from TableInput.Name '{table_input['Name']}'")
    return fold(table_input["Name"])


@action("glue", "CreateTable")
def create_table(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a table at VersionId 0."""
    name = _table_name(params)
    database = require_database(ctx, params, params["DatabaseName"])
    created = now()
    doc = table_document(params["TableInput"], database.name, created, created)
    indexes = indexes_for_new_table(params.get("PartitionIndexes"), partition_keys_of(doc))
    if params.get("TransactionId"):
        writer = TableWriter(ctx, params["TransactionId"], database, name)
        if writer.seen is not None:
            raise table_already_exists()
        writer.require_fresh()
        search_index.before_table_write(database.catalog, database.name, database.uid, doc)
        writer.create(doc, indexes)
        return {}
    search_index.before_table_write(database.catalog, database.name, database.uid, doc)
    try:
        autocommit(database, lambda stamp: catalog.create_table(database, name, doc, indexes, stamp))
    except catalog.ConditionFailed:
        if catalog.get_table(database.uid, name) is not None:
            raise table_already_exists() from None
        raise database_not_found(database.name) from None
    return {}


@action("glue", "UpdateTable")
def update_table(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Replace a table's definition, archiving the previous version unless SkipArchive.

    With VersionId, the update applies only if that is still the current version (optimistic
    locking); of several racing updates from one version exactly one succeeds.
    """
    name = _table_name(params)
    database = require_database(ctx, params, params["DatabaseName"])
    writer = TableWriter(ctx, params["TransactionId"], database, name) if params.get("TransactionId") else None
    if writer is not None:
        if writer.seen is None:
            raise table_not_found(name)
        current, old, version = writer.seen
    else:
        current = require_table(database, name)
        old, version = catalog.load(current), current.version
    expected = params.get("VersionId")
    if expected is not None and parse_version(expected) != version:
        raise _concurrent_update()
    doc = table_document(params["TableInput"], database.name, old["CreateTime"], now())
    check_partition_key_change(current, partition_keys_of(old), partition_keys_of(doc))
    archive = not params.get("SkipArchive", False)
    if writer is not None:
        writer.require_fresh()
        search_index.before_table_write(database.catalog, database.name, database.uid, doc, old)
        writer.update(doc, archive, _column_names(old) - _column_names(doc))
        return {}
    search_index.before_table_write(database.catalog, database.name, database.uid, doc, old)
    try:
        autocommit(database, lambda stamp: catalog.update_table(current, doc, archive, stamp))
    except catalog.ConditionFailed:
        raise _concurrent_update() from None
    search_index.after_table_write(database.catalog, database.name, doc, old)
    dropped = _column_names(old) - _column_names(doc)
    if dropped:
        catalog.bump_column_epochs(current, sorted(dropped))
        statistics_store.delete_columns(current.uid, "", sorted(dropped))
    return {}


def _column_names(doc: dict[str, Any]) -> set[str]:
    columns = (doc.get("StorageDescriptor") or {}).get("Columns") or []
    return {c["Name"].lower() for c in columns} | {k["Name"].lower() for k in doc.get("PartitionKeys") or []}


def _concurrent_update() -> ConcurrentModificationException:
    return ConcurrentModificationException("Update table failed due to concurrent modifications.")


def _delete(ctx: RequestContext, params: dict[str, Any], database, name: str) -> None:
    if params.get("TransactionId"):
        writer = TableWriter(ctx, params["TransactionId"], database, fold(name))
        if writer.seen is None:
            raise table_not_found(fold(name))
        writer.require_fresh()
        writer.delete()
        return
    item = require_table(database, name)
    try:
        autocommit(database, lambda stamp: catalog.delete_table_item(item, stamp))
    except catalog.ConditionFailed:
        raise table_not_found(name) from None
    catalog.purge_table(item)
    search_index.after_table_write(database.catalog, database.name, None, catalog.load(item))


@action("glue", "DeleteTable")
def delete_table(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete a table with its versions and everything below it."""
    _delete(ctx, params, require_database(ctx, params, params["DatabaseName"]), params["Name"])
    return {}


@action("glue", "BatchDeleteTable")
def batch_delete_table(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete up to 100 tables; each failure is reported in Errors, the rest proceed."""
    database = require_database(ctx, params, params["DatabaseName"])
    errors = []
    for name in params["TablesToDelete"]:
        try:
            _delete(ctx, params, database, name)
        except (EntityNotFoundException, ConcurrentModificationException) as error:
            errors.append({"TableName": name, "ErrorDetail": {"ErrorCode": error.code,
                                                              "ErrorMessage": error.message}})
    return {"Errors": errors}


@action("glue", "GetTable")
def get_table(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """The definition of one table: latest, as a transaction sees it, or as of QueryAsOfTime."""
    database = require_database(ctx, params, params["DatabaseName"])
    if params.get("QueryAsOfTime") is not None:
        item = require_table(database, params["Name"])
        doc, version = require_table_as_of(item, params.get("QueryAsOfTime"))
        return {"Table": render_table(ctx, params, doc, version)}
    name = fold(params["Name"])
    found = database_snapshot(ctx, params.get("TransactionId"), database, name).get(name)
    if found is None:
        raise table_not_found(name)
    return {"Table": render_table(ctx, params, found[1], found[2])}


@action("glue", "GetTables")
def get_tables(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Tables of a database in name order, optionally filtered by a name pattern."""
    database = require_database(ctx, params, params["DatabaseName"])
    expression = params.get("Expression") or ""
    pattern = compile_name_pattern(expression) if expression else None
    attributes = params.get("AttributesToGet")
    if attributes is not None and set(attributes) not in _VALID_ATTRIBUTE_SETS:
        raise InvalidInputException("AttributesToGet must be [NAME] or [NAME, TABLE_TYPE]")
    as_of = params.get("QueryAsOfTime")
    scope = (database.catalog, database.uid, expression, attributes, as_of, params.get("TransactionId"))
    after = read_token(ctx, params, *scope)

    def render(entry: tuple[str, Any]) -> dict[str, Any] | None:
        name, found = entry
        if pattern is not None and not matches(pattern, name):
            return None
        if as_of is not None:
            found = table_as_of(found, as_of)
            if found is None:
                return None
        else:
            found = found[1:]
        table = render_table(ctx, params, *found)
        if attributes is not None:
            return {"Name": table["Name"], **({"TableType": table["TableType"]}
                                              if "TABLE_TYPE" in attributes and "TableType" in table else {})}
        return table

    limit = page_size(params, 100)
    if as_of is not None:
        entries = ((item.name, item) for item in catalog.query_tables(database.uid, after, min(limit + 1, 100)))
    else:
        entries = database_snapshot(ctx, params.get("TransactionId"), database).listing(after, min(limit + 1, 100))
    page, last = take_page(entries, limit, render, lambda entry: entry[0])
    token = make_token(ctx, last, *scope)
    return {"TableList": page, **({"NextToken": token} if token else {})}
