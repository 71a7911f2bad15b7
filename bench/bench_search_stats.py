"""SearchTables and column statistics at catalog scale, measured in one run through boto3.

Builds a catalog of 100 databases on the service over DynamoDB Local: first 1,000 tables
(10 a database), then grows it to 10,000 (100 a database) in the same run. Tables have
realistic names, descriptions, 4-7 commented columns and parameters; a rare token is planted
in 5 tables (in their descriptions, and also in a name, a column comment, a parameter).
At each size it measures:

* SearchTables(SearchText=<rare token>), served by the postings index: median latency and
  DynamoDB items read per result (the service's ``x-glue-items-read`` header);
* the full-scan baseline, the same search without the index: SearchTables with no SearchText
  and a Filter (Description = the token), which reads every database and table item
  (counted by the same header) and returns the very same tables (checked);
* a client-side scan for scale: GetDatabases + GetTables of every database, filtered in the
  client (items = the databases and tables listed; GetTables' header does not count them).

Then column statistics: GetColumnStatisticsForTable / ForPartition for 100 columns, items
read per request and the number of DynamoDB Query pages behind it (checked on DynamoDB Local).

Machines are noisy: compared calls are interleaved round by round and compared as ratios of
figures from the same run.

Run: ``.venv/bin/python -m bench.bench_search_stats [--quick]``. ``--quick`` is a one-minute
smoke run (20 databases, 200 then 1,000 tables, few runs). Benchmarks are never tests.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import boto3
from botocore.config import Config

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from infra.local.stack import REGION, CatalogStack  # noqa: E402
from bench import common  # noqa: E402
from bench.common import log  # noqa: E402

RARE = "platypus"
RARE_TABLES = 5
ACCOUNT = "123456789012"  # the service's account for a non-numeric access key

DOMAINS = ["sales", "marketing", "finance", "logistics", "support", "hr", "product", "risk", "billing",
           "inventory"]
ZONES = ["raw", "curated", "analytics", "sandbox", "archive", "staging", "gold", "silver", "bronze", "ml"]
ENTITIES = ["orders", "customers", "invoices", "shipments", "sessions", "clicks", "payments", "refunds",
            "tickets", "products", "suppliers", "campaigns", "leads", "accounts", "subscriptions",
            "warehouses", "returns", "reviews", "employees", "contracts"]
QUALIFIERS = ["daily", "hourly", "snapshot", "agg", "history", "latest", "v2", "cdc", "dedup", "enriched"]
TOOLS = ["Airflow", "dbt", "Spark", "Glue ETL", "Kinesis Firehose", "Fivetran", "Flink"]
FORMATS = ["parquet", "orc", "json", "csv", "avro", "iceberg"]
COLUMN_POOL = [
    ("id", "bigint", "surrogate key"), ("customer_id", "bigint", "customer reference"),
    ("order_id", "bigint", "order reference"), ("amount", "decimal(12,2)", "amount in account currency"),
    ("currency", "string", "ISO 4217 code"), ("created_at", "timestamp", "creation time, UTC"),
    ("updated_at", "timestamp", "last change, UTC"), ("status", "string", "lifecycle state"),
    ("country", "string", "ISO 3166 country"), ("email", "string", "contact address, hashed"),
    ("quantity", "int", "units"), ("price", "double", "unit price"), ("is_active", "boolean", "soft delete flag"),
    ("channel", "string", "acquisition channel"), ("score", "double", "model score"),
    ("event_date", "date", "business date"), ("region", "string", "sales region"),
    ("sku", "string", "stock keeping unit"), ("discount", "decimal(5,2)", "discount rate"),
    ("notes", "string", "free text"),
]

_SPLIT = re.compile(r"[\W_]+", re.UNICODE)




# ------------------------------------------------------------------------------ catalog layout
def database_name(number: int) -> str:
    return f"{DOMAINS[number % len(DOMAINS)]}_{ZONES[(number // len(DOMAINS)) % len(ZONES)]}_{number:02d}"


def database_input(number: int) -> dict[str, Any]:
    domain, zone = DOMAINS[number % len(DOMAINS)], ZONES[(number // len(DOMAINS)) % len(ZONES)]
    return {"Name": database_name(number),
            "Description": f"{domain.title()} data, {zone} zone, owned by the {domain} platform team",
            "LocationUri": f"s3://lake-{domain}/{zone}/"}


def table_input(db_number: int, number: int, rare_slot: Optional[int]) -> dict[str, Any]:
    """A table as a crawler or a dbt model registers it; ``rare_slot`` plants the rare token."""
    rng = random.Random(db_number * 100_003 + number)
    domain = DOMAINS[db_number % len(DOMAINS)]
    entity, qualifier = rng.choice(ENTITIES), rng.choice(QUALIFIERS)
    name = f"{entity}_{qualifier}_{number:03d}"
    description = (f"{qualifier.title()} {entity} for the {domain} team, loaded by {rng.choice(TOOLS)} "
                   f"from the {rng.choice(ENTITIES)} source")
    columns = [{"Name": c, "Type": t, "Comment": comment}
               for c, t, comment in rng.sample(COLUMN_POOL, rng.randint(4, 7))]
    parameters = {"classification": rng.choice(FORMATS), "owner_team": domain,
                  "recordCount": str(rng.randint(1_000, 50_000_000))}
    if rare_slot is not None:
        description += f"; flagged by the {RARE} data-quality audit"
        if rare_slot == 1:
            name = f"{RARE}_{name}"
        elif rare_slot == 2:
            columns[0]["Comment"] = f"checked by {RARE}"
        elif rare_slot == 3:
            parameters["audit"] = f"{RARE}-2024"
    return {"Name": name, "Description": description, "TableType": "EXTERNAL_TABLE",
            "Parameters": parameters, "PartitionKeys": [{"Name": "dt", "Type": "date"}],
            "StorageDescriptor": {"Columns": columns, "Location": f"s3://lake-{domain}/{name}/",
                                  "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                                  "SerdeInfo": {"SerializationLibrary":
                                                "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"}}}


def rare_slots(databases: int) -> dict[tuple[int, int], int]:
    """(database, table number) -> slot for the tables that get the rare token; all of them
    among each database's first tables, so they exist at every size."""
    step = max(1, databases // RARE_TABLES)
    return {((i * step + 3) % databases, i % 3): i for i in range(RARE_TABLES)}


# ---------------------------------------------------------------------------------- clients
def make_client(endpoint: str, pool: int = 10) -> Any:
    """A boto3 Glue client; one attempt, so a failure shows instead of being retried."""
    return boto3.client("glue", endpoint_url=endpoint, region_name=REGION,
                        aws_access_key_id="testing", aws_secret_access_key="testing",
                        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}, connect_timeout=5,
                                      read_timeout=900, max_pool_connections=pool))


