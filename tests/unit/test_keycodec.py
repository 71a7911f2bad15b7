"""Unit tests for the order-preserving partition-index key codec (pure, no DynamoDB)."""

from __future__ import annotations

import datetime as dt
import itertools
import random
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Optional

import pytest

from chalicelib.errors import InvalidInputException
from chalicelib.domain import keycodec
from chalicelib.domain.partition_keys import first_value_prefix_bounds, partition_sort_key
from chalicelib.domain.keycodec import (SEP, Timestamp, decode_key, encode_key, encode_value,
                                       kind_of, merge_bounds, range_bounds)

SEED = 20240611


def _utf8_order(strings: list[str]) -> list[str]:
    """DynamoDB's order for string keys: by UTF-8 bytes."""
    return sorted(strings, key=lambda s: s.encode("utf-8"))


def _assert_order_preserved(values: list[Any], types: list[str]) -> None:
    encoded = {encode_key(v, types): v for v in values}
    by_key = [encoded[k] for k in _utf8_order(list(encoded))]
    assert by_key == sorted(set(by_key)) == sorted(set(values))


def _random_decimal(rng: random.Random) -> Decimal:
    digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 12)))
    scale = rng.randint(0, 8)
    text = digits if scale == 0 else f"{digits[:-scale] or '0'}.{digits[-scale:].rjust(scale, '0')}"
    return Decimal(rng.choice(["", "-"]) + text)


def _random_string(rng: random.Random) -> str:
    alphabet = ["a", "b", "U", "S", "A", "\x03", " ", "~", "é", "\u20ac", "\uffff", "\U0001F600", "0"]
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4)))


# ------------------------------------------------------------------------------------ kinds
@pytest.mark.parametrize("glue_type, kind", [
    ("string", "string"), ("VARCHAR(10)", "string"), ("char(3)", "string"),
    ("int", "int"), ("INTEGER", "int"), ("bigint", "int"), ("long", "int"), ("smallint", "int"),
    ("tinyint", "int"), ("decimal(10,2)", "decimal"), ("DECIMAL", "decimal"), ("double", "double"),
    ("float", "double"), ("date", "date"), ("timestamp", "timestamp"), ("boolean", "boolean"),
    ("array<string>", "string"), ("struct<a:int>", "string"), ("binary", "string"),
])
def test_kind_of(glue_type: str, kind: str) -> None:
    assert kind_of(glue_type) == kind


# ----------------------------------------------------------------------------- order property
def test_int_order() -> None:
    rng = random.Random(SEED)
    values = [-(2**63), 2**63 - 1, -1, 0, 1, 9, 10, -9, -10, 2018, 99, 100]
    values += [rng.randint(-(2**63), 2**63 - 1) for _ in range(500)]
    values += [rng.randint(-1000, 1000) for _ in range(500)]
    _assert_order_preserved([(v,) for v in values], ["bigint"])


def test_int_encoding_is_fixed_width_and_rejects_out_of_range() -> None:
    assert {len(encode_value(v, "int")) for v in (-(2**63), -1, 0, 2**63 - 1)} == {20}
    for value in (2**63, -(2**63) - 1):
        with pytest.raises(InvalidInputException, match="64-bit"):
            encode_value(value, "int")


def test_decimal_order() -> None:
    rng = random.Random(SEED)
    values = [Decimal(t) for t in ("0", "-0", "0.001", "-0.001", "1", "-1", "0.12", "0.123", "-0.12",
                                   "-0.123", "10", "9.99", "-10", "-9.99", "1E+30", "-1E-30", "100",
                                   "0.1", "0.10", "1.000000000000000000000000000000001")]
    values += [_random_decimal(rng) for _ in range(2000)]
    _assert_order_preserved([(v,) for v in values], ["decimal(38,10)"])


def test_equal_decimals_encode_alike() -> None:
    assert encode_value(Decimal("1.0"), "decimal") == encode_value(Decimal("1.00"), "decimal") \
        == encode_value(Decimal("1"), "decimal")
    assert encode_value(Decimal("-0"), "decimal") == encode_value(Decimal("0.000"), "decimal")


