"""Evaluation: whether one partition's raw values match a bound expression, under SQL
three-valued logic."""

from __future__ import annotations

import functools
import operator
import re
from typing import Any, Callable, Optional, Sequence

from chalicelib.domain.expressions.binding import convert
from chalicelib.domain.expressions.nodes import (And, Between, Compare, In, IsNull, KeyRef, Like,
                                                 Node, Not, Or, TrueExpr)


_NULL = object()  # the partition has no value for the key
_INVALID = object()  # the stored value does not convert to the key's type

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq, "<>": operator.ne, "<": operator.lt,
    "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


class _Row:
    """One partition's raw values, converting each key at most once per evaluation."""

    __slots__ = ("raw", "typed")

    def __init__(self, raw: Sequence[Optional[str]]) -> None:
        self.raw = raw
        self.typed: dict[int, Any] = {}

    def text(self, ref: KeyRef) -> Optional[str]:
        return self.raw[ref.position] if ref.position < len(self.raw) else None

    def value(self, ref: KeyRef) -> Any:
        try:
            return self.typed[ref.position]
        except KeyError:
            pass
        text = self.text(ref)
        if text is None:
            value = _NULL
        else:
            try:
                value = convert(text, ref.kind, ref.glue_type)
            except ValueError:
                value = _INVALID
        self.typed[ref.position] = value
        return value


def evaluate(node: Node, values: Sequence[Optional[str]]) -> bool:
    """Whether a partition matches a bound expression; ``values`` are its raw values in
    partition-key order. Unknown (NULL or unconvertible operands) counts as no match."""
    return _eval(node, _Row(values)) is True


def _eval(node: Node, row: _Row) -> Optional[bool]:
    """Three-valued: True, False or None (unknown)."""
    kind = type(node)
    if kind is And:
        result: Optional[bool] = True
        for item in node.items:
            outcome = _eval(item, row)
            if outcome is False:
                return False
            if outcome is None:
                result = None
        return result
    if kind is Or:
        result = False
        for item in node.items:
            outcome = _eval(item, row)
            if outcome is True:
                return True
            if outcome is None:
                result = None
        return result
    if kind is Not:
        outcome = _eval(node.item, row)
        return None if outcome is None else not outcome
    if kind is TrueExpr:
        return True
    if kind is IsNull:
        return (row.text(node.column) is None) != node.negated
    if kind is Like:
        text = row.text(node.column)
        return None if text is None else _like_matcher(node.pattern)(text) != node.negated
    value = row.value(node.column)
    if value is _NULL or value is _INVALID:
        return None
    if kind is Compare:
        return _OPS[node.op](value, node.literal)
    if kind is Between:
        return (node.low <= value <= node.high) != node.negated
    if kind is In:
        return (value in node.values) != node.negated
    raise TypeError(f"not an expression node: {node!r}")


@functools.lru_cache(maxsize=256)
def _like_matcher(pattern: str) -> Callable[[str], bool]:
    """A matcher for a LIKE pattern. Split at ``%``: the first piece must match at the start,
    the last at the end, and each middle piece at its leftmost place in between (leftmost is
    always the best choice, so there is no backtracking). Pieces are fixed-length regexes
    (escaped characters, ``_`` as ``.``)."""
    pieces = [re.compile("".join("." if c == "_" else re.escape(c) for c in piece), re.DOTALL)
              for piece in pattern.split("%")]
    widths = [len(piece) for piece in pattern.split("%")]
    if len(pieces) == 1:
        return lambda text: pieces[0].fullmatch(text) is not None

    def match(text: str) -> bool:
        start, end = widths[0], len(text) - widths[-1]
        if end < start or not pieces[0].match(text) or not pieces[-1].fullmatch(text, end):
            return False
        for piece in pieces[1:-1]:
            found = piece.search(text, start, end)
            if found is None:
                return False
            start = found.end()
        return True

    return match