def run_parallel(endpoint: str, threads: int, jobs: Sequence[Callable[[Any], None]]) -> float:
    """Run ``jobs`` (each given a client) on ``threads`` threads, one client per thread."""
    local = threading.local()

    def run(job: Callable[[Any], None]) -> None:
        if not hasattr(local, "client"):
            local.client = make_client(endpoint)
        job(local.client)

    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        for future in [pool.submit(run, job) for job in jobs]:
            future.result()
    return time.perf_counter() - start


def items_read(response: dict[str, Any]) -> int:
    return int(response["ResponseMetadata"]["HTTPHeaders"]["x-glue-items-read"])


# ------------------------------------------------------------------------------ the searches
PAGE = 100


def search(glue: Any, **kwargs: Any) -> tuple[list[str], int]:
    """Every table of a SearchTables (all pages) and the items read."""
    found, items, token = [], 0, None
    while True:
        response = glue.search_tables(MaxResults=1000, **kwargs, **({"NextToken": token} if token else {}))
        found += [f"{t['DatabaseName']}.{t['Name']}" for t in response["TableList"]]
        items += items_read(response)
        token = response.get("NextToken")
        if not token:
            return sorted(found), items


def first_page(glue: Any, **kwargs: Any) -> tuple[list[str], int]:
    """The first page (100 tables) of a SearchTables without SearchText, and the items read (over
    every request it took: a request out of work budget answers an empty page and a NextToken)."""
    items, token = 0, None
    while True:
        response = glue.search_tables(MaxResults=PAGE, **kwargs, **({"NextToken": token} if token else {}))
        items += items_read(response)
        token = response.get("NextToken")
        if response["TableList"] or not token:
            return [f"{t['DatabaseName']}.{t['Name']}" for t in response["TableList"]], items


def _tokens(text: str) -> set[str]:
    return {t for t in _SPLIT.split(text.lower()) if t}


