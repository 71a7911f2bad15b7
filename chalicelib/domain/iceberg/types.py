"""Iceberg types, schemas, partition specs and sort orders: read from Glue's shapes
(IcebergSchema, IcebergPartitionSpec, IcebergSortOrder) into the JSON the Iceberg spec writes in
a table metadata file, and back out as Glue (Hive DDL) column types.

Glue's ``IcebergStructField.Type`` is a document: a primitive type name (``"long"``,
``"decimal(10,2)"``, ``"fixed[16]"``) or a nested type in the spec's JSON form
(``{"type": "list", "element-id": 3, "element": "string", "element-required": false}``). Every
field id, nested ones included, must be unique: readers resolve columns by id.

Hive column types (a TableInput's columns, when IcebergInput comes without a
CreateIcebergTableInput) read as Iceberg types the way Iceberg's HiveSchemaUtil does
(tinyint/smallint -> int, bigint -> long, char/varchar -> string), with fresh ids in order.
"""

from __future__ import annotations

import re
from itertools import count
from typing import Any, Iterator, Optional

from chalicelib.errors import InvalidInputException

# Format version 2 primitives (timestamp_ns, variant, geometry... are version 3).
_PRIMITIVES = frozenset({"boolean", "int", "long", "float", "double", "date", "time", "timestamp",
                         "timestamptz", "string", "uuid", "binary"})
