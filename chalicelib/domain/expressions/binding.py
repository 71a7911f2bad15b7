"""Binding and typing: columns resolved to the table's partition keys (``KeyRef``) and literals
converted to values of the key's declared Glue type. The same conversion reads stored partition
values (``parse_value``, and ``evaluation`` for each partition)."""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import replace
from decimal import Decimal
from typing import Any, Sequence

from chalicelib.domain.expressions.nodes import (And, Between, Column, Compare, In, KeyRef, Like, Literal,
                                                 Node, Not, Or, TrueExpr)
from chalicelib.domain.keycodec import (BOOLEAN, DATE, DECIMAL, FLOAT, INT, STRING, TIMESTAMP,
                                        Timestamp, base_type, kind_of)
from chalicelib.errors import InvalidInputException


def bind(node: Node, partition_keys: Sequence[tuple[str, str]]) -> Node:
    """Resolve columns against the table's partition keys ``[(name, glue_type), ...]`` (in
    partition-value order) and convert literals to the keys' types.

    Column names match case-insensitively. InvalidInputException for a column that is not a
    partition key (the message lists the keys) or a literal that does not fit its key's type.
    """
    keys: dict[str, KeyRef] = {}
    for position, (name, glue_type) in enumerate(partition_keys):
        keys.setdefault(name.lower(), KeyRef(name, position, glue_type, kind_of(glue_type)))
    return _bind(node, keys)


def _bind(node: Node, keys: dict[str, KeyRef]) -> Node:
    if isinstance(node, TrueExpr):
        return node
    if isinstance(node, (And, Or)):
        return type(node)(tuple(_bind(item, keys) for item in node.items))
    if isinstance(node, Not):
        return Not(_bind(node.item, keys))
    ref = _resolve(node.column, keys)
    if isinstance(node, Compare):
        return Compare(ref, node.op, _typed_literal(node.literal, ref))
    if isinstance(node, Between):
        return Between(ref, _typed_literal(node.low, ref), _typed_literal(node.high, ref), node.negated)
    if isinstance(node, In):
        return In(ref, tuple(_typed_literal(v, ref) for v in node.values), node.negated)
    if isinstance(node, Like) and ref.kind in _NO_LIKE:
        raise InvalidInputException(f"{_like_type_name(ref)} data type doesn't support operation 'LIKE'")
    return replace(node, column=ref)  # Like, IsNull: nothing to convert


# Glue refuses LIKE on these key kinds. Its messages name a type class: "Integral data type
# doesn't support operation 'LIKE'" for every integer type, "Decimal", "Date" and "Timestamp"
# for the others (as observed against Glue by moto's tests, getmoto/moto#5013). No source shows
# the text for double/float; they follow the same pattern with their own type name.
_NO_LIKE = frozenset((INT, DECIMAL, FLOAT, DATE, TIMESTAMP))


def _like_type_name(ref: KeyRef) -> str:
    return "Integral" if ref.kind == INT else base_type(ref.glue_type).capitalize()


def _resolve(column: Column, keys: dict[str, KeyRef]) -> KeyRef:
    name = column.name if isinstance(column, KeyRef) else column
    ref = keys.get(name.lower())
    if ref is None:
        known = ", ".join(k.name for k in keys.values()) or "none: the table is not partitioned"
        raise InvalidInputException(
            f"Column '{name}' in the expression is not a partition key; partition keys: {known}")
    return ref


def _typed_literal(literal: Literal, ref: KeyRef) -> Any:
    if ref.kind == STRING:
        # An unquoted number on a string key compares as its text as written, less a leading
        # '+': the string JSQLParser's LongValue / DoubleValue keep (getStringValue).
        return literal.text if literal.quoted else literal.text.removeprefix("+")
    try:
        if not literal.quoted and ref.kind in (INT, DECIMAL, FLOAT) and _NUMBER_RE.fullmatch(literal.text):
            return _number_value(literal.text, ref)
        return convert(literal.text, ref.kind, ref.glue_type)
    except ValueError as why:
        shown = f"'{literal.text}'" if literal.quoted else literal.text
        where = f" at character {literal.pos + 1}" if literal.pos >= 0 else ""
        raise InvalidInputException(
            f"Literal {shown}{where} is not a valid {ref.glue_type} value for partition key "
            f"'{ref.name}': {why}") from None


