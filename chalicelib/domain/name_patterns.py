"""Glue's table-name pattern (GetTables ``Expression``), which follows Hive's conventions.

``*`` is a wildcard for any run of characters (``.*`` works too), ``|`` separates alternatives,
everything else is a regular expression; a name matches when the whole of it matches one
alternative, ignoring case (names are stored lowercase).
"""

from __future__ import annotations

import functools
import re

from chalicelib.errors import InvalidInputException

_BARE_STAR = re.compile(r"(?<![.\\\]\)])\*")


@functools.lru_cache(maxsize=256)
def compile_name_pattern(expression: str) -> re.Pattern[str]:
    """Compile a GetTables Expression; InvalidInputException if it is not a valid pattern."""
    alternatives = [_BARE_STAR.sub(".*", alt.strip()) for alt in expression.split("|")]
    try:
        return re.compile("|".join(f"(?:{alt})" for alt in alternatives), re.IGNORECASE)
    except re.error as error:
        raise InvalidInputException(f"Expression '{expression}' is not a valid pattern: {error}") from None


def matches(pattern: re.Pattern[str], name: str) -> bool:
    """Whether a table name matches a compiled pattern."""
    return pattern.fullmatch(name) is not None
