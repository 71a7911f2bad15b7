"""Classifiers: what a file is and its schema, from the few bytes a crawler reads of it.

AWS's rule: the custom classifiers named by the crawler run first, in order, and the first that
is certain (certainty 1.0) wins; otherwise the built-in classifiers (Avro, ORC, Parquet, JSON,
CSV) run and the most certain one wins; a file no classifier recognizes (certainty 0) is
UNKNOWN, and the crawler skips it. Binary formats are told by their magic bytes and read from
their headers/footers with ranged GETs (pyarrow for Parquet and ORC); text formats from their
first KBs (gzip looked through).
"""

from __future__ import annotations

import csv
import io
import json
import re
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from pipelines.crawl import s3files

CSV_DELIMITERS = (",", "|", "\t", ";", "\x01")
HIVE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_ .\-]*")
INT32 = 2 ** 31


@dataclass
class Classified:
    """One file's classification and schema."""

    classification: str                      # parquet | orc | avro | json | csv
    columns: list[dict[str, str]]
    compression: str = "none"
    options: dict[str, str] = field(default_factory=dict)   # csv: delimiter, header, quoted, serde; avro: schema
    records: Optional[int] = None            # exact (binary formats) or estimated from the head
    certainty: float = 1.0

    def signature(self) -> tuple:
        """What must agree for two files to be partitions of one table (besides columns)."""
        opts = {k: v for k, v in self.options.items() if k != "avro.schema"}
        return (self.classification, tuple(sorted(opts.items())))


# ---------------------------------------------------------------- types

def arrow_type(t: Any) -> str:
    """The Hive/Glue type string of a pyarrow type, as the crawler writes Parquet/ORC columns."""
    import pyarrow as pa
    import pyarrow.types as pt
    if pt.is_boolean(t):
        return "boolean"
    if pt.is_int8(t):
        return "tinyint"
    if pt.is_int16(t):
        return "smallint"
    if pt.is_int32(t) or pt.is_uint8(t) or pt.is_uint16(t):
        return "int"
    if pt.is_integer(t):
        return "bigint"
    if pt.is_float16(t) or pt.is_float32(t):
        return "float"
    if pt.is_float64(t):
        return "double"
    if pt.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pt.is_string(t) or pt.is_large_string(t):
        return "string"
    if pt.is_binary(t) or pt.is_large_binary(t) or pt.is_fixed_size_binary(t):
        return "binary"
    if pt.is_timestamp(t):
        return "timestamp"
    if pt.is_date(t):
        return "date"
    if pt.is_dictionary(t):
        return arrow_type(t.value_type)
    if pt.is_list(t) or pt.is_large_list(t) or pt.is_fixed_size_list(t):
        return f"array<{arrow_type(t.value_type)}>"
    if pt.is_map(t):
        return f"map<{arrow_type(t.key_type)},{arrow_type(t.item_type)}>"
    if pt.is_struct(t):
        return "struct<" + ",".join(f"{t.field(i).name}:{arrow_type(t.field(i).type)}"
                                    for i in range(t.num_fields)) + ">"
    if isinstance(t, pa.DataType) and pt.is_null(t):
        return "string"
    return "string"


def _json_type(value: Any) -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "int" if -INT32 <= value < INT32 else "bigint"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        element: Optional[str] = None
        for item in value:
            element = merge_type(element, _json_type(item))
        return f"array<{element or 'string'}>"
    if isinstance(value, dict):
        return _struct(_object_fields(value))
    return "string"


def _object_fields(obj: dict) -> dict[str, Optional[str]]:
    return {str(k): _json_type(v) for k, v in obj.items()}


def _struct(fields: dict[str, Optional[str]]) -> str:
    return "struct<" + ",".join(f"{k}:{v or 'string'}" for k, v in fields.items()) + ">"


def _split_struct(t: str) -> Optional[dict[str, str]]:
    if not (t.startswith("struct<") and t.endswith(">")):
        return None
    body, depth, parts, cur = t[7:-1], 0, [], ""
    for ch in body:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        parts.append(cur)
    out = {}
    for part in parts:
        name, _, typ = part.partition(":")
        out[name] = typ
    return out


