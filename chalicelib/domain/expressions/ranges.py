"""Key ranges for the planner: the ranges of a partition index (or of the partitions table's
sort key) that hold every partition a bound expression can match."""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, NamedTuple, Optional, Sequence, cast

from chalicelib.domain.expressions.nodes import (And, Between, Column, Compare, In, IsNull, KeyRef, Like,
                                                 Node, Not, Or, TrueExpr)
from chalicelib.domain.keycodec import STRING, successor

MAX_RANGES = 100  # more key ranges than this and a plan is not worth it: scan instead


class Endpoint(NamedTuple):
    """One end of a key range: a typed value and whether it is included."""

    value: Any
    inclusive: bool


@dataclass(frozen=True)
class KeyRange:
    """Index keys ``k1..kn`` with ``k1..kp = equals`` and, when set, ``low``/``high`` bounding
    ``k(p+1)``. Later keys are unconstrained. See ``keycodec.range_bounds`` for sort keys."""

    equals: tuple[Any, ...] = ()
    low: Optional[Endpoint] = None
    high: Optional[Endpoint] = None


_Interval = tuple[Optional[Endpoint], Optional[Endpoint]]
_Box = dict[str, _Interval]  # index key name (lowercase) -> interval; absent = unconstrained


def plan_ranges(node: Node, index_keys: Sequence[str]) -> Optional[list[KeyRange]]:
    """Key ranges of a partition index that together hold every partition the bound expression
    can match (a superset: always re-apply ``evaluate`` to what they fetch).

    ``index_keys`` are the index's key names in index order. Returns None when the index cannot
    narrow the search (some alternative leaves the first index key unconstrained, or more than
    ``MAX_RANGES`` ranges would be needed): scan instead. Returns ``[]`` when no partition can
    match. Ranges are distinct but may overlap: merge their sort-key bounds
    (``keycodec.merge_bounds``) before querying so no partition is fetched twice.

    Uses ``= < <= > >= BETWEEN`` on index keys, IN and ORs of those (expanded into several
    ranges), ``LIKE 'prefix%'`` on string keys, and NOT (pushed down to the comparisons).
    """
    names = [name.lower() for name in index_keys]
    ranges: list[KeyRange] = []
    for box in _boxes(node, frozenset(names)):
        key_range = _to_key_range(box, names)
        if key_range is None:
            return None
        if key_range not in ranges:
            ranges.append(key_range)
    return ranges if len(ranges) <= MAX_RANGES else None


def _everything() -> list[_Box]:
    return [{}]


def _boxes(node: Node, index: frozenset[str]) -> list[_Box]:
    """Boxes (a constraint per index key) whose union holds every match of node."""
    if isinstance(node, And):
        return _and_boxes(node.items, index)
    if isinstance(node, Or):
        return _or_boxes(node.items, index)
    if isinstance(node, Not):
        return _boxes(_negate(node.item), index)
    if isinstance(node, (TrueExpr, IsNull)):
        return _everything()
    ref = cast(KeyRef, node.column)  # plan_ranges is given bind's output: columns are KeyRefs
    name = ref.name.lower()
    if name not in index:
        return _everything()
    if isinstance(node, Compare):
        return _compare_boxes(name, ref.kind, node)
    if node.negated:
        return _everything()  # NOT BETWEEN / NOT IN / NOT LIKE: no single range helps
    if isinstance(node, Between):
        interval = _intersect_intervals((Endpoint(node.low, True), None), (None, Endpoint(node.high, True)))
        return [] if interval is None else [{name: interval}]
    if isinstance(node, In):
        boxes = _dedupe({name: _point(v)} for v in node.values)
        return boxes if len(boxes) <= MAX_RANGES else _everything()
    if isinstance(node, Like) and ref.kind == STRING:
        return _like_boxes(name, node.pattern)
    return _everything()


def _compare_boxes(name: str, kind: str, node: Compare[Column]) -> list[_Box]:
    value = node.literal
    if node.op == "<" and kind == STRING and value == "":
        return []  # nothing sorts below the empty string
    intervals: dict[str, _Interval] = {
        "=": _point(value),
        "<": (None, Endpoint(value, False)), "<=": (None, Endpoint(value, True)),
        ">": (Endpoint(value, False), None), ">=": (Endpoint(value, True), None),
    }
    interval = intervals.get(node.op)
    return _everything() if interval is None else [{name: interval}]  # <> is not a range


