"""Types and storage descriptors: Spark schemas to Glue columns and back. The Spark-free parts
(partition-value types, SerDe triplets) live in ``pipelines.formats`` and are re-exported here."""

from __future__ import annotations

from typing import Any, Iterable

from pyspark.sql import types as T

from pipelines.formats import (  # noqa: F401  (their home was here)
    COMPRESSION_SUFFIXES, EXTENSIONS, FORMATS, HIVE_NULL, INT_MAX, INT_MIN, format_of, format_of_table,
    infer_partition_type, storage_descriptor)


def glue_type(data_type: T.DataType) -> str:
    """The Hive/Glue type string of a Spark type (``bigint``, ``decimal(10,2)``, ``struct<a:int>``)."""
    if isinstance(data_type, (T.TimestampType, T.TimestampNTZType)):
        return "timestamp"
    if isinstance(data_type, T.StructType):
        return "struct<" + ",".join(f"{f.name}:{glue_type(f.dataType)}" for f in data_type.fields) + ">"
    if isinstance(data_type, T.ArrayType):
        return f"array<{glue_type(data_type.elementType)}>"
    if isinstance(data_type, T.MapType):
        return f"map<{glue_type(data_type.keyType)},{glue_type(data_type.valueType)}>"
    if isinstance(data_type, (T.CharType, T.VarcharType)):
        return data_type.simpleString()
    if isinstance(data_type, T.NullType):
        return "string"  # a JSON field that was null in every sampled row
    return data_type.simpleString()


def glue_columns(schema: T.StructType, exclude: Iterable[str] = ()) -> list[dict[str, str]]:
    """Glue Columns of a Spark schema, leaving out ``exclude`` (partition keys), case-insensitively."""
    skip = {name.lower() for name in exclude}
    return [{"Name": f.name, "Type": glue_type(f.dataType)} for f in schema.fields if f.name.lower() not in skip]


def spark_ddl(columns: Iterable[dict[str, Any]]) -> str:
    """A Spark DDL schema string for Glue columns (Hive type names parse as Spark types)."""
    return ", ".join(f"`{c['Name']}` {c.get('Type') or 'string'}" for c in columns)
