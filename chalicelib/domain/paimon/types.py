"""Paimon data types: the JSON of the REST protocol and the schema-N files, and their Glue names.

An atomic type is a string (``"INT NOT NULL"``, ``"DECIMAL(10, 2)"``, ``"VARCHAR(20)"``,
``"TIMESTAMP(6) WITH LOCAL TIME ZONE"``); ARRAY, MULTISET, VECTOR, MAP and ROW are objects
(``{"type": "ARRAY", "element": ..., "nullable": true}``, ``{"type": "ROW", "fields": [...]}``)
whose nested ROW fields carry ids of their own. Serialization follows pypaimon 2.1.0
(pypaimon/schema/data_types.py) key for key, so a schema file we write reads back identically.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Union

from chalicelib.errors import InvalidInputException

# The type keywords pypaimon and Paimon's Java parser accept (pypaimon's Keyword enum).
ATOMIC_KEYWORDS = frozenset({
    "CHAR", "VARCHAR", "STRING", "BOOLEAN", "BINARY", "VARBINARY", "BYTES", "BLOB", "DECIMAL", "NUMERIC",
    "DEC", "TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "DATE", "TIME", "TIMESTAMP",
    "TIMESTAMP_LTZ", "VARIANT",
})
_NOT_NULL = " NOT NULL"
# An atomic type: a keyword, optional "(n)" or "(p, s)", optional zone words; then nullability.
_ATOMIC = re.compile(r"([A-Z_]+)\s*(\(\s*\d+\s*(?:,\s*\d+\s*)?\))?((?:\s+[A-Z]+)*?)(\s+NOT\s+NULL|\s+NULL)?")
_ZONE_SUFFIXES = ("", " WITH TIME ZONE", " WITHOUT TIME ZONE", " WITH LOCAL TIME ZONE")
MAX_NESTING = 64  # deeper JSON is refused before recursion could exhaust the stack


def _bad(message: str) -> InvalidInputException:
    return InvalidInputException(message)


@dataclass
class AtomicType:
    """A type without children; ``type`` is its SQL text without nullability (``"DECIMAL(10, 2)"``)."""

    type: str
    nullable: bool = True

    def to_json(self) -> str:
        """The JSON string form (``"INT NOT NULL"``)."""
        return self.type if self.nullable else self.type + _NOT_NULL


@dataclass
class ArrayType:
    """ARRAY<element>."""

    element: "DataType"
    nullable: bool = True

    def to_json(self) -> dict[str, Any]:
        """``{"type": "ARRAY", "element": ..., "nullable": ...}`` as pypaimon writes it."""
        return {"type": "ARRAY" + ("" if self.nullable else _NOT_NULL), "element": self.element.to_json(),
                "nullable": self.nullable}


@dataclass
class MultisetType:
    """MULTISET<element> (a bag: element -> count)."""

    element: "DataType"
    nullable: bool = True

    def to_json(self) -> dict[str, Any]:
        """``{"type": "MULTISET", "element": ..., "nullable": ...}``."""
        return {"type": "MULTISET" + ("" if self.nullable else _NOT_NULL), "element": self.element.to_json(),
                "nullable": self.nullable}


@dataclass
class VectorType:
    """VECTOR<element, length> (a fixed-length numeric vector)."""

    element: "DataType"
    length: int
    nullable: bool = True

    def to_json(self) -> dict[str, Any]:
        """``{"type": "VECTOR", "element": ..., "length": n, "nullable": ...}``."""
        return {"type": "VECTOR" + ("" if self.nullable else _NOT_NULL), "element": self.element.to_json(),
                "length": self.length, "nullable": self.nullable}


@dataclass
class MapType:
    """MAP<key, value>."""

    key: "DataType"
    value: "DataType"
    nullable: bool = True

    def to_json(self) -> dict[str, Any]:
        """``{"type": "MAP", "key": ..., "value": ..., "nullable": ...}``."""
        return {"type": "MAP" + ("" if self.nullable else _NOT_NULL), "key": self.key.to_json(),
                "value": self.value.to_json(), "nullable": self.nullable}


@dataclass
class RowType:
    """ROW<fields>: nested fields with ids from the table's one id sequence."""

    fields: list["DataField"] = field(default_factory=list)
    nullable: bool = True

    def to_json(self) -> dict[str, Any]:
        """``{"type": "ROW", "fields": [...], "nullable": ...}``."""
        return {"type": "ROW" + ("" if self.nullable else _NOT_NULL), "fields": [f.to_json() for f in self.fields],
                "nullable": self.nullable}


