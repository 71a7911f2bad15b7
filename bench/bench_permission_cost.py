"""What enforcing Lake Formation permissions costs a read (issue #48): GetPartitions, GetTables and
a Paimon latest-snapshot read in a catalog with 1,000 grants ÷ the same in a catalog with none.

Every catalog request now checks the caller's permissions with one BatchGetItem
(``store.grants.lookup``, called from ``chalicelib/service/access.py``): the caller's and
IAM_ALLOWED_PRINCIPALS' grants on the table, its columns, its database's table wildcard, the
database and the catalog, with the data lake settings. A listing of a database's tables (GetTables)
also reads the grants in that database (one Query). This benchmark measures what that costs, in one
run, on one service over DynamoDB Local, with three catalogs (accounts) holding the same data:

* A (account 111111111111): data lake settings never put, so the catalog is under IAM alone;
* B (account 222222222222): settings put (a data lake administrator, no default grants to
  IAM_ALLOWED_PRINCIPALS), then ``--grants`` grants in all (1,000): the administrator's own on what
  it created, the analyst's SELECT and DESCRIBE on every measured table, and to other principals
  (``user/team00``...) table and column grants on the tables of other databases;
* C (account 333333333333, diagnosis, GetTables only; ``--no-crowded`` leaves it out): as B, but
  the other principals' grants sit on the listed database's own tables and columns, so the
  GetTables Query of the database's grants reads them all.

The data: database ``lake`` with ``events``, a table of ``--partitions`` partitions (keys
``region`` string, ``day`` int; no index) and ``orders``, a Paimon table with ``--commits`` commits
(pypaimon); database ``listing`` with ``--tables`` tables; databases ``other_NN`` with the tables the
other principals' grants name. Measured as the IAM user ``analyst`` of each account (open mode:
access key id / bearer token ``<account>:user:analyst``), alternating A and B (and C) request by
request, the order flipped every round:

* GetPartitions of ``events`` with ``region = 'r03'`` (``--partitions`` ÷ 30 matches);
* GetTables of ``listing`` (every page);
* Paimon ``GET /v1/<warehouse>/databases/lake/tables/orders/snapshot`` (raw HTTP, keep-alive).

Printed for each: median ms A, median ms B, B ÷ A (target ≤ 1.2), the median of the per-round
ratios, and DynamoDB requests / items read per call from the ``x-glue-ddb-requests`` /
``x-glue-items-read`` response headers where the protocol sends them (Paimon: items only). For the
diagnosis, the Query of the listed database's grants that GetTables adds, sent straight to DynamoDB
Local (B, C). Then the cold path: for each call and catalog, a fresh server process (on the same
DynamoDB) and its first request, and its second.

If GetTables refuses the analyst of B while it holds grants on every listed table (AWS lets such a
caller list, filtered), the analyst is also granted DESCRIBE on the database's table wildcard, so
the listing is measured all the same, and the report says so.

Run: ``.venv/bin/python -m bench.bench_permission_cost [--quick]`` (about 2 minutes; ``--quick``
under one). Benchmarks are never tests.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import pyarrow as pa
import requests

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from bench import common  # noqa: E402
from bench.common import log, make_client, run_parallel  # noqa: E402
from infra.local.stack import REGION, CatalogStack  # noqa: E402

from pypaimon import Schema  # noqa: E402
from pypaimon.catalog.catalog_factory import CatalogFactory  # noqa: E402

WAREHOUSE = "perm_wh"
LAKE, LISTING = "lake", "listing"
EVENTS, ORDERS = "events", "orders"
REGIONS = 30
EXPRESSION = "region = 'r03'"
COLUMNS = [f"c{i}" for i in range(8)]
TEAMS = 20  # other principals, user/team00..team19
OTHER_DATABASES = 4
TARGET = 1.2
SEP = "\x01"  # chalicelib.store.dynamo.models.SEP: the grants' hash key is <region SEP account SEP lf-grants>

ORDERS_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("dt", pa.string()), ("amount", pa.float64())])


def arn(account: str, user: str) -> str:
    return f"arn:aws:iam::{account}:user/{user}"


def table_input(name: str, keys: Sequence[dict[str, str]] = ()) -> dict[str, Any]:
    return {"Name": name, "TableType": "EXTERNAL_TABLE", "PartitionKeys": list(keys),
            "Parameters": {"classification": "parquet"},
            "StorageDescriptor": {"Columns": [{"Name": c, "Type": "string"} for c in COLUMNS],
                                  "Location": f"s3://perm-lake/{name}/",
                                  "InputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                                  "SerdeInfo": {"SerializationLibrary":
                                                "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"}}}


def partition_input(i: int) -> dict[str, Any]:
    region, day = f"r{i % REGIONS:02d}", str(i // REGIONS)
    return {"Values": [region, day],
            "StorageDescriptor": {"Location": f"s3://perm-lake/events/region={region}/day={day}/",
                                  "Columns": [{"Name": c, "Type": "string"} for c in COLUMNS]},
            "Parameters": {"recordCount": str(1000 + i)}}


def table_resource(database: str, table: str) -> dict[str, Any]:
    return {"Table": {"DatabaseName": database, "Name": table}}


def columns_resource(database: str, table: str, names: Sequence[str]) -> dict[str, Any]:
    return {"TableWithColumns": {"DatabaseName": database, "Name": table, "ColumnNames": list(names)}}


def median_ms(samples: Sequence[float]) -> float:
    return statistics.median(samples) * 1000


# ------------------------------------------------------------------------------ one catalog
@dataclass
class Catalog:
    """One account's catalog on the service: its label, who builds it, and the analyst's clients."""

    label: str
    account: str
    endpoint: str
    configured: bool
    builder_key: str = ""  # the access key id that creates the data (root, or the data lake admin)
    wildcard: bool = False  # whether the analyst needed DESCRIBE on the listed database's table wildcard
    refusal: str = ""  # the GetTables refusal that made it need it
    glue: Any = None  # the analyst's
    paimon: Optional[requests.Session] = None  # the analyst's

    def __post_init__(self) -> None:
        self.builder_key = f"{self.account}:user:admin" if self.configured else self.account
        self.analyst_key = f"{self.account}:user:analyst"
        self.connect(self.endpoint)

    def connect(self, endpoint: str) -> None:
        """The analyst's clients, on ``endpoint`` (a fresh server for the cold path)."""
        self.endpoint = endpoint
        self.glue = make_client("glue", endpoint, access_key=self.analyst_key)
        self.paimon = requests.Session()
        self.paimon.headers["Authorization"] = f"Bearer {self.analyst_key}"

    def client(self, service: str, key: Optional[str] = None, threads: int = 4) -> Any:
        return make_client(service, self.endpoint, threads, access_key=key or self.builder_key)

    def paimon_catalog(self) -> Any:
        return CatalogFactory.create({"metastore": "rest", "uri": self.endpoint, "warehouse": WAREHOUSE,
                                      "token.provider": "bear", "token": self.builder_key})

    @property
    def snapshot_url(self) -> str:
        return f"{self.endpoint}/v1/{WAREHOUSE}/databases/{LAKE}/tables/{ORDERS}/snapshot"


