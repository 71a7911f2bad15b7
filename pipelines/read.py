"""Read a catalog table into a DataFrame with partition pruning done by the catalog.

The filter is sent as a GetPartitions ``Expression`` (Segments fetched in parallel threads), so
only the matching partitions' locations are listed and opened. A governed table's files are the
objects GetTableObjects returns at a transaction or a point in time (its filter is the
``PartitionPredicate``). Partition columns come from the catalog values, typed as the table
declares them.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence
from urllib.parse import quote

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from pipelines import catalog, layout, schema
from pipelines.catalog import CatalogConfig
from pipelines.runtime import SparkLike, resolve


@dataclass
class TableRead:
    """A loaded table and what it took to load it."""

    df: DataFrame
    table: dict[str, Any]
    partition_keys: list[dict[str, str]]
    partitions: list[dict[str, Any]]   # matched partitions (Values, Location); one per governed partition
    locations: list[str]               # what was handed to Spark (folders, or files for governed tables)
    files: list[str] = field(default_factory=list)  # files Spark will open
    governed: bool = False
    seconds: dict[str, float] = field(default_factory=dict)

    def bytes(self) -> Optional[int]:
        """Total size of the files opened (None when some size is unknown)."""
        total = 0
        for path in self.files:
            if not layout.is_local(path):
                return None
            try:
                total += os.path.getsize(layout.local_path(path))
            except OSError:
                return None
        return total


def _hive_path(keys: Sequence[dict[str, str]], values: Sequence[str]) -> str:
    return "/".join(f"{k['Name']}={quote(v, safe=' ')}" for k, v in zip(keys, values))


def _typed(value: str, glue_type: str) -> Any:
    base = glue_type.lower().split("(")[0]
    if value == schema.HIVE_NULL:
        return None
    if base in ("int", "integer", "bigint", "long", "smallint", "tinyint"):
        return int(value)
    if base == "date":
        return dt.date.fromisoformat(value)
    return value


def _reader(spark: SparkSession, fmt: str, options: dict[str, str], ddl: str):
    return spark.read.format(fmt).options(**options).schema(ddl)


def _load(spark: SparkSession, fmt: str, options: dict[str, str], table_location: str,
          data_columns: list[dict[str, Any]], keys: list[dict[str, str]],
          groups: list[tuple[list[str], list[str]]]) -> DataFrame:
    """DataFrame over ``groups`` = [(partition values, paths)]. When every path sits in its
    Hive folder under the table location, one Spark read with ``basePath`` does it (Spark
    attaches the partition columns from the folders); otherwise each group is read on its own
    with its values as literals and the reads are unioned."""
    ddl = schema.spark_ddl(data_columns + list(keys))
    base = table_location.rstrip("/")
    if not groups:
        return spark.createDataFrame([], ddl)
    conforming = bool(keys) and all(
        all(p.startswith(f"{base}/{_hive_path(keys, values)}/") or p.rstrip("/") == f"{base}/{_hive_path(keys, values)}"
            for p in paths)
        for values, paths in groups)
    if conforming or not keys:
        paths = [p for _, paths in groups for p in paths]
        return _reader(spark, fmt, options, ddl).option("basePath", base).load(paths)
    data_ddl = schema.spark_ddl(data_columns)
    frames = []
    for values, paths in groups:
        frame = _reader(spark, fmt, options, data_ddl).load(paths)
        for key, value in zip(keys, values):
            frame = frame.withColumn(key["Name"], F.lit(_typed(value, key["Type"])).cast(key["Type"]))
        frames.append(frame)
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result


def _data_files_only(spark: SparkSession, fmt: str,
                     groups: list[tuple[list[str], list[str]]]) -> list[tuple[list[str], list[str]]]:
    """Each folder replaced by its ``fmt`` data files (a README.txt or a stray file of another
    format beside them is not handed to Spark); folders left with no data file are dropped."""
    folders = [path for _, paths in groups for path in paths]
    with ThreadPoolExecutor(max_workers=8) as pool:
        listed = dict(zip(folders, pool.map(lambda path: layout.data_files(spark, path, fmt), folders)))
    out = []
    for values, paths in groups:
        files = [f for path in paths for f in listed[path]]
        if files:
            out.append((values, files))
    return out


def load_table(spark: SparkLike, config: CatalogConfig, database: str, table_name: str,
               filter: str = "", segments: int = 4, transaction_id: Optional[str] = None,
               as_of: Optional[dt.datetime] = None) -> TableRead:
    """Load ``database.table_name``, reading only the partitions (or governed objects) the
    catalog selects for ``filter``. ``spark`` may be a function returning the session (the CLI
    starts Spark while the catalog is asked)."""
    seconds: dict[str, float] = {}
    start = time.perf_counter()
    table = catalog.get_table(config, database, table_name)
    if table is None:
        raise LookupError(f"table {database}.{table_name} not found")
    fmt, options = schema.format_of_table(table)
    sd = table.get("StorageDescriptor") or {}
    data_columns = sd.get("Columns") or []
    keys = table.get("PartitionKeys") or []
    location = sd.get("Location") or ""
    governed = (table.get("TableType") or "").upper() == "GOVERNED"
    groups: list[tuple[list[str], list[str]]] = []
    partitions: list[dict[str, Any]] = []
    if governed:
        lakeformation = catalog.client(config, "lakeformation")
        kwargs: dict[str, Any] = {"DatabaseName": database, "TableName": table_name, "MaxResults": 1000, **config.ids()}
        if filter:
            kwargs["PartitionPredicate"] = filter
        if transaction_id:
            kwargs["TransactionId"] = transaction_id
        if as_of is not None:
            kwargs["QueryAsOfTime"] = as_of
        while True:
            page = catalog.call_with_retry(lambda: lakeformation.get_table_objects(**kwargs))
            for entry in page.get("Objects") or []:
                values = list(entry.get("PartitionValues") or [])
                uris = [o["Uri"] for o in entry.get("Objects") or []]
                if uris:
                    groups.append((values, uris))
                    partitions.append({"Values": values, "Objects": entry.get("Objects")})
            if not page.get("NextToken"):
                break
            kwargs["NextToken"] = page["NextToken"]
    elif keys:
        for partition in catalog.get_partitions(config, database, table_name, expression=filter, segments=segments):
            partition_location = (partition.get("StorageDescriptor") or {}).get("Location")
            if partition_location:
                partitions.append({"Values": partition["Values"], "Location": partition_location})
                groups.append((list(partition["Values"]), [partition_location]))
    else:
        if filter:
            raise ValueError(f"table {database}.{table_name} has no partition keys to filter on")
        groups = [([], [location])]
    seconds["catalog"] = time.perf_counter() - start
    start = time.perf_counter()
    session = resolve(spark)
    if not governed:
        groups = _data_files_only(session, fmt, groups)
    df = _load(session, fmt, options, location, data_columns, keys, groups)
    files = df.inputFiles() if groups else []
    seconds["listing"] = time.perf_counter() - start
    return TableRead(df=df, table=table, partition_keys=keys, partitions=partitions,
                     locations=[p for _, paths in groups for p in paths], files=list(files),
                     governed=governed, seconds=seconds)
