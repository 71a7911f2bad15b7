"""User-defined function API: CreateUserDefinedFunction, GetUserDefinedFunction,
UpdateUserDefinedFunction, DeleteUserDefinedFunction, GetUserDefinedFunctions.

The catalog rules live in ``service.user_functions``; these actions read the request and shape
Glue's answer.
"""

from __future__ import annotations

from typing import Any

from chalicelib.protocol.aws_json.common import make_token, page_size, read_token
from chalicelib.context import RequestContext
from chalicelib.service import user_functions


def _render(ctx: RequestContext, params: dict[str, Any], doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "CatalogId": ctx.catalog_id(params)}


def create_user_defined_function(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a function in a database; AlreadyExistsException if the (lowercased) name is taken."""
    user_functions.create_function(ctx.catalog_key(params), params["DatabaseName"], params["FunctionInput"])
    return {}


def get_user_defined_function(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """One function's definition."""
    doc = user_functions.get_function(ctx.catalog_key(params), params["DatabaseName"], params["FunctionName"])
    return {"UserDefinedFunction": _render(ctx, params, doc)}


def update_user_defined_function(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Replace a function's definition (a different FunctionInput.FunctionName renames it)."""
    user_functions.update_function(ctx.catalog_key(params), params["DatabaseName"], params["FunctionName"],
                                   params["FunctionInput"])
    return {}


def delete_user_defined_function(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Delete a function."""
    user_functions.delete_function(ctx.catalog_key(params), params["DatabaseName"], params["FunctionName"])
    return {}


def get_user_defined_functions(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Functions whose names match Pattern, in one database or (without DatabaseName) across
    every database of the catalog, in (database, name) order, paged by MaxResults / NextToken."""
    database_name = params.get("DatabaseName")
    scope = (ctx.catalog_key(params), database_name.lower() if database_name else None, params["Pattern"],
             params.get("FunctionType"))
    after = read_token(ctx, params, *scope)
    page, last = user_functions.list_functions(ctx.catalog_key(params), database_name, params["Pattern"],
                                               params.get("FunctionType"), after, page_size(params, 100),
                                               lambda doc: _render(ctx, params, doc))
    token = make_token(ctx, last, *scope)
    return {"UserDefinedFunctions": page, **({"NextToken": token} if token else {})}
