"""Partition pruning and partition writes, measured side by side in one run through boto3.

Builds tables of 10k and 100k partitions (keys country string, category string, year int,
month int, day int; a partition index on (country, category, year)) on the service over
DynamoDB Local, loads the same partitions into moto's Glue server, and measures:

* a selective GetPartitions served by the index: median latency at the largest size ÷ at the
  smallest (flat in table size?), and DynamoDB items read ÷ partitions returned;
* the same query against moto (a full scan in memory, the mock most people test with);
* IN / OR queries served by several key ranges vs the full-scan plan of the same query;
* BatchCreatePartition throughput with 0 and 3 indexes ÷ BatchWriteItem of the very same
  DynamoDB items straight into the same DynamoDB Local.

Machines are noisy and absolute times drift, so every comparison is a ratio of figures taken
in the same run, with the compared calls interleaved round by round.

Run: ``.venv/bin/python -m bench.bench_partitions [--sizes 10000,100000] [--quick]``
(or ``make bench``). ``--quick`` is a one-minute smoke run on small tables.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import boto3

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from infra.local.dynamodb_local import PREEXEC, free_port  # noqa: E402
from bench import common  # noqa: E402
from bench.common import log, make_client, run_parallel  # noqa: E402
from infra.local.stack import CatalogStack, stop_process, wait_for_port  # noqa: E402

DATABASE = "bench"
# The layout: each (country, category, year) holds 12 months x 8 days = 96 partitions, so
# the selective query returns 96 partitions whatever the table size; bigger tables just hold
# more (country, category, year) triples, picked at random from 40 x 25 x 11 = 11,000.
COUNTRIES = ["US", "UK", "DE", "FR", "IT", "ES", "NL", "BE", "SE", "NO", "DK", "FI", "PL", "CZ",
             "AT", "CH", "IE", "PT", "GR", "HU", "RO", "BG", "HR", "SI", "SK", "EE", "LV", "LT",
             "CA", "MX", "BR", "AR", "CL", "JP", "KR", "CN", "IN", "AU", "NZ", "ZA"]
CATEGORIES = ["Shoes", "Books", "Toys", "Garden", "Kitchen", "Music", "Movies", "Games", "Sports",
              "Outdoors", "Beauty", "Health", "Grocery", "Pets", "Baby", "Office", "Tools",
              "Automotive", "Electronics", "Computers", "Jewelry", "Watches", "Luggage",
              "Furniture", "Lighting"]
YEARS = range(2014, 2025)
MONTHS = range(1, 13)
DAYS = (1, 4, 8, 12, 16, 20, 24, 28)
PER_TRIPLE = len(MONTHS) * len(DAYS)
# Always present (and loaded first), so every size answers the queries below.
PINNED = [("US", "Shoes", 2021), ("UK", "Shoes", 2021), ("DE", "Books", 2019)]
CAPACITY = len(COUNTRIES) * len(CATEGORIES) * len(YEARS) * PER_TRIPLE

PARTITION_KEYS = [{"Name": "country", "Type": "string"}, {"Name": "category", "Type": "string"},
                  {"Name": "year", "Type": "int"}, {"Name": "month", "Type": "int"},
                  {"Name": "day", "Type": "int"}]
QUERY_INDEX = {"IndexName": "by_country_category_year", "Keys": ["country", "category", "year"]}
WRITE_INDEXES = [QUERY_INDEX,
                 {"IndexName": "by_date", "Keys": ["year", "month", "day"]},
                 {"IndexName": "by_category_country", "Keys": ["category", "country"]}]
COLUMNS = [{"Name": "order_id", "Type": "bigint"}, {"Name": "customer_id", "Type": "bigint"},
           {"Name": "sku", "Type": "string"}, {"Name": "quantity", "Type": "int"},
           {"Name": "unit_price", "Type": "decimal(12,2)"}, {"Name": "ordered_at", "Type": "timestamp"}]
PARQUET = {
    "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
    "OutputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
    "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                  "Parameters": {"serialization.format": "1"}},
    "Compressed": False,
    "StoredAsSubDirectories": False,
}

SELECTIVE = "country = 'US' AND category = 'Shoes' AND year = 2021"
IN_QUERY = "country IN ('US', 'UK') AND category = 'Shoes' AND year = 2021"
OR_QUERY = ("(country = 'US' AND category = 'Shoes' AND year = 2021) "
            "OR (country = 'DE' AND category = 'Books' AND year = 2019)")
# No stored partition lacks a value, so `day IS NULL` never matches and the query's answer is
# unchanged; but that alternative pins no leading key of any index, so the planner must scan.
SCAN_SUFFIX = " OR day IS NULL"
MAX_PAGES = 10_000  # GetPartitions pages followed per query (a bound, never reached)


# ------------------------------------------------------------------------------ data layout
def layout(size: int, seed: int = 20210) -> list[list[str]]:
    """``size`` partitions' values: PINNED triples first, then random triples, 96 each."""
    if size > CAPACITY:
        raise SystemExit(f"--sizes: at most {CAPACITY:,} partitions fit this layout")
    others = [t for t in itertools.product(COUNTRIES, CATEGORIES, YEARS) if t not in PINNED]
    random.Random(seed).shuffle(others)
    triples = (PINNED + others)[:math.ceil(size / PER_TRIPLE)]
    values = [[c, k, str(y), str(m), str(d)] for c, k, y in triples for m in MONTHS for d in DAYS]
    return values[:size]


