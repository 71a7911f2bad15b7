"""Sample Hive-style datasets: ``sales/country=US/year=2024/month=05/part-0001.parquet`` and
CSV / JSON variants with the same rows, deterministic for a seed (written with pyarrow, no JVM).

The Parquet variant has a column of each Glue statistics type (bigint, string, decimal, int,
double, boolean, date, binary) plus a timestamp; CSV and JSON leave out the binary column.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import random
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

SCHEMA = pa.schema([
    ("order_id", pa.int64()),
    ("customer", pa.string()),
    ("amount", pa.decimal128(10, 2)),
    ("quantity", pa.int32()),
    ("price", pa.float64()),
    ("is_member", pa.bool_()),
    ("order_date", pa.date32()),
    ("signature", pa.binary()),
    ("created_at", pa.timestamp("us", tz="UTC")),
])
TEXT_COLUMNS = [f.name for f in SCHEMA if f.name != "signature"]
SUFFIX = {"parquet": "", "csv": "_csv", "json": "_json"}
CUSTOMERS = ["alice", "bob", "carol", "dan", "eve", "frank", "grace", "heidi", "ivan", "judy", "mallory",
             "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter", "zoë"]


@dataclass
class SampleDataset:
    """Where the variants were written and how many rows/files each holds."""

    roots: dict[str, str] = field(default_factory=dict)
    partitions: int = 0
    files: int = 0
    rows: int = 0


def _rows(rng: random.Random, count: int, first_id: int, year: int, month: int) -> dict[str, list[Any]]:
    maybe = lambda value, p=0.1: None if rng.random() < p else value  # noqa: E731
    days = [dt.date(year, month, rng.randint(1, 28)) for _ in range(count)]
    return {
        "order_id": [first_id + i for i in range(count)],
        "customer": [maybe(rng.choice(CUSTOMERS)) for _ in range(count)],
        "amount": [maybe(decimal.Decimal(rng.randint(-5000, 500000)).scaleb(-2)) for _ in range(count)],
        "quantity": [rng.randint(1, 20) for _ in range(count)],
        "price": [maybe(round(rng.uniform(0.5, 999.0), 3)) for _ in range(count)],
        "is_member": [maybe(rng.random() < 0.4) for _ in range(count)],
        "order_date": days,
        "signature": [maybe(rng.randbytes(rng.randint(0, 12))) for _ in range(count)],
        "created_at": [dt.datetime(d.year, d.month, d.day, rng.randint(0, 23), tzinfo=dt.timezone.utc) for d in days],
    }


def write_file(path: str, fmt: str, columns: dict[str, list[Any]]) -> None:
    """One data file of the sample schema (CSV/JSON without the binary column)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    table = pa.table(columns, schema=SCHEMA)
    if fmt == "parquet":
        pq.write_table(table, path)
    elif fmt == "csv":
        pacsv.write_csv(table.select(TEXT_COLUMNS), path)
    elif fmt == "json":
        with open(path, "w", encoding="utf-8") as out:
            for row in table.select(TEXT_COLUMNS).to_pylist():
                out.write(json.dumps(row, default=_json_default, ensure_ascii=False) + "\n")
    else:
        raise ValueError(f"unknown format {fmt!r}")


def _json_default(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    raise TypeError(type(value).__name__)


def generate(out_dir: str, name: str = "sales", formats: Sequence[str] = ("parquet", "csv", "json"),
             countries: Sequence[str] = ("US", "FR", "DE", "JP"), years: Sequence[int] = (2023, 2024),
             months: Iterable[int] = range(1, 13), rows_per_file: tuple[int, int] = (20, 60),
             files_per_partition: int = 1, seed: int = 7) -> SampleDataset:
    """Write ``out_dir/<name>[ _csv | _json ]/country=../year=../month=MM/part-NNNN.<ext>``."""
    result = SampleDataset()
    months = list(months)
    for fmt in formats:
        root = os.path.join(os.path.abspath(out_dir), name + SUFFIX[fmt])
        result.roots[fmt] = root
        rng = random.Random(seed)  # the same rows in every format
        next_id = 1
        for country in countries:
            for year in years:
                for month in months:
                    folder = os.path.join(root, f"country={country}", f"year={year}", f"month={month:02d}")
                    for part in range(1, files_per_partition + 1):
                        count = rng.randint(*rows_per_file)
                        write_file(os.path.join(folder, f"part-{part:04d}.{fmt}"), fmt,
                                   _rows(rng, count, next_id, year, month))
                        next_id += count
                        if fmt == formats[0]:
                            result.rows += count
                            result.files += 1
        result.partitions = len(countries) * len(years) * len(months)
    return result


def tiny_layout(root: str, partitions: int, fanout: Sequence[int] = (10, 100), rows: int = 2) -> int:
    """A layout of ``partitions`` folders ``region=rNN/store=NNNN/day=YYYY-MM-DD`` each holding
    one tiny Parquet file, hard-linked from a single file written once (so 100,000 partitions
    take seconds and no space). Returns the number of files."""
    os.makedirs(root, exist_ok=True)
    template = os.path.join(root, "_template.parquet")
    rng = random.Random(1)
    write_file(template, "parquet", _rows(rng, rows, 1, 2024, 1))
    regions, stores = fanout
    start = dt.date(2000, 1, 1)
    for i in range(partitions):
        region, store, day = i % regions, (i // regions) % stores, i // (regions * stores)
        folder = os.path.join(root, f"region=r{region:02d}", f"store={store:04d}",
                              f"day={(start + dt.timedelta(days=day)).isoformat()}")
        os.makedirs(folder, exist_ok=True)
        target = os.path.join(folder, "part-0001.parquet")
        if not os.path.exists(target):
            try:
                os.link(template, target)
            except OSError:
                import shutil
                shutil.copyfile(template, target)
    return partitions