DataType = Union[AtomicType, ArrayType, MultisetType, VectorType, MapType, RowType]


@dataclass
class DataField:
    """A column (or a nested ROW field): id, name, type, optional description and default value."""

    id: int
    name: str
    type: DataType
    description: str | None = None
    default_value: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The field's JSON; ``description`` and ``defaultValue`` only when set (as pypaimon)."""
        out: dict[str, Any] = {"id": self.id, "name": self.name, "type": self.type.to_json()}
        if self.description is not None:
            out["description"] = self.description
        if self.default_value is not None:
            out["defaultValue"] = self.default_value
        return out


# -- parsing --------------------------------------------------------------------------------------

def parse_atomic(text: str, where: str = "type") -> AtomicType:
    """Parse ``"DECIMAL(10, 2) NOT NULL"`` into an AtomicType; unknown keywords are refused."""
    if not isinstance(text, str) or not text.strip():
        raise _bad(f"{where} must be a non-empty type string")
    upper = " ".join(text.upper().split())
    match = _ATOMIC.fullmatch(upper)
    if match is None or match.group(1) not in ATOMIC_KEYWORDS or match.group(3) not in _ZONE_SUFFIXES:
        raise _bad(f"{where}: unknown or malformed type {text[:100]!r}")
    params = match.group(2) or ""
    if params:
        params = "(" + ", ".join(part.strip() for part in params[1:-1].split(",")) + ")"
    nullable = match.group(4) is None or match.group(4).strip() == "NULL"
    return AtomicType(match.group(1) + params + match.group(3), nullable)


def parse_type(data: Any, where: str = "type", depth: int = 0) -> DataType:
    """Parse a type's JSON (string or object) into a DataType; bad input is InvalidInputException."""
    if depth > MAX_NESTING:
        raise _bad(f"{where}: types nest more than {MAX_NESTING} levels")
    if isinstance(data, str):
        return parse_atomic(data, where)
    if not isinstance(data, dict):
        raise _bad(f"{where} must be a type string or object, not {type(data).__name__}")
    type_text = data.get("type")
    if not isinstance(type_text, str):
        raise _bad(f"{where}.type is required and must be a string")
    head = type_text.upper().split(" ", 1)[0].split("<", 1)[0]
    # pypaimon reads nullability from the type text; MAP also honours an explicit "nullable".
    nullable = _NOT_NULL not in type_text
    if head in ("ARRAY", "MULTISET", "VECTOR"):
        if "element" not in data:
            raise _bad(f"{where}.element is required for {head}")
        element = parse_type(data["element"], f"{where}.element", depth + 1)
        if head == "ARRAY":
            return ArrayType(element, nullable)
        if head == "MULTISET":
            return MultisetType(element, nullable)
        length = data.get("length")
        if not isinstance(length, int) or isinstance(length, bool) or length < 1:
            raise _bad(f"{where}.length must be an integer >= 1 for VECTOR")
        return VectorType(element, length, nullable)
    if head == "MAP":
        for part in ("key", "value"):
            if part not in data:
                raise _bad(f"{where}.{part} is required for MAP")
        explicit = data.get("nullable")
        if explicit is not None and not isinstance(explicit, bool):
            raise _bad(f"{where}.nullable must be a boolean")
        return MapType(parse_type(data["key"], f"{where}.key", depth + 1),
                       parse_type(data["value"], f"{where}.value", depth + 1),
                       nullable if explicit is None else explicit)
    if head == "ROW":
        fields = data.get("fields", [])
        if not isinstance(fields, list):
            raise _bad(f"{where}.fields must be a list")
        return RowType([parse_field(f, f"{where}.fields[{i}]", depth + 1) for i, f in enumerate(fields)], nullable)
    return parse_atomic(type_text, f"{where}.type")


