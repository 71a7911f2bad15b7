"""Glue (Hive DDL) column types read as Paimon types, for Glue tables served as Paimon format tables.

Follows Paimon's HiveTypeUtils (HiveToPaimonTypeVisitor): string -> STRING (VARCHAR(max)), binary ->
BYTES, timestamp -> TIMESTAMP(6), decimal -> DECIMAL(10, 0) unless sized, struct -> ROW, and
ids assigned as Paimon's Schema.Builder does (each column, then its nested fields, in order).
A type with no Paimon counterpart (uniontype, interval, ...) raises ValueError: such a table is
not one Paimon's clients can read.
"""

from __future__ import annotations

import re
from typing import Any

from chalicelib.domain.paimon.types import ArrayType, AtomicType, DataField, DataType, MapType, RowType

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

    def parse(self) -> Any:
        name = self.take().lower()
        if name == "array":
            self.take("<")
            element = self.parse()
            self.take(">")
            return ("array", element)
        if name == "map":
            self.take("<")
            key = self.parse()
            self.take(",")
            value = self.parse()
            self.take(">")
            return ("map", key, value)
        if name == "struct":
            self.take("<")
            fields = []
            while self.peek() != ">":
                field_name = self.take()
                self.take(":")
                fields.append((field_name, self.parse()))
                if self.peek() == ",":
                    self.take(",")
            self.take(">")
            return ("struct", fields)
        args = self.sized()
        if name == "decimal":
            precision, scale = (args + [10, 0][len(args):])[:2] if args else (10, 0)
            return ("atomic", f"DECIMAL({precision}, {scale})")
        if name in ("char", "varchar"):
            if len(args) != 1:
                raise ValueError(f"{name} needs a length in {self.text[:100]!r}")
            return ("atomic", f"{name.upper()}({args[0]})")
        if name in _ATOMIC and not args:
            return ("atomic", _ATOMIC[name])
        raise ValueError(f"Glue type {name!r} has no Paimon counterpart")


def _build(node: Any, next_id: list[int]) -> DataType:
    kind = node[0]
    if kind == "atomic":
        return AtomicType(node[1])
    if kind == "array":
        return ArrayType(_build(node[1], next_id))
    if kind == "map":
        return MapType(_build(node[1], next_id), _build(node[2], next_id))
    fields = []
    for name, child in node[1]:
        next_id[0] += 1
        field_id = next_id[0]
        fields.append(DataField(field_id, name, _build(child, next_id)))
    return RowType(fields)


def fields_from_columns(columns: list[dict[str, Any]]) -> list[DataField]:
    """Paimon fields for Glue columns (``Name``, ``Type``, ``Comment``); ValueError for a type
    Paimon has no counterpart for."""
    next_id = [-1]
    fields = []
    for column in columns:
        parser = _Parser(str(column.get("Type") or ""))
        node = parser.parse()
        if parser.peek():
            raise ValueError(f"malformed type {column.get('Type')!r}")
        next_id[0] += 1
        field_id = next_id[0]
        fields.append(DataField(field_id, column["Name"], _build(node, next_id), column.get("Comment")))
    return fields
