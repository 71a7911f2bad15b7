"""Paimon's Schema (what CreateTable sends) and TableSchema (one schema-N file), as pure data.

The JSON keys and their order follow pypaimon 2.1.0's Schema and TableSchema (schema/schema.py,
schema/table_schema.py): ``version, id, fields, highestFieldId, partitionKeys, primaryKeys,
options, comment, timeMillis``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chalicelib.domain.paimon.types import DataField, highest_field_id, parse_field, with_nullable
from chalicelib.errors import InvalidInputException

CURRENT_VERSION = 3  # TableSchema.CURRENT_VERSION: the schema file format pypaimon 2.1.0 writes
PRIMARY_KEY_NULLABLE = "primary-key.nullable"


def _string_list(data: dict[str, Any], key: str, where: str) -> list[str]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InvalidInputException(f"{where}.{key} must be a list of strings")
    return list(value)


def _options(data: dict[str, Any], where: str) -> dict[str, str]:
    value = data.get("options")
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise InvalidInputException(f"{where}.options must be an object of string values")
    return dict(value)


def _fields(data: dict[str, Any], where: str) -> list[DataField]:
    value = data.get("fields")
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidInputException(f"{where}.fields must be a list")
    return [parse_field(item, f"{where}.fields[{i}]") for i, item in enumerate(value)]


def _comment(data: dict[str, Any], where: str) -> str | None:
    value = data.get("comment")
    if value is not None and not isinstance(value, str):
        raise InvalidInputException(f"{where}.comment must be a string")
    return value


@dataclass
class Schema:
    """A table's definition as CreateTable sends it (no ids of its own beyond the field ids)."""

    fields: list[DataField] = field(default_factory=list)
    partition_keys: list[str] = field(default_factory=list)
    primary_keys: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    comment: str | None = None

    @classmethod
    def from_json(cls, data: Any, where: str = "schema") -> "Schema":
        """Parse and check a Schema: field names unique, keys naming existing fields."""
        if not isinstance(data, dict):
            raise InvalidInputException(f"{where} must be an object")
        schema = cls(_fields(data, where), _string_list(data, "partitionKeys", where),
                     _string_list(data, "primaryKeys", where), _options(data, where), _comment(data, where))
        schema.validate(where)
        return schema

    def validate(self, where: str = "schema") -> None:
        """Paimon's checks on a new table's schema (duplicate names, unknown or repeated keys)."""
        names = [f.name for f in self.fields]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise InvalidInputException(f"{where}.fields: field names must be unique, found {duplicates}")
        ids = [f.id for f in self.fields]
        if len(set(ids)) != len(ids):
            raise InvalidInputException(f"{where}.fields: field ids must be unique")
        for key_kind, keys in (("partitionKeys", self.partition_keys), ("primaryKeys", self.primary_keys)):
            if len(set(keys)) != len(keys):
                raise InvalidInputException(f"{where}.{key_kind} must not repeat a column: {keys}")
            unknown = [k for k in keys if k not in names]
            if unknown:
                raise InvalidInputException(f"{where}.{key_kind} {unknown} are not fields of the table ({names})")
        if self.options.get(PRIMARY_KEY_NULLABLE, "false").lower() == "true" and not self.primary_keys:
            raise InvalidInputException(
                f"{where}.options: '{PRIMARY_KEY_NULLABLE}' can only be enabled for a table with primary keys")

    def to_json(self) -> dict[str, Any]:
        """The Schema JSON (as in GetTableResponse.schema and CreateTableRequest.schema)."""
        return {"fields": [f.to_json() for f in self.fields], "partitionKeys": list(self.partition_keys),
                "primaryKeys": list(self.primary_keys), "options": dict(self.options), "comment": self.comment}


@dataclass
class TableSchema:
    """One version of a table's schema: the content of ``schema/schema-<id>``."""

    id: int
    fields: list[DataField]
    highest_field_id: int
    partition_keys: list[str] = field(default_factory=list)
    primary_keys: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    comment: str | None = None
    time_millis: int = 0
    version: int = CURRENT_VERSION

    @classmethod
    def from_schema(cls, schema_id: int, schema: Schema, time_millis: int) -> "TableSchema":
        """The first TableSchema of a new table (pypaimon's TableSchema.from_schema).

        Primary key columns become NOT NULL unless ``primary-key.nullable`` is true, as Paimon's
        Schema constructor does.
        """
        pk_nullable = schema.options.get(PRIMARY_KEY_NULLABLE, "false").lower() == "true"
        fields = [DataField(f.id, f.name, with_nullable(f.type, pk_nullable), f.description, f.default_value)
                  if f.name in schema.primary_keys else f for f in schema.fields]
        return cls(schema_id, fields, highest_field_id(fields), list(schema.partition_keys),
                   list(schema.primary_keys), dict(schema.options), schema.comment, time_millis)

    @classmethod
    def from_json(cls, data: Any, where: str = "tableSchema") -> "TableSchema":
        """Parse a schema-N file's JSON."""
        if not isinstance(data, dict):
            raise InvalidInputException(f"{where} must be an object")
        numbers = {}
        for key, default in (("version", CURRENT_VERSION), ("id", 0), ("highestFieldId", 0), ("timeMillis", 0)):
            value = data.get(key, default)
            if not isinstance(value, int) or isinstance(value, bool):
                raise InvalidInputException(f"{where}.{key} must be an integer")
            numbers[key] = value
        return cls(numbers["id"], _fields(data, where), numbers["highestFieldId"],
                   _string_list(data, "partitionKeys", where), _string_list(data, "primaryKeys", where),
                   _options(data, where), _comment(data, where), numbers["timeMillis"], numbers["version"])

    def to_json(self) -> dict[str, Any]:
        """The schema-N file's JSON, keys in pypaimon's order."""
        return {"version": self.version, "id": self.id, "fields": [f.to_json() for f in self.fields],
                "highestFieldId": self.highest_field_id, "partitionKeys": list(self.partition_keys),
                "primaryKeys": list(self.primary_keys), "options": dict(self.options), "comment": self.comment,
                "timeMillis": self.time_millis}

    def to_schema(self) -> Schema:
        """The Schema part (GetTableResponse.schema)."""
        return Schema(list(self.fields), list(self.partition_keys), list(self.primary_keys), dict(self.options),
                      self.comment)

    def field_names(self) -> list[str]:
        """Top-level column names in order."""
        return [f.name for f in self.fields]