_WIDER = {("int", "bigint"): "bigint", ("int", "double"): "double", ("bigint", "double"): "double",
          ("tinyint", "smallint"): "smallint", ("smallint", "int"): "int", ("float", "double"): "double"}


def merge_type(a: Optional[str], b: Optional[str]) -> Optional[str]:
    """The type that holds values of both (structs merged field by field; else string)."""
    if a is None or a == b:
        return b if a is None else a
    if b is None:
        return a
    wider = _WIDER.get((a, b)) or _WIDER.get((b, a))
    if wider:
        return wider
    sa, sb = _split_struct(a), _split_struct(b)
    if sa is not None and sb is not None:
        merged: dict[str, Optional[str]] = dict(sa)
        for k, v in sb.items():
            merged[k] = merge_type(merged.get(k), v)
        return _struct(merged)
    if a.startswith("array<") and b.startswith("array<"):
        return f"array<{merge_type(a[6:-1], b[6:-1])}>"
    return "string"


def merge_columns(a: list[dict[str, str]], b: list[dict[str, str]]) -> list[dict[str, str]]:
    """Columns of both schemas: a's order, then b's new ones; types widened where they differ."""
    out = [dict(c) for c in a]
    index = {c["Name"].lower(): c for c in out}
    for column in b:
        known = index.get(column["Name"].lower())
        if known is None:
            out.append(dict(column))
            index[column["Name"].lower()] = out[-1]
        elif known["Type"] != column["Type"]:
            known["Type"] = merge_type(known["Type"], column["Type"]) or "string"
    return out


# ---------------------------------------------------------------- binary formats

def _parquet(file: s3files.RangedFile) -> Classified:
    import pyarrow.parquet as pq
    meta = pq.ParquetFile(file).metadata
    schema = meta.schema.to_arrow_schema()
    columns = [{"Name": f.name, "Type": arrow_type(f.type)} for f in schema]
    codecs = {meta.row_group(i).column(j).compression.lower()
              for i in range(min(meta.num_row_groups, 1)) for j in range(meta.num_columns)}
    codecs.discard("uncompressed")
    return Classified("parquet", columns, compression=(codecs.pop() if len(codecs) == 1 else "none"),
                      records=meta.num_rows)


def _orc(file: s3files.RangedFile) -> Classified:
    from pyarrow import orc
    reader = orc.ORCFile(file)
    columns = [{"Name": f.name, "Type": arrow_type(f.type)} for f in reader.schema]
    compression = str(reader.compression).lower()
    return Classified("orc", columns, compression="none" if compression in ("uncompressed", "none") else compression,
                      records=reader.nrows)


