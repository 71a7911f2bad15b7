"""DeleteDatabase latency against the size of what it deletes, and the background cleanup after it.

Issue #14 item 7: deleting a database holding one table of 2,000-3,000 partitions used to take
10-13 s (the contents were deleted before the answer). Now DeleteDatabase unlinks the database and
records a cleanup job in one DynamoDB transaction and answers; the local server's cleaner thread
deletes the contents in the background (chalicelib/service/cleanup.py).

Builds, on the service over DynamoDB Local, ``--rounds`` pairs of databases: each holds one table
(two partition keys, one partition index, two archived versions, table statistics) with 100
partitions in the small database and 10,000 in the large one. Then, round by round (small and large
interleaved, the order alternating), it waits until no cleanup job is pending, times DeleteDatabase
through boto3 (the client's wall time), and times the background cleanup until the job is gone
(checked on DynamoDB Local: job item, partitions, index entries). Reported: median DeleteDatabase
latency of each size and their ratio (target <= 1.5), the cleanup times.

Run: ``.venv/bin/python -m bench.bench_delete [--quick]``. ``--quick`` is a smoke run (100 and
2,000 partitions, 2 rounds). Benchmarks are never tests.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional, Sequence

import boto3

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from infra.local.stack import REGION, CatalogStack  # noqa: E402
from bench.common import Report, command_line, log, machine, make_client, run_parallel  # noqa: E402

KEYS = [{"Name": "year", "Type": "int"}, {"Name": "region", "Type": "string"}]
COLUMNS = [{"Name": "id", "Type": "bigint"}, {"Name": "value", "Type": "string"}]
STATS = {"ColumnName": "value", "ColumnType": "string", "AnalyzedTime": 1700000000,
         "StatisticsData": {"Type": "STRING", "StringColumnStatisticsData": {
             "MaximumLength": 10, "AverageLength": 4.5, "NumberOfNulls": 1, "NumberOfDistinctValues": 7}}}


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 100 and 2,000 partitions, 2 rounds")
    parser.add_argument("--rounds", type=int, default=None, help="databases of each size (default 5; quick 2)")
    parser.add_argument("--small", type=int, default=100, help="partitions in the small table")
    parser.add_argument("--large", type=int, default=None, help="partitions in the large table (default 10,000)")
    parser.add_argument("--threads", type=int, default=4, help="loader threads")
    parser.add_argument("--log-dir", type=Path, default=None, help="keep the service's logs here")
    args = parser.parse_args(argv)
    args.rounds = args.rounds or (2 if args.quick else 5)
    args.large = args.large or (2_000 if args.quick else 10_000)
    return args


def table_input(name: str) -> dict[str, Any]:
    return {"Name": name, "PartitionKeys": KEYS, "TableType": "EXTERNAL_TABLE",
            "StorageDescriptor": {"Columns": COLUMNS, "Location": f"s3://bench/{name}/"}}


def partition(i: int) -> dict[str, Any]:
    values = [str(1000 + i // 100), f"r{i % 100}"]
    return {"Values": values, "StorageDescriptor": {"Columns": COLUMNS,
                                                    "Location": f"s3://bench/t/{values[0]}/{values[1]}/"}}


class Store:
    """Direct reads of DynamoDB Local: the cleanup queue and what a table still stores."""

    def __init__(self, stack: CatalogStack) -> None:
        self.client = stack.ddb_client()
        self.prefix = stack.table_prefix

    def count(self, table: str, hash_name: str, value: str) -> int:
        total, start = 0, None
        while True:
            extra = {"ExclusiveStartKey": start} if start else {}
            page = self.client.query(TableName=self.prefix + table, KeyConditionExpression="#h = :h",
                                     ExpressionAttributeNames={"#h": hash_name}, Select="COUNT",
                                     ExpressionAttributeValues={":h": {"S": value}}, ConsistentRead=True, **extra)
            total += page["Count"]
            start = page.get("LastEvaluatedKey")
            if not start:
                return total

    def jobs(self) -> int:
        return self.count("cleanup_jobs", "queue", "purge")

    def uids(self, db: str) -> tuple[str, str, list[str]]:
        """(database uid, table uid, index uids) of ``db.t``."""
        db_uid = self.client.get_item(TableName=self.prefix + "databases", ConsistentRead=True, Key={
            "catalog": {"S": f"{REGION}\x01123456789012"}, "name": {"S": db}})["Item"]["uid"]["S"]
        table = self.client.get_item(TableName=self.prefix + "tables", ConsistentRead=True, Key={
            "db_uid": {"S": db_uid}, "name": {"S": "t"}})["Item"]
        return db_uid, table["uid"]["S"], [i["uid"] for i in json.loads(table["indexes"]["S"])]

    def left(self, uids: tuple[str, str, list[str]]) -> int:
        db_uid, table_uid, index_uids = uids
        return (self.count("tables", "db_uid", db_uid) + self.count("partitions", "table_uid", table_uid)
                + sum(self.count("partition_index_entries", "index_uid", uid) for uid in index_uids))


def build(clients: list[Any], db: str, partitions: int) -> None:
    glue = clients[0]
    glue.create_database(DatabaseInput={"Name": db})
    glue.create_table(DatabaseName=db, TableInput=table_input("t"),
                      PartitionIndexes=[{"IndexName": "by_region", "Keys": ["region"]}])
    chunks = [[partition(i) for i in range(start, min(start + 100, partitions))]
              for start in range(0, partitions, 100)]

    def load(client: Any, chunk: list[dict[str, Any]]) -> None:
        errors = client.batch_create_partition(DatabaseName=db, TableName="t", PartitionInputList=chunk)["Errors"]
        assert not errors, errors[:2]
    run_parallel(clients, chunks, load)
    for _ in range(2):
        glue.update_table(DatabaseName=db, TableInput=table_input("t"))
    glue.update_column_statistics_for_table(DatabaseName=db, TableName="t", ColumnStatisticsList=[STATS])


def wait_quiet(store: Store, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while store.jobs() and time.monotonic() < deadline:
        time.sleep(0.05)


def measure_one(glue: Any, store: Store, db: str) -> tuple[float, float]:
    """(DeleteDatabase seconds, seconds until its cleanup is done)."""
    uids = store.uids(db)
    wait_quiet(store)
    time.sleep(0.5)  # let DynamoDB Local and the service settle after the previous cleanup
    start = time.perf_counter()
    glue.delete_database(Name=db)
    answered = time.perf_counter()
    while store.jobs() or store.left(uids):
        time.sleep(0.05)
    return answered - start, time.perf_counter() - start


def run(args: argparse.Namespace, stack: CatalogStack, report: Report) -> None:
    clients = [make_client("glue", stack.endpoint, args.threads) for _ in range(args.threads)]
    glue = clients[0]
    store = Store(stack)
    sizes = {"small": args.small, "large": args.large}
    for r in range(args.rounds):
        for label, count in sizes.items():
            log(f"round {r}: building {label} ({count:,} partitions)")
            build(clients, f"bench_{label}_{r}", count)
    # One discarded delete first: the service's first DeleteDatabase and its cleaner's first job
    # pay for lazy imports and new connections.
    build(clients, "bench_warmup", 10)
    measure_one(glue, store, "bench_warmup")
    delete: dict[str, list[float]] = {label: [] for label in sizes}
    cleanup: dict[str, list[float]] = {label: [] for label in sizes}
    for r in range(args.rounds):
        order = list(sizes) if r % 2 == 0 else list(reversed(sizes))
        for label in order:
            answered, cleaned = measure_one(glue, store, f"bench_{label}_{r}")
            log(f"round {r}: {label}: DeleteDatabase {answered * 1000:.0f} ms, cleaned up after {cleaned:.1f} s")
            delete[label].append(answered)
            cleanup[label].append(cleaned)
    small, large = (statistics.median(delete[label]) for label in sizes)
    ratio = large / small
    report.check(f"DeleteDatabase, {args.small:,} partitions (median of {args.rounds})",
                 f"{small * 1000:.0f} ms", "-", None)
    report.check(f"DeleteDatabase, {args.large:,} partitions (median of {args.rounds})",
                 f"{large * 1000:.0f} ms", "-", None)
    report.check(f"ratio {args.large:,} / {args.small:,} partitions", f"{ratio:.2f}", "<= 1.5", ratio <= 1.5)
    for label, count in sizes.items():
        cleaned = statistics.median(cleanup[label])
        report.check(f"background cleanup, {count:,} partitions (median)", f"{cleaned:.1f} s "
                     f"({count / cleaned:,.0f} partitions/s)", "-", None)
    header = ("Round", *(f"{label} delete ms" for label in sizes), *(f"{label} cleanup s" for label in sizes))
    report.tables.append((header, [(str(r), *(f"{delete[label][r] * 1000:.0f}" for label in sizes),
                                    *(f"{cleanup[label][r]:.1f}" for label in sizes)) for r in range(args.rounds)]))
    report.notes.append("Each database holds one table: 2 partition keys, 1 partition index (so an index entry "
                        "per partition), 2 archived versions, table column statistics.")
    report.notes.append("Cleanup time: from the DeleteDatabase call until its job, the table item, every "
                        "partition and index entry are gone (the local server's cleaner thread; chunks of "
                        "1,000 deletions under a renewed lease).")


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Build the databases, measure, print the report."""
    args = parse_args(argv)
    command = command_line("bench_delete", argv)
    env = (f"{machine()}, boto3 {boto3.__version__}; service and DynamoDB Local "
           f"(in memory) each in their own process")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-delete-") as tmp:
        log_dir = args.log_dir or Path(tmp)
        log_dir.mkdir(parents=True, exist_ok=True)
        stack = CatalogStack(log_dir=log_dir)
        report = Report()
        try:
            log(f"starting DynamoDB Local + service (logs in {log_dir})")
            stack.start()
            run(args, stack, report)
        finally:
            stack.stop()
    report.notes.append(f"Whole run: {time.perf_counter() - started:,.0f} s.")
    report.print(command, env)


if __name__ == "__main__":
    main()