def parse_field(data: Any, where: str = "field", depth: int = 0) -> DataField:
    """Parse a DataField's JSON (``id``, ``name``, ``type``, ``description``, ``defaultValue``)."""
    if not isinstance(data, dict):
        raise _bad(f"{where} must be an object")
    field_id = data.get("id")
    if not isinstance(field_id, int) or isinstance(field_id, bool):
        raise _bad(f"{where}.id is required and must be an integer")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise _bad(f"{where}.name is required and must be a non-empty string")
    if "type" not in data:
        raise _bad(f"{where}.type is required")
    description = data.get("description")
    default_value = data.get("defaultValue")
    for key, value in (("description", description), ("defaultValue", default_value)):
        if value is not None and not isinstance(value, str):
            raise _bad(f"{where}.{key} must be a string")
    return DataField(field_id, name, parse_type(data["type"], f"{where}.type", depth), description, default_value)


# -- walking --------------------------------------------------------------------------------------

def children(data_type: DataType) -> list[DataType]:
    """The directly nested types (ROW field types, element, key and value)."""
    if isinstance(data_type, RowType):
        return [f.type for f in data_type.fields]
    if isinstance(data_type, (ArrayType, MultisetType, VectorType)):
        return [data_type.element]
    if isinstance(data_type, MapType):
        return [data_type.key, data_type.value]
    return []


def highest_field_id(fields: list[DataField]) -> int:
    """The largest field id among ``fields`` and all their nested ROW fields (-1 for none)."""
    best = -1
    stack: list[DataType] = []
    for f in fields:
        best = max(best, f.id)
        stack.append(f.type)
    while stack:
        data_type = stack.pop()
        if isinstance(data_type, RowType):
            for f in data_type.fields:
                best = max(best, f.id)
        stack.extend(children(data_type))
    return best


def type_root(data_type: DataType) -> str:
    """The type's family as Paimon's cast rules name it (INTEGER for INT, VARCHAR for STRING, ...)."""
    if isinstance(data_type, RowType):
        return "ROW"
    if isinstance(data_type, ArrayType):
        return "ARRAY"
    if isinstance(data_type, MapType):
        return "MAP"
    if isinstance(data_type, MultisetType):
        return "MULTISET"
    if isinstance(data_type, VectorType):
        return "VECTOR"
    name = data_type.type.split("(", 1)[0].split(" ", 1)[0]
    return {"INT": "INTEGER", "STRING": "VARCHAR", "BYTES": "VARBINARY", "NUMERIC": "DECIMAL",
            "DEC": "DECIMAL"}.get(name, name)


# -- Paimon's cast rules (pypaimon/casting/data_type_casts.py, after Java's DataTypeCasts) ------------
_CHARACTER = {"CHAR", "VARCHAR"}
_INTEGERS = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT"}
_NUMERIC = _INTEGERS | {"FLOAT", "DOUBLE", "DECIMAL"}
_TIMESTAMPS = {"TIMESTAMP", "TIMESTAMP_LTZ"}
_DATETIME = {"DATE", "TIME"} | _TIMESTAMPS
_PREDEFINED = _CHARACTER | _NUMERIC | _DATETIME | {"BOOLEAN", "BINARY", "VARBINARY"}
_CONSTRUCTED = {"ARRAY", "MAP", "MULTISET", "ROW", "VECTOR"}
_INT_EXPLICIT = _NUMERIC | _CHARACTER | {"BOOLEAN"} | _TIMESTAMPS
# target root -> source roots castable to it (implicit and explicit rules together: a column type
# change may take either, as pypaimon's supports_cast with allow_explicit=True).
_CASTS: dict[str, set[str]] = {
    "CHAR": {"CHAR"} | _PREDEFINED | {"ARRAY", "MAP", "ROW"},
    "VARCHAR": _CHARACTER | _PREDEFINED | {"ARRAY", "MAP", "ROW"},
    "BOOLEAN": {"BOOLEAN"} | _CHARACTER | _INTEGERS,
    "BINARY": {"BINARY", "VARBINARY"} | _CHARACTER,
    "VARBINARY": {"BINARY", "VARBINARY"} | _CHARACTER,
    "DECIMAL": _NUMERIC | _CHARACTER | {"BOOLEAN"} | _TIMESTAMPS,
    "TINYINT": _INT_EXPLICIT, "SMALLINT": _INT_EXPLICIT, "INTEGER": _INT_EXPLICIT, "BIGINT": _INT_EXPLICIT,
    "FLOAT": _INT_EXPLICIT, "DOUBLE": _INT_EXPLICIT,
    "DATE": {"DATE"} | _TIMESTAMPS | _CHARACTER,
    "TIME": {"TIME"} | _TIMESTAMPS | _CHARACTER,
    "TIMESTAMP": _DATETIME | _CHARACTER | _NUMERIC,
    "TIMESTAMP_LTZ": _DATETIME | _CHARACTER | _NUMERIC,
}