def _table_text(table: dict[str, Any], database: dict[str, Any]) -> set[str]:
    fields = [table["Name"], table.get("Description", ""), database["Name"], database.get("Description", "")]
    for column in (table.get("StorageDescriptor") or {}).get("Columns", []) + table.get("PartitionKeys", []):
        fields += [column["Name"], column.get("Comment", "")]
    for key, value in (table.get("Parameters") or {}).items():
        fields += [key, value]
    found: set[str] = set()
    for text in fields:
        found |= _tokens(text)
    return found


def client_scan(glue: Any, token: str) -> tuple[list[str], int]:
    """List every database and table and filter in the client. Items = databases + tables
    listed + the GetItem of its database each GetTables does."""
    found, items, kwargs = [], 0, {}
    while True:
        page = glue.get_databases(**kwargs)
        for database in page["DatabaseList"]:
            items += 1
            table_kwargs: dict[str, Any] = {"DatabaseName": database["Name"]}
            while True:
                tables = glue.get_tables(**table_kwargs)
                items += 1 + len(tables["TableList"])
                found += [f"{database['Name']}.{t['Name']}" for t in tables["TableList"]
                          if token in _table_text(t, database)]
                if not tables.get("NextToken"):
                    break
                table_kwargs["NextToken"] = tables["NextToken"]
        if not page.get("NextToken"):
            return sorted(found), items
        kwargs = {"NextToken": page["NextToken"]}


@dataclass
class Case:
    label: str
    call: Callable[[], tuple[list[str], int]]
    samples: list[float] = field(default_factory=list)
    result: list[str] = field(default_factory=list)
    items: int = 0

    def run(self, record: bool = True) -> None:
        start = time.perf_counter()
        self.result, self.items = self.call()
        if record:
            self.samples.append(time.perf_counter() - start)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)


def interleave(cases: Sequence[Case], runs: Sequence[int], warmup: int = 1) -> None:
    """Round-robin, order reversed every other round; case i runs ``runs[i]`` times."""
    for _ in range(warmup):
        for case in cases:
            case.run(record=False)
    for round_number in range(max(runs)):
        order = list(zip(cases, runs))
        for case, wanted in (order if round_number % 2 == 0 else order[::-1]):
            if round_number < wanted:
                case.run()


# ------------------------------------------------------------------------------------ report
def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms" if seconds < 10 else f"{seconds:,.1f} s"


class Report(common.Report):
    """The checks, then the search cases, then the column statistics calls."""

    def __init__(self) -> None:
        super().__init__(["Tables", "Case", "Median", "Min (ms)", "Runs", "Results", "Items read", "Items / result"],
                         ["Column statistics call", "Columns", "Median", "Items read", "DynamoDB calls per request"])

    @property
    def stats_rows(self) -> list[tuple[str, ...]]:
        return self.tables[1][1]

    def case(self, size: int, case: Case) -> None:
        per = f"{case.items / len(case.result):,.1f}" if case.result else "-"
        self.tables[0][1].append((f"{size:,}", case.label, ms(case.median), f"{min(case.samples) * 1000:,.1f}",
                                  str(len(case.samples)), str(len(case.result)), f"{case.items:,}", per))


# ------------------------------------------------------------------------------ main
def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one-minute smoke run: small catalog, few runs")
    parser.add_argument("--databases", type=int, help="databases (default 100; quick 20)")
    parser.add_argument("--sizes", help="table counts, comma-separated, growing (default 1000,10000; quick 200,1000)")
    parser.add_argument("--runs", type=int, help="indexed search runs per size (default 40; quick 10)")
    parser.add_argument("--scan-runs", type=int, help="full-scan runs per size (default 5; quick 2)")
    parser.add_argument("--threads", type=int, default=8, help="client threads creating tables (default 8)")
    parser.add_argument("--log-dir", type=Path, help="keep DynamoDB Local / server logs here")
    args = parser.parse_args(argv)
    args.databases = args.databases or (20 if args.quick else 100)
    args.sizes = [int(s.replace("_", "")) for s in (args.sizes or ("200,1000" if args.quick else "1000,10000")).split(",")]
    if args.sizes != sorted(args.sizes) or len(args.sizes) < 2:
        parser.error("--sizes: two or more growing sizes")
    if any(size % args.databases for size in args.sizes) or args.sizes[0] < args.databases * 3:
        parser.error("--sizes: each a multiple of --databases, the first at least 3 tables a database")
    args.runs = args.runs or (10 if args.quick else 40)
    args.scan_runs = args.scan_runs or (2 if args.quick else 5)
    return args


