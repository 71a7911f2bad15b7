"""What several Paimon handler families share: the table a path names, page parameters and
page tokens (the Glue wire's HMAC codec, bound to the call and its arguments)."""

from __future__ import annotations

from typing import Any, Optional

from chalicelib import page_tokens
from chalicelib.protocol.paimon.wire import PaimonRequest, bad_request
from chalicelib.protocol.wire import install_token_key
from chalicelib.service import paimon_snapshots
from chalicelib.service.table_ref import TableRef

DEFAULT_PAGE = 100
MAX_PAGE = 1000


def table_ref(request: PaimonRequest) -> TableRef:
    """The table of a ``/databases/{database}/tables/{table}/...`` path, in the caller's catalog."""
    ctx = request.context
    return TableRef(ctx.catalog_key({}), ctx.catalog_id({}), request.path["database"], request.path["table"])


def table_of(request: PaimonRequest) -> paimon_snapshots.PaimonTable:
    """The Paimon table (and branch: ``t$branch_b``) the path names; 404 otherwise."""
    return paimon_snapshots.open_table(table_ref(request))


def max_results(request: PaimonRequest) -> int:
    """``maxResults``: a positive integer (default 100, at most 1,000 per page)."""
    text = request.query.get("maxResults")
    if text is None or text == "":
        return DEFAULT_PAGE
    try:
        value = int(text)
    except ValueError:
        raise bad_request(f"maxResults must be a positive integer, not {text!r}") from None
    if value <= 0:
        raise bad_request(f"maxResults must be a positive integer, not {value}")
    return min(value, MAX_PAGE)


def _scope(request: PaimonRequest, *extra: Any) -> str:
    return page_tokens.request_scope("paimon", request.route, request.context.catalog_key({}),
                                     sorted(request.path.items()), *extra)


def page_position(request: PaimonRequest, *extra: Any) -> Optional[Any]:
    """The position ``pageToken`` carries (None without one); 400 for a token not issued for
    this call and these arguments."""
    token = request.query.get("pageToken")
    if not token:
        return None
    install_token_key()
    return page_tokens.decode_token(_scope(request, *extra), token)


def next_token(request: PaimonRequest, position: Optional[Any], *extra: Any) -> Optional[str]:
    """The ``nextPageToken`` for a resume position (None: the last page)."""
    if position is None:
        return None
    install_token_key()
    return page_tokens.encode_token(_scope(request, *extra), position)
