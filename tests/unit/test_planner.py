"""Unit tests for the planner's key ranges on the partitions table (pure: no server).

The property that matters: every partition an expression matches lies inside one of the plan's
sort-key bounds, so re-applying the expression to what the bounds fetch gives the full scan's
answer. Decimal keys are the tricky case: a decimal written in exponent notation (``3e14``)
compares by value but keeps the sort key it was first stored under, in its key's invalid region.
"""

from __future__ import annotations

import random
from decimal import Decimal
from typing import Optional

import pytest

from chalicelib.domain import expressions, planner
from chalicelib.domain.partition_keys import KEY_BYTES, invalid_region_bounds, partition_sort_key

SEED = 4321


def covered(key: str, bounds: list[tuple[Optional[str], Optional[str]]]) -> bool:
    return any((low is None or low <= key) and (high is None or key <= high) for low, high in bounds)


def test_exponent_decimals_keep_their_sort_key() -> None:
    # Written before exponent notation compared by value: the key must not change, or
    # GetPartition (which recomputes it) would no longer find those partitions.
    assert partition_sort_key(["3e14"], ["decimal"]).startswith("\x02" + "3e14" + "\x01")
    assert partition_sort_key(["1E+3", "x"], ["decimal(10,2)", "string"]).startswith("\x021E+3\x01x\x01")
    assert partition_sort_key(["1e3"], ["double"])[0] != "\x02"  # doubles always took exponents
    assert partition_sort_key(["300000000000000"], ["decimal"])[0] == "2"


def test_invalid_region_bounds_hold_exactly_the_invalid_values_under_the_prefix() -> None:
    types = ["string", "decimal", "string"]
    low, high = invalid_region_bounds(["US"], types)
    inside = [partition_sort_key(["US", v, "z"], types) for v in ("3e14", "abc", "", "-1E-2")]
    outside = [partition_sort_key(["US", v, "z"], types) for v in ("0", "-5", "3", "1e")][:3] + \
        [partition_sort_key([c, "3e14", "z"], types) for c in ("UK", "US ", "USA", "U")]
    assert all(low <= key <= high for key in inside)
    assert not any(low <= key <= high for key in outside)


def test_invalid_region_bounds_are_cut_like_long_keys() -> None:
    types = ["string", "decimal"]
    first = "é" * 600  # 1,200 bytes: the key is cut before the decimal component
    key = partition_sort_key([first, "3e14"], types)
    low, high = invalid_region_bounds([first], types)
    assert len(low.encode()) <= KEY_BYTES and low <= key and (high is None or key <= high)


def plan_for(expression: str, keys: list[tuple[str, str]]) -> planner.Plan:
    bound = expressions.bind(expressions.parse_expression(expression), keys)
    return planner.choose_plan(bound, keys, [t for _, t in keys], [])


@pytest.mark.parametrize("keys", [
    [("d", "decimal(20,4)")],
    [("c", "string"), ("d", "decimal")],
    [("d", "decimal"), ("y", "int")],
    [("c", "string"), ("d", "decimal"), ("e", "decimal")],
])
def test_partitions_table_ranges_hold_every_match_of_a_decimal_key(keys: list[tuple[str, str]]) -> None:
    rng = random.Random(f"{SEED}-{keys}")

    def decimal_text() -> str:
        value = Decimal(rng.choice([3, -3, 25, -25, 1, 0, 15, 3000])).scaleb(rng.randint(-3, 3))
        return rng.choice([str(value), f"{value:e}", f"{value:E}", format(value, "f"), "abc", "1e"])

    def value(glue_type: str) -> str:
        if glue_type.startswith("decimal"):
            return decimal_text()
        return rng.choice(["US", "UK", "U"]) if glue_type == "string" else str(rng.randint(1, 4))

    def literal(glue_type: str) -> str:
        if glue_type.startswith("decimal"):
            text = decimal_text()
            return text if text not in ("abc", "1e") else "0"
        return f"'{value(glue_type)}'" if glue_type == "string" else value(glue_type)

    rows = {tuple(value(t) for _, t in keys) for _ in range(300)}
    checked = 0
    for _ in range(200):
        parts = []
        for name, glue_type in keys[:rng.randint(1, len(keys))]:
            op = rng.choice(["=", "<", "<=", ">", ">=", "between", "in"])
            if op == "between":
                parts.append(f"{name} BETWEEN {literal(glue_type)} AND {literal(glue_type)}")
            elif op == "in":
                parts.append(f"{name} IN ({literal(glue_type)}, {literal(glue_type)})")
            else:
                parts.append(f"{name} {op} {literal(glue_type)}")
        expression = " AND ".join(parts)
        bound = expressions.bind(expressions.parse_expression(expression), keys)
        plan = planner.choose_plan(bound, keys, [t for _, t in keys], [])
        for row in rows:
            if expressions.evaluate(bound, list(row)):
                key = partition_sort_key(list(row), [t for _, t in keys])
                assert covered(key, plan.bounds), (expression, row, plan)
                checked += 1
    assert checked > 50


def test_a_decimal_range_reads_the_invalid_region_too() -> None:
    plan = plan_for("d = 3e14", [("d", "decimal")])
    assert plan.index is None and len(plan.bounds) == 2
    assert covered(partition_sort_key(["3e14"], ["decimal"]), plan.bounds)
    assert covered(partition_sort_key(["300000000000000"], ["decimal"]), plan.bounds)
    assert not covered(partition_sort_key(["4"], ["decimal"]), plan.bounds)
    # Other types: one range, as before.
    assert len(plan_for("y = 1E+3", [("y", "bigint")]).bounds) == 1
