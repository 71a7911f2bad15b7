"""Paimon's name patterns (``tableNamePattern``, ``viewNamePattern``, ``functionNamePattern``...).

Paimon's REST servers accept only a *prefix* SQL LIKE pattern (RESTUtil.validatePrefixSqlPattern):
literal characters (``\\`` escapes the next one), then optionally ``%`` wildcards at the end. So a
pattern is a literal prefix plus "exact or not", which a sorted store can answer as a key range.
"""

from __future__ import annotations

from dataclasses import dataclass

from chalicelib.errors import InvalidInputException


@dataclass(frozen=True)
class PrefixPattern:
    """A parsed pattern: names equal to ``prefix`` (``exact``) or starting with it."""

    prefix: str
    exact: bool

    def matches(self, name: str) -> bool:
        """Whether ``name`` matches (case-sensitively, as Paimon's servers compare)."""
        return name == self.prefix if self.exact else name.startswith(self.prefix)


def parse_prefix_pattern(pattern: str, parameter: str) -> PrefixPattern:
    """Parse a prefix LIKE pattern; 400 naming ``parameter`` for a wildcard before a literal."""
    prefix: list[str] = []
    escaped = wildcard = False
    for ch in pattern:
        if escaped:
            if wildcard:
                raise InvalidInputException(
                    f"{parameter}: can only support prefix sql like pattern query now ('%' only at the end)")
            prefix.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "%":
            wildcard = True
        elif wildcard:
            raise InvalidInputException(
                f"{parameter}: can only support prefix sql like pattern query now ('%' only at the end)")
        else:
            prefix.append(ch)
    if escaped:
        prefix.append("\\")
    return PrefixPattern("".join(prefix), not wildcard)
