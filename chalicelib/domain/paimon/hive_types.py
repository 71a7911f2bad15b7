"""Glue (Hive DDL) column types read as Paimon types: the columns of Glue tables served as
Paimon format tables, and of views a Glue client wrote.

Follows Paimon's HiveTypeUtils (HiveToPaimonTypeVisitor): string -> STRING (VARCHAR(max)), binary ->
BYTES, timestamp -> TIMESTAMP(6), decimal -> DECIMAL(10, 0) unless sized, struct -> ROW. A type
with no Paimon counterpart (uniontype, interval, ...) or a malformed one raises ValueError: the
caller decides (a format table is not served; a view column reads as STRING).
"""

from __future__ import annotations

import re
from itertools import count
from typing import Any, Iterator, Optional

from chalicelib.domain.paimon.types import (MAX_NESTING, ArrayType, AtomicType, DataField, DataType, MapType,
                                            RowType)

_ATOMIC = {"boolean": "BOOLEAN", "tinyint": "TINYINT", "smallint": "SMALLINT", "int": "INT", "integer": "INT",
           "bigint": "BIGINT", "float": "FLOAT", "double": "DOUBLE", "string": "STRING", "binary": "BYTES",
           "date": "DATE", "timestamp": "TIMESTAMP(6)"}
_TOKEN = re.compile(r"\s*([<>,:()]|[^<>,:()\s][^<>,:()]*)")


def _tokens(text: str) -> list[str]:
    tokens, pos = [], 0
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ValueError(f"unreadable type {text[:100]!r}")
        tokens.append(match.group(1).strip())
        pos = match.end()
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.pos = 0
        self.text = text

    def peek(self) -> str:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if not token or (expected is not None and token != expected):
            raise ValueError(f"malformed type {self.text[:100]!r}")
        self.pos += 1
        return token

    def sized(self) -> list[int]:
        if self.peek() != "(":
            return []
        self.take("(")
        numbers = [int(self.take())]
        while self.peek() == ",":
            self.take(",")
            numbers.append(int(self.take()))
        self.take(")")
        return numbers

    def parse(self, depth: int = 0) -> Any:
        if depth > MAX_NESTING:  # a Glue type may be 131,072 characters: never exhaust the stack
            raise ValueError(f"type nests more than {MAX_NESTING} levels")
        name = self.take().lower()
        if name == "array":
            self.take("<")
            element = self.parse(depth + 1)
            self.take(">")
            return ("array", element)
        if name == "map":
            self.take("<")
            key = self.parse(depth + 1)
            self.take(",")
            value = self.parse(depth + 1)
            self.take(">")
            return ("map", key, value)
        if name == "struct":
            self.take("<")
            fields = []
            while self.peek() != ">":
                field_name = self.take()
                self.take(":")
                fields.append((field_name, self.parse(depth + 1)))
                if self.peek() == ",":
                    self.take(",")
            self.take(">")
            return ("struct", fields)
        args = self.sized()
        if name == "decimal":
            precision, scale = (args + [10, 0][len(args):])[:2] if args else (10, 0)
            if len(args) > 2 or not 1 <= precision <= 38 or not 0 <= scale <= precision:  # Paimon's DecimalType
                raise ValueError(f"decimal({precision}, {scale}) is out of range in {self.text[:100]!r}")
            return ("atomic", f"DECIMAL({precision}, {scale})")
        if name in ("char", "varchar"):
            if len(args) != 1:
                raise ValueError(f"{name} needs a length in {self.text[:100]!r}")
            return ("atomic", f"{name.upper()}({args[0]})")
        if name in _ATOMIC and not args:
            return ("atomic", _ATOMIC[name])
        raise ValueError(f"Glue type {name!r} has no Paimon counterpart")


def _build(node: Any, ids: Optional[Iterator[int]]) -> DataType:
    kind = node[0]
    if kind == "atomic":
        return AtomicType(node[1])
    if kind == "array":
        return ArrayType(_build(node[1], ids))
    if kind == "map":
        return MapType(_build(node[1], ids), _build(node[2], ids))
    row_ids = count() if ids is None else ids
    fields = []
    for name, child in node[1]:
        field_id = next(row_ids)
        fields.append(DataField(field_id, name, _build(child, ids)))
    return RowType(fields)


def parse_hive_type(text: str, ids: Optional[Iterator[int]] = None) -> DataType:
    """The Paimon type of a Glue column type. Nested ROW fields take their ids from ``ids``
    (Paimon's Schema.Builder numbers them across the whole schema); without, each ROW numbers its
    fields from 0, as Paimon's RowType.builder does for HiveCatalog's views. ValueError for a type
    Paimon has no counterpart for, or a malformed one."""
    parser = _Parser(text)
    node = parser.parse()
    if parser.peek():
        raise ValueError(f"malformed type {text[:100]!r}")
    return _build(node, ids)


def fields_from_columns(columns: list[dict[str, Any]]) -> list[DataField]:
    """Paimon fields for Glue columns (``Name``, ``Type``, ``Comment``), ids assigned as Paimon's
    Schema.Builder does (each column, then its nested fields, in order); ValueError for a type
    Paimon has no counterpart for."""
    ids = count()
    fields = []
    for column in columns:
        field_id = next(ids)
        fields.append(DataField(field_id, column["Name"], parse_hive_type(str(column.get("Type") or ""), ids),
                                column.get("Comment")))
    return fields
