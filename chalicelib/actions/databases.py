"""Database API: CreateDatabase, GetDatabase, GetDatabases, UpdateDatabase, DeleteDatabase."""

from __future__ import annotations

from typing import Any

from chalicelib.actions import action
from chalicelib.actions.common import (fold, make_token, now, page_size, read_token,
                                       require_database, take_page)
from chalicelib.context import RequestContext
from chalicelib.errors import (ConcurrentModificationException, InvalidInputException,
                               database_already_exists)
from chalicelib.service import search_index
from chalicelib.store import catalog

# What Glue reports when a database is created without explicit default permissions
# (Lake Formation's "use only IAM access control" default).
DEFAULT_TABLE_PERMISSIONS = [
    {"Principal": {"DataLakePrincipalIdentifier": "IAM_ALLOWED_PRINCIPALS"}, "Permissions": ["ALL"]}
]
_INPUT_MEMBERS = ("Description", "LocationUri", "Parameters", "CreateTableDefaultPermissions",
                  "TargetDatabase", "FederatedDatabase")


def _database_document(database_input: dict[str, Any], create_time: float) -> dict[str, Any]:
    doc = {"Name": fold(database_input["Name"])}
    doc.update({k: database_input[k] for k in _INPUT_MEMBERS if k in database_input})
    doc.setdefault("CreateTableDefaultPermissions", DEFAULT_TABLE_PERMISSIONS)
    doc["CreateTime"] = create_time
    return doc


def _render(ctx: RequestContext, params: dict[str, Any], item) -> dict[str, Any]:
    return {**catalog.load(item), "CatalogId": ctx.catalog_id(params)}


@action("glue", "CreateDatabase")
def create_database(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a database; AlreadyExistsException if the (lowercased) name is taken."""
    doc = _database_document(params["DatabaseInput"], now())
    uid = catalog.new_uid()
    search_index.before_database_write(ctx.catalog_key(params), uid, doc)
    try:
        catalog.create_database(ctx.catalog_key(params), doc["Name"], doc, uid)
    except catalog.ConditionFailed:
        raise database_already_exists() from None
    return {}


@action("glue", "GetDatabase")
def get_database(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """One database's definition."""
    return {"Database": _render(ctx, params, require_database(ctx, params, params["Name"]))}


@action("glue", "GetDatabases")
def get_databases(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Databases of the catalog in name order, paged by MaxResults / NextToken."""
    attributes = params.get("AttributesToGet")
    if attributes is not None and "NAME" not in attributes:
        raise InvalidInputException("AttributesToGet must include NAME")
    scope = (ctx.catalog_key(params), attributes, params.get("ResourceShareType"))
    after = read_token(ctx, params, *scope)

    def render(item) -> dict[str, Any]:
        if attributes is not None:
            return {"Name": item.name}
        return _render(ctx, params, item)

    limit = page_size(params, 100)
    items = catalog.query_databases(ctx.catalog_key(params), after, limit)
    page, last = take_page(items, limit, render, lambda item: item.name)
    return {"DatabaseList": page, **_token_member(make_token(ctx, last, *scope))}


def _token_member(token: str | None) -> dict[str, str]:
    return {"NextToken": token} if token else {}


@action("glue", "UpdateDatabase")
def update_database(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Replace a database's definition (the name cannot change; CreateTime is kept)."""
    item = require_database(ctx, params, params["Name"])
    database_input = params["DatabaseInput"]
    if fold(database_input["Name"]) != item.name:
        raise InvalidInputException(
            f"DatabaseInput.Name '{database_input['Name']}' differs from Name '{params['Name']}': "
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
    return {}


@action("glue", "DeleteDatabase")
def delete_database(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete a database and everything in it (tables, versions, partitions...)."""
    item = require_database(ctx, params, params["Name"])
    try:
        catalog.delete_database_item(item)
    except catalog.ConditionFailed:
        raise ConcurrentModificationException("Database was deleted or re-created concurrently.") from None
    for table in catalog.purge_database(item.uid):
        search_index.after_table_write(item.catalog, item.name, None, catalog.load(table))
    search_index.after_database_write(item.catalog, None, catalog.load(item))
    return {}