def partition_input(values: Sequence[str]) -> dict[str, Any]:
    """A PartitionInput as a crawler or a Spark job writes it (~1 KB of JSON)."""
    country, category, year, month, day = values
    location = (f"s3://bench-lake/sales/country={country}/category={category}/"
                f"year={year}/month={int(month):02d}/day={int(day):02d}/")
    return {
        "Values": list(values),
        "StorageDescriptor": {"Columns": COLUMNS, "Location": location, **PARQUET},
        "Parameters": {"classification": "parquet", "compressionType": "snappy",
                       "recordCount": str(1000 + zlib.crc32(location.encode()) % 9000), "averageRecordSize": "74",
                       "objectCount": "4", "sizeKey": str(74 * 4096)},
    }


def table_input(name: str) -> dict[str, Any]:
    """A partitioned Parquet table."""
    return {
        "Name": name,
        "TableType": "EXTERNAL_TABLE",
        "PartitionKeys": PARTITION_KEYS,
        "Parameters": {"classification": "parquet"},
        "StorageDescriptor": {"Columns": COLUMNS, "Location": f"s3://bench-lake/{name}/", **PARQUET},
    }


# ---------------------------------------------------------------------------------- clients
def create_partitions(client: Any, table: str, chunk: list[dict[str, Any]]) -> None:
    """One BatchCreatePartition call; any per-partition error fails the benchmark."""
    response = client.batch_create_partition(DatabaseName=DATABASE, TableName=table, PartitionInputList=chunk)
    if response.get("Errors"):
        raise RuntimeError(f"BatchCreatePartition on {table}: {response['Errors'][:2]}")


def load(clients: Sequence[Any], table: str, inputs: Sequence[dict[str, Any]]) -> float:
    """BatchCreatePartition of ``inputs``, 100 a call, from several threads; returns seconds."""
    chunks = [list(inputs[i:i + 100]) for i in range(0, len(inputs), 100)]
    return run_parallel(clients, chunks, lambda client, chunk: create_partitions(client, table, chunk))


def fetch(client: Any, table: str, expression: str) -> tuple[list[tuple[str, ...]], Optional[int]]:
    """Every partition GetPartitions returns (all pages) and the DynamoDB items read, if reported."""
    kwargs: dict[str, Any] = {"DatabaseName": DATABASE, "TableName": table, "Expression": expression}
    found: list[tuple[str, ...]] = []
    items: Optional[int] = None
    for _ in range(MAX_PAGES):
        response = client.get_partitions(**kwargs)
        found.extend(tuple(p["Values"]) for p in response["Partitions"])
        header = response["ResponseMetadata"]["HTTPHeaders"].get("x-glue-items-read")
        if header is not None:
            items = (items or 0) + int(header)
        if not response.get("NextToken"):
            return found, items
        kwargs["NextToken"] = response["NextToken"]
    raise RuntimeError(f"GetPartitions on {table} still had pages after {MAX_PAGES}")


# ------------------------------------------------------------------------------ measurement
@dataclass
class Case:
    """One way of answering one query; ``samples`` are wall-clock seconds per full answer
    (every page). ``call`` returns the partitions' values and the DynamoDB items read."""

    label: str
    expression: str
    call: Callable[[], tuple[list[tuple[str, ...]], Optional[int]]]
    samples: list[float] = field(default_factory=list)
    result: list[tuple[str, ...]] = field(default_factory=list)
    items_read: Optional[int] = None

    def run(self, record: bool = True) -> None:
        start = time.perf_counter()
        found, items = self.call()
        elapsed = time.perf_counter() - start
        if record:
            self.samples.append(elapsed)
        self.result, self.items_read = sorted(found), items

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def returned(self) -> int:
        return len(self.result)


def glue_case(label: str, client: Any, table: str, expression: str) -> Case:
    """GetPartitions(Expression) through boto3, following NextToken."""
    return Case(label, expression, lambda: fetch(client, table, expression))


