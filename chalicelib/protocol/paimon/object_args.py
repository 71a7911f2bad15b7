"""What the view and function handlers share: name patterns as the service reads them, and
the Identifier JSON of request bodies."""

from __future__ import annotations

from typing import Any, Optional

from chalicelib.domain.paimon.like_patterns import PrefixPattern
from chalicelib.protocol.paimon.paging import name_pattern
from chalicelib.protocol.paimon.wire import PaimonRequest, bad_request


def prefix_pattern(request: PaimonRequest, parameter: str) -> Optional[PrefixPattern]:
    """Query parameter ``parameter`` (a prefix LIKE pattern, ``paging.name_pattern``) as a
    PrefixPattern; None when absent or blank (every name)."""
    pattern = name_pattern(request, parameter)
    if pattern.exact is not None:
        return PrefixPattern(pattern.exact, True)
    return PrefixPattern(pattern.prefix, False) if pattern.prefix else None


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
