"""What every Glue and Lake Formation handler family shares: name folding, lookups that raise AWS
errors, NextToken paging."""

from __future__ import annotations

from typing import Any

from chalicelib import page_tokens as tokens
from chalicelib.context import RequestContext
from chalicelib.service import lookups
from chalicelib.service.lookups import fold, require_table  # noqa: F401  (re-exported for the handlers)
from chalicelib.service.paging import MAX_PAGE_BYTES, take_page  # noqa: F401  (re-exported for the handlers)
from chalicelib.service.table_ref import TableRef


def require_database(ctx: RequestContext, params: dict[str, Any], name: str) -> lookups.Database:
    """The database item in the request's catalog, or EntityNotFoundException as Glue words it."""
    return lookups.require_database(ctx.catalog_key(params), name)


def table_ref(ctx: RequestContext, params: dict[str, Any]) -> TableRef:
    """The table a request names (DatabaseName, TableName, in its CatalogId)."""
    return TableRef(ctx.catalog_key(params), ctx.catalog_id(params), params["DatabaseName"], params["TableName"])


def page_size(params: dict[str, Any], default: int) -> int:
    """MaxResults (already range-checked against the model) or the operation's default."""
    return params.get("MaxResults") or default


def read_token(ctx: RequestContext, params: dict[str, Any], *scope: Any) -> Any:
    """The position carried by NextToken (None on a first call)."""
    token = params.get("NextToken")
    if not token:
        return None
    return tokens.decode_token(tokens.request_scope(ctx.operation, ctx.region, *scope), token)


def make_token(ctx: RequestContext, position: Any, *scope: Any) -> str | None:
    """A NextToken for ``position`` bound to this request, or None when there is no more."""
    if position is None:
        return None
    return tokens.encode_token(tokens.request_scope(ctx.operation, ctx.region, *scope), position)