def _like_boxes(name: str, pattern: str) -> list[_Box]:
    prefix = re.split("[%_]", pattern, maxsplit=1)[0]
    if prefix == pattern:
        return [{name: _point(pattern)}]
    if not prefix:
        return _everything()
    above = successor(prefix)
    return [{name: (Endpoint(prefix, True), None if above is None else Endpoint(above, False))}]


def _and_boxes(items: Sequence[Node], index: frozenset[str]) -> list[_Box]:
    result = _everything()
    for boxes in sorted((_boxes(item, index) for item in items), key=len):
        if len(result) * len(boxes) > MAX_RANGES:
            continue  # too many combinations: leave this item to the residual filter
        result = _dedupe(merged for a in result for b in boxes
                         if (merged := _intersect_boxes(a, b)) is not None)
        if not result:
            return []
    return result


def _or_boxes(items: Sequence[Node], index: frozenset[str]) -> list[_Box]:
    result: list[_Box] = []
    for item in items:
        boxes = _boxes(item, index)
        if any(not box for box in boxes):
            return _everything()
        result.extend(boxes)
    result = _dedupe(result)
    return result if len(result) <= MAX_RANGES else _everything()


_NEGATED_OPS = {"=": "<>", "<>": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def _negate(node: Node) -> Node:
    """NOT node, pushed inwards. Exact under three-valued logic: NOT x is true exactly when x is
    false, and a comparison is false only on a present, convertible value."""
    if isinstance(node, Compare):
        return Compare(node.column, _NEGATED_OPS[node.op], node.literal)
    if isinstance(node, (Between, In, Like, IsNull)):
        return replace(node, negated=not node.negated)
    if isinstance(node, And):
        return Or(tuple(_negate(item) for item in node.items))
    if isinstance(node, Or):
        return And(tuple(_negate(item) for item in node.items))
    if isinstance(node, Not):
        return node.item
    return Or(())  # NOT TRUE: an empty OR, which nothing matches


def _point(value: Any) -> _Interval:
    return (Endpoint(value, True), Endpoint(value, True))


def _intersect_boxes(a: _Box, b: _Box) -> Optional[_Box]:
    merged = dict(a)
    for name, interval in b.items():
        if name in merged:
            both = _intersect_intervals(merged[name], interval)
            if both is None:
                return None
            interval = both
        merged[name] = interval
    return merged


def _intersect_intervals(x: _Interval, y: _Interval) -> Optional[_Interval]:
    """The intersection, or None if it is empty."""
    low = _tighter(x[0], y[0], operator.gt)
    high = _tighter(x[1], y[1], operator.lt)
    if low is not None and high is not None:
        if low.value > high.value or (low.value == high.value and not (low.inclusive and high.inclusive)):
            return None
    return (low, high)


def _tighter(a: Optional[Endpoint], b: Optional[Endpoint], beyond: Callable[[Any, Any], bool]
             ) -> Optional[Endpoint]:
    if a is None or b is None:
        return a if b is None else b
    if beyond(a.value, b.value):
        return a
    if beyond(b.value, a.value):
        return b
    return Endpoint(a.value, a.inclusive and b.inclusive)


def _dedupe(boxes: Iterable[_Box]) -> list[_Box]:
    seen: dict[tuple[Any, ...], _Box] = {}
    for box in boxes:
        seen.setdefault(tuple(sorted(box.items())), box)
    return list(seen.values())


def _to_key_range(box: _Box, index_keys: Sequence[str]) -> Optional[KeyRange]:
    """The box's equality prefix plus the range on the next key; None if the first index key
    is unconstrained (the index does not help)."""
    equals: list[Any] = []
    for name in index_keys:
        interval = box.get(name)
        if interval is None:
            break
        low, high = interval
        if low is not None and high is not None and low.inclusive and high.inclusive \
                and low.value == high.value:
            equals.append(low.value)
            continue
        return KeyRange(tuple(equals), low, high)
    return KeyRange(tuple(equals)) if equals else None
