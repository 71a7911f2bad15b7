"""Pieces every action family shares: name folding, lookups that raise AWS errors, paging."""

from __future__ import annotations

import time
from typing import Any

from chalicelib.context import RequestContext
from chalicelib.errors import InvalidInputException
from chalicelib.protocol import tokens
from chalicelib.service import lookups
from chalicelib.service.lookups import fold, require_table  # noqa: F401  (re-exported for the actions)
from chalicelib.service.paging import MAX_PAGE_BYTES, take_page  # noqa: F401  (re-exported for the actions)
from chalicelib.service.table_ref import TableRef
from chalicelib.store.models import DatabaseItem


def now() -> float:
    """A timestamp as the JSON protocols carry it: epoch seconds."""
    return round(time.time(), 3)


def require_database(ctx: RequestContext, params: dict[str, Any], name: str) -> DatabaseItem:
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


_MAX_VERSION = 2**63 - 1  # Glue's version ids are Java longs (and DynamoDB numbers hold 38 digits)


def parse_version(text: str, member: str = "VersionId") -> int:
    """Table version ids are string representations of non-negative integers."""
    # isdigit() alone admits other scripts' digits and superscripts ("²"), which int() refuses.
    if not (text.isascii() and text.isdigit()) or int(text) > _MAX_VERSION:
        raise InvalidInputException(
            f"{member} must be a string representation of an integer from 0 to {_MAX_VERSION}, got '{text}'")
    return int(text)
