"""Paimon's name patterns (``viewNamePattern``, ``functionNamePattern``...) as the service reads them.

Paimon's REST servers accept only a *prefix* SQL LIKE pattern (RESTUtil.validatePrefixSqlPattern;
parsed by ``protocol.paimon.paging.name_pattern``): a literal name, or a literal prefix then ``%``.
So a pattern is a prefix plus "exact or not", which a sorted store answers as a key range.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PrefixPattern:
    """A parsed pattern: names equal to ``prefix`` (``exact``) or starting with it."""

    prefix: str
    exact: bool

    def matches(self, name: str) -> bool:
        """Whether ``name`` matches (case-sensitively, as Paimon's servers compare)."""
        return name == self.prefix if self.exact else name.startswith(self.prefix)