def configure(catalog: Catalog) -> None:
    """The root of the account puts the data lake settings: one administrator, and no default
    grants to IAM_ALLOWED_PRINCIPALS (what a catalog moving to Lake Formation sets), so the analyst
    holds only what it is granted."""
    lf = catalog.client("lakeformation", key=catalog.account)
    lf.put_data_lake_settings(DataLakeSettings={
        "DataLakeAdmins": [{"DataLakePrincipalIdentifier": arn(catalog.account, "admin")}],
        "CreateDatabaseDefaultPermissions": [], "CreateTableDefaultPermissions": []})


def build(catalog: Catalog, args: argparse.Namespace, full: bool = True) -> None:
    """The data: ``listing`` (always), and with ``full`` ``lake`` (events + its partitions, orders
    with its commits) and the other databases."""
    glue = catalog.client("glue")
    glue.create_database(DatabaseInput={"Name": LISTING})
    for i in range(args.tables):
        glue.create_table(DatabaseName=LISTING, TableInput=table_input(f"t{i:03d}"))
    for d in range(OTHER_DATABASES):
        glue.create_database(DatabaseInput={"Name": f"other_{d:02d}"})
        for i in range(args.other_tables):
            glue.create_table(DatabaseName=f"other_{d:02d}", TableInput=table_input(f"o{i:03d}"))
    if not full:
        return
    glue.create_database(DatabaseInput={"Name": LAKE})
    glue.create_table(DatabaseName=LAKE, TableInput=table_input(EVENTS, [{"Name": "region", "Type": "string"},
                                                                          {"Name": "day", "Type": "int"}]))
    clients = [catalog.client("glue") for _ in range(4)]
    chunks = [range(start, min(args.partitions, start + 100)) for start in range(0, args.partitions, 100)]

    def create(client: Any, chunk: range) -> None:
        errors = client.batch_create_partition(DatabaseName=LAKE, TableName=EVENTS,
                                               PartitionInputList=[partition_input(i) for i in chunk]).get("Errors")
        if errors:
            raise RuntimeError(f"BatchCreatePartition: {errors[:2]}")
    run_parallel(clients, chunks, create)

    paimon = catalog.paimon_catalog()
    schema = Schema.from_pyarrow_schema(ORDERS_SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"],
                                        options={"bucket": "1"})
    paimon.create_table(f"{LAKE}.{ORDERS}", schema, False)
    table = paimon.get_table(f"{LAKE}.{ORDERS}")
    for n in range(args.commits):
        ids = list(range(n * 100, n * 100 + 100))
        data = pa.table({"id": pa.array(ids, pa.int64()), "dt": [f"2026-12-{1 + i % 3:02d}" for i in ids],
                         "amount": [i * 0.5 for i in ids]}, schema=ORDERS_SCHEMA)
        builder = table.new_batch_write_builder()
        write, commit = builder.new_write(), builder.new_commit()
        write.write_arrow(data)
        commit.commit(write.prepare_commit())
        write.close()
        commit.close()


