"""Paimon's paged listings: ``maxResults``, ``pageToken`` and the prefix name patterns.

Tokens are the catalog's signed page tokens (``page_tokens``), bound to the route, the caller's
catalog and the listing's arguments, so a token replayed against another database or pattern
is refused (400). Name patterns are what Paimon's servers accept (RESTUtil.validatePrefixSqlPattern
and the reference server's sqlPatternToRegex): a literal name, or a literal prefix followed by
``%`` (``\\`` escapes the next character); a ``%`` anywhere but at the end is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from chalicelib import page_tokens
from chalicelib.domain.paimon import names
from chalicelib.errors import ServiceError
from chalicelib.protocol.paimon.wire import PaimonRequest, bad_request

DEFAULT_MAX_RESULTS = 100  # the reference server's DEFAULT_MAX_RESULTS, also its cap


def max_results(request: PaimonRequest) -> int:
    """``maxResults``: absent or <= 0 is the default, more than the cap is the cap (as
    Paimon's server); not an integer is 400."""
    text = request.query.get("maxResults")
    if text is None or not text.strip():
        return DEFAULT_MAX_RESULTS
    try:
        value = int(text.strip())
    except ValueError:
        raise bad_request(f"Invalid input for queryParameter maxResults: {text[:64]}") from None
    return DEFAULT_MAX_RESULTS if value <= 0 else min(value, DEFAULT_MAX_RESULTS)


@dataclass(frozen=True)
class NamePattern:
    """A parsed name pattern: names equal to ``exact``, or starting with ``prefix``."""

    prefix: str = ""
    exact: Optional[str] = None


# The name patterns of listings and the kind of name each matches (names.too_long).
_PATTERN_KINDS = {"databaseNamePattern": "database", "tableNamePattern": "table", "viewNamePattern": "view",
                  "functionNamePattern": "function"}


def name_pattern(request: PaimonRequest, parameter: str) -> NamePattern:
    """The query parameter ``parameter`` as a NamePattern (absent or blank: every name)."""
    pattern = request.query.get(parameter)
    if pattern is None or not pattern.strip():
        return NamePattern()
    literal: list[str] = []
    escaped = wildcard = False
    for char in pattern:
        if escaped:
            if wildcard:
                raise bad_request(f"{parameter}: Can only support prefix sql like pattern query now.")
            literal.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "%":
            wildcard = True
        elif wildcard:
            raise bad_request(f"{parameter}: Can only support prefix sql like pattern query now.")
        else:
            literal.append(char)
    text = "".join(literal)
    kind = _PATTERN_KINDS.get(parameter)
    if kind is not None and names.too_long(kind, text) is not None:
        # No name can match: refused before a key range that long reaches the store.
        raise bad_request(f"{parameter}: the name or prefix must be {names.too_long(kind, text)}")
    return NamePattern(prefix=text) if wildcard else NamePattern(exact=text)


def read_token(request: PaimonRequest, *scope: Any) -> Any:
    """The position ``pageToken`` carries (None on a first call); 400 if it was not issued for
    this listing."""
    token = request.query.get("pageToken")
    if token is None or not token.strip():
        return None
    try:
        return page_tokens.decode_token(_scope(request, scope), token)
    except (ServiceError, ValueError):
        raise bad_request("Invalid pageToken: it was not issued for this listing (a token is bound to the "
                          "path, catalog and name pattern that produced it)") from None


def make_token(request: PaimonRequest, position: Any, *scope: Any) -> Optional[str]:
    """A ``nextPageToken`` for ``position`` (None: this was the last page)."""
    if position is None:
        return None
    return page_tokens.encode_token(_scope(request, scope), position)


def _scope(request: PaimonRequest, scope: tuple[Any, ...]) -> str:
    context = request.context
    return page_tokens.request_scope("paimon", request.route, context.region, context.account_id, *scope)
