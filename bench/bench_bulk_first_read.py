"""The first GetPartitions after a bulk load, and the ones after it, at up to a million partitions
(issue #46): no request may work past the work budget, however much digest work the load left.

Loads, through BatchCreatePartition (100 a call, several threads: the digest state a real bulk
load leaves, about 2 delta items per 100 partitions), a table of ``--partitions`` with no index
and one with an index on ``(region, day)``, plus a ``--small`` table with that index; moto's
server gets the unindexed table at ``--moto-partitions`` (default min(N, 100,000): moto cannot
hold a million quickly). Then, in one run:

* right after each load, the first unindexed GetPartitions (every page): its longest single
  request and its total time, and items read per partition returned;
* the same query again (``--runs`` times, "later"), and moto's server on it;
* on the indexed table, the first and later ``day = 17`` (not served by the index: ``day`` is
  not its leading key), and a selective indexed query (``region = ...``: 392 rows) at N and at
  ``--small``, interleaved;
* one raw 1 MB DynamoDB Query page of the partitions, for "the work budget + one DynamoDB page".

Run: ``.venv/bin/python -m bench.bench_bulk_first_read [--partitions 1000000] [--quick]``
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
from typing import Any, Optional, Sequence

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from bench import common  # noqa: E402
from bench.bench_partitions import MotoServer, create_partitions, size_label, table_record  # noqa: E402
from bench.common import log, make_client, run_parallel  # noqa: E402
from infra.local.stack import CatalogStack  # noqa: E402

DATABASE = "bench"
KEYS = [{"Name": "region", "Type": "string"}, {"Name": "day", "Type": "int"}, {"Name": "shard", "Type": "int"}]
DAYS, SHARDS = 28, 14
PER_REGION = DAYS * SHARDS  # 392: what the selective indexed query returns at every size
INDEX = {"IndexName": "by_region_day", "Keys": ["region", "day"]}
# Leading key region has no range (LIKE '%3' is no prefix): every partition is a candidate.
UNINDEXED = "shard >= 0 AND day = 17 AND region LIKE '%3'"
UNSERVED = "day = 17"  # on the indexed table: day is not the index's leading key
SELECTIVE = "region = 'r00003'"
BUDGET = 5.0  # GLUE_WORK_BUDGET_SECONDS, the service's default (the stack sets none)


def values_of(i: int) -> list[str]:
    """Partition ``i``: 392 per region (28 days x 14 shards), regions numbered from 0."""
    return [f"r{i // PER_REGION:05d}", str(1 + (i // SHARDS) % DAYS), str(i % SHARDS)]


def partition_input(i: int) -> dict[str, Any]:
    region, day, shard = values_of(i)
    return {"Values": [region, day, shard],
            "StorageDescriptor": {"Location": f"s3://bench-lake/bulk/region={region}/day={day}/shard={shard}/",
                                  "InputFormat": "org.apache.hadoop.mapred.TextInputFormat",
                                  "SerdeInfo": {"SerializationLibrary": "org.openx.data.jsonserde.JsonSerDe"}},
            "Parameters": {"classification": "json", "recordCount": str(1000 + i % 977)}}


def table_input(name: str) -> dict[str, Any]:
    return {"Name": name, "PartitionKeys": KEYS, "TableType": "EXTERNAL_TABLE",
            "StorageDescriptor": {"Columns": [{"Name": "payload", "Type": "string"}],
                                  "Location": f"s3://bench-lake/{name}/"}}


def load(clients: Sequence[Any], table: str, count: int) -> float:
    """BatchCreatePartition of partitions 0..count-1, 100 a call, one thread per client."""
    chunks = [range(start, min(count, start + 100)) for start in range(0, count, 100)]
    return run_parallel(clients, chunks, lambda client, chunk: create_partitions(
        client, table, [partition_input(i) for i in chunk]))


def expected(count: int, expression: str) -> int:
    """How many of partitions 0..count-1 ``expression`` matches (the benchmark's three)."""
    rows = (values_of(i) for i in range(count))
    if expression == UNINDEXED:
        return sum(1 for r, d, s in rows if d == "17" and r.endswith("3"))
    if expression == UNSERVED:
        return sum(1 for _, d, _ in rows if d == "17")
    return sum(1 for r, _, _ in rows if r == "r00003")


@dataclass
class Listing:
    """One full answer (every page): per-request seconds, partitions, items read."""

    requests: list[float] = field(default_factory=list)
    returned: int = 0
    items_read: Optional[int] = None

    @property
    def total(self) -> float:
        return sum(self.requests)

    @property
    def longest(self) -> float:
        return max(self.requests)


def listing(client: Any, table: str, expression: str) -> Listing:
    kwargs: dict[str, Any] = {"DatabaseName": DATABASE, "TableName": table, "Expression": expression}
    result = Listing()
    while True:
        started = time.perf_counter()
        page = client.get_partitions(**kwargs)
        result.requests.append(time.perf_counter() - started)
        result.returned += len(page["Partitions"])
        header = page["ResponseMetadata"]["HTTPHeaders"].get("x-glue-items-read")
        if header is not None:
            result.items_read = (result.items_read or 0) + int(header)
        if not page.get("NextToken"):
            return result
        kwargs["NextToken"] = page["NextToken"]


def checked(result: Listing, want: int, what: str) -> Listing:
    if result.returned != want:
        raise RuntimeError(f"{what}: {result.returned:,} partitions, expected {want:,}")
    return result


def _take_json(response_dict: dict[str, Any], customized_response_dict: dict[str, Any], **_: Any) -> None:
    """botocore ``before-parse`` hook: the page taken with one json.loads, as the service takes it
    (store/dynamo/fast_parse.py), not with botocore's walk of every attribute."""
    body = response_dict.get("body")
    if response_dict.get("status_code") == 200 and body:
        customized_response_dict.update(json.loads(body))
        response_dict["body"] = b"{}"


def raw_page(ddb: Any, prefix: str, uid: str, runs: int = 5) -> float:
    """Median seconds of one 1 MB Query page of the table's partitions, straight from DynamoDB
    (consistent, as the service reads)."""
    ddb.meta.events.register("before-parse.dynamodb.Query", _take_json, unique_id="bench-bulk-json-pages")
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        ddb.query(TableName=prefix + "partitions", KeyConditionExpression="table_uid = :u",
                  ExpressionAttributeValues={":u": {"S": uid}}, ConsistentRead=True)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def settle(ddb: Any, prefix: str, table: str, timeout: float = 120.0) -> float:
    """Wait until the table's digest is compacted (at most 8 items: a million rows are 7), or
    holds few enough deltas to need no compaction and stays so for 5 s; the seconds waited."""
    uid = table_record(ddb, prefix, table)["uid"]["S"]
    started = time.perf_counter()
    counts: list[int] = []
    while time.perf_counter() - started < timeout:
        counts.append(ddb.query(TableName=prefix + "partition_digests", KeyConditionExpression="table_uid = :u",
                                ExpressionAttributeValues={":u": {"S": uid}}, Select="COUNT",
                                ConsistentRead=True)["Count"])
        if counts[-1] <= 8 or (counts[-1] <= 72 and len(counts) >= 6 and len(set(counts[-6:])) == 1):
            break
        time.sleep(1.0)
    return time.perf_counter() - started


def seconds(value: float) -> str:
    return f"{value * 1000:,.0f} ms" if value < 1 else f"{value:,.2f} s"


def per_partition(result: Listing) -> str:
    if result.items_read is None or not result.returned:
        return "-"
    return f"{result.items_read / result.returned:.2f} ({result.items_read:,} ÷ {result.returned:,})"


def parse_args(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, help="partitions per large table (default 1,000,000; quick 20,000)")
    parser.add_argument("--small", type=int, help="the small indexed table (default 10,000; quick 2,000)")
    parser.add_argument("--moto-partitions", type=int, help="moto's table (default min(N, 100,000))")
    parser.add_argument("--runs", type=int, help="later listings per case (default 5; quick 2)")
    parser.add_argument("--selective-runs", type=int, help="selective indexed runs per size (default 30; quick 8)")
    parser.add_argument("--threads", type=int, default=4, help="loading threads (default 4)")
    parser.add_argument("--no-moto", action="store_true")
    parser.add_argument("--quick", action="store_true", help="small tables, few runs: a smoke run")
    parser.add_argument("--log-dir", type=Path, help="keep the server's and DynamoDB Local's logs here")
    parser.add_argument("--db-path", type=Path, help="DynamoDB Local on disk under this new directory, as "
                                                     "`make run` keeps it (default: in memory)")
    args = parser.parse_args(argv)
    args.partitions = args.partitions or (20_000 if args.quick else 1_000_000)
    args.small = args.small or (2_000 if args.quick else 10_000)
    args.moto_partitions = args.moto_partitions or min(args.partitions, 100_000)
    args.runs = args.runs or (2 if args.quick else 5)
    args.selective_runs = args.selective_runs or (8 if args.quick else 30)
    return args


def main(argv: Optional[Sequence[str]] = None) -> None:
    args = parse_args(argv)
    n, label = args.partitions, size_label(args.partitions)
    report = common.Report(["Table", "Query", "Listing", "Longest request", "Total", "Requests", "Returned",
                            "Items read per partition returned"])
    rows = report.tables[0][1]

    def row(table: str, expression: str, what: str, result: Listing) -> None:
        rows.append((table, f"`{expression}`", what, seconds(result.longest), seconds(result.total),
                     str(len(result.requests)), f"{result.returned:,}", per_partition(result)))
        log(" | ".join(rows[-1]))  # as it comes: a run cut short still shows what it measured

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-bulk-") as tmp:
        log_dir = args.log_dir or Path(tmp)
        with CatalogStack(db_path=args.db_path, log_dir=log_dir) as stack:
            moto = None if args.no_moto else MotoServer(log_dir / "moto.log").start()
            try:
                clients = [make_client("glue", stack.endpoint, args.threads) for _ in range(args.threads)]
                glue = clients[0]
                ddb = make_client("dynamodb", stack.ddb_endpoint, access_key=stack.ddb_access_key_id)
                glue.create_database(DatabaseInput={"Name": DATABASE})
                # Glue folds table names to lower case ("1M" -> "1m"); table_record looks them up so.
                flat, indexed, small = (f"flat_{label}".lower(), f"indexed_{label}".lower(),
                                        f"indexed_{size_label(args.small)}".lower())
                want = {e: expected(n, e) for e in (UNINDEXED, UNSERVED, SELECTIVE)}

                glue.create_table(DatabaseName=DATABASE, TableInput=table_input(flat))
                log(f"loading {n:,} partitions into {flat} (no index)")
                load_flat = load(clients, flat, n)
                log(f"loaded in {load_flat:,.0f} s; first unindexed GetPartitions")
                first = checked(listing(glue, flat, UNINDEXED), want[UNINDEXED], "first unindexed")
                row(flat, UNINDEXED, "first after the load", first)
                later = [checked(listing(glue, flat, UNINDEXED), want[UNINDEXED], "later unindexed")
                         for _ in range(args.runs)]
                for result in later:
                    row(flat, UNINDEXED, "later", result)

                glue.create_table(DatabaseName=DATABASE, TableInput={**table_input(indexed)},
                                  PartitionIndexes=[INDEX])
                log(f"loading {n:,} partitions into {indexed} (index {INDEX['Keys']})")
                load_indexed = load(clients, indexed, n)
                log(f"loaded in {load_indexed:,.0f} s; first `{UNSERVED}`")
                first_unserved = checked(listing(glue, indexed, UNSERVED), want[UNSERVED], "first day = 17")
                row(indexed, UNSERVED, "first after the load", first_unserved)
                later_unserved = [checked(listing(glue, indexed, UNSERVED), want[UNSERVED], "later day = 17")
                                  for _ in range(args.runs)]
                for result in later_unserved:
                    row(indexed, UNSERVED, "later", result)

                glue.create_table(DatabaseName=DATABASE, TableInput=table_input(small), PartitionIndexes=[INDEX])
                load(clients, small, args.small)
                log(f"selective indexed query at {args.small:,} and {n:,}, interleaved")
                selective: dict[str, list[float]] = {small: [], indexed: []}
                first_selective = checked(listing(glue, indexed, SELECTIVE), want[SELECTIVE], "first selective")
                row(indexed, SELECTIVE, "first", first_selective)
                for table in (small, indexed):
                    listing(glue, table, SELECTIVE)  # one unrecorded round
                for turn in range(args.selective_runs):
                    for table in ((small, indexed) if turn % 2 == 0 else (indexed, small)):
                        result = checked(listing(glue, table, SELECTIVE), expected(
                            args.small if table == small else n, SELECTIVE), "selective")
                        selective[table].append(result.total)
                row(indexed, SELECTIVE, f"median of {args.selective_runs}",
                    Listing([statistics.median(selective[indexed])], result.returned, result.items_read))

                page = raw_page(ddb, stack.table_prefix, table_record(ddb, stack.table_prefix, flat)["uid"]["S"])

                moto_result = None
                warm_same = warm_settled = None
                if moto is not None:
                    moto_glue = make_client("glue", moto.endpoint, args.threads)
                    moto_glue.create_database(DatabaseInput={"Name": DATABASE})
                    moto_table = f"flat_{size_label(args.moto_partitions)}".lower()
                    moto_glue.create_table(DatabaseName=DATABASE, TableInput=table_input(moto_table))
                    log(f"loading {args.moto_partitions:,} partitions into moto")
                    load([moto_glue], moto_table, args.moto_partitions)
                    want_moto = expected(args.moto_partitions, UNINDEXED)
                    moto_runs = [checked(listing(moto_glue, moto_table, UNINDEXED), want_moto, "moto")
                                 for _ in range(max(2, args.runs // 2 + 1))]
                    for result in moto_runs:
                        row(f"moto {moto_table}", UNINDEXED, "moto's server", result)
                    moto_result = statistics.median(r.total for r in moto_runs)
                    if args.moto_partitions != n:  # ours at moto's size too, side by side
                        same = f"flat_{size_label(args.moto_partitions)}".lower()
                        glue.create_table(DatabaseName=DATABASE, TableInput=table_input(same))
                        log(f"loading {args.moto_partitions:,} partitions into {same}")
                        load(clients, same, args.moto_partitions)
                        listing(glue, same, UNINDEXED)  # its first read: measured above at N
                        ours_same = [checked(listing(glue, same, UNINDEXED), want_moto, "ours at moto's size")
                                     for _ in range(args.runs)]
                        for result in ours_same:
                            row(same, UNINDEXED, "later", result)
                        warm_same = statistics.median(r.total for r in ours_same)
                    # And once the load's deltas are compacted (the background job): the steady state.
                    compare = same if args.moto_partitions != n else flat
                    waited = settle(ddb, stack.table_prefix, compare)
                    settled = [checked(listing(glue, compare, UNINDEXED), want_moto, "settled")
                               for _ in range(args.runs)]
                    for result in settled:
                        row(compare, UNINDEXED, f"digest compacted (waited {waited:,.0f} s)", result)
                    warm_settled = statistics.median(r.total for r in settled)
            finally:
                if moto is not None:
                    moto.stop()

    everything = [first, *later, first_unserved, *later_unserved, first_selective]
    longest = max(r.longest for r in everything)
    limit = BUDGET + page
    report.check("longest single request, any listing above", seconds(longest),
                 f"≤ work budget + one DynamoDB page ({BUDGET:.0f} s + {seconds(page)})", longest <= limit)
    report.check(f"first unindexed at {label}: longest request / total", f"{seconds(first.longest)} / "
                 f"{seconds(first.total)} ({len(first.requests)} requests)", "longest ≤ budget + one page",
                 first.longest <= limit)
    warm = statistics.median(r.total for r in later)
    report.check(f"later unindexed at {label}: longest request / median total",
                 f"{seconds(max(r.longest for r in later))} / {seconds(warm)}", "report", None)
    report.check(f"first `{UNSERVED}` on the indexed {label}: longest request / total",
                 f"{seconds(first_unserved.longest)} / {seconds(first_unserved.total)} "
                 f"({len(first_unserved.requests)} requests)", "longest ≤ budget + one page",
                 first_unserved.longest <= limit)
    report.check(f"later `{UNSERVED}` at {label}: longest request / median total",
                 f"{seconds(max(r.longest for r in later_unserved))} / "
                 f"{seconds(statistics.median(r.total for r in later_unserved))}", "report", None)
    if moto_result is not None and warm_settled is not None:
        same_label = size_label(args.moto_partitions)
        ours = warm if warm_same is None else warm_same
        report.check(f"moto ÷ later unindexed, both at {same_label}, digest compacted", f"{moto_result / warm_settled:.1f}× "
                     f"({seconds(moto_result)} ÷ {seconds(warm_settled)})", "≥ 20×", moto_result / warm_settled >= 20)
        report.check(f"moto ÷ later unindexed, both at {same_label}, right after the load", f"{moto_result / ours:.1f}× "
                     f"({seconds(moto_result)} ÷ {seconds(ours)})", "report", None)
        if warm_same is not None:
            report.check(f"moto at {same_label} ÷ later unindexed at {label}",
                         f"{moto_result / warm:.1f}× ({seconds(moto_result)} ÷ {seconds(warm)})", "report", None)
    big, little = statistics.median(selective[indexed]), statistics.median(selective[small])
    report.check(f"selective indexed `{SELECTIVE}`: median at {label} ÷ at {size_label(args.small)}",
                 f"{big / little:.2f} ({seconds(big)} ÷ {seconds(little)})", "≤ 1.3", big / little <= 1.3)
    report.check("items read per partition returned: first / later unindexed", f"{per_partition(first)} / "
                 f"{per_partition(later[-1])}", "report", None)
    report.notes.append(f"DynamoDB Local {'on disk (-dbPath)' if args.db_path else 'in memory'}; "
                        f"loads through BatchCreatePartition: {n:,} in {load_flat:,.0f} s (no index), "
                        f"{load_indexed:,.0f} s (one index); one raw 1 MB Query page {seconds(page)}; "
                        f"whole run {time.perf_counter() - started:,.0f} s")
    report.print(common.command_line("bench_bulk_first_read", argv), common.machine())


if __name__ == "__main__":
    main()