def interleave(cases: Sequence[Case], runs: int, warmup: Sequence[Case] = ()) -> None:
    """Round-robin: every round runs each case once (order reversed every other round), so
    drift in machine speed hits all cases alike. ``warmup`` cases run twice first, unrecorded."""
    for _ in range(2):
        for case in warmup:
            case.run(record=False)
    for round_number in range(runs):
        for case in (cases if round_number % 2 == 0 else list(reversed(cases))):
            case.run()


def same_answer(cases: Sequence[Case]) -> None:
    """Every plan and every server must return the same partitions."""
    first = cases[0]
    for case in cases[1:]:
        if case.result != first.result:
            raise RuntimeError(f"{case.label} returned {case.returned} partitions, "
                               f"{first.label} returned {first.returned}: answers differ")


# -------------------------------------------------------------------- raw DynamoDB baseline
def query_all(ddb: Any, table_name: str, hash_name: str, hash_value: str, **extra: Any) -> list[dict[str, Any]]:
    """Every item under one hash key, as DynamoDB returns them (low-level attribute maps)."""
    kwargs: dict[str, Any] = {"TableName": table_name, "KeyConditionExpression": "#h = :h",
                              "ExpressionAttributeNames": {"#h": hash_name},
                              "ExpressionAttributeValues": {":h": {"S": hash_value}}}
    for name, value in extra.items():
        kwargs[name] = {**kwargs[name], **value} if isinstance(value, dict) and name in kwargs else value
    items: list[dict[str, Any]] = []
    for _ in range(MAX_PAGES):
        page = ddb.query(**kwargs)
        items.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    raise RuntimeError("query did not end")


def table_record(ddb: Any, prefix: str, table: str) -> dict[str, Any]:
    """The service's DynamoDB item for a Glue table (its uid and index definitions)."""
    kwargs: dict[str, Any] = {"TableName": prefix + "tables", "FilterExpression": "#n = :n",
                              "ExpressionAttributeNames": {"#n": "name"},
                              "ExpressionAttributeValues": {":n": {"S": table}}}
    for _ in range(MAX_PAGES):
        page = ddb.scan(**kwargs)
        if page["Items"]:
            return page["Items"][0]
        if "LastEvaluatedKey" not in page:
            break
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    raise RuntimeError(f"no item for table {table} in {prefix}tables")


def index_uids(record: dict[str, Any]) -> list[str]:
    """The uids of a table's partition indexes, in definition order."""
    return [index["uid"] for index in json.loads(record.get("indexes", {}).get("S") or "[]")]


def entry_bounds(ddb: Any, prefix: str, index_uid: str, triple: tuple[str, str, int]) -> tuple[str, str]:
    """The first and last sort key of the index entries of one (country, category, year)."""
    entries = query_all(
        ddb, prefix + "partition_index_entries", "index_uid", index_uid,
        FilterExpression="#v[0] = :c AND #v[1] = :k AND #v[2] = :y", ProjectionExpression="#k",
        ExpressionAttributeNames={"#v": "values", "#k": "key"},
        ExpressionAttributeValues={":c": {"S": triple[0]}, ":k": {"S": triple[1]}, ":y": {"S": str(triple[2])}})
    keys = sorted(entry["key"]["S"] for entry in entries)
    if not keys:
        raise RuntimeError(f"no index entries for {triple}")
    return keys[0], keys[-1]


def direct_query(ddb: Any, prefix: str, index_uid: str, low: str, high: str) -> Callable[[], Any]:
    """A DynamoDB Query of one index-entry key range through boto3, straight to DynamoDB Local
    (consistent reads, like the service): the floor under the service's indexed read."""
    def call() -> tuple[list[tuple[str, ...]], int]:
        items = query_all(ddb, prefix + "partition_index_entries", "index_uid", index_uid,
                          KeyConditionExpression="#h = :h AND #k BETWEEN :lo AND :hi", ConsistentRead=True,
                          ExpressionAttributeNames={"#k": "key"},
                          ExpressionAttributeValues={":lo": {"S": low}, ":hi": {"S": high}})
        return [tuple(v["S"] for v in item["values"]["L"]) for item in items], len(items)
    return call


Group = list[tuple[str, dict[str, Any]]]  # one partition: [(DynamoDB table, item)], partition item first


def stored_items(ddb: Any, prefix: str, record: dict[str, Any]) -> list[Group]:
    """What the service stored for a Glue table: per partition, its item and its index entries."""
    partitions = query_all(ddb, prefix + "partitions", "table_uid", record["uid"]["S"])
    groups = {item["key"]["S"]: [(prefix + "partitions", item)] for item in partitions}
    for uid in index_uids(record):
        for entry in query_all(ddb, prefix + "partition_index_entries", "index_uid", uid):
            groups[entry["partition_key"]["S"]].append((prefix + "partition_index_entries", entry))
    return list(groups.values())