_DECIMAL = re.compile(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_FIXED = re.compile(r"fixed\[\s*(\d+)\s*\]")
_MAX_DECIMAL_PRECISION = 38

# pyiceberg's GLUE_PRIMITIVE_TYPES: what its GlueCatalog writes as a column's Glue type.
_GLUE_TYPES = {"boolean": "boolean", "int": "int", "long": "bigint", "float": "float", "double": "double",
               "date": "date", "time": "string", "string": "string", "uuid": "string", "timestamp": "timestamp",
               "timestamptz": "timestamp", "binary": "binary"}

_TEMPORAL = frozenset({"date", "timestamp", "timestamptz"})
_BUCKETABLE = frozenset({"int", "long", "date", "time", "timestamp", "timestamptz", "string", "uuid", "binary"})
_TRUNCATABLE = frozenset({"int", "long", "string", "binary"})
_TRANSFORM = re.compile(r"(identity|year|month|day|hour|void)|(bucket|truncate)\[\s*(\d+)\s*\]")
PARTITION_FIELD_ID_START = 1000  # the spec's first partition field id (last-partition-id 999 when unpartitioned)


def _bad(path: str, rule: str) -> InvalidInputException:
    return InvalidInputException(f"{path}: {rule}")


# ------------------------------------------------------------------------------ types
def _primitive(name: str, path: str) -> str:
    text = name.strip().lower()
    if text in _PRIMITIVES:
        return text
    decimal = _DECIMAL.fullmatch(text)
    if decimal:
        precision, scale = int(decimal.group(1)), int(decimal.group(2))
        if not 1 <= precision <= _MAX_DECIMAL_PRECISION or scale > precision:
            raise _bad(path, f"decimal precision must be 1 to {_MAX_DECIMAL_PRECISION} and scale at most the "
                             f"precision, got {name!r}")
        return f"decimal({precision}, {scale})"
    fixed = _FIXED.fullmatch(text)
    if fixed and int(fixed.group(1)) > 0:
        return f"fixed[{int(fixed.group(1))}]"
    raise _bad(path, f"unknown Iceberg type {name!r} (format version 2 types: {', '.join(sorted(_PRIMITIVES))}, "
                     "decimal(P,S), fixed[L], struct, list, map)")


def _int(value: Any, path: str) -> int:
    if type(value) is not int:
        raise _bad(path, "must be an integer")
    return value


def _bool(value: Any, path: str) -> bool:
    if type(value) is not bool:
        raise _bad(path, "must be true or false")
    return value


def _field_id(value: Any, path: str, ids: set[int]) -> int:
    field_id = _int(value, path)
    if field_id < 0:
        raise _bad(path, f"field id {field_id} must not be negative")
    if field_id in ids:
        raise _bad(path, f"field id {field_id} is used twice in the schema")
    ids.add(field_id)
    return field_id


def read_type(value: Any, path: str, ids: set[int]) -> Any:
    """An Iceberg type from its document form (a name or the spec's JSON object), normalised as
    the spec writes it; nested field ids are added to ``ids`` (InvalidInputException on a clash)."""
    if isinstance(value, str):
        return _primitive(value, path)
    if not isinstance(value, dict):
        raise _bad(path, "an Iceberg type is a type name or a struct, list or map object")
    kind = value.get("type")
    if kind == "struct":
        fields = value.get("fields")
        if not isinstance(fields, list):
            raise _bad(f"{path}.fields", "a struct needs a list of fields")
        return {"type": "struct", "fields": _struct_fields(
            [_spec_field(f, f"{path}.fields[{i}]") for i, f in enumerate(fields)], path, ids)}
    if kind == "list":
        element_id = _field_id(value.get("element-id"), f"{path}.element-id", ids)
        return {"type": "list", "element-id": element_id,
                "element": read_type(value.get("element"), f"{path}.element", ids),
                "element-required": _bool(value.get("element-required"), f"{path}.element-required")}
    if kind == "map":
        key_id = _field_id(value.get("key-id"), f"{path}.key-id", ids)
        value_id = _field_id(value.get("value-id"), f"{path}.value-id", ids)
        key = read_type(value.get("key"), f"{path}.key", ids)
        return {"type": "map", "key-id": key_id, "key": key, "value-id": value_id,
                "value": read_type(value.get("value"), f"{path}.value", ids),
                "value-required": _bool(value.get("value-required"), f"{path}.value-required")}
    raise _bad(f"{path}.type", f"unknown Iceberg type {kind!r} (struct, list or map)")


def _spec_field(value: Any, path: str) -> dict[str, Any]:
    """A nested struct field in the spec's JSON form, as Glue's IcebergStructField names members."""
    if not isinstance(value, dict):
        raise _bad(path, "a struct field is an object with id, name, required and type")
    out = {"Id": value.get("id"), "Name": value.get("name"), "Required": value.get("required"),
           "Type": value.get("type")}
    if value.get("doc") is not None:
        if not isinstance(value["doc"], str):
            raise _bad(f"{path}.doc", "a field's doc is a string")
        out["Doc"] = value["doc"]
    return out


def _struct_fields(fields: list[dict[str, Any]], path: str, ids: set[int]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    names: set[str] = set()
    for i, field in enumerate(fields):
        where = f"{path}.Fields[{i}]"
        name = field.get("Name")
        if not isinstance(name, str) or not name:
            raise _bad(f"{where}.Name", "a field needs a non-empty name")
        # Glue columns are case-insensitive: two names differing in case would be one column.
        if name.lower() in names:
            raise _bad(f"{where}.Name", f"field name {name!r} is used twice (names compare case-insensitively)")
        names.add(name.lower())
        spec = {"id": _field_id(field.get("Id"), f"{where}.Id", ids), "name": name,
                "required": _bool(field.get("Required"), f"{where}.Required"),
                "type": read_type(field.get("Type"), f"{where}.Type", ids)}
        if field.get("Doc") is not None:
            spec["doc"] = field["Doc"]
        out.append(spec)
    return out


def read_schema(schema: dict[str, Any], path: str, schema_id: Optional[int] = None) -> dict[str, Any]:
    """A Glue IcebergSchema as the spec's schema object (``schema_id`` overrides its SchemaId)."""
    ids: set[int] = set()
    fields = _struct_fields(schema.get("Fields") or [], path, ids)
    chosen = schema.get("SchemaId", 0) if schema_id is None else schema_id
    out: dict[str, Any] = {"type": "struct", "schema-id": chosen, "fields": fields}
    identifiers = schema.get("IdentifierFieldIds") or []
    placed = {field_id: (field, chain) for field_id, field, chain in walk_with_parents(out)}
    for i, field_id in enumerate(identifiers):
        why = _identifier_problem(placed.get(field_id))
        if why is not None:
            raise _bad(f"{path}.IdentifierFieldIds[{i}]", f"identifier field {field_id} {why}")
    if identifiers:
        out["identifier-field-ids"] = list(identifiers)
    return out


def walk_fields(struct: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(id, field) of every struct field, nested ones included (list elements and map keys and
    values are not fields of their own here)."""
    stack = [struct]
    while stack:
        node = stack.pop()
        if node.get("type") == "struct":
            for field in node["fields"]:
                yield field["id"], field
                if isinstance(field["type"], dict):
                    stack.append(field["type"])
        elif node.get("type") == "list" and isinstance(node["element"], dict):
            stack.append(node["element"])
        elif node.get("type") == "map":
            stack.extend(t for t in (node["key"], node["value"]) if isinstance(t, dict))


Chain = tuple[tuple[str, dict[str, Any]], ...]


def walk_with_parents(struct: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any], Chain]]:
    """(id, field, chain) of every struct field, as ``walk_fields``; ``chain`` holds the fields
    it is nested in, outermost first, each with the kind of its type (``struct``, ``list`` or
    ``map``: a field inside a list's element or a map's value has a ``list`` / ``map`` link)."""
    stack: list[tuple[dict[str, Any], Chain]] = [(struct, ())]
    while stack:
        node, chain = stack.pop()
        if node.get("type") == "struct":
            for field in node["fields"]:
                yield field["id"], field, chain
                if isinstance(field["type"], dict):
                    stack.append((field["type"], chain + ((str(field["type"].get("type")), field),)))
        elif node.get("type") == "list" and isinstance(node["element"], dict):
            stack.append((node["element"], chain))
        elif node.get("type") == "map":
            stack.extend((t, chain) for t in (node["key"], node["value"]) if isinstance(t, dict))


def _identifier_problem(placed: Optional[tuple[dict[str, Any], Chain]]) -> Optional[str]:
    """Why a field cannot be an identifier field (None: it can), by the rules of Iceberg's
    Schema (and pyiceberg's ``_validate_identifier_field``): a required primitive, not float or
    double, nested in required structs only."""
    if placed is None:
        return "is not a field of the schema"
    field, chain = placed
    if not isinstance(field["type"], str):
        return f"({field['name']!r}) must be a primitive field"
    if not field["required"]:
        return f"({field['name']!r}) must be a required field"
    if field["type"] in ("float", "double"):
        return f"({field['name']!r}) must not be a float or double field"
    for kind, parent in chain:
        if kind != "struct":
            return f"({field['name']!r}) must not be nested in {kind} field {parent['name']!r}"
        if not parent["required"]:
            return f"({field['name']!r}) must not be nested in optional field {parent['name']!r}"
    return None


def _promotable(old: Any, new: Any) -> bool:
    """Whether data written as ``old`` reads as ``new``: the same type, or one of the spec's
    promotions (int -> long, float -> double, decimal(P, S) -> decimal(P2, S) with P2 >= P); a
    nested type keeps its kind (its fields are checked by id on their own)."""
    if isinstance(old, dict) or isinstance(new, dict):
        return isinstance(old, dict) and isinstance(new, dict) and old["type"] == new["type"]
    if old == new or (old, new) in (("int", "long"), ("float", "double")):
        return True
    was, now = _DECIMAL.fullmatch(old.replace(" ", "")), _DECIMAL.fullmatch(new.replace(" ", ""))
    return bool(was and now and was.group(2) == now.group(2) and int(now.group(1)) >= int(was.group(1)))


def check_evolution(current: dict[str, Any], schema: dict[str, Any], path: str, *,
                    allow_required: bool = False) -> None:
    """A new schema must read the data files the current one wrote: a field id it keeps keeps
    a type that reads the old values, and an optional field does not become required (unless
    ``allow_required``: an Iceberg client may opt into that change, pyiceberg's
    ``allow_incompatible_changes``, and the Iceberg REST protocol accepts it)."""
    before = dict(walk_fields(current))
    for field_id, field in walk_fields(schema):
        old = before.get(field_id)
        if old is None:
            continue
        if not _promotable(old["type"], field["type"]):
            raise _bad(f"{path}.Fields", f"field {field['name']!r} (id {field_id}) cannot change type from "
                                         f"{_show(old['type'])} to {_show(field['type'])}: Iceberg promotes only "
                                         "int to long, float to double and decimal to a wider precision")
        if field["required"] and not old["required"] and not allow_required:
            raise _bad(f"{path}.Fields", f"field {field['name']!r} (id {field_id}) is optional and cannot become "
                                         "required: existing data files may hold nulls")


def highest_field_id(struct: Any) -> int:
    """The largest field id anywhere in a type (0 if none): a metadata file's last-column-id."""
    if not isinstance(struct, dict):
        return 0
    kind = struct.get("type")
    if kind == "struct":
        return max([0] + [max(f["id"], highest_field_id(f["type"])) for f in struct["fields"]])
    if kind == "list":
        return max(struct["element-id"], highest_field_id(struct["element"]))
    if kind == "map":
        return max(struct["key-id"], struct["value-id"], highest_field_id(struct["key"]),
                   highest_field_id(struct["value"]))
    return 0


# ------------------------------------------------------------------------------ specs and orders
def _transform(text: Any, source_type: Any, path: str) -> str:
    match = _TRANSFORM.fullmatch(text.strip().lower()) if isinstance(text, str) else None
    if match is None:
        raise _bad(path, f"unknown transform {text!r} (identity, year, month, day, hour, void, bucket[N], truncate[W])")
    plain = match.group(1)
    base = _base(source_type)
    if plain is not None:
        fits = (plain in ("identity", "void") or (plain == "hour" and base in ("timestamp", "timestamptz"))
                or (plain in ("year", "month", "day") and base in _TEMPORAL))
        if not fits or (plain == "identity" and not isinstance(source_type, str)):
            raise _bad(path, f"transform {plain!r} does not apply to type {_show(source_type)}")
        return plain
    kind, width = match.group(2), int(match.group(3))
    if width <= 0:
        raise _bad(path, f"{kind} width must be positive")
    allowed = _BUCKETABLE if kind == "bucket" else _TRUNCATABLE
    if base not in allowed and base != "decimal" and not (kind == "bucket" and base == "fixed"):
        raise _bad(path, f"transform {kind}[{width}] does not apply to type {_show(source_type)}")
    return f"{kind}[{width}]"


def _base(kind: Any) -> str:
    if not isinstance(kind, str):
        return str(kind.get("type"))
    return kind.split("(")[0].split("[")[0]


def _show(kind: Any) -> str:
    return kind if isinstance(kind, str) else str(kind.get("type"))


def _source(schema: dict[str, Any], source_id: Any, path: str) -> Any:
    found = dict(walk_fields(schema)).get(source_id)
    if found is None:
        raise _bad(path, f"source field {source_id} is not in the schema")
    return found["type"]


def _column_name(schemas: list[dict[str, Any]], field_id: int) -> str:
    """How the newest of ``schemas`` that has field ``field_id`` names it (for an error)."""
    for schema in reversed(schemas):
        found = dict(walk_fields(schema)).get(field_id)
        if found is not None:
            return f"column {found['name']!r} (id {field_id})"
    return f"column id {field_id}"


def check_sources(spec: dict[str, Any], order: dict[str, Any], schema: dict[str, Any],
                  schemas: list[dict[str, Any]]) -> Optional[str]:
    """Why the default partition spec or sort order (spec JSON) cannot stand on ``schema``, or
    None: each field's source column must be in it, fit the transform and (for a partition
    field) be nested in structs only, as pyiceberg's and Iceberg Java's ``checkCompatible``
    demand of the current spec and sort order (a void partition field needs no source: it is how
    format version 1 drops one). ``schemas`` (the table's) name a dropped column in the message."""
    placed = {field_id: (field, chain) for field_id, field, chain in walk_with_parents(schema)}
    for what, fields in (("partition", spec["fields"]), ("sort", order["fields"])):
        for field in fields:
            if what == "partition" and field["transform"] == "void":
                continue
            label = f"{what} field {field['name']!r}" if what == "partition" else "sort field"
            found = placed.get(field["source-id"])
            if found is None:
                return (f"the {label} is built on {_column_name(schemas, field['source-id'])}, which the schema "
                        f"does not have: change the {'partition spec' if what == 'partition' else 'sort order'} "
                        "first")
            column, chain = found
            try:
                _transform(field["transform"], column["type"], "")
            except InvalidInputException:
                return (f"the {label} ({field['transform']}) cannot be computed from column {column['name']!r} of "
                        f"type {_show(column['type'])}")
            if what == "partition" and any(kind != "struct" for kind, _ in chain):
                return f"the {label}'s source column {column['name']!r} is nested in a list or map"
    return None


def read_partition_spec(spec: Optional[dict[str, Any]], schema: dict[str, Any], path: str, spec_id: int,
                        last_partition_id: int,
                        known_ids: Optional[dict[tuple[int, str], int]] = None) -> dict[str, Any]:
    """A Glue IcebergPartitionSpec as the spec's partition-spec object, checked against
    ``schema``. A field without a FieldId keeps the id an earlier spec gave the same source and
    transform (``known_ids``, as Iceberg's spec updates recycle them), else gets the next id after
    ``last_partition_id``."""
    fields: list[dict[str, Any]] = []
    next_id = count(max(last_partition_id, PARTITION_FIELD_ID_START - 1) + 1)
    names: set[str] = set()
    used: set[int] = set()
    for i, field in enumerate((spec or {}).get("Fields") or []):
        where = f"{path}.Fields[{i}]"
        source_type = _source(schema, field["SourceId"], f"{where}.SourceId")
        transform = _transform(field["Transform"], source_type, f"{where}.Transform")
        field_id = field.get("FieldId")
        if field_id is None:
            field_id = (known_ids or {}).get((field["SourceId"], transform))
        if field_id is None:
            field_id = next(next_id)
        if field_id in used:
            raise _bad(f"{where}.FieldId", f"partition field id {field_id} is used twice")
        used.add(field_id)
        if field["Name"].lower() in names:
            raise _bad(f"{where}.Name", f"partition field name {field['Name']!r} is used twice")
        names.add(field["Name"].lower())
        fields.append({"source-id": field["SourceId"], "field-id": field_id, "name": field["Name"],
                       "transform": transform})
    return {"spec-id": spec_id, "fields": fields}


def read_sort_order(order: Optional[dict[str, Any]], schema: dict[str, Any], path: str,
                    order_id: Optional[int] = None) -> dict[str, Any]:
    """A Glue IcebergSortOrder as the spec's sort-order object (None: unsorted, order 0)."""
    if order is None:
        return {"order-id": 0, "fields": []}
    chosen = order["OrderId"] if order_id is None else order_id
    fields = []
    for i, field in enumerate(order.get("Fields") or []):
        where = f"{path}.Fields[{i}]"
        source_type = _source(schema, field["SourceId"], f"{where}.SourceId")
        fields.append({"transform": _transform(field["Transform"], source_type, f"{where}.Transform"),
                       "source-id": field["SourceId"], "direction": field["Direction"],
                       "null-order": field["NullOrder"]})
    # Order id 0 is reserved for the unsorted order (and it has no fields).
    if (chosen == 0) != (not fields):
        raise _bad(f"{path}.OrderId", "order id 0 is the unsorted order: it and only it has no fields")
    return {"order-id": chosen, "fields": fields}


# ------------------------------------------------------------------------------ Glue columns
def glue_type(kind: Any) -> str:
    """An Iceberg type as a Glue (Hive DDL) column type, as pyiceberg's GlueCatalog writes it."""
    if isinstance(kind, str):
        if kind.startswith("decimal"):
            return kind.replace(" ", "")
        if kind.startswith("fixed"):
            return "binary"
        return _GLUE_TYPES.get(kind, kind)
    if kind["type"] == "struct":
        return "struct<" + ",".join(f"{f['name']}:{glue_type(f['type'])}" for f in kind["fields"]) + ">"
    if kind["type"] == "list":
        return f"array<{glue_type(kind['element'])}>"
    return f"map<{glue_type(kind['key'])},{glue_type(kind['value'])}>"


def glue_columns(schemas: list[dict[str, Any]], current_schema_id: int) -> list[dict[str, Any]]:
    """StorageDescriptor.Columns for a table's schemas, as pyiceberg's GlueCatalog writes them:
    the current schema's columns, then columns only older schemas have (``iceberg.field.current``
    false), each with its id and optionality in Parameters."""
    ordered = sorted(schemas, key=lambda s: s["schema-id"] != current_schema_id)
    columns: dict[str, dict[str, Any]] = {}
    for schema in ordered:
        current = schema["schema-id"] == current_schema_id
        for field in schema["fields"]:
            if field["name"] in columns:
                continue
            column = {"Name": field["name"], "Type": glue_type(field["type"]),
                      "Parameters": {"iceberg.field.id": str(field["id"]),
                                     "iceberg.field.optional": str(not field["required"]).lower(),
                                     "iceberg.field.current": str(current).lower()}}
            if field.get("doc"):
                column["Comment"] = field["doc"]
            columns[field["name"]] = column
    return list(columns.values())


# ------------------------------------------------------------------------------ Hive types
_HIVE_ATOMIC = {"boolean": "boolean", "tinyint": "int", "smallint": "int", "int": "int", "integer": "int",
                "bigint": "long", "float": "float", "double": "double", "string": "string", "binary": "binary",
                "date": "date", "timestamp": "timestamp"}
_MAX_HIVE_NESTING = 32  # as deep as a document member may nest
_HIVE_TOKEN = re.compile(r"\s*([<>,:()]|[^<>,:()\s][^<>,:()]*)")


def schema_from_columns(columns: list[dict[str, Any]], path: str) -> dict[str, Any]:
    """An Iceberg schema (id 0) for Glue columns with Hive types; every field optional, ids from 1
    in order (nested ones after their parent)."""
    ids = count(1)
    fields = []
    names: set[str] = set()
    for i, column in enumerate(columns):
        where = f"{path}[{i}]"
        if column["Name"].lower() in names:
            raise _bad(f"{where}.Name", f"column {column['Name']!r} is used twice")
        names.add(column["Name"].lower())
        field_id = next(ids)
        try:
            kind = _HiveParser(column.get("Type") or "", ids).parse()
        except ValueError as error:
            raise _bad(f"{where}.Type", str(error)) from None
        field = {"id": field_id, "name": column["Name"], "required": False, "type": kind}
        if column.get("Comment"):
            field["doc"] = column["Comment"]
        fields.append(field)
    return {"type": "struct", "schema-id": 0, "fields": fields}


class _HiveParser:
    def __init__(self, text: str, ids: Iterator[int]) -> None:
        self.text = text
        self.tokens: list[str] = []
        pos, stripped = 0, text.strip()
        while pos < len(stripped):
            match = _HIVE_TOKEN.match(stripped, pos)
            if match is None:
                raise ValueError(f"unreadable column type {text[:100]!r}")
            self.tokens.append(match.group(1).strip())
            pos = match.end()
        self.pos = 0
        self.ids = ids

    def parse(self) -> Any:
        kind = self._type()
        if self.pos != len(self.tokens):
            raise ValueError(f"unreadable column type {self.text[:100]!r}")
        return kind

    def _next(self) -> str:
        if self.pos >= len(self.tokens):
            raise ValueError(f"unreadable column type {self.text[:100]!r}")
        self.pos += 1
        return self.tokens[self.pos - 1]

    def _expect(self, token: str) -> None:
        if self._next() != token:
            raise ValueError(f"unreadable column type {self.text[:100]!r}")

    def _peek(self) -> Optional[str]:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _args(self) -> list[int]:
        args: list[int] = []
        if self._peek() != "(":
            return args
        self._next()
        while True:
            token = self._next()
            if not token.isdigit():
                raise ValueError(f"unreadable column type {self.text[:100]!r}")
            args.append(int(token))
            if self._next() == ")":
                return args

    def _type(self, depth: int = 0) -> Any:
        # A column type may be 128 KiB of text: bound the nesting before recursion does.
        if depth > _MAX_HIVE_NESTING:
            raise ValueError(f"column type nests deeper than {_MAX_HIVE_NESTING} levels")
        name = self._next().lower()
        if name in ("varchar", "char"):
            self._args()
            return "string"
        if name == "decimal":
            args = self._args() or [10, 0]
            precision, scale = args[0], args[1] if len(args) > 1 else 0
            if not 1 <= precision <= _MAX_DECIMAL_PRECISION or scale > precision:
                raise ValueError(f"decimal precision must be 1 to {_MAX_DECIMAL_PRECISION} and scale at most "
                                 f"the precision, got decimal({precision},{scale})")
            return f"decimal({precision}, {scale})"
        if name in _HIVE_ATOMIC:
            return _HIVE_ATOMIC[name]
        if name == "array":
            self._expect("<")
            element_id = next(self.ids)
            element = self._type(depth + 1)
            self._expect(">")
            return {"type": "list", "element-id": element_id, "element": element, "element-required": False}
        if name == "map":
            self._expect("<")
            key_id, value_id = next(self.ids), next(self.ids)
            key = self._type(depth + 1)
            self._expect(",")
            value = self._type(depth + 1)
            self._expect(">")
            return {"type": "map", "key-id": key_id, "key": key, "value-id": value_id, "value": value,
                    "value-required": False}
        if name == "struct":
            self._expect("<")
            fields = []
            while True:
                field_name = self._next()
                self._expect(":")
                field_id = next(self.ids)
                fields.append({"id": field_id, "name": field_name, "required": False, "type": self._type(depth + 1)})
                token = self._next()
                if token == ">":
                    return {"type": "struct", "fields": fields}
                if token != ",":
                    raise ValueError(f"unreadable column type {self.text[:100]!r}")
        raise ValueError(f"column type {name!r} has no Iceberg counterpart")
