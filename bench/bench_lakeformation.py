"""Lake Formation governed tables: time-travel reads as history grows, and commit latency.

Builds one governed table (keys region string, bucket int) on the service over DynamoDB Local
through boto3, by committed transactions of 100 objects each: transaction i adds 10 objects to
each of the 10 partitions of group i // 10, so every partition ends with 100 objects written by
10 different transactions, and a partition's history interleaves with its neighbours'. The
default run commits 1,000 transactions: 100,000 objects over 1,000 partitions. Loading uses
several client threads (each its own transaction; commits to the table serialize on its lock).

Measured after the first 100 commits and again after all 1,000, in the same run:

* GetTableObjects of one partition (``region = .. AND bucket = ..``) at the latest commit, on a
  partition that was complete early (so the answer is the same at both sizes);
* GetTableObjects of one partition AS OF an old commit (QueryAsOfTime = the EndTime of commit
  #55 or so), on a partition half written at that time (later versions exist in it);
* GetPartitions of the governed table (its partitions come from the manifest, read through
  partition summaries) for the 10 partitions of one group, latest and as of that old commit
  (reported, no target in the issue);

each: DynamoDB items read per object returned (the ``x-glue-items-read`` header) and the
median latency, compared as the ratio 1,000 commits ÷ 100 commits. Then CommitTransaction
latency for transactions of 1, 100 and 1,000 writes on the full table, and one commit of 10,000
writes (quick: 2,000; ``--large-commit N``): when it answers (within the work budget) and when the background cleaner
has finished applying it.

Run: ``.venv/bin/python -m bench.bench_lakeformation [--quick]``. ``--quick`` is a smoke run
(200 commits, measured at 40 and 200). Benchmarks are never tests.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Optional, Sequence

import boto3

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from infra.local.stack import CatalogStack  # noqa: E402
from bench import common  # noqa: E402
from bench.common import log, make_client, run_parallel  # noqa: E402
from chalicelib import work_budget  # noqa: E402

DATABASE = "lake"
TABLE = "events"
PER_PARTITION = 10  # objects a transaction adds to each partition it touches
GROUP = 10  # partitions a transaction touches (and transactions per group of partitions)
PER_COMMIT = PER_PARTITION * GROUP
TABLE_INPUT = {
    "Name": TABLE,
    "TableType": "GOVERNED",
    "PartitionKeys": [{"Name": "region", "Type": "string"}, {"Name": "bucket", "Type": "int"}],
    "StorageDescriptor": {"Columns": [{"Name": "event_id", "Type": "bigint"}, {"Name": "payload", "Type": "string"}],
                          "Location": f"s3://bench-lake/{TABLE}/"},
}


def partition_values(partition: int) -> list[str]:
    """Partition number -> [region, bucket]: 100 buckets per region."""
    return [f"r{partition // 100:03d}", str(partition % 100)]


def predicate(partition: int) -> str:
    region, bucket = partition_values(partition)
    return f"region = '{region}' AND bucket = {bucket}"


def group_expression(group: int) -> str:
    """A GetPartitions expression selecting the 10 partitions of ``group``."""
    region, first = partition_values(GROUP * group)
    return f"region = '{region}' AND bucket BETWEEN {first} AND {int(first) + GROUP - 1}"


def commit_ops(number: int) -> list[dict[str, Any]]:
    """Transaction ``number``: 10 objects in each partition of group number // 10."""
    first = GROUP * (number // GROUP)
    return [{"AddObject": {"Uri": f"s3://bench-lake/{TABLE}/p{p}/t{number}-{i}.parquet",
                           "ETag": f"{number:08x}{i:02x}", "Size": 1_000_000 + i,
                           "PartitionValues": partition_values(p)}}
            for p in range(first, first + GROUP) for i in range(PER_PARTITION)]


# ---------------------------------------------------------------------------------- clients
class History:
    """The committed transactions: number -> EndTime (thread-safe)."""

    def __init__(self) -> None:
        self.ends: dict[int, datetime] = {}
        self.lock = threading.Lock()

    def commit(self, lf: Any, number: int) -> None:
        """Start, write (one UpdateTableObjects of 100 operations) and commit transaction ``number``."""
        tx = lf.start_transaction()["TransactionId"]
        lf.update_table_objects(DatabaseName=DATABASE, TableName=TABLE, TransactionId=tx,
                                WriteOperations=commit_ops(number))
        status = lf.commit_transaction(TransactionId=tx)["TransactionStatus"]
        while status == "COMMIT_IN_PROGRESS":  # queued for the lock past its work budget: as clients do, poll
            time.sleep(0.1)
            status = lf.describe_transaction(TransactionId=tx)["TransactionDescription"]["TransactionStatus"]
        if status != "COMMITTED":
            raise RuntimeError(f"transaction {number}: {status}")
        end = lf.describe_transaction(TransactionId=tx)["TransactionDescription"]["TransactionEndTime"]
        with self.lock:
            self.ends[number] = end

    def ordered(self) -> list[tuple[int, datetime]]:
        """(transaction number, EndTime) in commit order."""
        return sorted(self.ends.items(), key=lambda entry: entry[1])


def load(clients: Sequence[Any], history: History, numbers: range) -> float:
    return run_parallel(clients, list(numbers), lambda lf, number: history.commit(lf, number))


# ------------------------------------------------------------------------------ measurement
def _fetch_all(call: Any, results: Any, **kwargs: Any) -> tuple[list[str], int]:
    """Every result (``results(response)``) of all pages of ``call`` on the bench table, sorted,
    and the DynamoDB items read (the ``x-glue-items-read`` header)."""
    request = {"DatabaseName": DATABASE, "TableName": TABLE, **kwargs}
    found: list[str] = []
    items = 0
    while True:
        response = call(**request)
        items += int(response["ResponseMetadata"]["HTTPHeaders"]["x-glue-items-read"])
        found += results(response)
        if not response.get("NextToken"):
            return sorted(found), items
        request["NextToken"] = response["NextToken"]


def fetch_partitions(glue: Any, **kwargs: Any) -> tuple[list[str], int]:
    """GetPartitions: each partition's values joined by '/'."""
    return _fetch_all(glue.get_partitions, lambda r: ["/".join(p["Values"]) for p in r["Partitions"]], **kwargs)


def fetch(lf: Any, **kwargs: Any) -> tuple[list[str], int]:
    """GetTableObjects: object uris."""
    return _fetch_all(lf.get_table_objects,
                      lambda r: [o["Uri"] for group in r["Objects"] for o in group["Objects"]], **kwargs)


@dataclass
class Case:
    """One query; ``samples`` are wall-clock seconds per full answer; ``result``: object uris
    (GetTableObjects) or partitions (GetPartitions, with ``partitions`` set)."""

    label: str
    lf: Any
    kwargs: dict[str, Any]
    partitions: bool = False
    samples: list[float] = field(default_factory=list)
    result: list[str] = field(default_factory=list)
    items_read: int = 0

    def run(self, record: bool = True) -> None:
        start = time.perf_counter()
        self.result, self.items_read = (fetch_partitions if self.partitions else fetch)(self.lf, **self.kwargs)
        if record:
            self.samples.append(time.perf_counter() - start)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def per_object(self) -> float:
        return self.items_read / max(len(self.result), 1)


def interleave(cases: Sequence[Case], runs: int, warmup: int = 2) -> None:
    """Round-robin (order reversed every other round), so drift hits all cases alike."""
    for _ in range(warmup):
        for case in cases:
            case.run(record=False)
    for round_number in range(runs):
        for case in (cases if round_number % 2 == 0 else list(reversed(cases))):
            case.run()


def commit_latency(lf: Any, writes: int, runs: int, first_partition: int) -> list[float]:
    """Seconds per CommitTransaction of a transaction holding ``writes`` new objects."""
    samples = []
    for run in range(runs):
        tx = lf.start_transaction()["TransactionId"]
        values = ["lat", str(first_partition + run)]
        ops = [{"AddObject": {"Uri": f"s3://bench-lake/{TABLE}/lat/{writes}/{run}/{i}.parquet", "ETag": "e",
                              "Size": 1, "PartitionValues": values}} for i in range(writes)]
        for start in range(0, writes, 100):
            lf.update_table_objects(DatabaseName=DATABASE, TableName=TABLE, TransactionId=tx,
                                    WriteOperations=ops[start:start + 100])
        start = time.perf_counter()
        status = lf.commit_transaction(TransactionId=tx)["TransactionStatus"]
        samples.append(time.perf_counter() - start)
        if status != "COMMITTED":
            raise RuntimeError(f"commit of {writes} writes: {status}")
    return samples


def large_commit(lf: Any, ddb: Any, pending_table: str, writes: int) -> tuple[float, float, str]:
    """A transaction of ``writes`` new objects: seconds CommitTransaction took to answer, seconds
    until its apply was finished (its pending writes gone from DynamoDB: the commit hands what
    its work budget leaves to the background cleaner), and the status it answered (COMMITTED,
    or COMMIT_IN_PROGRESS when the budget ran out before its commit point)."""
    tx = lf.start_transaction()["TransactionId"]
    ops = [{"AddObject": {"Uri": f"s3://bench-lake/{TABLE}/large/{i}.parquet", "ETag": "e", "Size": 1,
                          "PartitionValues": ["large", str(i % 10)]}} for i in range(writes)]
    for start in range(0, writes, 100):
        lf.update_table_objects(DatabaseName=DATABASE, TableName=TABLE, TransactionId=tx,
                                WriteOperations=ops[start:start + 100])
    start = time.perf_counter()
    status = lf.commit_transaction(TransactionId=tx)["TransactionStatus"]
    answered = time.perf_counter() - start
    if status not in ("COMMITTED", "COMMIT_IN_PROGRESS"):
        raise RuntimeError(f"commit of {writes} writes: {status}")
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        left = ddb.query(TableName=pending_table, KeyConditionExpression="transaction_id = :t", Limit=1,
                         ExpressionAttributeValues={":t": {"S": tx}}, ConsistentRead=True)["Items"]
        if not left:
            applied = time.perf_counter() - start
            final = lf.describe_transaction(TransactionId=tx)["TransactionDescription"]["TransactionStatus"]
            if final != "COMMITTED":  # pending writes also go when a commit is aborted
                raise RuntimeError(f"commit of {writes} writes ended {final}")
            return answered, applied, status
        time.sleep(0.2)
    raise RuntimeError(f"the commit of {writes} writes was not applied within 600 s")


# ------------------------------------------------------------------------------------ report
def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms" if seconds < 10 else f"{seconds:,.1f} s"


class Report(common.Report):
    """The checks, then one row per measured query."""

    def __init__(self) -> None:
        super().__init__(["History", "Query", "Median", "Min (ms)", "Runs", "Objects or partitions",
                          "DynamoDB items read", "Items per result"])

    def case(self, history: str, case: Case) -> None:
        self.tables[0][1].append((history, case.label, ms(case.median), f"{min(case.samples) * 1000:,.1f}",
                                 str(len(case.samples)), f"{len(case.result):,}", f"{case.items_read:,}",
                                 f"{case.per_object:.2f}"))


# -------------------------------------------------------------------------------------- main
def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: 200 commits, measured at 40 and 200")
    parser.add_argument("--commits", type=int, help="transactions committed in all (default 1000; quick 200)")
    parser.add_argument("--early", type=int, help="commits at the first measurement (default 100; quick 40)")
    parser.add_argument("--runs", type=int, help="runs per query per measurement (default 30; quick 8)")
    parser.add_argument("--commit-runs", type=int, help="commits timed per size (default 10; quick 3)")
    parser.add_argument("--large-commit", type=int, help="writes of the one large commit (default 10000; quick 2000)")
    parser.add_argument("--threads", type=int, default=4, help="client threads for loading (default 4)")
    parser.add_argument("--log-dir", type=Path, help="keep DynamoDB Local / server logs here")
    args = parser.parse_args(argv)
    args.commits = args.commits or (200 if args.quick else 1000)
    args.early = args.early or (40 if args.quick else 100)
    args.runs = args.runs or (8 if args.quick else 30)
    args.commit_runs = args.commit_runs or (3 if args.quick else 10)
    args.large_commit = args.large_commit or (2_000 if args.quick else 10_000)
    if args.commits % GROUP or args.early % GROUP or not 3 * GROUP <= args.early < args.commits:
        parser.error(f"--early and --commits: multiples of {GROUP}, {3 * GROUP} <= early < commits")
    return args


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Build the table, measure, print the tables."""
    args = parse_args(argv)
    command = common.command_line("bench_lakeformation", argv)
    env = (f"{common.machine()}, boto3 {boto3.__version__}; service and DynamoDB Local "
           f"(in memory) each in their own process; {args.threads} loader threads")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-lakeformation-") as tmp:
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


def run(args: argparse.Namespace, stack: CatalogStack, report: Report) -> None:
    """Every measurement; fills ``report``."""
    clients = [make_client("lakeformation", stack.endpoint, args.threads) for _ in range(args.threads)]
    lf = clients[0]
    glue = make_client("glue", stack.endpoint)
    make_client("glue", stack.endpoint).create_database(DatabaseInput={"Name": DATABASE})
    make_client("glue", stack.endpoint).create_table(DatabaseName=DATABASE, TableInput=TABLE_INPUT)
    history = History()

    log(f"committing transactions 0-{args.early - 1} ({args.early * PER_COMMIT:,} objects)")
    seconds = load(clients, history, range(args.early))
    report.notes.append(f"Loading the first {args.early:,} transactions: {seconds:,.1f} s "
                        f"({args.early / seconds:,.1f} commits/s, {args.threads} threads).")

    # The old snapshot: just past the middle of a group, so its partitions are half written then.
    ordered = history.ordered()
    old_index = (args.early // 2 // GROUP) * GROUP + GROUP // 2 - 1
    as_of = ordered[old_index][1]
    committed_then = {number for number, _ in ordered[:old_index + 1]}
    group = ordered[old_index][0] // GROUP
    old_partition = GROUP * group + GROUP // 2
    latest_partition = GROUP // 2  # in group 0: complete since about commit #10
    expected_old = sum(PER_PARTITION for n in committed_then if n // GROUP == group)
    cases = {
        "latest": lambda: Case(f"latest, one partition ({predicate(latest_partition)})", lf,
                               {"PartitionPredicate": predicate(latest_partition)}),
        "as of": lambda: Case(f"as of commit #{old_index}, one partition ({predicate(old_partition)})", lf,
                              {"PartitionPredicate": predicate(old_partition), "QueryAsOfTime": as_of}),
        # GetPartitions of the governed table: its partitions come from the manifest.
        "partitions latest": lambda: Case(f"GetPartitions latest, {group_expression(0)}", glue,
                                          {"Expression": group_expression(0)}, partitions=True),
        "partitions as of": lambda: Case(f"GetPartitions as of commit #{old_index}, {group_expression(group)}",
                                         glue, {"Expression": group_expression(group), "QueryAsOfTime": as_of},
                                         partitions=True),
    }

    def measure(commits: int) -> dict[str, Case]:
        log(f"measuring at {commits:,} commits, {args.runs} interleaved runs per query")
        measured = {name: make() for name, make in cases.items()}
        interleave(list(measured.values()), args.runs)
        for case in measured.values():
            report.case(f"{commits:,} commits", case)
        return measured

    early = measure(args.early)
    if len(early["as of"].result) != expected_old or len(early["latest"].result) != GROUP * PER_PARTITION:
        raise RuntimeError(f"wrong answers: as of {len(early['as of'].result)} (expected {expected_old}), "
                           f"latest {len(early['latest'].result)}")
    if len(early["partitions latest"].result) != GROUP or len(early["partitions as of"].result) != GROUP:
        raise RuntimeError("wrong answers: GetPartitions should find the 10 partitions of a group")

    log(f"committing transactions {args.early}-{args.commits - 1}")
    seconds = load(clients, history, range(args.early, args.commits))
    report.notes.append(f"Loading transactions {args.early:,}-{args.commits - 1:,}: {seconds:,.1f} s "
                        f"({(args.commits - args.early) / seconds:,.1f} commits/s). Table: "
                        f"{args.commits * PER_COMMIT:,} objects over {args.commits:,} partitions.")
    late = measure(args.commits)
    for name in cases:
        if late[name].result != early[name].result:
            raise RuntimeError(f"{name}: the answer changed as history grew")

    for name in cases:
        targeted = not late[name].partitions  # the targets are for GetTableObjects
        unit = "partitions" if late[name].partitions else "objects"
        for commits, case in ((args.early, early[name]), (args.commits, late[name])):
            report.check(f"{name}: DynamoDB items read ÷ {unit} returned, {commits:,} commits",
                         f"{case.per_object:.2f} ({case.items_read} ÷ {len(case.result)})",
                         "≤ 1.5" if targeted else "report", case.per_object <= 1.5 if targeted else None)
        ratio = late[name].median / early[name].median
        report.check(f"{name}: median latency {args.commits:,} commits ÷ {args.early:,} commits",
                     f"{ratio:.2f} ({ms(late[name].median)} ÷ {ms(early[name].median)})",
                     "≤ 1.5 (flat)" if targeted else "report", ratio <= 1.5 if targeted else None)

    partition = 0
    for writes, runs in ((1, args.commit_runs), (100, args.commit_runs), (1000, max(3, args.commit_runs // 2))):
        log(f"commit latency: {runs} transactions of {writes:,} writes")
        samples = commit_latency(lf, writes, runs, partition)
        partition += runs
        report.check(f"CommitTransaction latency, {writes:,} write(s) ({runs} runs)",
                     f"median {ms(statistics.median(samples))}, min {ms(min(samples))}, max {ms(max(samples))}",
                     "report", None)
    writes = args.large_commit
    log(f"a commit of {writes:,} writes")
    ddb = make_client("dynamodb", stack.ddb_endpoint, access_key=stack.ddb_access_key_id)
    answered, applied, status = large_commit(lf, ddb, stack.table_prefix + "lf_pending_writes", writes)
    report.check(f"CommitTransaction of {writes:,} writes: the answer (within the work budget, "
                 f"{work_budget.seconds():.0f} s, + one DynamoDB transaction); the apply finished by the cleaner",
                 f"answer {ms(answered)} ({status}); applied after {ms(applied)}", f"answer ≤ {work_budget.seconds() + 1:.0f} s",
                 answered <= work_budget.seconds() + 1)
    report.notes.append(
        f"Layout: transaction i adds {PER_PARTITION} objects to each of the {GROUP} partitions of group "
        f"i // {GROUP}; a partition's 100 objects come from {GROUP} transactions. The as-of query reads a "
        f"partition half written at commit #{old_index} ({expected_old} of 100 objects then), so later "
        f"versions of it exist; the latest query reads a partition complete since the first {GROUP} commits.")
    report.notes.append("Commit latency: the CommitTransaction call alone (writes made before), new "
                        "objects in a partition of their own, on the full table.")


if __name__ == "__main__":
    main()
