"""What the view and function handlers share: name patterns as the service reads them, the
paged listings of a database's objects and of the whole catalog's, and the Identifier JSON of
request bodies."""

from __future__ import annotations

from typing import Any, Callable, Optional

from chalicelib.domain.paimon import names
from chalicelib.domain.paimon.like_patterns import PrefixPattern
from chalicelib.protocol.paimon.databases import catalog_key
from chalicelib.protocol.paimon.paging import make_token, max_results, name_pattern, read_token
from chalicelib.protocol.paimon.wire import PaimonRequest, bad_request

DATABASE_PATTERN = "databaseNamePattern"


def prefix_pattern(request: PaimonRequest, parameter: str) -> Optional[PrefixPattern]:
    """Query parameter ``parameter`` (a prefix LIKE pattern, ``paging.name_pattern``) as a
    PrefixPattern; None when absent or blank (every name)."""
    pattern = name_pattern(request, parameter)
    if pattern.exact is not None:
        return PrefixPattern(pattern.exact, True)
    return PrefixPattern(pattern.prefix, False) if pattern.prefix else None


def identifier(value: Any, where: str, existing: Optional[str] = None) -> tuple[str, str]:
    """An Identifier JSON (``{"database", "object"}``, as paimon-api writes it) as (database, object);
    ``existing``: the kind of object it must name (``names.existing``: 404 when too long to exist)."""
    if not isinstance(value, dict):
        raise bad_request(f"{where} is required and must be an object with database and object")
    parts = []
    for member in ("database", "object"):
        text = value.get(member)
        if not isinstance(text, str) or not text:
            raise bad_request(f"{where}.{member} is required and must be a non-empty string")
        parts.append(text)
    if existing is not None:
        names.existing("database", parts[0])
        names.existing(existing, parts[1])
    return parts[0], parts[1]


def object_listing(request: PaimonRequest, parameter: str, list_objects: Callable[..., tuple[list[Any], Any]],
                   render: Any) -> tuple[list[Any], Optional[str]]:
    """A page of the path's database's objects and the next token: ``list_objects`` is the
    service's listing (catalog, database, pattern, after, limit, render), ``parameter`` the
    name-pattern query parameter; the token is bound to the database and the pattern."""
    database = request.path["database"]
    pattern = request.query.get(parameter) or None
    after = read_token(request, database, pattern)
    if after is not None and not isinstance(after, str):
        raise bad_request("pageToken is malformed")
    page, last = list_objects(catalog_key(request), database, prefix_pattern(request, parameter), after,
                              max_results(request), render)
    return page, make_token(request, last, database, pattern)


def global_listing(request: PaimonRequest, parameter: str,
                   list_globally: Callable[..., tuple[list[Any], Any]]) -> tuple[list[Any], Optional[str]]:
    """A page of the objects of every database (``list_globally``: catalog, database pattern,
    pattern, after, limit) and the next token, bound to both patterns."""
    filters = (request.query.get(DATABASE_PATTERN) or None, request.query.get(parameter) or None)
    after = read_token(request, *filters)
    if after is not None and not (isinstance(after, list) and len(after) == 2
                                  and all(isinstance(part, str) for part in after)):
        raise bad_request("pageToken is malformed")
    found, last = list_globally(catalog_key(request), prefix_pattern(request, DATABASE_PATTERN),
                                prefix_pattern(request, parameter), after, max_results(request))
    return found, make_token(request, last, *filters)
