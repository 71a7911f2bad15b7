"""stats: column statistics computed with Spark match an exact Python computation over the same
files, for the table and for chosen partitions; approximate distinct counts say so."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import os
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from pipelines.register import RegisterOptions, register
from pipelines.stats import compute_statistics

pytestmark = pytest.mark.slow

TYPES = {"order_id": "LONG", "quantity": "LONG", "price": "DOUBLE", "amount": "DECIMAL", "customer": "STRING",
         "signature": "BINARY", "is_member": "BOOLEAN", "order_date": "DATE",
         "country": "STRING", "year": "LONG", "month": "LONG"}


def rows_of(root: str) -> list[dict[str, Any]]:
    """Every row of a sample Parquet dataset with its partition values, read by pyarrow."""
    rows = []
    for folder, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".parquet"):
                continue
            parts = dict(seg.split("=", 1) for seg in Path(folder).relative_to(root).parts)
            for row in pq.read_table(os.path.join(folder, name)).to_pylist():
                rows.append({**row, "country": parts["country"], "year": int(parts["year"]), "month": int(parts["month"])})
    return rows


def expected(rows: list[dict[str, Any]], column: str) -> dict[str, Any]:
    """Glue statistics of one column, computed exactly in Python."""
    values = [r[column] for r in rows if r[column] is not None]
    nulls = len(rows) - len(values)
    kind = TYPES[column]
    if kind == "BOOLEAN":
        return {"NumberOfNulls": nulls, "NumberOfTrues": sum(values), "NumberOfFalses": len(values) - sum(values)}
    if kind in ("STRING", "BINARY"):
        lengths = [len(v) for v in values]
        data = {"NumberOfNulls": nulls, "MaximumLength": max(lengths, default=0),
                "AverageLength": sum(lengths) / len(lengths) if lengths else 0.0}
        if kind == "STRING":
            data["NumberOfDistinctValues"] = len(set(values))
        return data
    return {"NumberOfNulls": nulls, "NumberOfDistinctValues": len(set(values)),
            "MinimumValue": min(values), "MaximumValue": max(values)}


def normalized(statistics: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A GetColumnStatistics entry as plain Python values (decimals and dates decoded)."""
    data = statistics["StatisticsData"]
    kind = data["Type"]
    member = {k: v for k, v in data.items() if k != "Type"}
    values = dict(next(iter(member.values())))
    for bound in ("MinimumValue", "MaximumValue"):
        value = values.get(bound)
        if kind == "DECIMAL" and value is not None:
            raw = value["UnscaledValue"]
            raw = raw if isinstance(raw, bytes) else base64.b64decode(raw)
            values[bound] = decimal.Decimal(int.from_bytes(raw, "big", signed=True)).scaleb(-value["Scale"])
        elif kind == "DATE" and value is not None:
            values[bound] = value.astimezone(dt.timezone.utc).date()
    return kind, values


def assert_matches(stored: list[dict[str, Any]], rows: list[dict[str, Any]], columns: list[str]) -> None:
    by_name = {s["ColumnName"]: s for s in stored}
    assert sorted(by_name) == sorted(columns)
    for column in columns:
        kind, values = normalized(by_name[column])
        assert kind == TYPES[column], column
        want = expected(rows, column)
        assert set(values) == set(want), column
        for key, value in want.items():
            if key == "AverageLength":
                assert values[key] == pytest.approx(value, rel=1e-9), (column, key)
            else:
                assert values[key] == value, (column, key)


@pytest.fixture(scope="module")
def table(spark, config, glue, sales) -> tuple[str, str]:
    import uuid
    database = f"pl_{uuid.uuid4().hex[:10]}"
    glue.create_database(DatabaseInput={"Name": database})
    register(spark, config, RegisterOptions(root=sales.roots["parquet"], database=database, table="sales", quiet=True))
    return database, "sales"


def test_table_statistics_are_exact(spark, config, glue, sales, table):
    database, name = table
    summary = compute_statistics(spark, config, database, name)
    rows = rows_of(sales.roots["parquet"])
    assert summary.rows == len(rows) == sales.rows
    assert summary.files == 12 and summary.bytes == sum(
        os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(sales.roots["parquet"]) for f in fs)
    assert summary.skipped_columns == ["created_at (timestamp)"] and not summary.errors
    assert summary.written == len(TYPES)
    stored = glue.get_column_statistics_for_table(DatabaseName=database, TableName=name, ColumnNames=list(TYPES))
    assert stored["Errors"] == []
    assert_matches(stored["ColumnStatisticsList"], rows, list(TYPES))
    assert "exact" in summary.text() and f"{len(rows):,} rows" in summary.text()


def test_partition_statistics_are_exact_and_only_for_chosen_partitions(spark, config, glue, sales, table):
    database, name = table
    summary = compute_statistics(spark, config, database, name, partitions=["country=US,year=2024"])
    assert summary.scope == "partitions" and summary.partitions == 3
    rows = rows_of(sales.roots["parquet"])
    data_columns = [c for c in TYPES if c not in ("country", "year", "month")]
    for month in (1, 2, 3):
        mine = [r for r in rows if (r["country"], r["year"], r["month"]) == ("US", 2024, month)]
        stored = glue.get_column_statistics_for_partition(
            DatabaseName=database, TableName=name, PartitionValues=["US", "2024", f"{month:02d}"],
            ColumnNames=data_columns)
        assert stored["Errors"] == []
        assert_matches(stored["ColumnStatisticsList"], mine, data_columns)
    assert summary.rows == sum(1 for r in rows if (r["country"], r["year"]) == ("US", 2024))
    untouched = glue.get_column_statistics_for_partition(
        DatabaseName=database, TableName=name, PartitionValues=["FR", "2024", "01"], ColumnNames=["price"])
    assert untouched["ColumnStatisticsList"] == []


def test_approximate_distinct_counts_say_so(spark, config, sales, table):
    database, name = table
    summary = compute_statistics(spark, config, database, name, columns=["order_id", "customer"], approx=True,
                                 rsd=0.05, write=False)
    assert summary.approx and "approximate" in summary.text() and "rsd=0.05" in summary.text()
    rows = rows_of(sales.roots["parquet"])
    (entries,) = summary.statistics.values()
    got = {e["ColumnName"]: e["StatisticsData"] for e in entries}
    exact_ids = len({r["order_id"] for r in rows})
    approx_ids = got["order_id"]["LongColumnStatisticsData"]["NumberOfDistinctValues"]
    assert abs(approx_ids - exact_ids) <= 3 * 0.05 * exact_ids
    assert summary.written == 0