def main(argv: Optional[Sequence[str]] = None) -> None:
    args = parse_args(argv)
    command = common.command_line("bench_search_stats", argv)
    env = (f"{common.machine()}, boto3 {boto3.__version__}; service and DynamoDB Local "
           f"(in memory) in their own processes; {args.threads} loader threads; "
           f"load average at start {os.getloadavg()[0]:.1f}")
    started = time.perf_counter()
    report = Report()
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        log_dir = args.log_dir or Path(tmp)
        log_dir.mkdir(parents=True, exist_ok=True)
        stack = CatalogStack(log_dir=log_dir)
        log(f"starting DynamoDB Local + service (logs in {log_dir})")
        with stack:
            run(args, stack, report)
    report.notes.append(f"Whole run: {time.perf_counter() - started:,.0f} s.")
    report.print(command, env)


def run(args: argparse.Namespace, stack: CatalogStack, report: Report) -> None:
    glue = make_client(stack.endpoint)
    databases = args.databases
    run_parallel(stack.endpoint, args.threads,
                 [lambda c, n=n: c.create_database(DatabaseInput=database_input(n)) for n in range(databases)])
    slots = rare_slots(databases)
    expected: list[str] = []
    by_size: dict[int, dict[str, Case]] = {}
    created = 0
    for size in args.sizes:
        per_db_from, per_db_to = created // databases, size // databases
        jobs = []
        for number in range(per_db_from, per_db_to):
            for db in range(databases):
                slot = slots.get((db, number))
                table = table_input(db, number, slot)
                if slot is not None:
                    expected.append(f"{database_name(db)}.{table['Name']}")
                jobs.append(lambda c, db=db, table=table: c.create_table(DatabaseName=database_name(db),
                                                                          TableInput=table))
        log(f"creating tables {created:,} -> {size:,} on {args.threads} threads")
        seconds = run_parallel(stack.endpoint, args.threads, jobs)
        report.notes.append(f"CreateTable {created:,} -> {size:,}: {len(jobs):,} tables in {seconds:,.1f} s "
                            f"({len(jobs) / seconds:,.0f} tables/s on {args.threads} threads).")
        created = size
        log(f"measuring at {size:,} tables")
        cases = {
            "indexed": Case(f"SearchTables SearchText=`{RARE}` (postings index)",
                            lambda: search(glue, SearchText=RARE)),
            "scan": Case(f"full scan: SearchTables, no SearchText, Filter Description=`{RARE}`",
                         lambda: search(glue, Filters=[{"Key": "Description", "Value": RARE}])),
            "mixed": Case(f"SearchTables SearchText=`{RARE} team` (rare + a token every table has)",
                          lambda: search(glue, SearchText=f"{RARE} team")),
            "client": Case("client-side scan: GetDatabases + GetTables, filtered in the client",
                           lambda: client_scan(glue, RARE)),
        }
        pages = {
            "page": Case(f"first page of {PAGE}, no SearchText, default order (database, table name)",
                         lambda: first_page(glue)),
            "page_by_name": Case(f"first page of {PAGE}, no SearchText, SortCriteria Name ASC",
                                 lambda: first_page(glue, SortCriteria=[{"FieldName": "Name", "Sort": "ASC"}])),
            "page_by_time": Case(f"first page of {PAGE}, no SearchText, SortCriteria UpdateTime DESC",
                                 lambda: first_page(glue, SortCriteria=[{"FieldName": "UpdateTime", "Sort": "DESC"}])),
        }
        for _ in range(3):  # connection pool, server caches: not what is measured
            cases["indexed"].run(record=False)
        interleave([cases["indexed"], cases["scan"], cases["mixed"]], [args.runs, args.scan_runs, args.scan_runs])
        interleave([cases["client"]], [max(1, args.scan_runs // 2)], warmup=0)
        interleave([pages["page"], pages["page_by_name"], pages["page_by_time"]],
                   [args.runs, args.runs, args.scan_runs])
        for case in cases.values():
            if case.result != sorted(expected):
                raise RuntimeError(f"{case.label} at {size:,} tables returned {case.result}, "
                                   f"expected {sorted(expected)}")
            report.case(size, case)
        for case in pages.values():
            if len(case.result) != PAGE:
                raise RuntimeError(f"{case.label} at {size:,} tables returned {len(case.result)} tables")
            report.case(size, case)
        by_size[size] = {**cases, **pages}

    small, large = args.sizes[0], args.sizes[-1]
    indexed, scan = by_size[large]["indexed"], by_size[large]["scan"]
    fewer = scan.items / indexed.items
    report.check(f"Items read, full scan ÷ indexed search, {large:,} tables",
                 f"{fewer:,.0f}× ({scan.items:,} vs {indexed.items:,} for {len(indexed.result)} results)",
                 "≥ 10×", fewer >= 10)
    flat = indexed.median / by_size[small]["indexed"].median
    report.check(f"Indexed search median latency, {large:,} ÷ {small:,} tables",
                 f"{flat:.2f} ({ms(indexed.median)} vs {ms(by_size[small]['indexed'].median)})",
                 "flat (≤ 1.5)", flat <= 1.5)
    scan_growth = scan.median / by_size[small]["scan"].median
    report.check(f"Full-scan median latency, {large:,} ÷ {small:,} tables (for contrast)",
                 f"{scan_growth:.2f}", "-", None)
    items_flat = indexed.items / by_size[small]["indexed"].items
    report.check(f"Indexed search items read, {large:,} ÷ {small:,} tables", f"{items_flat:.2f}", "flat (1.0)",
                 items_flat <= 1.2)
    report.check(f"Indexed search items read per result, {large:,} tables",
                 f"{indexed.items / len(indexed.result):.1f}", "≤ 3 + 3/results",
                 indexed.items <= 3 * len(indexed.result) + 3)
    report.notes.append(
        "Full-scan baseline = SearchTables without SearchText and with a Filter (Description = the token, "
        "which all planted tables carry): the same search answered by reading every database and table "
        "item, counted by the service's x-glue-items-read header; it returns exactly the indexed "
        "search's tables (checked). The client-side scan lists every database and table through "
        "GetDatabases/GetTables and filters them in the client; its items are counted as databases + "
        "tables listed + one GetItem per GetTables page, because GetTables' header counts only the "
        "database GetItem (the Query items of listings are not counted by the service).")
    page_growth = by_size[large]["page"].median / by_size[small]["page"].median
    report.check(f"First page of {PAGE} tables (no SearchText, default order), median latency, {large:,} ÷ {small:,} "
                 f"tables", f"{page_growth:.2f} ({ms(by_size[large]['page'].median)} vs "
                 f"{ms(by_size[small]['page'].median)}; items read {by_size[large]['page'].items:,} vs "
                 f"{by_size[small]['page'].items:,})", "flat (≤ 1.5)", page_growth <= 1.5)
    by_name = by_size[large]["page_by_name"].median / by_size[small]["page_by_name"].median
    report.check(f"The same first page sorted by Name (each database's tables merged), median latency, "
                 f"{large:,} ÷ {small:,} tables", f"{by_name:.2f} ({ms(by_size[large]['page_by_name'].median)} vs "
                 f"{ms(by_size[small]['page_by_name'].median)}; items read {by_size[large]['page_by_name'].items:,} "
                 f"vs {by_size[small]['page_by_name'].items:,})", "flat (≤ 1.5)", by_name <= 1.5)
    by_time = by_size[large]["page_by_time"].median / by_size[small]["page_by_time"].median
    report.check(f"The same first page sorted by UpdateTime, {large:,} ÷ {small:,} tables (for contrast: every "
                 f"table is examined before the first page, over as many requests as the work budget needs)",
                 f"{by_time:.2f} ({ms(by_size[large]['page_by_time'].median)}, "
                 f"{by_size[large]['page_by_time'].items:,} items read)", "-", None)
    mixed = by_size[large]["mixed"]
    report.notes.append(
        f"Informational: a rare token together with a common one (`{RARE} team`; 'team' is in every "
        f"table's and every database's description) reads {mixed.items:,} items at {large:,} tables: "
        f"each token's postings are read in rounds and the first token to run out (the rarest) picks the "
        f"candidates, so the common word costs about as much as the rare one.")
    column_statistics(args, stack, glue, report)


def column_statistics(args: argparse.Namespace, stack: CatalogStack, glue: Any, report: Report) -> None:
    """Get for 100 columns: items read per request, and DynamoDB Query pages behind it."""
    log("column statistics")
    db, table = "stats_bench", "wide_events"
    columns = [{"Name": f"metric_{i:03d}", "Type": "bigint", "Comment": f"counter {i}"} for i in range(100)]
    glue.create_database(DatabaseInput={"Name": db})
    glue.create_table(DatabaseName=db, TableInput={
        "Name": table, "PartitionKeys": [{"Name": "dt", "Type": "date"}],
        "StorageDescriptor": {"Columns": columns, "Location": "s3://lake/wide_events/"}})
    glue.create_partition(DatabaseName=db, TableName=table, PartitionInput={
        "Values": ["2024-05-01"], "StorageDescriptor": {"Columns": columns, "Location": "s3://lake/wide_events/dt=2024-05-01/"}})
    analyzed = time.time()
    entries = [{"ColumnName": c["Name"], "ColumnType": "bigint", "AnalyzedTime": analyzed,
                "StatisticsData": {"Type": "LONG", "LongColumnStatisticsData": {
                    "MinimumValue": -i, "MaximumValue": i * 1000, "NumberOfNulls": i, "NumberOfDistinctValues": i + 1}}}
               for i, c in enumerate(columns)]
    for start in range(0, 100, 25):
        chunk = entries[start:start + 25]
        for errors in (glue.update_column_statistics_for_table(DatabaseName=db, TableName=table,
                                                               ColumnStatisticsList=chunk)["Errors"],
                       glue.update_column_statistics_for_partition(DatabaseName=db, TableName=table,
                                                                   PartitionValues=["2024-05-01"],
                                                                   ColumnStatisticsList=chunk)["Errors"]):
            if errors:
                raise RuntimeError(f"UpdateColumnStatistics: {errors[:2]}")
    names = [c["Name"] for c in columns]
    runs = args.runs

    def measure(label: str, call: Callable[[], dict[str, Any]], count: int, calls: str) -> None:
        call()
        samples, response = [], None
        for _ in range(runs):
            start = time.perf_counter()
            response = call()
            samples.append(time.perf_counter() - start)
        if len(response["ColumnStatisticsList"]) != count or response["Errors"]:
            raise RuntimeError(f"{label}: {len(response['ColumnStatisticsList'])} statistics, "
                               f"{len(response['Errors'])} errors")
        report.stats_rows.append((label, str(count), ms(statistics.median(samples)), str(items_read(response)),
                                  calls))

    table_calls = "GetItem database + GetItem table + **1 Query** (statistics)"
    measure("GetColumnStatisticsForTable", lambda: glue.get_column_statistics_for_table(
        DatabaseName=db, TableName=table, ColumnNames=names), 100, table_calls)
    measure("GetColumnStatisticsForTable", lambda: glue.get_column_statistics_for_table(
        DatabaseName=db, TableName=table, ColumnNames=names[:1]), 1, table_calls)
    measure("GetColumnStatisticsForPartition", lambda: glue.get_column_statistics_for_partition(
        DatabaseName=db, TableName=table, PartitionValues=["2024-05-01"], ColumnNames=names), 100,
        "GetItem database + GetItem table + GetItem partition + **1 Query**")

    # What that one Query is on DynamoDB: every statistic of the table in one page.
    ddb = stack.ddb_client()
    prefix = stack.table_prefix
    db_item = ddb.get_item(TableName=prefix + "databases",
                           Key={"catalog": {"S": f"{REGION}\x01{ACCOUNT}"}, "name": {"S": db}})["Item"]
    table_item = ddb.get_item(TableName=prefix + "tables",
                              Key={"db_uid": db_item["uid"], "name": {"S": table}})["Item"]
    page = ddb.query(TableName=prefix + "column_statistics", ConsistentRead=True,
                     KeyConditionExpression="table_uid = :t AND begins_with(#k, :p)",
                     ExpressionAttributeNames={"#k": "key"},
                     ExpressionAttributeValues={":t": table_item["uid"], ":p": {"S": "\x01"}})
    size = sum(len(str(item)) for item in page["Items"])
    report.notes.append(
        f"Column statistics: the service reads a table's statistics with one Query "
        f"(begins_with owner); done directly on DynamoDB Local it returns {page['Count']} items in a single "
        f"page ({'no' if 'LastEvaluatedKey' not in page else 'a'} LastEvaluatedKey, ~{size / 1024:,.0f} KB "
        f"of the 1 MB page limit): one store round trip for 100 columns, not 100. Items read = that "
        f"Query's items + the GetItems of database and table (and partition).")


if __name__ == "__main__":
    main()