def _zigzag(data: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            break
        shift += 7
    return (result >> 1) ^ -(result & 1), pos


def avro_header(data: bytes) -> dict[str, bytes]:
    """The metadata map of an Avro object container file's header."""
    if not data.startswith(b"Obj\x01"):
        raise ValueError("not an Avro container")
    pos = 4
    meta: dict[str, bytes] = {}
    while True:
        count, pos = _zigzag(data, pos)
        if count == 0:
            return meta
        if count < 0:
            count = -count
            _, pos = _zigzag(data, pos)
        for _ in range(count):
            length, pos = _zigzag(data, pos)
            key = data[pos:pos + length].decode()
            pos += length
            length, pos = _zigzag(data, pos)
            meta[key] = data[pos:pos + length]
            pos += length


_AVRO_PRIMITIVES = {"int": "int", "long": "bigint", "float": "float", "double": "double", "boolean": "boolean",
                    "string": "string", "bytes": "binary", "null": "string"}


def avro_type(t: Any) -> str:
    if isinstance(t, list):
        rest = [x for x in t if x != "null"]
        return avro_type(rest[0]) if len(rest) == 1 else "string"
    if isinstance(t, str):
        return _AVRO_PRIMITIVES.get(t, "string")
    logical = t.get("logicalType")
    if logical == "date":
        return "date"
    if logical in ("timestamp-millis", "timestamp-micros"):
        return "timestamp"
    if logical == "decimal":
        return f"decimal({t.get('precision', 10)},{t.get('scale', 0)})"
    kind = t.get("type")
    if kind == "record":
        return "struct<" + ",".join(f"{f['name']}:{avro_type(f['type'])}" for f in t.get("fields", [])) + ">"
    if kind == "array":
        return f"array<{avro_type(t['items'])}>"
    if kind == "map":
        return f"map<string,{avro_type(t['values'])}>"
    if kind == "enum":
        return "string"
    if kind == "fixed":
        return "binary"
    return avro_type(kind)


def _avro(head: bytes) -> Classified:
    meta = avro_header(head)
    literal = meta["avro.schema"].decode()
    schema = json.loads(literal)
    columns = [{"Name": f["name"], "Type": avro_type(f["type"])} for f in schema.get("fields", [])]
    codec = meta.get("avro.codec", b"null").decode()
    return Classified("avro", columns, compression="none" if codec == "null" else codec,
                      options={"avro.schema": literal})


# ---------------------------------------------------------------- text formats

def _text(head: bytes, size: int) -> tuple[str, str, bool]:
    """(text, compression, complete) of a file's first bytes, gunzipped when gzip."""
    compression = "none"
    if head[:2] == b"\x1f\x8b":
        compression = "gzip"
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head)
        except zlib.error:
            return "", compression, False
        complete = False
    else:
        complete = len(head) >= size
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as error:
        if error.start < len(head) - 4:  # not just a character cut by the range
            return "", compression, False
        text = head[:error.start].decode("utf-8")
    return text, compression, complete


def _lines(text: str, complete: bool) -> list[str]:
    lines = text.splitlines()
    if not complete and lines and not text.endswith(("\n", "\r")):
        lines = lines[:-1]  # cut by the ranged read
    return [line for line in lines if line.strip()]


def _json_records(text: str, complete: bool, json_path: Optional[str] = None) -> Optional[list[Any]]:
    decoder = json.JSONDecoder()
    stripped = text.lstrip()
    if json_path in ("$[*]",) or (json_path is None and stripped.startswith("[")):
        if not stripped.startswith("["):
            return None
        if json_path is None:
            try:
                return [json.loads(stripped)] if complete else None
            except ValueError:
                return None
        items, pos = [], 1
        while True:
            while pos < len(stripped) and stripped[pos] in " \t\r\n,":
                pos += 1
            if pos >= len(stripped) or stripped[pos] == "]":
                break
            try:
                item, pos = decoder.raw_decode(stripped, pos)
            except ValueError:
                break
            items.append(item)
        return items or None
    records: list[Any] = []
    pos = 0
    while True:
        while pos < len(stripped) and stripped[pos] in " \t\r\n":
            pos += 1
        if pos >= len(stripped):
            break
        try:
            item, pos = decoder.raw_decode(stripped, pos)
        except ValueError:
            if complete or not records:
                return None
            break  # the last record was cut by the ranged read
        records.append(item)
    return records or None


def _json(text: str, compression: str, complete: bool, json_path: Optional[str] = None) -> Optional[Classified]:
    records = _json_records(text, complete, json_path)
    if not records:
        return None
    if json_path is None and len(records) == 1 and isinstance(records[0], list):
        return Classified("json", [{"Name": "array", "Type": _json_type(records[0]) or "array<string>"}],
                          compression=compression, records=1)
    if not all(isinstance(r, dict) for r in records):
        return None
    fields: dict[str, Optional[str]] = {}
    for record in records:
        for name, typ in _object_fields(record).items():
            fields[name] = merge_type(fields.get(name), typ)
    if not fields:
        return None
    columns = [{"Name": k.lower(), "Type": v or "string"} for k, v in fields.items()]
    return Classified("json", columns, compression=compression,
                      records=_estimate(len(records), len(text.encode()), None))


