"""Page parameters, page tokens and name patterns of the Paimon listings (views, functions).

``maxResults`` and ``pageToken`` as pypaimon sends them; a token is the Glue wire's HMAC codec
(``page_tokens``) bound to the route, the caller's catalog, the path and the listing's filters,
so it cannot be replayed against another listing. Name patterns are Paimon's prefix LIKE patterns.
"""

from __future__ import annotations

from typing import Any, Optional

from chalicelib import page_tokens
from chalicelib.domain.paimon.like_patterns import PrefixPattern, parse_prefix_pattern
from chalicelib.protocol.paimon.wire import PaimonRequest, bad_request
from chalicelib.protocol.wire import install_token_key

DEFAULT_PAGE = 100
MAX_PAGE = 1000


def max_results(request: PaimonRequest) -> int:
    """``maxResults``: a positive integer (default 100, at most 1,000 per page)."""
    text = request.query.get("maxResults")
    if text is None or text == "":
        return DEFAULT_PAGE
    try:
        value = int(text)
    except ValueError:
        raise bad_request(f"Invalid input for queryParameter maxResults: {text[:32]!r} (a positive integer)") from None
    if value <= 0:
        raise bad_request(f"Invalid input for queryParameter maxResults: {value} (a positive integer)")
    return min(value, MAX_PAGE)


def name_pattern(request: PaimonRequest, parameter: str) -> Optional[PrefixPattern]:
    """The prefix LIKE pattern of query parameter ``parameter`` (None when absent or empty)."""
    text = request.query.get(parameter)
    return parse_prefix_pattern(text, parameter) if text else None


def _scope(request: PaimonRequest, filters: tuple[Any, ...]) -> str:
    return page_tokens.request_scope("paimon", request.route, request.context.catalog_key({}),
                                     sorted(request.path.items()), *filters)


def page_position(request: PaimonRequest, *filters: Any) -> Optional[Any]:
    """The position ``pageToken`` carries (None without one); 400 for a token not issued for this
    listing with these filters."""
    token = request.query.get("pageToken")
    if not token:
        return None
    install_token_key()
    return page_tokens.decode_token(_scope(request, filters), token)


def next_token(request: PaimonRequest, position: Optional[Any], *filters: Any) -> Optional[str]:
    """The ``nextPageToken`` for a resume position (None: the last page)."""
    if position is None:
        return None
    install_token_key()
    return page_tokens.encode_token(_scope(request, filters), position)


def identifier(value: Any, where: str) -> tuple[str, str]:
    """An Identifier JSON (``{"database", "object"}``, as paimon-api writes it) as (database, object)."""
    if not isinstance(value, dict):
        raise bad_request(f"{where} is required and must be an object with database and object")
    parts = []
    for member in ("database", "object"):
        text = value.get(member)
        if not isinstance(text, str) or not text:
            raise bad_request(f"{where}.{member} is required and must be a non-empty string")
        parts.append(text)
    return parts[0], parts[1]
