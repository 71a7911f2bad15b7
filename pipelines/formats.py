"""File formats without Spark: partition-value type inference, format from a file name, and the
Hive SerDe / input-format triplets a crawler writes for each file format. Shared by the Spark
pipelines (``pipelines.schema`` re-exports these) and the crawler (``pipelines.crawl``), which
must not import pyspark."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Iterable, Optional

FORMATS = ("parquet", "csv", "json")
EXTENSIONS = {".parquet": "parquet", ".parq": "parquet", ".csv": "csv", ".tsv": "csv",
              ".json": "json", ".jsonl": "json", ".ndjson": "json"}
COMPRESSION_SUFFIXES = (".gz", ".bz2", ".snappy", ".zst", ".lz4", ".deflate")
INT_MIN, INT_MAX = -(2 ** 31), 2 ** 31 - 1
_DIGITS = re.compile(r"-?[0-9]+")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# Hive writes a null partition value as this directory name.
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


def infer_partition_type(values: Iterable[str]) -> str:
    """Glue type of a partition key from its directory values: ``int`` when every value is
    all digits (``bigint`` past 32 bits), ``date`` when every value is a real yyyy-MM-dd date,
    else ``string``. Hive's null directory is ignored; no values at all is ``string``."""
    seen = [v for v in values if v != HIVE_NULL]
    if not seen:
        return "string"
    if all(_DIGITS.fullmatch(v) for v in seen):
        return "int" if all(INT_MIN <= int(v) <= INT_MAX for v in seen) else "bigint"
    if all(_DATE.fullmatch(v) and _is_date(v) for v in seen):
        return "date"
    return "string"


def _is_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
        return True
    except ValueError:
        return False


def format_of(path: str) -> Optional[str]:
    """File format from a file name's extension (compression suffixes looked through)."""
    name = path.lower()
    for suffix in COMPRESSION_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    for extension, fmt in EXTENSIONS.items():
        if name.endswith(extension):
            return fmt
    return None


def storage_descriptor(fmt: str, location: str, columns: list[dict[str, str]],
                       csv_options: Optional[dict[str, str]] = None) -> dict[str, Any]:
    """The StorageDescriptor a Glue crawler writes for ``fmt`` files at ``location``."""
    if fmt == "parquet":
        return {"Columns": columns, "Location": location,
                "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
                "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                              "Parameters": {"serialization.format": "1"}},
                "Parameters": {"classification": "parquet"}}
    text = {"InputFormat": "org.apache.hadoop.mapred.TextInputFormat",
            "OutputFormat": "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"}
    if fmt == "csv":
        options = csv_options or {}
        sep = options.get("sep", ",")
        header = options.get("header", "true") == "true"
        return {"Columns": columns, "Location": location, **text,
                "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                              "Parameters": {"field.delim": sep}},
                "Parameters": {"classification": "csv", "delimiter": sep,
                               **({"skip.header.line.count": "1"} if header else {})}}
    if fmt == "json":
        return {"Columns": columns, "Location": location, **text,
                "SerdeInfo": {"SerializationLibrary": "org.openx.data.jsonserde.JsonSerDe", "Parameters": {}},
                "Parameters": {"classification": "json"}}
    raise ValueError(f"unsupported format {fmt!r} (one of {', '.join(FORMATS)})")


def format_of_table(table: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """(Spark format, reader options) of a catalog table, from its classification or SerDe."""
    sd = table.get("StorageDescriptor") or {}
    params = {**(table.get("Parameters") or {}), **(sd.get("Parameters") or {})}
    serde = sd.get("SerdeInfo") or {}
    library = (serde.get("SerializationLibrary") or "").lower()
    classification = (params.get("classification") or "").lower()
    if classification == "parquet" or "parquet" in library or "parquet" in (sd.get("InputFormat") or "").lower():
        return "parquet", {}
    if classification == "json" or "json" in library:
        return "json", {}
    if classification == "csv" or "lazysimpleserde" in library or "opencsvserde" in library:
        sep = (serde.get("Parameters") or {}).get("field.delim") or params.get("delimiter") or ","
        header = "true" if params.get("skip.header.line.count", "0") != "0" else "false"
        return "csv", {"sep": sep, "header": header}
    raise ValueError(f"cannot tell the file format of table {table.get('Name')} "
                     f"(classification {classification!r}, SerDe {library!r})")


# Names that are documentation or bookkeeping beside data files, never data themselves: a
# README.txt in a partition folder must not break a read (Spark would try it as Parquet).
NOT_DATA_EXTENSIONS = frozenset({
    "txt", "md", "markdown", "rst", "html", "htm", "pdf", "log", "crc", "xml", "yaml", "yml", "ini", "cfg",
    "conf", "sh", "py", "sql", "jpg", "jpeg", "png", "gif", "svg", "doc", "docx", "xls", "xlsx", "zip", "tar",
    "bak", "tmp", "swp", "manifest"})
NOT_DATA_NAMES = frozenset({"readme", "license", "notice", "changelog", "manifest"})


def maybe_data(name: str) -> bool:
    """Whether a file name can be a data file of any format (Hadoop's hidden names and
    documentation/bookkeeping files are not)."""
    base = name.rsplit("/", 1)[-1]
    if not base or base.startswith(("_", ".")):
        return False
    if base.lower() in NOT_DATA_NAMES:
        return False
    stem, dot, extension = base.rpartition(".")
    return not (dot and stem and extension.lower() in NOT_DATA_EXTENSIONS)


def is_data_file(name: str, fmt: str) -> bool:
    """Whether ``name`` is read as a ``fmt`` data file: it may be data, and its extension (if it
    names a format) names this one. Extension-less names (Hive's ``000000_0``) are data."""
    if not maybe_data(name):
        return False
    named = format_of(name)
    return named is None or named == fmt