def _estimate(rows: int, nbytes: int, size: Optional[int]) -> int:
    return rows


def _value_type(value: str) -> Optional[str]:
    v = value.strip()
    if not v:
        return None
    if re.fullmatch(r"[-+]?[0-9]+", v):
        return "bigint"
    if re.fullmatch(r"[-+]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][-+]?[0-9]+)?", v):
        return "double"
    if v.lower() in ("true", "false"):
        return "boolean"
    return "string"


def _csv_type(values: list[str]) -> str:
    seen = {t for t in (_value_type(v) for v in values) if t}
    if not seen:
        return "string"
    if seen == {"bigint"}:
        return "bigint"
    if seen <= {"bigint", "double"}:
        return "double"
    if seen == {"boolean"}:
        return "boolean"
    return "string"


def _parse_csv(lines: list[str], delimiter: str, quote: str = '"') -> list[list[str]]:
    return list(csv.reader(io.StringIO("\n".join(lines)), delimiter=delimiter, quotechar=quote or '"'))


def _csv(text: str, compression: str, complete: bool, custom: Optional[dict[str, Any]] = None) -> Optional[Classified]:
    lines = _lines(text, complete)
    if len(lines) < (1 if custom else 2):
        return None
    delimiters = [custom["Delimiter"]] if custom and custom.get("Delimiter") else list(CSV_DELIMITERS)
    quote = (custom or {}).get("QuoteSymbol") or '"'
    single = bool((custom or {}).get("AllowSingleColumn"))
    best: Optional[list[list[str]]] = None
    best_delim = ","
    for delim in delimiters:
        rows = _parse_csv(lines, delim, quote)
        widths = {len(r) for r in rows}
        if len(widths) != 1 or (widths.pop() < 2 and not single):
            continue
        if best is None or len(rows[0]) > len(best[0]):
            best, best_delim = rows, delim
    if best is None:
        return None
    quoted = any(line.lstrip().startswith(quote) or (best_delim + quote) in line for line in lines[:50])
    first, rest = best[0], best[1:]
    contains = (custom or {}).get("ContainsHeader") or "UNKNOWN"
    if contains == "PRESENT":
        header = True
    elif contains == "ABSENT":
        header = False
    else:
        names_ok = (all(_value_type(v) == "string" and HIVE_NAME.fullmatch(v.strip()) for v in first)
                    and len({v.strip().lower() for v in first}) == len(first))
        # The header must differ from the data: some column of the other rows is not a string.
        header = bool(names_ok and rest and any(_csv_type([r[i] for r in rest]) != "string"
                                                for i in range(len(first))))
    data = rest if header else best
    given = (custom or {}).get("Header")
    if given:
        names = list(given)
    elif header:
        names = [v.strip().lower() for v in first]
    else:
        names = [f"col{i}" for i in range(len(first))]
    if len(names) != len(first):
        return None
    columns = [{"Name": n, "Type": _csv_type([r[i] for r in data])} for i, n in enumerate(names)]
    serde = (custom or {}).get("Serde") or ("OpenCSVSerDe" if quoted else "LazySimpleSerDe")
    if serde == "None":
        serde = "LazySimpleSerDe"
    options = {"delimiter": best_delim, "header": "true" if header else "false",
               "quoted": "true" if quoted else "false", "serde": serde, "quote": quote}
    return Classified("csv", columns, compression=compression, options=options, records=len(data))


# ---------------------------------------------------------------- the rule

Reader = Callable[[], bytes]


