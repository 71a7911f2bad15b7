"""``pageToken`` / ``pageSize`` of the listings, and ``next-page-token`` in their answers.

A client that sends no ``pageSize`` still gets pages (with a token), as the spec allows: pyiceberg
and Iceberg Java follow ``next-page-token`` until it is null. Tokens are the shared opaque,
tamper-proof codec (chalicelib.page_tokens), bound to the route, caller and catalog.
"""

from __future__ import annotations

from typing import Any, Optional

from chalicelib import page_tokens
from chalicelib.errors import ServiceError
from chalicelib.protocol.iceberg.wire import IcebergRequest, bad_request

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000


def page_size(request: IcebergRequest) -> int:
    """``pageSize``: absent is the default, above the cap the cap; not a positive integer is 400."""
    text = request.query.get("pageSize")
    if text is None or not text.strip():
        return DEFAULT_PAGE_SIZE
    try:
        value = int(text.strip())
    except ValueError:
        value = 0
    if value <= 0:
        raise bad_request(f"Invalid pageSize: {text[:64]!r} (a positive integer)")
    return min(value, MAX_PAGE_SIZE)


def read_token(request: IcebergRequest, *scope: Any) -> Any:
    """The position ``pageToken`` carries (None on a first call); 400 if it was not issued for this
    listing."""
    token = request.query.get("pageToken")
    if token is None or not token.strip():
        return None
    try:
        return page_tokens.decode_token(_scope(request, scope), token)
    except (ServiceError, ValueError):
        raise bad_request("Invalid pageToken: it was not issued for this listing") from None


def make_token(request: IcebergRequest, position: Any, *scope: Any) -> Optional[str]:
    """A ``next-page-token`` for ``position`` (None: this was the last page)."""
    if position is None:
        return None
    return page_tokens.encode_token(_scope(request, scope), position)


def _scope(request: IcebergRequest, scope: tuple[Any, ...]) -> str:
    context = request.context
    return page_tokens.request_scope("iceberg", request.route, context.region, context.account_id,
                                     request.path.get("catalog") or "", *scope)