def test_double_order_and_zero() -> None:
    rng = random.Random(SEED)
    values = [0.0, -1.5, 1.5, 1e-300, -1e-300, 1e300, -1e300, float("inf"), float("-inf")]
    values += [rng.uniform(-1e6, 1e6) for _ in range(500)] + [rng.gauss(0, 1e-3) for _ in range(200)]
    _assert_order_preserved([(v,) for v in values], ["double"])
    assert encode_value(-0.0, "double") == encode_value(0.0, "double")
    with pytest.raises(InvalidInputException):
        encode_value(float("nan"), "double")


def test_date_order() -> None:
    rng = random.Random(SEED)
    values = [dt.date(1, 1, 1), dt.date(9999, 12, 31)]
    values += [dt.date(1, 1, 1) + dt.timedelta(days=rng.randint(0, 3_652_058)) for _ in range(1000)]
    _assert_order_preserved([(v,) for v in values], ["date"])
    assert encode_value(dt.date(2021, 1, 5), "date") == "2021-01-05"


def test_timestamp_order() -> None:
    rng = random.Random(SEED)
    base = dt.datetime(2000, 1, 1)
    values = [Timestamp.from_parts(base + dt.timedelta(seconds=rng.randint(-10**10, 10**10)),
                                   rng.choice([0, 1, 999_999_999, rng.randint(0, 10**9 - 1)]))
              for _ in range(1000)]
    values.append(Timestamp.from_parts(dt.datetime(1, 1, 1)))
    _assert_order_preserved([(v,) for v in values], ["timestamp"])
    assert str(Timestamp.from_parts(dt.datetime(5, 6, 7, 8, 9, 10), 12)) == "0005-06-07 08:09:10.000000012"


def test_string_order_is_utf8_byte_order() -> None:
    rng = random.Random(SEED)
    values = ["", "US", "USA", "US ", "U", "\x03", "\uffff", "\U0001F600", "é", "e"]
    values += [_random_string(rng) for _ in range(1000)]
    _assert_order_preserved([(v,) for v in values], ["string"])


def test_mixed_tuple_order() -> None:
    rng = random.Random(SEED)
    types = ["string", "int", "date", "decimal(5,2)"]
    regions = ["", "U", "US", "USA", "UK", "é"]
    values = [(rng.choice(regions), rng.randint(-3, 3), dt.date(2021, 1, rng.randint(1, 4)),
               Decimal(rng.choice(["-1.5", "-1", "0", "0.5", "1", "1.25", "10"])))
              for _ in range(1500)]
    _assert_order_preserved(values, types)


def test_prefix_value_sorts_before_its_extensions_in_any_position() -> None:
    keys = [encode_key(v, ["string", "string"]) for v in [("US", "z"), ("USA", "a"), ("US", "")]]
    assert _utf8_order(keys) == [keys[2], keys[0], keys[1]]


# ----------------------------------------------------------------------------- encode / decode
def test_roundtrip() -> None:
    types = ["string", "bigint", "date", "decimal(10,3)", "double", "timestamp", "boolean"]
    values = ("US", -42, dt.date(2020, 2, 29), Decimal("-12.5"), -0.25,
              Timestamp.from_parts(dt.datetime(2021, 1, 2, 3, 4, 5), 6), True)
    key = encode_key(values, types)
    assert key.endswith(SEP) and key.count(SEP) == len(types)
    assert decode_key(key, types) == values
    assert decode_key(key + "suffix", types) == values


def test_empty_string_value_still_gives_a_non_empty_key() -> None:
    assert encode_key([""], ["string"]) == SEP


@pytest.mark.parametrize("char", ["\x00", "\x01", "\x02"])
def test_forbidden_characters(char: str) -> None:
    with pytest.raises(InvalidInputException, match=f"U\\+000{ord(char)}"):
        encode_key([f"a{char}b"], ["string"])


def test_key_size_limit() -> None:
    encode_key(["x" * 1023], ["string"])
    with pytest.raises(InvalidInputException, match="1024 bytes"):
        encode_key(["x" * 1024], ["string"])
    with pytest.raises(InvalidInputException, match="1024 bytes"):
        encode_key(["é" * 512], ["string"])  # 1,024 characters' worth of bytes plus SEP
    with pytest.raises(InvalidInputException, match="limit is 100 bytes"):
        encode_key(["x" * 100], ["string"], max_bytes=100)


