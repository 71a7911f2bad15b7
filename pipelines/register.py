"""Register a Hive-style partitioned dataset in the catalog (a crawler on Spark).

1. list the dataset (``layout.scan``: parallel on executors for big trees),
2. infer the schema with Spark from a spread sample of files, and the partition-key types
   from the directory values (``int`` / ``bigint`` for digits, ``date`` for yyyy-MM-dd, else
   ``string``),
3. create the table, or update it when the schema changed (UpdateTable archives the previous
   version; an unchanged schema writes nothing),
4. read the partitions already registered (GetPartitions, Segments in parallel) and send only
   the new ones, from the executors, with BatchCreatePartition (100 per call, throttled or
   failed entries retried with backoff, per-partition errors collected),
5. optionally delete partitions whose folders are gone (BatchDeletePartition, 25 per call)
   and create partition indexes.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, Optional, Sequence

from pipelines import catalog, layout, schema
from pipelines.catalog import BatchOutcome, CatalogConfig
from pipelines.checks import parse_index  # noqa: F401  (its home was here)
from pipelines.runtime import Progress, SparkLike, Timer, per_second, resolve, say, ship_package


class RegisterError(Exception):
    """The dataset cannot be registered as asked (nothing was written)."""


@dataclass
class RegisterOptions:
    """What ``register`` does; the CLI maps its flags onto these."""

    root: str
    database: str
    table: str
    fmt: Optional[str] = None
    csv_options: dict[str, str] = field(default_factory=lambda: {"header": "true", "sep": ","})
    create_database: bool = True
    prune: bool = False
    indexes: list[tuple[str, list[str]]] = field(default_factory=list)
    segments: int = 4
    batch_size: int = catalog.GLUE_BATCH_CREATE
    requests_per_task: int = 4
    partitions_per_task: int = 2000
    schema_sample: int = 16
    schema_change: str = "merge"  # merge | replace | fail
    parallel_listing_threshold: int = 256
    driver_max: int = 500  # at most this many new partitions are sent from the driver
    quiet: bool = False


@dataclass
class RegisterSummary:
    """The outcome of one run."""

    database: str
    table: str
    root: str
    fmt: str = ""
    partition_keys: list[dict[str, str]] = field(default_factory=list)
    columns: list[dict[str, str]] = field(default_factory=list)
    table_action: str = ""          # created | updated | unchanged
    table_version: str = ""
    listed: int = 0
    added: int = 0
    skipped: int = 0
    failed: int = 0
    pruned: int = 0
    indexes_created: list[str] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    calls: int = 0                  # every catalog call: reads and writes, driver and executors
    reads: int = 0
    writes: int = 0
    calls_by_operation: dict[str, int] = field(default_factory=dict)
    retries: int = 0
    parallel_listing: bool = False
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def partitions_per_second(self) -> float:
        """Partitions added per second of the whole run (0 when nothing was added)."""
        total = self.seconds.get("total", 0.0)
        return self.added / total if total and self.added else 0.0

    def count_calls(self, operations: Counter[str]) -> None:
        """Add calls (by operation name) to the totals."""
        merged = Counter(self.calls_by_operation)
        merged.update(operations)
        self.calls_by_operation = dict(sorted(merged.items()))
        self.reads = sum(n for op, n in merged.items() if catalog.is_read(op))
        self.writes = sum(merged.values()) - self.reads
        self.calls = self.reads + self.writes

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "partitions_per_second": self.partitions_per_second}

    def text(self) -> str:
        keys = ", ".join(f"{k['Name']}:{k['Type']}" for k in self.partition_keys)
        s = self.seconds
        rate = f" = {per_second(self.partitions_per_second)} partitions added/s" if self.added else ""
        wall = ""
        if "spark_start" in s:  # set by the CLI
            wall = (f" (Spark start {s['spark_start']:.2f} s, stop {s.get('spark_stop', 0):.2f} s)"
                    if s["spark_start"] else " (no step needed Spark)")
        lines = [
            f"register {self.database}.{self.table} from {self.root}",
            f"  format {self.fmt}, {len(self.columns)} columns, partition keys {keys or '(none)'}",
            f"  table {self.table_action} (version {self.table_version})"
            + (f", indexes created: {', '.join(self.indexes_created)}" if self.indexes_created else ""),
            f"  partitions: listed {self.listed:,}, added {self.added:,}, skipped {self.skipped:,} "
            f"(already registered), failed {self.failed:,}, pruned {self.pruned:,}",
            f"  catalog calls {self.calls:,}: {self.reads:,} reads, {self.writes:,} writes ({self.retries:,} retried)",
            f"  time: listing {s.get('listing', 0):.2f} s, schema inference {s.get('schema', 0):.2f} s, "
            f"catalog reads {s.get('catalog_reads', 0):.2f} s, catalog writes {s.get('catalog_writes', 0):.2f} s",
            f"  total {s.get('total', 0):.2f} s{wall}{rate}",
        ]
        if self.ignored:
            lines.append(f"  ignored {len(self.ignored):,} paths outside the layout, e.g. {self.ignored[0]}")
        for error in self.errors[:10]:
            lines.append(f"  error {error['Values']}: {error['ErrorCode']}: {error['ErrorMessage']}")
        if len(self.errors) > 10:
            lines.append(f"  ... and {len(self.errors) - 10:,} more errors")
        return "\n".join(lines)


def merge_columns(old: list[dict[str, Any]], new: list[dict[str, str]], policy: str) -> list[dict[str, Any]]:
    """The table's columns after this scan. ``merge`` keeps every known column (taking a new
    type where the data changed it) and appends new ones; ``replace`` takes the scan's;
    ``fail`` refuses any difference."""
    if policy == "replace":
        return new
    seen = {c["Name"].lower(): c for c in new}
    merged = []
    for column in old:
        fresh = seen.pop(column["Name"].lower(), None)
        merged.append({**column, "Type": fresh["Type"]} if fresh else column)
    merged.extend(c for c in new if c["Name"].lower() in seen)
    if policy == "fail" and _signature(merged) != _signature(old):
        raise RegisterError("the schema changed and --schema-change fail was given: "
                            f"{_signature(old)} -> {_signature(merged)}")
    return merged


def _signature(columns: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(c["Name"].lower(), (c.get("Type") or "").lower()) for c in columns]


def infer_columns(spark: SparkLike, fmt: str, files: list[str], base: str, keys: Sequence[str],
                  csv_options: dict[str, str]) -> list[dict[str, str]]:
    """Glue columns of the data files (partition keys left out). Local Parquet files are read
    from their footers with pyarrow (a Spark schema-merge job costs seconds for a few KB of
    metadata); anything else, or a footer whose types Spark reads its own way, is inferred by
    Spark. Spark gets the files one by one and without basePath, so it does no partition
    discovery of its own (which would reject folder names Glue can still hold, such as an
    empty value)."""
    if fmt == "parquet":
        footers = parquet_footer_schema(files)
        if footers is not None:
            return schema.glue_columns(footers, exclude=keys)
    reader = resolve(spark).read.format(fmt)
    if fmt == "parquet":
        reader = reader.option("mergeSchema", "true")
    elif fmt == "csv":
        reader = reader.options(inferSchema="true", **csv_options)
    return schema.glue_columns(reader.load(files).schema, exclude=keys)


# Timestamps Spark reads differently from pyarrow's mapping: nanoseconds and seconds units,
# and zone-less ones (INT96 or isAdjustedToUTC=false, which Spark tells apart by the file).
_SPARK_TIMESTAMPS = re.compile(r"timestamp\[(?:ns|s)\b|timestamp\[(?:ms|us)\]")


def parquet_footer_schema(files: Sequence[str]) -> Optional[Any]:
    """The merged Spark schema (StructType) of local Parquet files from their footers, the way
    Spark's mergeSchema would see it, or None when Spark must infer it (a remote or unreadable
    file, a type pyarrow and Spark map differently, a column whose type differs between files)."""
    import pyarrow.parquet as pq
    from pyspark.sql.pandas.types import from_arrow_type
    from pyspark.sql.types import StructField, StructType
    fields: dict[str, Any] = {}
    for path in files:
        if not layout.is_local(path):
            return None
        try:
            arrow = pq.read_schema(layout.local_path(path))
        except Exception:  # noqa: BLE001  Spark reports a bad file in its own words
            return None
        for item in arrow:
            if _SPARK_TIMESTAMPS.search(str(item.type)):
                return None
            try:
                spark_type = from_arrow_type(item.type)
            except Exception:  # noqa: BLE001  unsigned, dictionary, ...: Spark's own rules
                return None
            known = fields.get(item.name.lower())
            if known is None:
                fields[item.name.lower()] = StructField(item.name, spark_type, True)
            elif known.dataType != spark_type:
                return None
    return StructType(list(fields.values())) if fields else None


def _partition_input(template: dict[str, Any], row: tuple) -> dict[str, Any]:
    values, location, files, size = row
    sd = dict(template)
    sd["Location"] = location
    return {"Values": list(values), "StorageDescriptor": sd,
            "Parameters": {"numFiles": str(files), "totalSize": str(size)}}


def register_partitions(spark: SparkLike, config: CatalogConfig, database: str, table: str,
                        template: dict[str, Any], rows: list[tuple], batch_size: int = 100,
                        requests_per_task: int = 4, partitions_per_task: int = 2000,
                        quiet: bool = False) -> BatchOutcome:
    """Create ``rows`` (values, location, files, bytes) as partitions from the executors: each
    task builds its PartitionInputs and sends BatchCreatePartition calls, ``requests_per_task``
    at a time, with its own boto3 client."""
    if not rows:
        return BatchOutcome()
    session = resolve(spark)
    ship_package(session)
    sc = session.sparkContext
    slices = max(1, min(len(rows), max(sc.defaultParallelism * 2, math.ceil(len(rows) / partitions_per_task))))
    sent = sc.accumulator(0)
    batch_size = max(1, min(catalog.GLUE_BATCH_CREATE, batch_size))

    def task(chunk):
        inputs = [_partition_input(template, row) for row in chunk]
        outcome = BatchOutcome()
        batches = list(catalog.chunks(inputs, batch_size))
        with ThreadPoolExecutor(max_workers=max(1, requests_per_task)) as pool:
            for batch, result in zip(batches, pool.map(
                    lambda b: catalog.batch_create_partitions(config, database, table, b), batches)):
                outcome.merge(result)
                sent.add(len(batch))
        yield outcome

    with Progress("partitions sent", len(rows), lambda: sent.value, enabled=not quiet):
        outcomes = sc.parallelize(rows, slices).mapPartitions(task).collect()
    total = BatchOutcome()
    for outcome in outcomes:
        total.merge(outcome)
    return total


def send_from_driver(config: CatalogConfig, database: str, table: str, template: dict[str, Any],
                     rows: list[tuple], batch_size: int = 100, requests: int = 4,
                     quiet: bool = False) -> BatchOutcome:
    """Create ``rows`` as partitions from the driver, ``requests`` calls at a time: for a few
    calls' worth, starting Spark's Python workers costs more than the calls themselves."""
    if not rows:
        return BatchOutcome()
    inputs = [_partition_input(template, row) for row in rows]
    batches = list(catalog.chunks(inputs, max(1, min(catalog.GLUE_BATCH_CREATE, batch_size))))
    total, sent = BatchOutcome(), [0]

    def send(batch: Sequence[dict[str, Any]]) -> BatchOutcome:
        result = catalog.batch_create_partitions(config, database, table, batch)
        sent[0] += len(batch)
        return result

    with Progress("partitions sent", len(rows), lambda: sent[0], enabled=not quiet):
        for outcome in catalog.run_threads(send, batches, requests):
            total.merge(outcome)
    return total


def _ensure_indexes(config: CatalogConfig, database: str, table: str,
                    wanted: list[tuple[str, list[str]]]) -> list[str]:
    glue = catalog.client(config)
    have = {i["IndexName"] for i in glue.get_partition_indexes(
        DatabaseName=database, TableName=table, **config.ids()).get("PartitionIndexDescriptorList", [])}
    created = []
    for name, keys in wanted:
        if name not in have:
            glue.create_partition_index(DatabaseName=database, TableName=table,
                                        PartitionIndex={"IndexName": name, "Keys": keys}, **config.ids())
            created.append(name)
    return created


def register(spark: SparkLike, config: CatalogConfig, options: RegisterOptions) -> RegisterSummary:
    """Run the whole registration; see the module docstring. ``spark`` may be a function that
    starts a session: it is called only when a step needs Spark (many folders to list, a
    schema pyarrow cannot read, more than ``options.driver_max`` partitions to send)."""
    timer = Timer()
    quiet = options.quiet
    calls_before = Counter(catalog.calls_made)
    summary = RegisterSummary(database=options.database, table=options.table, root=layout.uri(options.root))

    say(f"listing {summary.root} ...", quiet)
    with timer.phase("listing"):
        listing = layout.scan(spark, options.root, options.parallel_listing_threshold)
    summary.listed, summary.ignored, summary.parallel_listing = len(listing.partitions), listing.ignored, listing.parallel
    if not listing.partitions:
        raise RegisterError(f"no Hive-style partition folders with data files under {summary.root}")
    keys = layout.check_keys(listing.partitions)
    key_types = [schema.infer_partition_type(p.values[i] for p in listing.partitions) for i in range(len(keys))]
    partition_keys = [{"Name": k, "Type": t} for k, t in zip(keys, key_types)]
    say(f"  {summary.listed:,} partitions ({', '.join(f'{k}:{t}' for k, t in zip(keys, key_types))}) "
        f"in {timer.seconds['listing']:.1f} s", quiet)

    fmt = options.fmt
    if not fmt:
        seen = Counter(schema.format_of(p.sample_file) for p in listing.partitions)
        seen.pop(None, None)
        if not seen:
            raise RegisterError("cannot tell the file format from the file names: give --format")
        fmt = seen.most_common(1)[0][0]
    summary.fmt = fmt
    with timer.phase("schema"):
        files = layout.sample_files(listing.partitions, options.schema_sample)
        columns = infer_columns(spark, fmt, files, listing.root, keys, options.csv_options)
    say(f"  schema of {len(columns)} columns from {len(files)} sampled files in {timer.seconds['schema']:.1f} s", quiet)

    glue = catalog.client(config)
    with timer.phase("catalog_reads"):
        if options.create_database:
            catalog.ensure_database(config, options.database)
        existing = catalog.get_table(config, options.database, options.table)
    table_location = listing.root + "/"
    with timer.phase("catalog_writes"):
        if existing is None:
            sd = schema.storage_descriptor(fmt, table_location, columns, options.csv_options)
            table_input = {"Name": options.table, "TableType": "EXTERNAL_TABLE", "StorageDescriptor": sd,
                           "PartitionKeys": partition_keys, "Parameters": {"classification": fmt}}
            extra: dict[str, Any] = {}
            if options.indexes:
                extra["PartitionIndexes"] = [{"IndexName": n, "Keys": k} for n, k in options.indexes]
            glue.create_table(DatabaseName=options.database, TableInput=table_input, **extra, **config.ids())
            summary.table_action, summary.indexes_created = "created", [n for n, _ in options.indexes]
        else:
            old_keys = existing.get("PartitionKeys") or []
            if [k["Name"].lower() for k in old_keys] != [k.lower() for k in keys]:
                raise RegisterError(
                    f"table {options.database}.{options.table} has partition keys "
                    f"{[k['Name'] for k in old_keys]} but the folders have {list(keys)}")
            partition_keys = old_keys  # key types cannot change under existing partitions
            old_sd = existing.get("StorageDescriptor") or {}
            columns = merge_columns(old_sd.get("Columns") or [], columns, options.schema_change)
            if _signature(columns) != _signature(old_sd.get("Columns") or []):
                table_input = catalog.table_input_from(existing)
                table_input["StorageDescriptor"] = {**old_sd, "Columns": columns}
                glue.update_table(DatabaseName=options.database, TableInput=table_input,
                                  VersionId=existing.get("VersionId", ""), **config.ids())
                summary.table_action = "updated (schema changed, previous version archived)"
            else:
                summary.table_action = "unchanged"
            if options.indexes:
                summary.indexes_created = _ensure_indexes(config, options.database, options.table, options.indexes)
    summary.partition_keys, summary.columns = partition_keys, columns
    summary.table_version = (catalog.get_table(config, options.database, options.table) or {}).get("VersionId", "")

    registered: dict[tuple[str, ...], dict[str, Any]] = {}
    if existing is not None:
        with timer.phase("catalog_reads"):
            for partition in catalog.get_partitions(config, options.database, options.table, segments=options.segments):
                registered[tuple(partition["Values"])] = partition
        say(f"  {len(registered):,} partitions already registered", quiet)
    listed_values = {p.values for p in listing.partitions}
    new_rows = [(p.values, p.location, p.files, p.bytes) for p in listing.partitions if p.values not in registered]
    summary.skipped = summary.listed - len(new_rows)

    template = schema.storage_descriptor(fmt, table_location, columns, options.csv_options)
    with timer.phase("catalog_writes"):
        on_driver = len(new_rows) <= options.driver_max
        say(f"registering {len(new_rows):,} new partitions from the {'driver' if on_driver else 'executors'} ..."
            if new_rows else "  nothing new to register", quiet)
        if on_driver:
            outcome = send_from_driver(config, options.database, options.table, template, new_rows,
                                       options.batch_size, options.requests_per_task, quiet)
        else:
            outcome = register_partitions(spark, config, options.database, options.table, template, new_rows,
                                          options.batch_size, options.requests_per_task,
                                          options.partitions_per_task, quiet)
        summary.added, summary.failed = outcome.done, len(outcome.failed)
        summary.skipped += outcome.already  # created meanwhile by someone else
        summary.errors = outcome.failed
        summary.retries = outcome.retries
        # Calls made on executors are not in this process's counter; the driver's are.
        executor_calls = Counter({"BatchCreatePartition": outcome.calls}) if outcome.calls and not on_driver \
            else Counter()
        if options.prune:
            gone = [list(v) for v in registered if v not in listed_values]
            if gone:
                say(f"pruning {len(gone):,} partitions whose folders are gone ...", quiet)
                results = catalog.run_threads(
                    lambda batch: catalog.batch_delete_partitions(config, options.database, options.table, batch),
                    list(catalog.chunks(gone, catalog.GLUE_BATCH_DELETE)), workers=4)
                deleted = BatchOutcome()
                for result in results:
                    deleted.merge(result)
                summary.pruned = deleted.done
                summary.errors.extend(deleted.failed)
                summary.failed += len(deleted.failed)
    # The driver's own clients counted their calls; the executors' BatchCreatePartition calls
    # come back in the outcome.
    summary.count_calls(catalog.calls_made - calls_before + executor_calls)
    summary.seconds = {**timer.seconds, "job": timer.total(), "total": timer.total()}
    return summary
