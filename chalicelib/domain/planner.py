"""The GetPartitions planner: from a bound expression to the cheapest set of key ranges.

Candidates are the table's ACTIVE partition indexes and the partitions table itself, whose sort
key orders partitions by their leading keys (the implicit index). Each candidate turns the
expression into key ranges (``expressions.plan_ranges``: equalities on a prefix of its keys
plus one range on the next, with IN / OR expanded into several ranges). The best candidate is
the one whose *weakest* range pins the most keys; ties go to fewer ranges. Nothing applies:
read every partition of the table. Whatever the plan, the full expression is re-applied to
every item fetched, so a plan only has to cover a superset of the matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from chalicelib.domain import expressions
from chalicelib.domain import keycodec
from chalicelib.domain.partition_keys import KEY_BYTES, IndexSpec, invalid_region_bounds
from chalicelib.errors import InvalidInputException

Bounds = tuple[Optional[str], Optional[str]]


@dataclass(frozen=True)
class Plan:
    """Where to read: ``index`` None = the partitions table; ``bounds`` = sort-key ranges
    (disjoint, in key order; ``[(None, None)]`` = everything, ``[]`` = nothing can match)."""

    index: Optional[IndexSpec]
    bounds: list[Bounds]
    description: str

    @property
    def source(self) -> str:
        """A stable name for the data source (NextTokens are bound to it)."""
        return f"index:{self.index.uid}" if self.index else "table"


FULL_SCAN = Plan(None, [(None, None)], "scan of all partitions")


def _score(ranges: Sequence[expressions.KeyRange]) -> tuple[int, int]:
    weakest = min(2 * len(r.equals) + (r.low is not None or r.high is not None) for r in ranges)
    return weakest, -len(ranges)


def _bounds(ranges: Sequence[expressions.KeyRange], types: Sequence[str],
            partitions_table: bool) -> Optional[list[Bounds]]:
    try:
        bounds = [keycodec.range_bounds(r, types, max_bytes=KEY_BYTES) for r in ranges]
        if partitions_table:
            bounds += [invalid_region_bounds(r.equals[:position], types)
                       for r in ranges for position in _decimal_positions(r, types)]
        return keycodec.merge_bounds(bounds)
    except (InvalidInputException, ValueError):
        return None  # e.g. a literal the index cannot hold: not plannable on this index


def _decimal_positions(key_range: expressions.KeyRange, types: Sequence[str]) -> list[int]:
    """The decimal keys a range constrains. On the partitions table a decimal written in
    exponent notation sits in its key's invalid region, not at its value (``partition_keys``),
    so a range must also read that region under the same leading values; the expression,
    re-applied, keeps the ones that match. (Explicit index entries hold values by value.)"""
    constrained = len(key_range.equals) + (key_range.low is not None or key_range.high is not None)
    return [i for i in range(constrained) if keycodec.kind_of(types[i]) == keycodec.DECIMAL]


def _encoded_alike(glue_type: str, encoded_type: str) -> bool:
    """Whether the key's current type compares like the type its sort-key components were
    encoded with, and accepts no value that type refused: a refused value was stored as
    invalid, below every valid one, so a range would miss it (e.g. 3000000000 written under
    int, queried after a change to bigint)."""
    kind = keycodec.kind_of(glue_type)
    if kind != keycodec.kind_of(encoded_type):
        return False
    return kind != keycodec.INT or expressions.int_bits(glue_type) <= expressions.int_bits(encoded_type)


def implicit_index_keys(partition_keys: Sequence[tuple[str, str]], key_types: Sequence[str]) -> list[str]:
    """The leading partition keys whose current type still orders their stored values like
    the type the partition sort keys were encoded with: the partitions table orders by those."""
    usable = []
    for (name, glue_type), encoded_type in zip(partition_keys, key_types):
        if not _encoded_alike(glue_type, encoded_type):
            break
        usable.append(name)
    return usable


def choose_plan(bound: expressions.Node, partition_keys: Sequence[tuple[str, str]],
                key_types: Sequence[str], indexes: Sequence[IndexSpec]) -> Plan:
    """The cheapest plan for a bound expression over a table's partitions."""
    if not expressions.conjuncts(bound):
        return FULL_SCAN
    best: Optional[tuple[tuple[int, int], Plan]] = None
    implicit = implicit_index_keys(partition_keys, key_types)
    candidates: list[tuple[Optional[IndexSpec], list[str], list[str]]] = []
    if implicit:
        candidates.append((None, implicit, list(key_types[:len(implicit)])))
    candidates += [(index, list(index.keys), list(index.types)) for index in indexes]
    for index, keys, types in candidates:
        ranges = expressions.plan_ranges(bound, keys)
        if ranges is None:
            continue
        if not ranges:
            return Plan(index, [], "no partition can match")
        bounds = _bounds(ranges, types, partitions_table=index is None)
        if bounds is None:
            continue
        score = _score(ranges)
        name = f"index {index.name}" if index else "partition keys"
        plan = Plan(index, bounds, f"{len(bounds)} key range(s) on {name}")
        # Explicit indexes win ties: their entries hold only well-typed values.
        if best is None or score > best[0] or (score == best[0] and index is not None and best[1].index is None):
            best = (score, plan)
    return best[1] if best else FULL_SCAN