def test_wrong_python_type_is_a_programming_error() -> None:
    for value, kind in [("1", "int"), (True, "int"), (1.5, "decimal"), (dt.datetime(2020, 1, 1), "date")]:
        with pytest.raises(TypeError):
            encode_value(value, kind)


# --------------------------------------------------------------------------------- key ranges
@dataclass(frozen=True)
class _Range:
    equals: tuple[Any, ...] = ()
    low: Optional[tuple[Any, bool]] = None
    high: Optional[tuple[Any, bool]] = None


def _in_range(values: tuple[Any, ...], key_range: _Range) -> bool:
    n = len(key_range.equals)
    if values[:n] != key_range.equals:
        return False
    if key_range.low is not None:
        low, inclusive = key_range.low
        if values[n] < low or (values[n] == low and not inclusive):
            return False
    if key_range.high is not None:
        high, inclusive = key_range.high
        if values[n] > high or (values[n] == high and not inclusive):
            return False
    return True


def _between(key: str, bounds: tuple[Optional[str], Optional[str]]) -> bool:
    low, high = bounds
    raw = key.encode("utf-8")
    return (low is None or raw >= low.encode("utf-8")) and (high is None or raw <= high.encode("utf-8"))


_UNIVERSE_TYPES = ["string", "int", "string"]
_UNIVERSE = list(itertools.product(["", "U", "US", "USA", "UT"], [-2, -1, 0, 1, 2], ["", "a", "ab"]))


def _random_range(rng: random.Random) -> _Range:
    point = rng.choice(_UNIVERSE)
    n = rng.randint(0, 2)
    equals = point[:n]
    domain = sorted({p[n] for p in _UNIVERSE}) + ([-3, 3] if n == 1 else ["A", "z"])
    low = (rng.choice(domain), rng.random() < 0.5) if rng.random() < 0.6 else None
    high = (rng.choice(domain), rng.random() < 0.5) if rng.random() < 0.6 else None
    if n == 0 and low is None and high is None:
        low = (rng.choice(domain), True)
    return _Range(equals, low, high)


def _non_empty(key_range: _Range) -> bool:
    if key_range.low is None or key_range.high is None:
        return key_range.high != ("", False)
    (low, low_inc), (high, high_inc) = key_range.low, key_range.high
    return low < high or (low == high and low_inc and high_inc)


@pytest.mark.parametrize("suffix", ["", "partition-id"])
def test_range_bounds_cover_exactly_the_range(suffix: str) -> None:
    rng = random.Random(SEED)
    keys = {encode_key(p, _UNIVERSE_TYPES) + suffix: p for p in _UNIVERSE}
    checked = 0
    while checked < 2000:
        key_range = _random_range(rng)
        if not _non_empty(key_range):
            continue
        bounds = range_bounds(key_range, _UNIVERSE_TYPES)
        if bounds[0] is not None and bounds[1] is not None:
            assert bounds[0].encode() <= bounds[1].encode(), key_range  # DynamoDB BETWEEN needs it
        got = {p for k, p in keys.items() if _between(k, bounds)}
        assert got == {p for p in _UNIVERSE if _in_range(p, key_range)}, key_range
        checked += 1


def test_equality_on_a_prefix_does_not_match_longer_values() -> None:
    types = ["string", "string"]
    low, high = range_bounds(_Range(("US",)), types)
    assert _between(encode_key(["US", "Shoes"], types), (low, high))
    assert not _between(encode_key(["USA", "Shoes"], types), (low, high))
    assert high == "US\x02"


def test_full_equality_is_a_single_key() -> None:
    types = ["string", "int"]
    low, high = range_bounds(_Range(("US", 2018)), types)
    key = encode_key(["US", 2018], types)
    assert low == key and key < high
    assert _between(key + "suffix", (low, high))


