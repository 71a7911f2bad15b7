"""Spark pipelines at data-lake scale: register a generated layout of many partitions end to
end, against a single-process boto3 loop sending the very same BatchCreatePartition calls, then
a catalog-pruned read of 1% of the partitions against a full read.

The layout is ``region=rNN/store=NNNN/day=YYYY-MM-DD/part-0001.parquet`` (10 regions x 100
stores x N/1000 days), one tiny Parquet file per partition hard-linked from a single file
written once: the listing and the reads see 100,000 real files and folders, created in seconds.

Measured (one run, on its own service + DynamoDB Local in memory):

* register: partitions/s end to end and the time split (listing, schema inference, catalog
  reads, catalog writes); the writes come from the Spark executors, several calls in flight;
* the same PartitionInputs, 100 per BatchCreatePartition, sent by one process in a loop:
  partitions/s, and the pipeline's catalog-write speedup over it;
* ``region = 'r03' AND store < 10`` (1% of the partitions) read through the catalog vs the whole
  table read through the catalog: files opened and wall time of a count.

Run: ``.venv/bin/python -m bench.bench_pipelines [--partitions 100000] [--master local[2]]``
(``--quick``: 5,000 partitions). Needs ``pipelines/requirements.txt`` (``make pipelines-install``).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from infra.local.stack import DEFAULT_ACCESS_KEY, REGION, CatalogStack, client  # noqa: E402

CREDENTIALS = {"AWS_ACCESS_KEY_ID": DEFAULT_ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": REGION}
WARM_UP_PARTITIONS = 10_000
PRUNE_FILTER = "region = 'r03' AND store < 10"  # 1 region in 10 x 10 stores in 100


def boto3_loop(endpoint: str, database: str, table: str, inputs: list[dict], threads: int = 1) -> tuple[float, int]:
    """Send ``inputs`` 100 at a time from this process, one call after the other (or from
    ``threads`` threads, for the warm-up)."""
    glue = client(endpoint, "glue")

    def send(start: int) -> int:
        answer = glue.batch_create_partition(DatabaseName=database, TableName=table,
                                             PartitionInputList=inputs[start:start + 100])
        return len(answer.get("Errors") or [])

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        failed = sum(pool.map(send, range(0, len(inputs), 100)))
    return time.perf_counter() - started, failed


def timed_count(spark, config, database: str, table: str, filter: str = "") -> tuple[int, int, float, float]:
    """(rows, files opened, catalog seconds, wall seconds) of a count through the catalog."""
    from pipelines.read import load_table
    start = time.perf_counter()
    loaded = load_table(spark, config, database, table, filter=filter, segments=4)
    rows = loaded.df.count()
    return rows, len(loaded.files), loaded.seconds["catalog"], time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--requests-per-task", type=int, default=4)
    parser.add_argument("--quick", action="store_true", help="5,000 partitions")
    parser.add_argument("--keep", help="generate the layout here and keep it (default: a temp dir, removed)")
    args = parser.parse_args()
    count = 5_000 if args.quick else args.partitions
    os.environ.update(CREDENTIALS)
    os.environ.pop("AWS_PROFILE", None)

    from pyspark.sql import SparkSession

    from pipelines import register as reg
    from pipelines import sample, schema
    from pipelines.catalog import CatalogConfig

    work = Path(args.keep or tempfile.mkdtemp(prefix="bench-pipelines-"))
    root = work / "lake"
    start = time.perf_counter()
    sample.tiny_layout(str(root), count)
    generated = time.perf_counter() - start
    print(f"generated {count:,} partition folders with one tiny Parquet file each in {generated:.1f} s", flush=True)

    builder = (SparkSession.builder.master(args.master).appName("bench-pipelines")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.host", "127.0.0.1").config("spark.sql.shuffle.partitions", "4"))
    for key, value in CREDENTIALS.items():
        builder = builder.config(f"spark.executorEnv.{key}", value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark.range(1).count()  # JVM and Python workers warm before anything is timed

    results: list[tuple[str, str]] = []
    with CatalogStack(log_dir=work / "logs") as stack:
        config = CatalogConfig(glue_endpoint=stack.endpoint, lakeformation_endpoint=stack.endpoint, region=REGION)
        glue = client(stack.endpoint, "glue")
        database = f"bench_{uuid.uuid4().hex[:8]}"
        glue.create_database(DatabaseInput={"Name": database})

        # Warm-up, untimed: DynamoDB Local's JIT and the service's first calls make whatever
        # writes first several times slower (measured: 420/s cold vs 1,500/s warm for the same
        # loop), which would otherwise be charged to the pipeline alone.
        from pipelines import layout
        listing = layout.scan(None, str(root))
        twin_sd = schema.storage_descriptor("parquet", listing.root + "/", [{"Name": "x", "Type": "int"}])
        inputs = [reg._partition_input(twin_sd, (p.values, p.location, p.files, p.bytes)) for p in listing.partitions]
        partition_keys = [{"Name": k, "Type": "string"} for k in layout.check_keys(listing.partitions)]
        glue.create_table(DatabaseName=database, TableInput={
            "Name": "warm_up", "StorageDescriptor": twin_sd, "PartitionKeys": partition_keys})
        warm = inputs[:WARM_UP_PARTITIONS]
        print(f"warm-up: {len(warm):,} partitions into a scratch table (untimed) ...", flush=True)
        boto3_loop(stack.endpoint, database, "warm_up", warm, threads=4)

        print("register (pipeline) ...", flush=True)
        summary = reg.register(spark, config, reg.RegisterOptions(
            root=str(root), database=database, table="lake", requests_per_task=args.requests_per_task, quiet=True,
            driver_max=0))  # the executors' writes are what this measures
        assert summary.added == count and summary.failed == 0, summary.text()
        print(summary.text(), flush=True)
        s = summary.seconds
        writes = s["catalog_writes"]

        # The same calls from one process: identical PartitionInputs into a twin table.
        twin_sd = schema.storage_descriptor("parquet", listing.root + "/", summary.columns)
        glue.create_table(DatabaseName=database, TableInput={
            "Name": "lake_loop", "StorageDescriptor": twin_sd, "PartitionKeys": summary.partition_keys,
            "TableType": "EXTERNAL_TABLE", "Parameters": {"classification": "parquet"}})
        inputs = [reg._partition_input(twin_sd, (p.values, p.location, p.files, p.bytes)) for p in listing.partitions]
        print("single-process boto3 loop ...", flush=True)
        loop_seconds, loop_failed = boto3_loop(stack.endpoint, database, "lake_loop", inputs)
        assert loop_failed == 0

        print("reads ...", flush=True)
        pruned = timed_count(spark, config, database, "lake", PRUNE_FILTER)
        full = timed_count(spark, config, database, "lake")
        expected_rows = full[0] * pruned[1] // max(1, full[1])
        assert pruned[0] == expected_rows, (pruned, full)

    cores = os.cpu_count()
    results += [
        ("machine", f"{platform.machine()}, {cores} cores, Spark master {args.master}, "
                    f"{args.requests_per_task} calls in flight per task"),
        ("layout", f"{count:,} partitions / files (hard links of one {os.path.getsize(root / '_template.parquet'):,}-byte "
                   f"Parquet file), generated in {generated:.1f} s"),
        ("register end to end", f"{s['total']:.1f} s = {count / s['total']:,.0f} partitions/s"),
        ("  listing", f"{s['listing']:.1f} s ({'executors' if summary.parallel_listing else 'driver'})"),
        ("  schema inference", f"{s['schema']:.1f} s ({min(16, count)} sampled files)"),
        ("  catalog reads", f"{s.get('catalog_reads', 0):.1f} s"),
        ("  catalog writes", f"{writes:.1f} s = {count / writes:,.0f} partitions/s "
                            f"({summary.calls_by_operation.get('BatchCreatePartition', 0):,} calls)"),
        ("boto3 loop, 1 process", f"{loop_seconds:.1f} s = {count / loop_seconds:,.0f} partitions/s "
                                  f"({len(inputs) // 100 + (len(inputs) % 100 > 0):,} calls)"),
        ("catalog writes speedup", f"{loop_seconds / writes:.2f}x (pipeline writes vs loop); "
                                   f"end to end incl. listing+schema {loop_seconds / s['total']:.2f}x"),
        ("pruned read (1%)", f"{pruned[1]:,} files, {pruned[0]:,} rows, {pruned[3]:.2f} s "
                             f"(GetPartitions {pruned[2]:.2f} s)"),
        ("full read", f"{full[1]:,} files, {full[0]:,} rows, {full[3]:.2f} s (GetPartitions {full[2]:.2f} s)"),
        ("full / pruned", f"files {full[1] / max(1, pruned[1]):.0f}x, wall time {full[3] / pruned[3]:.1f}x"),
    ]
    width = max(len(k) for k, _ in results)
    print()
    print(f"| {'measure':<{width}} | figure |")
    print(f"|{'-' * (width + 2)}|--------|")
    for key, value in results:
        print(f"| {key:<{width}} | {value} |")
    spark.stop()
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