def renamed(item: dict[str, Any], tag: str) -> dict[str, Any]:
    """The item under a new hash key (the partition table's or the index's uid, prefixed)."""
    return {k: ({"S": tag + v["S"]} if k in ("table_uid", "index_uid") else v) for k, v in item.items()}


def write_batches(clients: Sequence[Any], groups: Sequence[Group], tag: str) -> float:
    """BatchWriteItem (25 items a call) of the same items under new hash keys; returns seconds."""
    flat = [(name, renamed(item, tag)) for group in groups for name, item in group]
    batches = []
    for start in range(0, len(flat), 25):
        request: dict[str, list[dict[str, Any]]] = {}
        for name, item in flat[start:start + 25]:
            request.setdefault(name, []).append({"PutRequest": {"Item": item}})
        batches.append(request)

    def work(client: Any, request: dict[str, Any]) -> None:
        for _ in range(50):
            request = client.batch_write_item(RequestItems=request).get("UnprocessedItems") or {}
            if not request:
                return
            time.sleep(0.01)
        raise RuntimeError("BatchWriteItem kept leaving items unprocessed")

    return run_parallel(clients, batches, work)


def write_transactions(clients: Sequence[Any], groups: Sequence[Group], tag: str, prefix: str,
                       record: dict[str, Any]) -> float:
    """TransactWriteItems of the same items, grouped as the service groups them: up to 100
    actions, one check that the table is unchanged, each partition put only if absent."""
    check_values = {":u": record["uid"]}
    condition = "#u = :u"
    if "index_epoch" in record:
        check_values[":e"] = record["index_epoch"]
        condition += " AND #e = :e"
    check = {"ConditionCheck": {
        "TableName": prefix + "tables", "Key": {"db_uid": record["db_uid"], "name": record["name"]},
        "ConditionExpression": condition, "ExpressionAttributeValues": check_values,
        "ExpressionAttributeNames": {"#u": "uid", **({"#e": "index_epoch"} if ":e" in check_values else {})}}}
    transactions, current = [], [check]
    for group in groups:
        actions = []
        for position, (name, item) in enumerate(group):
            put: dict[str, Any] = {"TableName": name, "Item": renamed(item, tag)}
            if position == 0:
                put.update(ConditionExpression="attribute_not_exists(#k)", ExpressionAttributeNames={"#k": "key"})
            actions.append({"Put": put})
        if len(current) + len(actions) > 100:
            transactions.append(current)
            current = [check]
        current.extend(actions)
    transactions.append(current)
    return run_parallel(clients, transactions, lambda client, items: client.transact_write_items(TransactItems=items))


# ------------------------------------------------------------------------------------- moto
class MotoServer:
    """``python -m moto.server`` on 127.0.0.1 as a child process."""

    def __init__(self, log_path: Path):
        self.port = free_port()
        self.log_path = log_path
        self.process: Optional[subprocess.Popen[bytes]] = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "MotoServer":
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, preexec_fn=PREEXEC)
        wait_for_port(self.port, self.process)
        return self

    def stop(self) -> None:
        stop_process(self.process)
        self.process = None


# ------------------------------------------------------------------------------------ report
def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms" if seconds < 10 else f"{seconds:,.1f} s"


def size_label(size: int) -> str:
    if size >= 1_000_000 and size % 1_000_000 == 0:
        return f"{size // 1_000_000}M"
    return f"{size // 1000}k" if size >= 1000 and size % 1000 == 0 else str(size)


class Report(common.Report):
    """The checks, then one row per measured case."""

    def __init__(self) -> None:
        super().__init__(["Size", "Case", "Expression", "Median", "Min (ms)", "Runs", "Returned",
                          "DynamoDB items read"])

    def case(self, size: int, case: Case, runs: Optional[int] = None) -> None:
        items = "-" if case.items_read is None else f"{case.items_read:,}"
        self.tables[0][1].append((size_label(size), case.label, f"`{case.expression}`", ms(case.median),
                                 f"{min(case.samples) * 1000:,.1f}", str(len(case.samples)),
                                 f"{case.returned:,}", items))