def grant_count(stack: CatalogStack, ddb: Any, account: str) -> int:
    """Every grant item stored in the account's catalog (one Query, counted by DynamoDB)."""
    scope = f"{REGION}{SEP}{account}{SEP}lf-grants"
    count, start = 0, None
    while True:
        kwargs: dict[str, Any] = {"TableName": stack.table_prefix + "catalog_entries", "Select": "COUNT",
                                  "KeyConditionExpression": "#s = :s", "ExpressionAttributeNames": {"#s": "scope"},
                                  "ExpressionAttributeValues": {":s": {"S": scope}}}
        if start:
            kwargs["ExclusiveStartKey"] = start
        page = ddb.query(**kwargs)
        count += page["Count"]
        start = page.get("LastEvaluatedKey")
        if not start:
            return count


def grant_all(catalog: Catalog, entries: list[dict[str, Any]]) -> None:
    """BatchGrantPermissions as the data lake administrator, 25 entries a call, 4 threads."""
    for n, entry in enumerate(entries):
        entry["Id"] = str(n)
    clients = [catalog.client("lakeformation") for _ in range(4)]
    chunks = [entries[start:start + 25] for start in range(0, len(entries), 25)]

    def send(client: Any, chunk: list[dict[str, Any]]) -> None:
        failures = client.batch_grant_permissions(Entries=chunk).get("Failures")
        if failures:
            raise RuntimeError(f"BatchGrantPermissions: {failures[:2]}")
    run_parallel(clients, chunks, send)


