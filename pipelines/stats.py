"""Column statistics with Spark aggregations, written with UpdateColumnStatisticsFor{Table,Partition}.

One aggregation pass computes, per column and per Glue statistics type:

=========  ==============================================================================
LONG       nulls, distinct values, min, max           (tinyint/smallint/int/bigint)
DOUBLE     nulls, distinct values, min, max           (float/double; NaN left out of min/max)
DECIMAL    nulls, distinct values, min, max           (sent as unscaled two's-complement bytes + scale)
DATE       nulls, distinct values, min, max
STRING     nulls, distinct values, max and average length (in characters, over non-null values)
BINARY     nulls, max and average length (bytes)
BOOLEAN    nulls, trues, falses
=========  ==============================================================================

Distinct counts are exact (``count(DISTINCT c)``) unless ``approx`` is asked: then Spark's
HyperLogLog++ ``approx_count_distinct`` with the given relative standard deviation, and the
summary says so. Other column types (timestamp, arrays, maps, structs) have no Glue statistics
type and are skipped. Table statistics cover the partition keys too; partition statistics are
computed for every chosen partition in the same pass (grouped by the partition keys).
"""

from __future__ import annotations

import datetime as dt
import decimal
import time
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

from pipelines import catalog
from pipelines.catalog import CatalogConfig
from pipelines.checks import partition_expression
from pipelines.read import load_table, _typed
from pipelines.runtime import SparkLike, say

KINDS = {
    "tinyint": "LONG", "smallint": "LONG", "int": "LONG", "integer": "LONG", "bigint": "LONG", "long": "LONG",
    "float": "DOUBLE", "double": "DOUBLE", "real": "DOUBLE",
    "decimal": "DECIMAL", "numeric": "DECIMAL",
    "string": "STRING", "varchar": "STRING", "char": "STRING",
    "boolean": "BOOLEAN", "date": "DATE", "binary": "BINARY",
}
DATA_MEMBER = {"LONG": "LongColumnStatisticsData", "DOUBLE": "DoubleColumnStatisticsData",
               "DECIMAL": "DecimalColumnStatisticsData", "STRING": "StringColumnStatisticsData",
               "BOOLEAN": "BooleanColumnStatisticsData", "DATE": "DateColumnStatisticsData",
               "BINARY": "BinaryColumnStatisticsData"}


def kind_of(glue_type: str) -> Optional[str]:
    """The Glue statistics type for a column type, or None when Glue has none."""
    return KINDS.get(glue_type.lower().split("(")[0].split("<")[0].strip())


