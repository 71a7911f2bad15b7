"""Database API: CreateDatabase, GetDatabase, GetDatabases, UpdateDatabase, DeleteDatabase.

The catalog rules live in ``service.databases``; these actions read the request and shape Glue's answer.
"""

from __future__ import annotations

from typing import Any

from chalicelib.protocol.aws_json.common import make_token, page_size, read_token
from chalicelib.context import RequestContext
from chalicelib.errors import InvalidInputException
from chalicelib.service import databases


def _render(ctx: RequestContext, params: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "CatalogId": ctx.catalog_id(params)}


def create_database(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a database; AlreadyExistsException if the (lowercased) name is taken."""
    databases.create_database(ctx.catalog_key(params), params["DatabaseInput"], params.get("Tags"))
    return {}


def get_database(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """One database's definition."""
    return {"Database": _render(ctx, params, databases.get_database(ctx.catalog_key(params), params["Name"]))}


def get_databases(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Databases of the catalog in name order, paged by MaxResults / NextToken."""
    attributes = params.get("AttributesToGet")
    if attributes is not None and "NAME" not in attributes:
        raise InvalidInputException("AttributesToGet must include NAME")
    scope = (ctx.catalog_key(params), attributes, params.get("ResourceShareType"))
    after = read_token(ctx, params, *scope)
    page, last = databases.list_databases(ctx.catalog_key(params), after, page_size(params, 100),
                                          lambda doc: _render(ctx, params, doc), names_only=attributes is not None)
    return {"DatabaseList": page, **_token_member(make_token(ctx, last, *scope))}


def _token_member(token: str | None) -> dict[str, str]:
    return {"NextToken": token} if token else {}


def update_database(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Replace a database's definition (the name cannot change; CreateTime is kept)."""
    databases.update_database(ctx.catalog_key(params), params["Name"], params["DatabaseInput"])
    return {}


def delete_database(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete a database and everything in it (tables, versions, partitions...)."""
    databases.delete_database(ctx.catalog_key(params), params["Name"])
    return {}