def _number_value(text: str, ref: KeyRef) -> Any:
    """An unquoted number literal (JSQLParser's long or double value: ``2020``, ``2.5``,
    ``3e14``) under a numeric key: compared by its value. On an integer key the value must be
    a whole number (``1E+3`` is 1000, ``2.5`` is refused); quoted literals and stored values are
    converted from their text instead (``convert``), which for integers takes digits only, like
    Java's ``Long.parseLong`` behind Glue's "For input string" errors."""
    if ref.kind == FLOAT:
        return _to_float(text)
    value = Decimal(text)
    if ref.kind == DECIMAL or value.is_zero():
        return value if ref.kind == DECIMAL else 0
    # adjusted() first: int(Decimal('1e999999999')) would build a gigantic integer.
    if value.adjusted() > 20:
        raise ValueError(f"out of range for {base_type(ref.glue_type)}")
    if value.adjusted() < 0 or value != value.to_integral_value():
        raise ValueError("expected an integer")
    return _to_int(str(int(value)), ref.glue_type)


def parse_value(text: str, glue_type: str) -> Any:
    """A raw partition value (as stored by Glue) as a value of the Glue type, the same way
    expression literals are converted; InvalidInputException if it does not fit (use it to
    validate indexed partition values before ``keycodec.encode_key``)."""
    try:
        return convert(text, kind_of(glue_type), glue_type)
    except ValueError as why:
        raise InvalidInputException(f"Partition value '{text}' is not a valid {glue_type}: {why}") from None


_INT_RE = re.compile(r"[+-]?[0-9]{1,30}")
# Decimals in exponent notation (``3e14``, ``-2.5E-3``) are decimals too: Java's BigDecimal reads
# them, and they compare by value. Exponents of up to 9 digits (Java's int scale stops near
# there too): Python's Decimal refuses exponents beyond its context's limits.
_DECIMAL_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,9})?")
_NUMBER_RE = _DECIMAL_RE  # the grammar's number literal
_FLOAT_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_DATE_RE = re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})")
_TIMESTAMP_RE = re.compile(
    r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})[ T]([0-9]{1,2}):([0-9]{2}):([0-9]{2})"
    r"(?:\.([0-9]{1,9}))?\s*(Z|[+-][0-9]{2}:?[0-9]{2})?")
_INT_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "integer": 32}  # others: 64


def int_bits(glue_type: str) -> int:
    """The width of an integer Glue type: tinyint 8, smallint 16, int 32, bigint/long 64."""
    return _INT_BITS.get(base_type(glue_type), 64)


def convert(text: str, kind: str, glue_type: str) -> Any:
    """Raw text -> typed value; ValueError (with a reason) when it does not fit."""
    if kind == STRING:
        return text
    if kind == INT:
        return _to_int(text, glue_type)
    if kind == DECIMAL:
        if not _DECIMAL_RE.fullmatch(text):
            raise ValueError("expected a decimal number")
        return Decimal(text)
    if kind == FLOAT:
        return _to_float(text)
    if kind == DATE:
        return _to_date(text)
    if kind == TIMESTAMP:
        return _to_timestamp(text)
    if kind == BOOLEAN:
        if text.lower() not in ("true", "false"):
            raise ValueError("expected true or false")
        return text.lower() == "true"
    raise ValueError(f"unsupported kind {kind}")


def _to_int(text: str, glue_type: str) -> int:
    if not _INT_RE.fullmatch(text):
        raise ValueError("expected an integer")
    value = int(text)
    bits = int_bits(glue_type)
    if not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
        raise ValueError(f"out of range for {base_type(glue_type)}")
    return value


def _to_float(text: str) -> float:
    if not _FLOAT_RE.fullmatch(text):
        raise ValueError("expected a number")
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError("out of range for double")
    return value + 0.0  # -0.0 -> 0.0: equal values must look alike (index keys)


def _to_date(text: str) -> _dt.date:
    match = _DATE_RE.fullmatch(text)
    if not match:
        raise ValueError("expected yyyy-MM-dd")
    try:
        return _dt.date(*map(int, match.groups()))
    except ValueError as why:
        raise ValueError(f"expected yyyy-MM-dd ({why})") from None


def _to_timestamp(text: str) -> Timestamp:
    match = _TIMESTAMP_RE.fullmatch(text)
    if not match:
        raise ValueError("expected yyyy-MM-dd HH:mm:ss[.fffffffff]")
    *fields, fraction, offset = match.groups()
    zone = None
    if offset:
        zone = _dt.timezone.utc
        if offset != "Z":
            sign = -1 if offset[0] == "-" else 1
            digits = offset[1:].replace(":", "")
            zone = _dt.timezone(sign * _dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
    try:
        year, month, day, hour, minute, second = map(int, fields)
        moment = _dt.datetime(year, month, day, hour, minute, second, tzinfo=zone)
        return Timestamp.from_parts(moment, int((fraction or "0").ljust(9, "0")))
    except (ValueError, OverflowError) as why:
        raise ValueError(f"expected yyyy-MM-dd HH:mm:ss[.fffffffff] ({why})") from None
