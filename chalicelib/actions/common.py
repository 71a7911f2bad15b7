"""Pieces every action family shares: name folding, lookups that raise AWS errors, paging."""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Iterable, Iterator, TypeVar

from chalicelib.context import RequestContext
from chalicelib.errors import InvalidInputException, database_not_found, table_not_found
from chalicelib.protocol import tokens
from chalicelib.store import catalog
from chalicelib.store.models import DatabaseItem, TableItem

T = TypeVar("T")

# A Lambda response is capped at 6 MB; stop filling a page well before that.
MAX_PAGE_BYTES = 4_500_000


def now() -> float:
    """A timestamp as the JSON protocols carry it: epoch seconds."""
    return round(time.time(), 3)


def fold(name: str) -> str:
    """Glue folds database and table names to lowercase (Hive compatibility)."""
    return name.lower()


def require_database(ctx: RequestContext, params: dict[str, Any], name: str) -> DatabaseItem:
    """The database item, or EntityNotFoundException as Glue words it."""
    item = catalog.get_database(ctx.catalog_key(params), fold(name))
    if item is None:
        raise database_not_found(fold(name))
    return item


def require_table(database: DatabaseItem, name: str) -> TableItem:
    """The current table item, or EntityNotFoundException."""
    item = catalog.get_table(database.uid, fold(name))
    if item is None:
        raise table_not_found(fold(name))
    return item


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


def take_page(items: Iterable[T], limit: int, render: Callable[[T], Any],
              position: Callable[[T], Any], sized: bool = False) -> tuple[list[dict], Any]:
    """Render up to ``limit`` items (``render`` returns None to skip one) within the byte budget.

    With ``sized``, ``render`` returns (object, its JSON size) so nothing is serialized twice.
    Returns the page and the position to resume after, or None when the items ran out.
    """
    page: list[dict] = []
    size = 0
    iterator: Iterator[T] = iter(items)
    last = None
    for item in iterator:
        rendered = render(item)
        if rendered is not None:
            if sized:
                rendered, item_size = rendered
                size += item_size
            else:
                size += len(json.dumps(rendered, separators=(",", ":"), default=str))
            if page and size > MAX_PAGE_BYTES:
                return page, last
            page.append(rendered)
        last = position(item)
        if len(page) >= limit:
            # Only hand out a token when something follows, so clients see a clean last page.
            return page, (last if next(iterator, None) is not None else None)
    return page, None


_MAX_VERSION = 2**63 - 1  # Glue's version ids are Java longs (and DynamoDB numbers hold 38 digits)


def parse_version(text: str, member: str = "VersionId") -> int:
    """Table version ids are string representations of non-negative integers."""
    # isdigit() alone admits other scripts' digits and superscripts ("²"), which int() refuses.
    if not (text.isascii() and text.isdigit()) or int(text) > _MAX_VERSION:
        raise InvalidInputException(
            f"{member} must be a string representation of an integer from 0 to {_MAX_VERSION}, got '{text}'")
    return int(text)