def analyst_grants(catalog: Catalog, listed: int, full: bool) -> list[dict[str, Any]]:
    """The analyst's SELECT and DESCRIBE on every measured table."""
    principal = {"DataLakePrincipalIdentifier": arn(catalog.account, "analyst")}
    tables = [(LISTING, f"t{i:03d}") for i in range(listed)]
    if full:
        tables += [(LAKE, EVENTS), (LAKE, ORDERS)]
    return [{"Principal": principal, "Resource": table_resource(db, name), "Permissions": ["SELECT", "DESCRIBE"]}
            for db, name in tables]


def lists(catalog: Catalog) -> bool:
    """Whether the analyst may call GetTables on the listed database."""
    try:
        catalog.glue.get_tables(DatabaseName=LISTING)
    except catalog.glue.exceptions.AccessDeniedException as error:
        catalog.refusal = error.response["Error"]["Message"]
        return False
    return True


def other_grants(catalog: Catalog, tables: Sequence[tuple[str, str]], count: int) -> list[dict[str, Any]]:
    """``count`` grants to other principals on ``tables``: for each principal in turn a table
    grant on every table, then a column grant on every table (distinct items: a grant item is one
    resource and one principal)."""
    entries = []
    for i in range(count):
        db, name = tables[i % len(tables)]
        team = (i // len(tables)) % TEAMS
        on_columns = (i // (len(tables) * TEAMS)) % 2 == 1
        if i >= 2 * len(tables) * TEAMS:
            raise ValueError(f"{count} grants do not fit on {len(tables)} tables and {TEAMS} principals")
        principal = {"DataLakePrincipalIdentifier": arn(catalog.account, f"team{team:02d}")}
        if on_columns:
            entries.append({"Principal": principal, "Permissions": ["SELECT"],
                            "Resource": columns_resource(db, name, COLUMNS[team % 4: team % 4 + 3])})
        else:
            entries.append({"Principal": principal, "Resource": table_resource(db, name),
                            "Permissions": ["SELECT"] if team % 3 else ["SELECT", "DESCRIBE", "ALTER"]})
    return entries


def fill(stack: CatalogStack, ddb: Any, catalog: Catalog, args: argparse.Namespace, crowded: bool) -> int:
    """Grant the analyst, then other principals up to ``args.grants`` grant items in the catalog;
    the count stored at the end."""
    grant_all(catalog, analyst_grants(catalog, args.tables, full=not crowded))
    if not lists(catalog):
        # A caller holding grants on some of a database's tables may list them (filtered) on AWS;
        # where this service refuses it, the table wildcard lets the analyst list (the same reads:
        # the check's BatchGetItem, then the listing's Query of the database's grants).
        catalog.wildcard = True
        grant_all(catalog, [{"Principal": {"DataLakePrincipalIdentifier": arn(catalog.account, "analyst")},
                             "Resource": {"Table": {"DatabaseName": LISTING, "TableWildcard": {}}},
                             "Permissions": ["DESCRIBE"]}])
        if not lists(catalog):
            raise RuntimeError(f"{catalog.label}: the analyst may not list {LISTING} even with DESCRIBE on its "
                               "table wildcard")
    have = grant_count(stack, ddb, catalog.account)
    if crowded:
        tables = [(LISTING, f"t{i:03d}") for i in range(args.tables)]
    else:
        tables = [(f"other_{d:02d}", f"o{i:03d}") for d in range(OTHER_DATABASES) for i in range(args.other_tables)]
    if args.grants > have:
        grant_all(catalog, other_grants(catalog, tables, args.grants - have))
    return grant_count(stack, ddb, catalog.account)


# ------------------------------------------------------------------------------ the calls
@dataclass
class Sample:
    seconds: float
    requests: Optional[int]
    items: Optional[int]
    answer: Any


def _header(headers: dict[str, str], name: str) -> Optional[int]:
    value = headers.get(name)
    return int(value) if value is not None else None


def get_partitions(catalog: Catalog) -> Sample:
    kwargs: dict[str, Any] = {"DatabaseName": LAKE, "TableName": EVENTS, "Expression": EXPRESSION}
    elapsed, reqs, items, found = 0.0, 0, 0, 0
    while True:
        started = time.perf_counter()
        page = catalog.glue.get_partitions(**kwargs)
        elapsed += time.perf_counter() - started
        headers = page["ResponseMetadata"]["HTTPHeaders"]
        reqs += _header(headers, "x-glue-ddb-requests") or 0
        items += _header(headers, "x-glue-items-read") or 0
        found += len(page["Partitions"])
        if not page.get("NextToken"):
            return Sample(elapsed, reqs, items, found)
        kwargs["NextToken"] = page["NextToken"]


def get_tables(catalog: Catalog) -> Sample:
    kwargs: dict[str, Any] = {"DatabaseName": LISTING}
    elapsed, reqs, items, names = 0.0, 0, 0, []
    while True:
        started = time.perf_counter()
        page = catalog.glue.get_tables(**kwargs)
        elapsed += time.perf_counter() - started
        headers = page["ResponseMetadata"]["HTTPHeaders"]
        reqs += _header(headers, "x-glue-ddb-requests") or 0
        items += _header(headers, "x-glue-items-read") or 0
        names += [t["Name"] for t in page["TableList"]]
        if not page.get("NextToken"):
            return Sample(elapsed, reqs, items, len(names))
        kwargs["NextToken"] = page["NextToken"]


def load_snapshot(catalog: Catalog) -> Sample:
    assert catalog.paimon is not None
    started = time.perf_counter()
    response = catalog.paimon.get(catalog.snapshot_url, timeout=60)
    elapsed = time.perf_counter() - started
    if response.status_code != 200:
        raise RuntimeError(f"{catalog.label}: GET snapshot answered {response.status_code}: {response.text[:300]}")
    return Sample(elapsed, _header(response.headers, "x-glue-ddb-requests"),  # type: ignore[arg-type]
                  _header(response.headers, "x-glue-items-read"), response.json()["snapshot"]["snapshot"]["id"])  # type: ignore[arg-type]


CALLS: dict[str, Callable[[Catalog], Sample]] = {
    f"GetPartitions `{EXPRESSION}`": get_partitions,
    "GetTables (every page)": get_tables,
    "Paimon GET .../snapshot": load_snapshot,
}


@dataclass
class Case:
    call: str
    catalog: Catalog
    samples: list[Sample] = field(default_factory=list)

    def run(self) -> Sample:
        sample = CALLS[self.call](self.catalog)
        self.samples.append(sample)
        return sample

    @property
    def median(self) -> float:
        return median_ms([s.seconds for s in self.samples])

    def last(self, attribute: str) -> str:
        values = {getattr(s, attribute) for s in self.samples}
        if None in values:
            return "-"
        return "/".join(str(v) for v in sorted(values))


def measure(cases: dict[str, list[Case]], runs: int, warmup: int) -> None:
    """``warmup`` unrecorded rounds, then ``runs`` rounds; in each round every call on every
    catalog once, request by request, the catalogs' order reversed every other round."""
    for round_no in range(warmup + runs):
        for pair in cases.values():
            for case in (pair if round_no % 2 == 0 else pair[::-1]):
                if round_no < warmup:
                    CALLS[case.call](case.catalog)
                else:
                    case.run()
        if round_no >= warmup and (round_no - warmup + 1) % 50 == 0:
            log(f"  {round_no - warmup + 1} rounds")


def paired(a: Case, b: Case) -> float:
    return statistics.median(y.seconds / x.seconds for x, y in zip(a.samples, b.samples))


def same_answers(pair: Sequence[Case]) -> None:
    answers = {case.catalog.label: {s.answer for s in case.samples} for case in pair}
    if len({frozenset(v) for v in answers.values()}) != 1 or any(len(v) != 1 for v in answers.values()):
        raise RuntimeError(f"{pair[0].call}: the catalogs answered differently: {answers}")


def _take_json(response_dict: dict[str, Any], customized_response_dict: dict[str, Any], **_: Any) -> None:
    """botocore ``before-parse`` hook: the page taken with one json.loads, as the service takes it."""
    body = response_dict.get("body")
    if response_dict.get("status_code") == 200 and body:
        customized_response_dict.update(json.loads(body))
        response_dict["body"] = b"{}"


def grants_query(stack: CatalogStack, ddb: Any, catalogs: Sequence[Catalog], runs: int) -> dict[str, tuple[float, int]]:
    """The Query GetTables makes of the listed database's grants (every principal's), straight to
    DynamoDB Local as the service sends it (consistent, pages of 1,000), catalogs alternating:
    median ms and items per catalog."""
    ddb.meta.events.register("before-parse.dynamodb.Query", _take_json, unique_id="bench-perm-json")
    samples: dict[str, list[float]] = {cat.label: [] for cat in catalogs}
    items: dict[str, int] = {}
    for n in range(runs + 5):
        for cat in (catalogs if n % 2 == 0 else catalogs[::-1]):
            started, count, start = time.perf_counter(), 0, None
            while True:
                kwargs: dict[str, Any] = {
                    "TableName": stack.table_prefix + "catalog_entries", "ConsistentRead": True, "Limit": 1000,
                    "KeyConditionExpression": "#s = :s AND begins_with(#k, :k)",
                    "ExpressionAttributeNames": {"#s": "scope", "#k": "key"},
                    "ExpressionAttributeValues": {":s": {"S": f"{REGION}{SEP}{cat.account}{SEP}lf-grants"},
                                                  ":k": {"S": f"D{SEP}{LISTING}{SEP}"}}}
                if start:
                    kwargs["ExclusiveStartKey"] = start
                page = ddb.query(**kwargs)
                count += len(page["Items"])
                start = page.get("LastEvaluatedKey")
                if not start:
                    break
            if n >= 5:
                samples[cat.label].append(time.perf_counter() - started)
            items[cat.label] = count
    return {label: (median_ms(values), items[label]) for label, values in samples.items()}


# ------------------------------------------------------------------------------ the cold path
def cold(stack: CatalogStack, catalogs: Sequence[Catalog], log_dir: Path) -> list[tuple[str, ...]]:
    """For each call and catalog, a fresh server process and its first two requests."""
    rows: list[tuple[str, ...]] = []
    for n, call in enumerate(CALLS):
        first: dict[str, tuple[float, float]] = {}
        for catalog in (catalogs if n % 2 == 0 else catalogs[::-1]):
            server = stack.extra_server({}, name=f"cold-{n}-{catalog.label}").start()
            home = catalog.endpoint
            try:
                catalog.connect(server.endpoint)
                one, two = CALLS[call](catalog), CALLS[call](catalog)
                first[catalog.label] = (one.seconds, two.seconds)
            finally:
                server.stop()
                catalog.connect(home)
        a, b = first["A"], first["B"]
        rows.append((call, f"{a[0] * 1000:,.0f} ms", f"{b[0] * 1000:,.0f} ms", f"{b[0] / a[0]:.2f}",
                     f"{a[1] * 1000:,.1f} ms", f"{b[1] * 1000:,.1f} ms"))
        log(" | ".join(rows[-1]))
    return rows


# ------------------------------------------------------------------------------ main
def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, help="partitions of lake.events (default 3,000; quick 900)")
    parser.add_argument("--tables", type=int, help="tables GetTables lists (default 50; quick 20)")
    parser.add_argument("--other-tables", type=int, help="tables per other database (default 15; quick 5)")
    parser.add_argument("--grants", type=int, help="grant items in catalog B (and C) (default 1,000; quick 300)")
    parser.add_argument("--commits", type=int, default=4, help="commits to the Paimon table (default 4)")
    parser.add_argument("--runs", type=int, help="measured rounds (default 300; quick 40)")
    parser.add_argument("--warmup", type=int, help="unrecorded rounds first (default 30; quick 5)")
    parser.add_argument("--no-crowded", action="store_true", help="leave out catalog C (the diagnosis)")
    parser.add_argument("--no-cold", action="store_true", help="leave out the cold path")
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--log-dir", type=Path, help="keep the servers' and DynamoDB Local's logs here")
    args = parser.parse_args(argv)
    args.partitions = args.partitions or (900 if args.quick else 3_000)
    args.tables = args.tables or (20 if args.quick else 50)
    args.other_tables = args.other_tables or (5 if args.quick else 15)
    args.grants = args.grants or (300 if args.quick else 1_000)
    args.runs = args.runs or (40 if args.quick else 300)
    args.warmup = args.warmup if args.warmup is not None else (5 if args.quick else 30)
    return args


def main(argv: Optional[Sequence[str]] = None) -> None:
    args = parse_args(argv)
    report = common.Report(
        ["Call", "A: no grants (median)", f"B: {args.grants:,} grants (median)", "B ÷ A", "B ÷ A per round (median)",
         "DynamoDB requests A / B", "items read A / B"],
        ["Cold: first request of a fresh server", "A", "B", "B ÷ A", "second request A", "second request B"])
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-perm-") as tmp:
        log_dir = args.log_dir or Path(tmp)
        with CatalogStack(log_dir=log_dir) as stack:
            ddb = make_client("dynamodb", stack.ddb_endpoint, access_key=stack.ddb_access_key_id)
            a = Catalog("A", "111111111111", stack.endpoint, configured=False)
            b = Catalog("B", "222222222222", stack.endpoint, configured=True)
            c = None if args.no_crowded else Catalog("C", "333333333333", stack.endpoint, configured=True)
            log(f"catalog A: {args.tables} tables, {args.partitions:,} partitions, a Paimon table of "
                f"{args.commits} commits; settings never put")
            build(a, args)
            log("catalog B: settings put, the same data, then the grants")
            configure(b)
            build(b, args)
            grants_b = fill(stack, ddb, b, args, crowded=False)
            grants_c = None
            if c is not None:
                log("catalog C: the listed database's tables crowded with other principals' grants")
                configure(c)
                build(c, args, full=False)
                grants_c = fill(stack, ddb, c, args, crowded=True)
            grants_a = grant_count(stack, ddb, a.account)
            log(f"grant items stored: A {grants_a}, B {grants_b}" + (f", C {grants_c}" if c else ""))
            denied = sanity(b)
            setup = time.perf_counter() - started

            calls = list(CALLS)
            cases = {call: [Case(call, a), Case(call, b)] for call in calls}
            if c is not None:
                cases[calls[1]].append(Case(calls[1], c))
            log(f"measuring: {args.runs} rounds after {args.warmup} unrecorded")
            measure(cases, args.runs, args.warmup)
            for call, pair in cases.items():
                same_answers(pair)
                ca, cb = pair[0], pair[1]
                ratio = cb.median / ca.median
                report.tables[0][1].append((call, f"{ca.median:.2f} ms", f"{cb.median:.2f} ms", f"{ratio:.2f}",
                                            f"{paired(ca, cb):.2f}", f"{ca.last('requests')} / {cb.last('requests')}",
                                            f"{ca.last('items')} / {cb.last('items')}"))
                log(" | ".join(report.tables[0][1][-1]))
                report.check(f"{call}, B ({grants_b:,} grants, as the analyst) ÷ A (none)",
                             f"{ratio:.2f} ({cb.median:.2f} ÷ {ca.median:.2f} ms)", f"≤ {TARGET}", ratio <= TARGET)
                if len(pair) > 2:
                    cc = pair[2]
                    report.tables[0][1].append((
                        f"{call}, C ({grants_c:,} grants, the other principals' on the listed tables; "
                        f"diagnosis) in place of B", f"{ca.median:.2f} ms", f"{cc.median:.2f} ms",
                        f"{cc.median / ca.median:.2f}", f"{paired(ca, cc):.2f}",
                        f"{ca.last('requests')} / {cc.last('requests')}", f"{ca.last('items')} / {cc.last('items')}"))
                    report.check(f"Diagnosis: {call}, C (the other principals' grants on the listed tables) ÷ A",
                                 f"{cc.median / ca.median:.2f} ({cc.median:.2f} ÷ {ca.median:.2f} ms)", "report", None)
                    log(" | ".join(report.tables[0][1][-1]))
            straight = grants_query(stack, ddb, [cat for cat in (b, c) if cat is not None], 50)
            for label, (ms, count) in straight.items():
                report.check(f"Diagnosis: the Query of `{LISTING}`'s grants that GetTables adds in {label}, straight "
                             f"to DynamoDB Local (boto3, json.loads), median", f"{ms:.2f} ms ({count:,} items)",
                             "report", None)
            measured = time.perf_counter() - started - setup
            if not args.no_cold:
                log("cold path: a fresh server process per call and catalog")
                report.tables[1][1].extend(cold(stack, [a, b], log_dir))
    answers = {call: pair[0].samples[0].answer for call, pair in cases.items()}
    report.notes += [
        f"Catalogs: A (account 111111111111) settings never put, {grants_a} grant items (the default "
        f"IAM_ALLOWED_PRINCIPALS grants its databases and tables were created with); B (222222222222) "
        f"configured (one data lake administrator, no default grants), {grants_b:,} grant items: the "
        f"administrator's on what it created, the analyst's SELECT+DESCRIBE on the {args.tables + 2} "
        f"measured tables, the rest to {TEAMS} other principals on the {OTHER_DATABASES * args.other_tables} "
        f"tables of {OTHER_DATABASES} other databases (table and column grants)"
        + (f"; C (333333333333) {grants_c:,} grant items, the other principals' on the listed database's tables"
           if c is not None else "") + ".",
        f"Answers (same in every catalog): GetPartitions {answers[calls[0]]} partitions of {args.partitions:,}, "
        f"GetTables {answers[calls[1]]} tables, Paimon snapshot id {answers[calls[2]]}. In B the analyst is "
        f"refused on a table it holds nothing on ({denied}): the grants are enforced.",
        f"{args.runs} rounds after {args.warmup} unrecorded, every call alternating the catalogs request by "
        f"request (order reversed every other round), one service process, DynamoDB Local in memory. "
        f"Setup {setup:.0f} s, measurement {measured:.0f} s, total {time.perf_counter() - started:.0f} s.",
        "DynamoDB requests: the x-glue-ddb-requests header (Glue only; the Paimon wire sends only "
        "x-glue-items-read). Cold: one fresh server process per call and catalog on the same DynamoDB "
        "Local, its first request (imports and connections included) and its second; one sample each.",
    ]
    needed = [cat for cat in (b, c) if cat is not None and cat.wildcard]
    if needed:
        report.notes.append(
            f"GetTables of `{LISTING}` refused the analyst of {' and '.join(cat.label for cat in needed)} while it "
            f"held SELECT+DESCRIBE on every one of its tables ({needed[0].refusal!r}); AWS lets such a caller "
            f"list and filters the answer. To measure the listing the analyst was also granted DESCRIBE on "
            f"`{LISTING}`'s table wildcard (counted in the grants): the same DynamoDB reads as the filtered path.")
    report.print(common.command_line("bench_permission_cost", argv), common.machine())


def sanity(b: Catalog) -> str:
    """The analyst of B is refused where it holds nothing (else B would measure no enforcement)."""
    try:
        b.glue.get_table(DatabaseName="other_00", Name="o000")
    except b.glue.exceptions.AccessDeniedException as error:
        return f"GetTable other_00.o000: AccessDeniedException, {error.response['Error']['Message']!r}"
    raise RuntimeError("catalog B lets the analyst read a table it holds no grant on: nothing is enforced")


if __name__ == "__main__":
    main()