@dataclass
class StatsSummary:
    """What a statistics run profiled and wrote."""

    database: str
    table: str
    scope: str                      # "table" or "partitions"
    columns: list[str] = field(default_factory=list)
    skipped_columns: list[str] = field(default_factory=list)
    partitions: int = 0
    rows: int = 0
    bytes: Optional[int] = None
    files: int = 0
    approx: bool = False
    rsd: Optional[float] = None
    written: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    statistics: dict[tuple[str, ...], list[dict[str, Any]]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def text(self) -> str:
        s = self.seconds
        distinct = (f"approximate (HyperLogLog++ approx_count_distinct, rsd={self.rsd}: typical relative "
                    f"error {self.rsd:.0%})" if self.approx else "exact (count distinct)")
        size = f"{self.bytes:,} bytes" if self.bytes is not None else "bytes unknown"
        lines = [
            f"stats {self.database}.{self.table} ({self.scope}"
            + (f", {self.partitions:,} partitions" if self.scope == "partitions" else "") + ")",
            f"  profiled {self.rows:,} rows, {size} in {self.files:,} files; {len(self.columns)} columns"
            + (f" (skipped, no Glue statistics type: {', '.join(self.skipped_columns)})" if self.skipped_columns else ""),
            f"  distinct counts: {distinct}",
            f"  wrote {self.written:,} column statistics, {len(self.errors)} errors",
            f"  time: read+aggregate {s.get('compute', 0):.2f} s, catalog writes {s.get('catalog_writes', 0):.2f} s, "
            f"total {s.get('total', 0):.2f} s"
            + (f" (Spark start {s['spark_start']:.2f} s, Spark stop {s.get('spark_stop', 0):.2f} s)"
               if "spark_start" in s else ""),
        ]
        for error in self.errors[:10]:
            lines.append(f"  error {error}")
        return "\n".join(lines)


def _aggregates(columns: Sequence[tuple[str, str]], approx: bool, rsd: float) -> list[Column]:
    """Aggregate expressions; column i's results are aliased ``c{i}_<stat>``."""
    out: list[Column] = [F.count(F.lit(1)).alias("rows")]
    for i, (name, glue_type) in enumerate(columns):
        c, kind, p = F.col(f"`{name}`"), kind_of(glue_type), f"c{i}_"
        out.append((F.count(F.lit(1)) - F.count(c)).alias(p + "nulls"))
        if kind in ("LONG", "DOUBLE", "DECIMAL", "DATE", "STRING"):
            out.append((F.approx_count_distinct(c, rsd) if approx else F.countDistinct(c)).alias(p + "distinct"))
        if kind in ("LONG", "DECIMAL", "DATE"):
            out += [F.min(c).alias(p + "min"), F.max(c).alias(p + "max")]
        elif kind == "DOUBLE":
            finite = F.when(~F.isnan(c), c)
            out += [F.min(finite).alias(p + "min"), F.max(finite).alias(p + "max")]
        elif kind in ("STRING", "BINARY"):
            length = F.length(c)
            out += [F.max(length).alias(p + "maxlen"), F.avg(length).alias(p + "avglen")]
        elif kind == "BOOLEAN":
            out += [F.sum(F.when(c, 1).otherwise(0)).alias(p + "trues"),
                    F.sum(F.when(~c, 1).otherwise(0)).alias(p + "falses")]
    return out


def decimal_number(value: decimal.Decimal, scale: int) -> dict[str, Any]:
    """A Glue DecimalNumber: big-endian two's-complement unscaled bytes and the scale."""
    unscaled = int(value.scaleb(scale).to_integral_value())
    length = max(1, (unscaled.bit_length() + 8) // 8)
    return {"UnscaledValue": unscaled.to_bytes(length, "big", signed=True), "Scale": scale}


def _scale_of(glue_type: str) -> int:
    inside = glue_type[glue_type.find("(") + 1: glue_type.find(")")] if "(" in glue_type else ""
    parts = [p.strip() for p in inside.split(",")]
    return int(parts[1]) if len(parts) == 2 else 0


def _day(value: dt.date) -> dt.datetime:
    return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)


def glue_statistics(row: dict[str, Any], columns: Sequence[tuple[str, str]],
                    analyzed: dt.datetime) -> list[dict[str, Any]]:
    """ColumnStatistics entries from one aggregated row."""
    entries = []
    for i, (name, glue_type) in enumerate(columns):
        kind, p = kind_of(glue_type), f"c{i}_"
        nulls = int(row[p + "nulls"])
        data: dict[str, Any] = {"NumberOfNulls": nulls}
        if kind in ("LONG", "DOUBLE", "DECIMAL", "DATE", "STRING"):
            data["NumberOfDistinctValues"] = int(row[p + "distinct"])
        low, high = row.get(p + "min"), row.get(p + "max")
        if kind == "LONG":
            data.update({k: int(v) for k, v in (("MinimumValue", low), ("MaximumValue", high)) if v is not None})
        elif kind == "DOUBLE":
            data.update({k: float(v) for k, v in (("MinimumValue", low), ("MaximumValue", high)) if v is not None})
        elif kind == "DECIMAL":
            scale = _scale_of(glue_type)
            data.update({k: decimal_number(v, scale) for k, v in (("MinimumValue", low), ("MaximumValue", high))
                         if v is not None})
        elif kind == "DATE":
            data.update({k: _day(v) for k, v in (("MinimumValue", low), ("MaximumValue", high)) if v is not None})
        elif kind in ("STRING", "BINARY"):
            data["MaximumLength"] = int(row[p + "maxlen"] or 0)
            data["AverageLength"] = float(row[p + "avglen"] or 0.0)
        elif kind == "BOOLEAN":
            data["NumberOfTrues"] = int(row[p + "trues"] or 0)
            data["NumberOfFalses"] = int(row[p + "falses"] or 0)
        entries.append({"ColumnName": name, "ColumnType": glue_type, "AnalyzedTime": analyzed,
                        "StatisticsData": {"Type": kind, DATA_MEMBER[kind]: data}})
    return entries


def compute_statistics(spark: SparkLike, config: CatalogConfig, database: str, table: str,
                       partitions: Sequence[str] = (), where: str = "", per_partition: bool = False,
                       columns: Sequence[str] = (), approx: bool = False, rsd: float = 0.05,
                       segments: int = 4, write: bool = True, writers: int = 8, quiet: bool = True) -> StatsSummary:
    """Profile the table (or the partitions chosen by ``partitions`` specs / ``where``, each
    getting its own statistics) and write the results to the catalog."""
    started = time.perf_counter()
    partition_scope = bool(partitions or where or per_partition)
    summary = StatsSummary(database=database, table=table, scope="partitions" if partition_scope else "table",
                           approx=approx, rsd=rsd if approx else None)
    table_doc = catalog.get_table(config, database, table)
    if table_doc is None:
        raise LookupError(f"table {database}.{table} not found")
    keys = table_doc.get("PartitionKeys") or []
    if partition_scope and not keys:
        raise ValueError(f"table {database}.{table} has no partitions")
    terms = [f"({partition_expression(spec, keys)})" for spec in partitions]
    expression = " OR ".join(terms)
    if where:
        expression = f"({expression}) AND ({where})" if expression else where
    say(f"finding the partitions of {database}.{table}" + (f" where {expression}" if expression else "") + " ...",
        quiet)
    loaded = load_table(spark, config, database, table, filter=expression, segments=segments)
    say(f"  {len(loaded.partitions):,} partitions (catalog {loaded.seconds.get('catalog', 0.0):.2f} s), "
        f"{len(loaded.files):,} files", quiet)
    wanted = {c.lower() for c in columns}
    candidates = [(c["Name"], c.get("Type") or "string")
                  for c in (table_doc.get("StorageDescriptor") or {}).get("Columns") or []]
    if not partition_scope:
        candidates += [(k["Name"], k.get("Type") or "string") for k in keys]
    if wanted:
        missing = wanted - {name.lower() for name, _ in candidates}
        if missing:
            raise ValueError(f"no such columns: {', '.join(sorted(missing))}")
        candidates = [c for c in candidates if c[0].lower() in wanted]
    chosen = [c for c in candidates if kind_of(c[1])]
    summary.columns = [name for name, _ in chosen]
    summary.skipped_columns = [f"{name} ({kind})" for name, kind in candidates if not kind_of(kind)]
    summary.files, summary.bytes = len(loaded.files), loaded.bytes()

    aggregates = _aggregates(chosen, approx, rsd)
    analyzed = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    compute_start = time.perf_counter()
    say(f"aggregating {len(chosen)} columns" + (" per partition" if partition_scope else "") + " ...", quiet)
    results: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    if partition_scope:
        key_names = [k["Name"] for k in keys]
        # The catalog's own value strings (``05``), keyed by the typed values Spark groups by (5).
        raw = {tuple(_typed(v, k["Type"]) for v, k in zip(p["Values"], keys)): tuple(p["Values"])
               for p in loaded.partitions}
        rows = loaded.df.groupBy(*[F.col(f"`{n}`") for n in key_names]).agg(*aggregates).collect() if raw else []
        for row in rows:
            data = row.asDict()
            typed = tuple(data[n] for n in key_names)
            values = raw.get(typed, tuple("" if v is None else str(v) for v in typed))
            results[values] = glue_statistics(data, chosen, analyzed)
            summary.rows += int(data["rows"])
        summary.partitions = len(raw)
    else:
        row = loaded.df.agg(*aggregates).collect()[0].asDict()
        results[()] = glue_statistics(row, chosen, analyzed)
        summary.rows = int(row["rows"])
    compute_seconds = time.perf_counter() - compute_start
    summary.statistics = results

    say(f"  {summary.rows:,} rows in {compute_seconds:.1f} s", quiet)
    write_start = time.perf_counter()
    if write and chosen:
        say(f"writing {sum(len(e) for e in results.values()):,} column statistics ...", quiet)
        glue = catalog.client(config)

        def send(item: tuple[tuple[str, ...], Sequence[dict[str, Any]]]) -> tuple[int, list[dict[str, Any]]]:
            values, batch = item
            if values:
                answer = catalog.call_with_retry(lambda: glue.update_column_statistics_for_partition(
                    DatabaseName=database, TableName=table, PartitionValues=list(values),
                    ColumnStatisticsList=list(batch), **config.ids()))
            else:
                answer = catalog.call_with_retry(lambda: glue.update_column_statistics_for_table(
                    DatabaseName=database, TableName=table, ColumnStatisticsList=list(batch), **config.ids()))
            errors = [{"PartitionValues": list(values), "ColumnName": e["ColumnStatistics"]["ColumnName"],
                       **e.get("Error", {})} for e in answer.get("Errors") or []]
            return len(batch) - len(errors), errors

        work = [(values, batch) for values, entries in results.items()
                for batch in catalog.chunks(entries, catalog.GLUE_STATS_BATCH)]
        for written, errors in catalog.run_threads(send, work, writers):
            summary.written += written
            summary.errors.extend(errors)
    summary.seconds = {"catalog": loaded.seconds.get("catalog", 0.0), "listing": loaded.seconds.get("listing", 0.0),
                       "compute": compute_seconds, "catalog_writes": time.perf_counter() - write_start,
                       "total": time.perf_counter() - started}
    return summary
