"""Evaluation: whether one partition's raw values match a bound expression, under SQL
three-valued logic."""

from __future__ import annotations

import functools
import operator
import re
from typing import Any, Callable, Optional, Sequence

from chalicelib.domain.expressions.binding import STRING, convert
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
        elif ref.kind == STRING:
            value = text
        else:
            try:
                value = _converted(text, ref.kind, ref.glue_type)
            except ValueError:
                value = _INVALID
        self.typed[ref.position] = value
        return value


@functools.lru_cache(maxsize=4096)
def _converted(text: str, kind: str, glue_type: str) -> Any:
    # The partitions of one query share most of their values (all 96 of a selective query have
    # the same year): each distinct text is converted once. Typed values are immutable; a
    # ValueError is not cached, so it is raised again each time.
    return convert(text, kind, glue_type)


def evaluate(node: Node, values: Sequence[Optional[str]]) -> bool:
    """Whether a partition matches a bound expression; ``values`` are its raw values in
    partition-key order. Unknown (NULL or unconvertible operands) counts as no match."""
    return _EVAL[type(node)](node, _Row(values)) is True


_MAX_REMEMBERED = 4096


def matcher(node: Node) -> Callable[[Sequence[Optional[str]]], bool]:
    """``evaluate(node, values)`` as a function of ``values``, for the many partitions of one
    listing. An answer depends only on the values of the keys the expression names, and the
    partitions an index range returns mostly share those (all 96 of a selective query have the
    same country, category and year): each distinct combination is evaluated once, the rest
    are a dict lookup (about a tenth of the tree walk). At most ``_MAX_REMEMBERED`` answers are
    kept, so a scan of many distinct values costs a lookup more per partition, never memory."""
    if isinstance(node, TrueExpr):
        return _always
    positions = tuple(sorted(_positions(node)))
    evaluate_node = _EVAL[type(node)]
    answers: dict[tuple[Optional[str], ...], bool] = {}

    def matches(values: Sequence[Optional[str]]) -> bool:
        count = len(values)
        named = tuple([values[p] if p < count else None for p in positions])
        answer = answers.get(named)
        if answer is None:
            answer = evaluate_node(node, _Row(values)) is True
            if len(answers) >= _MAX_REMEMBERED:
                answers.clear()
            answers[named] = answer
        return answer
    return matches


def _always(values: Sequence[Optional[str]]) -> bool:
    return True


def _positions(node: Node) -> set[int]:
    """The positions (in the partition values) of the keys a bound expression names."""
    if isinstance(node, (And, Or)):
        return set().union(*(_positions(item) for item in node.items))
    if isinstance(node, Not):
        return _positions(node.item)
    if isinstance(node, TrueExpr):
        return set()
    column = node.column
    if not isinstance(column, KeyRef):
        raise TypeError(f"an unbound column: {column!r}")
    return {column.position}


def evaluate3(node: Node, values: Sequence[Optional[str]]) -> Optional[bool]:
    """Like ``evaluate``, keeping SQL's third value: True, False, or None (unknown)."""
    return _EVAL[type(node)](node, _Row(values))


# Three-valued evaluation of each node kind: True, False or None (unknown). A table keyed by
# the node's exact class rather than a chain of ``type(node) is ...`` tests: this runs for every
# partition a query reads, one dict lookup is cheaper than walking the chain to the leaf kinds
# (measured ~10% on the tree walk), and each function gets its node's own type. They are typed
# for bound nodes (columns are KeyRefs): ``evaluate`` is only ever given ``bind``'s output, which
# the Any in ``_EVAL``'s type takes on trust. A non-node is a KeyError naming its class.

def _and(node: And, row: _Row) -> Optional[bool]:
    result: Optional[bool] = True
    for item in node.items:
        outcome = _EVAL[type(item)](item, row)
        if outcome is False:
            return False
        if outcome is None:
            result = None
    return result


def _or(node: Or, row: _Row) -> Optional[bool]:
    result: Optional[bool] = False
    for item in node.items:
        outcome = _EVAL[type(item)](item, row)
        if outcome is True:
            return True
        if outcome is None:
            result = None
    return result


def _not(node: Not, row: _Row) -> Optional[bool]:
    outcome = _EVAL[type(node.item)](node.item, row)
    return None if outcome is None else not outcome


def _true(node: TrueExpr, row: _Row) -> Optional[bool]:
    return True


def _is_null(node: IsNull[KeyRef], row: _Row) -> Optional[bool]:
    return (row.text(node.column) is None) != node.negated


def _like(node: Like[KeyRef], row: _Row) -> Optional[bool]:
    text = row.text(node.column)
    return None if text is None else _like_matcher(node.pattern)(text) != node.negated


def _compare(node: Compare[KeyRef], row: _Row) -> Optional[bool]:
    value = row.value(node.column)
    if value is _NULL or value is _INVALID:
        return None
    return _OPS[node.op](value, node.literal)


def _between(node: Between[KeyRef], row: _Row) -> Optional[bool]:
    value = row.value(node.column)
    if value is _NULL or value is _INVALID:
        return None
    return (node.low <= value <= node.high) != node.negated


def _in(node: In[KeyRef], row: _Row) -> Optional[bool]:
    value = row.value(node.column)
    if value is _NULL or value is _INVALID:
        return None
    return (value in node.values) != node.negated


_EVAL: dict[type, Callable[[Any, _Row], Optional[bool]]] = {
    And: _and, Or: _or, Not: _not, TrueExpr: _true, IsNull: _is_null, Like: _like,
    Compare: _compare, Between: _between, In: _in,
}


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