def test_unbounded_first_key() -> None:
    low, high = range_bounds(_Range((), (5, False), None), ["int"])
    assert high is None and low is not None
    assert range_bounds(_Range((), None, ("m", True)), ["string"])[0] is None


def test_too_long_bounds_are_widened_but_still_cover() -> None:
    types = ["string"]
    low, high = range_bounds(_Range((), ("a" * 2000, True), ("c" * 2000, True)), types)
    assert len(low.encode()) <= 1024 and len(high.encode()) <= 1024 and low < high
    for stored in ["b", "bzzz", "a" * 1022 + "b", "c" * 1000, "c" * 1023]:  # all true matches
        assert _between(encode_key([stored], types), (low, high)), stored
    assert not _between(encode_key(["d"], types), (low, high))


def test_merge_bounds() -> None:
    rng = random.Random(SEED)
    points = [f"{i:03d}" for i in range(60)]
    for _ in range(500):
        bounds = []
        for _ in range(rng.randint(0, 6)):
            a, b = sorted(rng.sample(points, 2))
            bounds.append((None if rng.random() < 0.1 else a, None if rng.random() < 0.1 else b))
        merged = merge_bounds(bounds)
        covered = lambda bs, p: sum(_between(p, b) for b in bs)  # noqa: E731
        for p in points:
            assert covered(merged, p) == min(1, covered(bounds, p))  # same keys, each once
        lows = [b[0] or "" for b in merged]
        assert lows == sorted(lows)


def test_successor() -> None:
    assert keycodec.successor("ab") == "ac"
    assert keycodec.successor("a\U0010FFFF") == "b"
    assert keycodec.successor("\ud7ff") == "\ue000"
    assert keycodec.successor("\U0010FFFF") is None


def test_first_value_prefix_bounds_hold_exactly_the_keys_of_values_with_the_prefix() -> None:
    types = ["string", "int"]
    bounds = first_value_prefix_bounds("2024-0", types)
    assert bounds is not None
    low, high = bounds
    for first, inside in [("2024-0", True), ("2024-01", True), ("2024-0\x01x", True), ("2024-", False),
                          ("2024-1", False), ("2024-/", False), ("x" * 2000, False), ("2024-0" + "y" * 2000, True)]:
        key = partition_sort_key([first, "7"], types)
        assert (low <= key <= high) == inside, first
    long = first_value_prefix_bounds("z" * 2000, types)  # cut as keys are: still a superset
    assert long is not None and long[0] <= partition_sort_key(["z" * 2001, "1"], types) <= long[1]
    assert first_value_prefix_bounds("", types) is None
    assert first_value_prefix_bounds("20", ["int", "string"]) is None  # typed: no text prefix order


# ------------------------------------------------------------------ partition index entry keys
def test_index_entry_keys_are_the_typed_key_plus_the_partition_identity() -> None:
    from chalicelib.domain.expressions.binding import parse_value
    from chalicelib.domain.partition_keys import IndexSpec, _identity_hash, index_entry_key
    spec = IndexSpec("u", "i", ("year", "country"), ("int", "string"), (2, 0))
    values = ["US", "Shoes", "2021"]
    typed = [parse_value("2021", "int"), parse_value("US", "string")]
    expected = keycodec.encode_key(typed, ["int", "string"]) + _identity_hash(values)
    assert index_entry_key(values, spec) == index_entry_key(list(values), spec) == expected  # cached or not


@pytest.mark.parametrize("values, code", [
    (["US"], "MISSING_PARTITION_VALUE_ERROR"),
    (["U\x01S", "x", "2021"], "UNSUPPORTED_PARTITION_CHARACTER_ERROR"),
    (["US", "x", "twenty"], "INVALID_PARTITION_TYPE_DATA_ERROR"),
])
def test_index_entry_key_refusals(values: list[str], code: str) -> None:
    from chalicelib.domain.partition_keys import IndexSpec, IndexValueError, index_entry_key
    spec = IndexSpec("u", "i", ("year", "country"), ("int", "string"), (2, 0))
    for _ in range(2):  # the second answer comes from the cache
        with pytest.raises(IndexValueError) as raised:
            index_entry_key(values, spec)
        assert raised.value.code == code