# -------------------------------------------------------------------------------------- main
def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", help="partition counts, comma-separated (default 10000,100000; "
                                        "quick: 1000,5000)")
    parser.add_argument("--quick", action="store_true", help="small tables and few runs: a smoke run")
    parser.add_argument("--runs", type=int, help="runs per case, selective query (default 30; quick 8)")
    parser.add_argument("--scan-runs", type=int, help="runs per case, key ranges vs full scan (default 3; "
                                                     "a scan of 100k partitions takes seconds)")
    parser.add_argument("--threads", type=int, default=4, help="client threads for loading (default 4)")
    parser.add_argument("--write-partitions", type=int,
                        help="partitions per throughput run (default 10000; quick 1000)")
    parser.add_argument("--write-rounds", type=int, help="throughput rounds (default 2; quick 1)")
    parser.add_argument("--no-moto", action="store_true", help="skip the moto baseline")
    parser.add_argument("--log-dir", type=Path, help="keep DynamoDB Local / server / moto logs here")
    args = parser.parse_args(argv)
    quick = args.quick
    args.sizes = sorted(int(s.replace("_", "")) for s in (args.sizes or ("1000,5000" if quick else "10000,100000")).split(","))
    if len(args.sizes) < 2 or args.sizes[0] < len(PINNED) * PER_TRIPLE:
        parser.error(f"--sizes needs two sizes or more, each at least {len(PINNED) * PER_TRIPLE}")
    args.runs = args.runs or (8 if quick else 30)
    args.scan_runs = args.scan_runs or 3
    args.write_partitions = args.write_partitions or (1000 if quick else 10000)
    args.write_rounds = args.write_rounds or (1 if quick else 2)
    return args


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Build the tables, measure, print the tables."""
    args = parse_args(argv)
    command = common.command_line("bench_partitions", argv)
    env = (f"{common.machine()}, boto3 {boto3.__version__}; service and DynamoDB Local "
           f"(in memory) and moto each in their own process; {args.threads} loader threads")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-partitions-") as tmp:
        log_dir = args.log_dir or Path(tmp)
        log_dir.mkdir(parents=True, exist_ok=True)
        stack = CatalogStack(log_dir=log_dir)
        moto = None if args.no_moto else MotoServer(log_dir / "moto.log")
        report = Report()
        try:
            log(f"starting DynamoDB Local + service{'' if moto is None else ' + moto'} (logs in {log_dir})")
            stack.start()
            if moto is not None:
                moto.start()
            run(args, stack, moto, report)
        finally:
            stack.stop()
            if moto is not None:
                moto.stop()
    report.notes.append(f"Whole run: {time.perf_counter() - started:,.0f} s.")
    report.print(command, env)


def run(args: argparse.Namespace, stack: CatalogStack, moto: Optional[MotoServer], report: Report) -> None:
    """Every measurement; fills ``report``."""
    sizes: list[int] = args.sizes
    ours = [make_client("glue", stack.endpoint, args.threads) for _ in range(args.threads)]
    glue = ours[0]
    ddb = [make_client("dynamodb", stack.ddb_endpoint, args.threads, access_key=stack.ddb_access_key_id)
           for _ in range(args.threads)]
    prefix = stack.table_prefix
    glue.create_database(DatabaseInput={"Name": DATABASE})
    theirs: list[Any] = []
    if moto is not None:
        theirs = [make_client("glue", moto.endpoint, args.threads) for _ in range(args.threads)]
        theirs[0].create_database(DatabaseInput={"Name": DATABASE})

    # ---- build the query tables
    tables = {size: f"sales_{size_label(size)}" for size in sizes}
    for size in sizes:
        table = tables[size]
        inputs = [partition_input(v) for v in layout(size)]
        glue.create_table(DatabaseName=DATABASE, TableInput=table_input(table), PartitionIndexes=[QUERY_INDEX])
        statuses = [i["IndexStatus"] for i in glue.get_partition_indexes(
            DatabaseName=DATABASE, TableName=table)["PartitionIndexDescriptorList"]]
        if statuses != ["ACTIVE"]:
            raise RuntimeError(f"index of {table} is {statuses}, not ACTIVE")
        log(f"loading {size:,} partitions into the service ({table})")
        seconds = load(ours, table, inputs)
        line = f"Loading {size:,} partitions (BatchCreatePartition, 100 a call, {args.threads} threads): " \
               f"service {seconds:,.1f} s ({size / seconds:,.0f}/s, 1 index)"
        if moto is not None:
            log(f"loading {size:,} partitions into moto")
            theirs[0].create_table(DatabaseName=DATABASE, TableInput=table_input(table))
            moto_seconds = load(theirs, table, inputs)
            line += f", moto {moto_seconds:,.1f} s ({size / moto_seconds:,.0f}/s)"
        report.notes.append(line + ".")
    small, large = sizes[0], sizes[-1]

    # ---- selective indexed query: flat in table size? cheap in items? versus moto and raw DynamoDB
    index_of = {size: index_uids(table_record(ddb[0], prefix, tables[size]))[0] for size in sizes}
    # Entry keys depend only on the partition values, so one table's bounds fit every table.
    low, high = entry_bounds(ddb[0], prefix, index_of[small], PINNED[0])
    cases: dict[str, dict[int, Case]] = {"service": {}, "dynamodb": {}, "moto": {}}
    for size in sizes:
        cases["service"][size] = glue_case(f"service, {size_label(size)}", glue, tables[size], SELECTIVE)
        cases["dynamodb"][size] = Case(f"DynamoDB Query straight, {size_label(size)}",
                                       "the same entries' key range, boto3 → DynamoDB Local",
                                       direct_query(ddb[0], prefix, index_of[size], low, high))
        if moto is not None:
            cases["moto"][size] = glue_case(f"moto, {size_label(size)}", theirs[0], tables[size], SELECTIVE)
    every = [case for by_size in cases.values() for case in by_size.values()]
    log(f"selective query: service, moto, DynamoDB straight; {args.runs} interleaved runs per case")
    interleave(every, args.runs, warmup=every)
    for size in sizes:
        same_answer([by_size[size] for by_size in cases.values() if size in by_size])
        for by_size in cases.values():
            if size in by_size:
                report.case(size, by_size[size])
    service = cases["service"]
    for size in sizes[1:]:
        ratio = service[size].median / service[small].median
        report.check(f"Selective indexed GetPartitions ({service[small].returned} matches), "
                     f"median latency {size_label(size)} ÷ {size_label(small)}",
                     f"{ratio:.2f} ({ms(service[size].median)} ÷ {ms(service[small].median)})",
                     "≤ 1.5", ratio <= 1.5)
    for size in sizes:
        case = service[size]
        if case.items_read is None:
            report.check(f"DynamoDB items read ÷ partitions returned, {size_label(size)}",
                         "no x-glue-items-read header", "≤ 1.2", False)
            continue
        ratio = case.items_read / case.returned
        report.check(f"DynamoDB items read ÷ partitions returned, {size_label(size)}",
                     f"{ratio:.2f} ({case.items_read} ÷ {case.returned})", "≤ 1.2", ratio <= 1.2)
    for size, other in cases["moto"].items():
        speedup = other.median / service[size].median
        report.check(f"Same query on moto's Glue server ÷ on the service, {size_label(size)}",
                     f"{speedup:,.1f}× ({ms(other.median)} ÷ {ms(service[size].median)})",
                     "≥ 20× at 100k" if size == large else "-", speedup >= 20 if size == large else None)
    raw = cases["dynamodb"][large]
    report.check(f"Service ÷ a straight DynamoDB Query of the same {raw.returned} index entries, "
                 f"{size_label(large)} (diagnosis: the service's own overhead)",
                 f"{service[large].median / raw.median:.1f}× ({ms(service[large].median)} ÷ {ms(raw.median)})",
                 "-", None)

    # ---- several key ranges vs the full-scan plan of the same query
    log(f"IN / OR queries, key ranges vs scan, {args.scan_runs} interleaved runs per case")
    for name, expression in (("IN", IN_QUERY), ("OR", OR_QUERY)):
        pairs = {size: (glue_case(f"service, {name}, key ranges", glue, tables[size], expression),
                        glue_case(f"service, {name}, forced scan", glue, tables[size], f"({expression}){SCAN_SUFFIX}"))
                 for size in sizes}
        interleave([case for pair in pairs.values() for case in pair], args.scan_runs,
                   warmup=[ranged for ranged, _ in pairs.values()])
        for size, (ranged, scanned) in pairs.items():
            same_answer([ranged, scanned])
            report.case(size, ranged)
            report.case(size, scanned)
            if ranged.items_read is None or scanned.items_read is None:
                continue
            report.check(f"{name} query ({ranged.returned} matches), full-scan plan ÷ key-range plan, "
                         f"{size_label(size)}: latency; items read",
                         f"{scanned.median / ranged.median:,.0f}× ({ms(scanned.median)} ÷ {ms(ranged.median)}); "
                         f"{scanned.items_read / ranged.items_read:,.0f}× "
                         f"({scanned.items_read:,} ÷ {ranged.items_read:,})",
                         "report", None)
    report.notes.append(
        "Full-scan plan: the same expression with `OR day IS NULL` appended. No stored partition "
        "lacks a value, so it matches the same partitions (checked: identical answers), but that "
        "alternative pins no leading key of any index, so the planner can only scan the table "
        "(the plan Glue itself uses whenever IN or OR appears).")

    # ---- write throughput vs raw BatchWriteItem of the same items
    throughput(args, stack, ours, ddb, report)

    # ---- the rows of issue #16, on the same tables and stack
    issue16(args, stack, moto, report, tables, ours, ddb[0], theirs[0] if theirs else None)


def _cell(rows: Sequence[Sequence[str]], case: str, column: int, size: str) -> Optional[float]:
    """A number from a detail table row (size label first, case second); None if absent."""
    for row in rows:
        if row[0] == size and row[1] == case and row[column] not in ("-", ""):
            return float(row[column].rstrip("×s").replace(",", ""))
    return None


def issue16(args: argparse.Namespace, stack: CatalogStack, moto: Optional[MotoServer], report: Report,
            tables: dict[int, str], ours: Sequence[Any], ddb: Any, moto_glue: Optional[Any]) -> None:
    """Issue #16's table, every row: the unindexed query against moto and a read of every
    partition, a full scan's cost per partition examined against a raw DynamoDB read and the
    longest request, the service's own overhead on an indexed query, table writes from 1 and 8
    threads, Segment listings, and server CPU per 10,000 partitions written."""
    # Imported here: these modules import this one.
    from bench import bench_overhead, bench_scan, bench_scan_cost, bench_table_writes, bench_write_cpu

    small, large = min(tables), max(tables)
    glue = ours[0]
    plain = stack.extra_server(bench_scan.NO_DIGEST, name="no-digest").start()
    try:
        plain_clients = [make_client("glue", plain.endpoint, 10) for _ in range(10)]
        log("issue #16: unindexed query (digest, no digest, moto, raw Query)")
        unindexed = bench_scan.unindexed_rows(stack, glue, plain_clients[0], moto_glue, ddb, tables, args.scan_runs)
        report.tables.append((bench_scan.UNINDEXED_HEADER, [tuple(row) for row in unindexed]))
        label = size_label(large)
        # From the medians, not the rounded "÷ moto" cell (0.07 read back as 14.3× for 13.6×).
        medians = {row[1]: row[2] for row in unindexed if row[0] == label}
        if "moto" in medians:
            ours, theirs = medians["service, digest"], medians["moto"]
            vs_moto = bench_scan.seconds_of(theirs) / bench_scan.seconds_of(ours)
            report.check(f"Unindexed GetPartitions (192 matches), {label}: moto's time ÷ the service's",
                         f"{vs_moto:,.1f}× ({theirs} ÷ {ours})", "≥ 1×", vs_moto >= 1)
        log("issue #16: full-scan cost per partition examined, longest request")
        bench_scan_cost.scan_cost(report, glue, ddb, stack.table_prefix, tables, args.scan_runs)
        log("issue #16: indexed query overhead")
        bench_overhead.measure_overhead(report, glue, ddb, stack.table_prefix, tables[large], args.runs,
                                        stack.server.process.pid,
                                        stack.dynamodb.process.pid if stack.dynamodb else None,
                                        warmup=20 if args.quick else 200)
        log("issue #16: table writes, 1 and 8 threads")
        bench_table_writes.table_writes(stack.endpoint, report, tables=60 if args.quick else 150,
                                        rounds=1 if args.quick else 2, threads=8,
                                        pids=(stack.server.process.pid,
                                              stack.dynamodb.process.pid if stack.dynamodb else None),
                                        direct=bench_table_writes.Direct(stack.ddb_endpoint, stack.ddb_access_key_id,
                                                                         stack.table_prefix, 8))
        log("issue #16: Segment listings")
        segment_clients = [make_client("glue", stack.endpoint, 10) for _ in range(10)]
        segments = bench_scan.segment_rows(segment_clients, plain_clients, tables[small], small, args.scan_runs)
        report.tables.append((bench_scan.SEGMENT_HEADER, [tuple(row) for row in segments]))
        four = _cell([[row[0], row[1] + row[2], *row[2:]] for row in segments], "service, digest4", 4, f"{small:,}")
        if four is not None:
            # "Where cores allow": the same work split in four finishes at best cores ÷ busy times
            # sooner, busy being the cores one Segment keeps busy (as bench_table_writes prints
            # for threads). Below 2, a 2× speed-up is out of reach; then items per segment is
            # the measure (the row above).
            cores = os.cpu_count() or 1
            busy = bench_scan.cores_busy(segment_clients[0], tables[small],
                                         (stack.server.process.pid if stack.server.process else None,
                                          stack.dynamodb.process.pid if stack.dynamodb and stack.dynamodb.process
                                          else None))
            ceiling = cores / busy if busy > 0 else float("inf")
            allow = ceiling >= 2
            report.check(f"Full listing of {small:,} partitions in 1 Segment: cores kept busy (service + "
                         f"DynamoDB Local + client CPU ÷ wall)", f"{busy:.2f} of {cores}: no number of Segments "
                         f"can go past {ceiling:.2f}× its speed", "report", None)
            report.check(f"Full listing of {small:,} partitions, 4 Segments ÷ 1 Segment (wall time, digest)",
                         f"{four:.2f}" + ("" if allow else f" (cores don't allow a 2× speed-up: at most "
                                                          f"{ceiling:.2f}×)"),
                         "≤ 0.5 (4 segments ≥ 2× faster) where cores allow", four <= 0.5 or not allow)
    finally:
        plain.stop()
    log("issue #16: server CPU per 10,000 partitions written")
    cpu = bench_write_cpu.write_cpu(stack, 2_000 if args.quick else 10_000, args.threads,
                                    repeats=1 if args.quick else 3)
    target = bench_write_cpu.TARGET_CPU_SECONDS
    for indexes, figures in cpu.items():
        report.check(f"Server CPU per 10,000 partitions written (BatchCreatePartition), {indexes} indexes, "
                     f"{args.threads} client threads (median)",
                     f"{figures['server']:.2f} CPU-s [{figures['server_low']:.2f}–{figures['server_high']:.2f}] "
                     f"(DynamoDB Local {figures['dynamodb']:.1f})", "report", None)
        judged = indexes == bench_write_cpu.JUDGED_INDEXES  # the issue's measure (bench_write_cpu)
        report.check(f"Same, one request at a time (as one Lambda instance serves them), {indexes} indexes",
                     f"{figures['serial']:.2f} CPU-s [{figures['serial_low']:.2f}–{figures['serial_high']:.2f}]",
                     f"≤ {target:g} CPU-s" if judged else "report", figures["serial"] <= target if judged else None)


def throughput(args: argparse.Namespace, stack: CatalogStack, ours: Sequence[Any], ddb: Sequence[Any],
               report: Report) -> None:
    """BatchCreatePartition (0 and 3 indexes) vs BatchWriteItem / TransactWriteItems of the
    very items it stored, into the same DynamoDB tables."""
    n = args.write_partitions
    prefix = stack.table_prefix
    inputs = [partition_input(v) for v in layout(n, seed=99)]
    seconds = {(way, indexes): 0.0 for way in ("service", "batch", "transact") for indexes in (0, 3)}
    per_partition = {indexes: 1 + indexes for indexes in (0, 3)}
    stored: dict[int, tuple[dict[str, Any], list[Group]]] = {}

    def through_service(round_number: int) -> None:
        for indexes in (0, 3):
            table = f"writes_{indexes}idx_r{round_number}"
            ours[0].create_table(DatabaseName=DATABASE, TableInput=table_input(table),
                                 PartitionIndexes=WRITE_INDEXES[:indexes])
            log(f"writes, round {round_number + 1}/{args.write_rounds}: BatchCreatePartition "
                f"{n:,} partitions, {indexes} indexes")
            seconds["service", indexes] += load(ours, table, inputs)
            record = table_record(ddb[0], prefix, table)
            groups = stored_items(ddb[0], prefix, record)
            if len(groups) != n or any(len(group) != per_partition[indexes] for group in groups):
                raise RuntimeError(f"{table}: {len(groups)} partitions stored, {n} sent")
            stored[indexes] = (record, groups)

    def straight(round_number: int) -> None:
        for indexes in (0, 3):
            record, groups = stored[indexes]
            log(f"writes, round {round_number + 1}/{args.write_rounds}: the same items straight, "
                f"{indexes} indexes")
            seconds["batch", indexes] += write_batches(ddb, groups, f"b{round_number}-")
            seconds["transact", indexes] += write_transactions(ddb, groups, f"t{round_number}-", prefix, record)

    # Whatever runs first after a table is created runs on colder DynamoDB Local code paths:
    # odd rounds go service first, even rounds straight first (with the items of the round
    # before, under new hash keys), so neither side always pays for it.
    for round_number in range(args.write_rounds):
        if round_number % 2 == 0:
            through_service(round_number)
            straight(round_number)
        else:
            straight(round_number)
            through_service(round_number)
    total = n * args.write_rounds
    rate = {key: total / value for key, value in seconds.items()}
    for indexes in (0, 3):
        mine, batch, transact = rate["service", indexes], rate["batch", indexes], rate["transact", indexes]
        report.check(f"BatchCreatePartition throughput, {indexes} indexes ÷ BatchWriteItem of the same "
                     f"{per_partition[indexes]} item(s) per partition",
                     f"{mine / batch:.2f} ({mine:,.0f} ÷ {batch:,.0f} partitions/s)", "≥ 0.6", mine / batch >= 0.6)
    for indexes in (0, 3):
        mine, batch, transact = rate["service", indexes], rate["batch", indexes], rate["transact", indexes]
        report.check(f"Diagnosis, {indexes} indexes: TransactWriteItems of the same items grouped as the "
                     f"service groups them ÷ BatchWriteItem; service ÷ TransactWriteItems",
                     f"{transact / batch:.2f} ({transact:,.0f} ÷ {batch:,.0f} partitions/s); "
                     f"{mine / transact:.2f}", "-", None)
    report.notes.append(
        f"Writes: {n:,} partitions a run, {args.write_rounds} round(s), {args.threads} client threads "
        f"on every side. BatchWriteItem (25 items a call) and TransactWriteItems (≤ 100 actions: a "
        f"table check, each partition put if absent, its entries) write exactly the items the "
        f"service stored (read back from DynamoDB, hash keys renamed) into the same DynamoDB tables.")


if __name__ == "__main__":
    main()