def classify(s3: Any, bucket: str, key: str, size: int, custom: list[dict[str, Any]]) -> Optional[Classified]:
    """The classification of one object, or None (UNKNOWN: the crawler skips the file)."""
    if size <= 0:
        return None
    head = s3files.read_head(s3, bucket, key, size)
    # Custom classifiers first, in the crawler's order: the first that is certain wins.
    text_cache: list[tuple[str, str, bool]] = []

    def text() -> tuple[str, str, bool]:
        if not text_cache:
            text_cache.append(_text(head, size))
        return text_cache[0]

    for classifier in custom:
        found: Optional[Classified] = None
        if "CsvClassifier" in classifier:
            found = _csv(*text(), custom=classifier["CsvClassifier"])
        elif "JsonClassifier" in classifier:
            found = _json(*text(), json_path=classifier["JsonClassifier"].get("JsonPath"))
        if found is not None:
            return found
    # Built-in classifiers: binary formats by their magic, then JSON, then CSV.
    try:
        if head.startswith(b"Obj\x01"):
            return _avro(head)
        if head.startswith(b"ORC"):
            return _orc(s3files.RangedFile(s3, bucket, key, size, head))
        if head.startswith(b"PAR1"):
            return _parquet(s3files.RangedFile(s3, bucket, key, size, head))
    except Exception:  # noqa: BLE001  a damaged footer: UNKNOWN, like AWS
        return None
    body, compression, complete = text()
    if not body:
        return None
    return _json(body, compression, complete) or _csv(body, compression, complete)


# ---------------------------------------------------------------- catalog shapes

TEXT_INPUT = "org.apache.hadoop.mapred.TextInputFormat"
TEXT_OUTPUT = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"
FORMATS = {
    "parquet": ("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
                "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"),
    "orc": ("org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
            "org.apache.hadoop.hive.ql.io.orc.OrcSerde"),
    "avro": ("org.apache.hadoop.hive.ql.io.avro.AvroContainerInputFormat",
             "org.apache.hadoop.hive.ql.io.avro.AvroContainerOutputFormat",
             "org.apache.hadoop.hive.serde2.avro.AvroSerDe"),
    "json": (TEXT_INPUT, TEXT_OUTPUT, "org.openx.data.jsonserde.JsonSerDe"),
}
OPEN_CSV = "org.apache.hadoop.hive.serde2.OpenCSVSerde"
LAZY_SIMPLE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"


def format_parameters(found: Classified) -> dict[str, str]:
    """The classification parameters the crawler writes on tables and partitions."""
    params = {"classification": found.classification, "compressionType": found.compression, "typeOfData": "file"}
    if found.classification == "csv":
        params.update({"delimiter": found.options["delimiter"], "areColumnsQuoted": found.options["quoted"],
                       "columnsOrdered": "true"})
        if found.options["header"] == "true":
            params["skip.header.line.count"] = "1"
    if found.classification == "avro":
        params["avro.schema.literal"] = found.options.get("avro.schema", "")
    return params


def storage_descriptor(found: Classified, location: str, columns: list[dict[str, str]],
                       parameters: dict[str, str]) -> dict[str, Any]:
    """The StorageDescriptor a Glue crawler writes for a table or partition of ``found``'s format."""
    if found.classification == "csv":
        if found.options.get("serde") == "OpenCSVSerDe":
            serde = {"SerializationLibrary": OPEN_CSV,
                     "Parameters": {"separatorChar": found.options["delimiter"],
                                    "quoteChar": found.options.get("quote", '"')}}
        else:
            serde = {"SerializationLibrary": LAZY_SIMPLE, "Parameters": {"field.delim": found.options["delimiter"]}}
        formats = (TEXT_INPUT, TEXT_OUTPUT)
    else:
        input_format, output_format, library = FORMATS[found.classification]
        serde_params = {"serialization.format": "1"} if found.classification == "parquet" else {}
        if found.classification == "json":
            serde_params = {"paths": ",".join(sorted(c["Name"] for c in columns))}
        if found.classification == "avro":
            serde_params = {"avro.schema.literal": found.options.get("avro.schema", "")}
        serde = {"SerializationLibrary": library, "Parameters": serde_params}
        formats = (input_format, output_format)
    return {"Columns": columns, "Location": location, "InputFormat": formats[0], "OutputFormat": formats[1],
            "Compressed": found.compression != "none", "NumberOfBuckets": -1, "SerdeInfo": serde,
            "BucketColumns": [], "SortColumns": [], "Parameters": dict(parameters),
            "StoredAsSubDirectories": False}