def supports_cast(source: DataType, target: DataType) -> bool:
    """Whether a column of type ``source`` may change to ``target`` (Paimon's cast rules)."""
    source_root, target_root = type_root(source), type_root(target)
    if source_root == target_root:
        if source_root in _CONSTRUCTED:
            # Reshaping a nested type goes through sub-field paths, never a whole replacement.
            src, dst = to_json(source), to_json(target)
            return _outer_nullable(src) == _outer_nullable(dst)
        return True
    return source_root in _CASTS.get(target_root, set())


def _outer_nullable(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: v for k, v in node.items() if k != "nullable"} | {"type": node["type"].removesuffix(_NOT_NULL)}
    return node


def to_json(data_type: DataType) -> Any:
    """The type's JSON (a string for atomic types, an object otherwise)."""
    return data_type.to_json()


def with_nullable(data_type: DataType, nullable: bool) -> DataType:
    """A copy of ``data_type`` with its own (outer) nullability set."""
    copy = parse_type(to_json(data_type))
    copy.nullable = nullable
    return copy


# -- Glue / Hive column types ---------------------------------------------------------------------
_GLUE_ATOMIC = {
    "BOOLEAN": "boolean", "TINYINT": "tinyint", "SMALLINT": "smallint", "INT": "int", "INTEGER": "int",
    "BIGINT": "bigint", "FLOAT": "float", "DOUBLE": "double", "DATE": "date", "STRING": "string",
    "BYTES": "binary", "BINARY": "binary", "VARBINARY": "binary", "BLOB": "binary", "TIME": "string",
    "TIMESTAMP": "timestamp", "TIMESTAMP_LTZ": "timestamp", "VARIANT": "string",
}
# Hive's varchar stops at 65535 characters; longer (STRING is VARCHAR(2147483647)) is Hive's string.
_HIVE_MAX_VARCHAR = 65535


def glue_type(data_type: DataType) -> str:
    """The Glue (Hive DDL) column type for a Paimon type: BIGINT -> bigint, VARCHAR(n) -> varchar(n),
    ROW -> struct<a:int,...>, MAP -> map<k,v>, ARRAY -> array<t>, MULTISET<t> -> map<t,int>."""
    if isinstance(data_type, ArrayType):
        return f"array<{glue_type(data_type.element)}>"
    if isinstance(data_type, VectorType):
        return f"array<{glue_type(data_type.element)}>"
    if isinstance(data_type, MultisetType):
        return f"map<{glue_type(data_type.element)},int>"
    if isinstance(data_type, MapType):
        return f"map<{glue_type(data_type.key)},{glue_type(data_type.value)}>"
    if isinstance(data_type, RowType):
        return "struct<" + ",".join(f"{f.name}:{glue_type(f.type)}" for f in data_type.fields) + ">"
    text = data_type.type
    name = text.split("(", 1)[0].split(" ", 1)[0]
    args = text[text.index("(") + 1:text.index(")")].replace(" ", "") if "(" in text else ""
    if name in ("DECIMAL", "NUMERIC", "DEC"):
        return f"decimal({args or '10,0'})"
    if name == "CHAR":
        length = int(args or 1)
        return f"char({length})" if length <= 255 else "string"
    if name == "VARCHAR":
        length = int(args or 1)
        return f"varchar({length})" if length <= _HIVE_MAX_VARCHAR else "string"
    if name == "TIMESTAMP" and "LOCAL TIME ZONE" in text:
        return "timestamp"
    return _GLUE_ATOMIC.get(name, "string")
