"""What a full partition scan costs, per partition examined, next to a raw DynamoDB read.

Two kinds of full scan of the same table, each through the service (boto3 GetPartitions,
following NextToken) and as a raw boto3 Query loop over the very same DynamoDB items straight
into DynamoDB Local (consistent reads, default 1 MB pages, responses taken with one
``json.loads`` as the service's own ``store/fast_parse`` does — the floor under any scan; the
same loop with botocore's parser and with ``Limit=100`` are printed as diagnosis):

* the unindexed query: an expression no partition index serves (``IN ... OR day IS NULL``,
  192 matches), so the service examines every partition and returns few;
* the full listing: GetPartitions without an expression, every partition returned. Its
  checked row takes the service's pages with one ``json.loads`` too (a client hook), so both
  sides pay the same client-side parse; the same listing through a plain boto3 client, whose
  parser walks every one of the 10k partitions in the client, is reported next to it.

Printed per size: service seconds ÷ raw Query seconds (run interleaved, round by round), items
examined (``x-glue-items-read``), µs per item examined; the raw loop with ``Limit=100`` as a
diagnosis (what small DynamoDB pages cost); and, for the unindexed query at the largest size,
the longest single GetPartitions request seen and the pages it took (the work budget,
``GLUE_WORK_BUDGET_SECONDS``, ends a request early with a NextToken).

Called from ``bench.bench_partitions`` as ``scan_cost(report, glue, ddb, prefix, tables, runs)``;
runnable alone: ``.venv/bin/python -m bench.bench_scan_cost [--sizes 10000,100000] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import boto3

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from bench import common  # noqa: E402
from bench.bench_partitions import (DATABASE, IN_QUERY, QUERY_INDEX, SCAN_SUFFIX, layout, load,  # noqa: E402
                                    partition_input, size_label, table_input, table_record)
from bench.common import log, make_client  # noqa: E402
from chalicelib.store.dynamo import fast_parse  # noqa: E402
from infra.local.stack import CatalogStack  # noqa: E402

UNINDEXED = f"({IN_QUERY}){SCAN_SUFFIX}"
MAX_PAGES = 100_000  # GetPartitions pages followed per listing (a bound, never reached)


class Listing:
    """Every page of one GetPartitions listing: partitions returned, items examined, pages,
    and the longest single request (seconds)."""

    def __init__(self, client: Any, table: str, expression: Optional[str]) -> None:
        self.client, self.table, self.expression = client, table, expression
        self.returned = self.items = self.pages = 0
        self.longest = 0.0

    def __call__(self) -> None:
        kwargs: dict[str, Any] = {"DatabaseName": DATABASE, "TableName": self.table}
        if self.expression:
            kwargs["Expression"] = self.expression
        self.returned = self.items = self.pages = 0
        for _ in range(MAX_PAGES):
            start = time.perf_counter()
            response = self.client.get_partitions(**kwargs)
            self.longest = max(self.longest, time.perf_counter() - start)
            self.pages += 1
            self.returned += len(response["Partitions"])
            self.items += int(response["ResponseMetadata"]["HTTPHeaders"].get("x-glue-items-read", 0))
            if not response.get("NextToken"):
                return
            kwargs["NextToken"] = response["NextToken"]
        raise RuntimeError(f"GetPartitions on {self.table} still had pages after {MAX_PAGES}")


def _take_json(response_dict: dict[str, Any], customized_response_dict: dict[str, Any], **_: Any) -> None:
    """botocore ``before-parse`` hook: a successful GetPartitions page taken with one json.loads."""
    body = response_dict.get("body")
    if response_dict.get("status_code") == 200 and body:
        customized_response_dict.update(json.loads(body))
        response_dict["body"] = b"{}"


def json_parsed(glue: Any) -> Any:
    """A copy of a Glue client that takes GetPartitions pages with one json.loads, as the raw
    floor takes DynamoDB's: the service's cost per item without botocore's walk of every
    partition in the client (at 10k partitions that walk costs as much as the service)."""
    client = copy_client(glue)
    client.meta.events.register("before-parse.glue.GetPartitions", _take_json, unique_id="bench-json-pages")
    return client


def raw_scan(ddb: Any, table_name: str, table_uid: str, limit: Optional[int] = None) -> Callable[[], int]:
    """A boto3 Query loop over every partition item of one table, as the service stores them
    (consistent reads); returns the items read. ``limit``: DynamoDB's Limit per page."""
    def call() -> int:
        kwargs: dict[str, Any] = {"TableName": table_name, "KeyConditionExpression": "#h = :h",
                                  "ExpressionAttributeNames": {"#h": "table_uid"},
                                  "ExpressionAttributeValues": {":h": {"S": table_uid}}, "ConsistentRead": True}
        if limit:
            kwargs["Limit"] = limit
        count = 0
        for _ in range(MAX_PAGES):
            page = ddb.query(**kwargs)
            count += len(page["Items"])
            if "LastEvaluatedKey" not in page:
                return count
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        raise RuntimeError("query did not end")
    return call


def copy_client(client: Any) -> Any:
    """A new boto3 client with ``client``'s endpoint, region, credentials and config."""
    credentials = client._request_signer._credentials  # noqa: SLF001 - the only way to copy them
    return boto3.client(client.meta.service_model.service_name, endpoint_url=client.meta.endpoint_url,
                        region_name=client.meta.region_name, config=client.meta.config,
                        aws_access_key_id=credentials.access_key, aws_secret_access_key=credentials.secret_key)


def _interleaved(calls: Sequence[Callable[[], Any]], runs: int) -> list[list[float]]:
    """Seconds per call, round-robin (order reversed every other round) after one warm-up."""
    for call in calls:
        call()
    samples: list[list[float]] = [[] for _ in calls]
    for round_number in range(runs):
        order = list(enumerate(calls))
        for index, call in (order if round_number % 2 == 0 else reversed(order)):
            start = time.perf_counter()
            call()
            samples[index].append(time.perf_counter() - start)
    return samples


# Sizes up to this also run the botocore-parsed raw loops (a diagnosis; minutes each at 100k).
DIAGNOSE_UP_TO = 20_000


def scan_cost(report: Any, glue: Any, ddb: Any, prefix: str, tables: dict[int, str], runs: int = 3) -> None:
    """Measure and add to ``report`` (anything with ``check(measure, result, target, ok)`` and
    ``notes``) the cost per partition examined of a full scan of each table in ``tables``
    (size -> Glue table name in database ``bench``, loaded with ``bench_partitions.layout``):
    service ÷ a raw boto3 Query loop of the same items, interleaved ``runs`` times; and the
    longest single request of the unindexed query at the largest size."""
    largest = max(tables)
    # The same client with the service's own response parser (one json.loads a page): what
    # DynamoDB Local and the wire cost, without botocore's per-value walk.
    fast_ddb = fast_parse.install(copy_client(ddb))
    json_glue = json_parsed(glue)
    for size in sorted(tables):
        table = tables[size]
        uid = table_record(ddb, prefix, table)["uid"]["S"]
        unindexed = Listing(glue, table, UNINDEXED)
        everything = Listing(glue, table, None)
        everything_json = Listing(json_glue, table, None)
        raw_fast = raw_scan(fast_ddb, prefix + "partitions", uid)
        # The botocore-parsed loops are a diagnosis (what paging and botocore's parser cost);
        # above DIAGNOSE_UP_TO partitions they take minutes each, so only the floor runs there.
        diagnose = size <= DIAGNOSE_UP_TO
        calls: dict[str, Callable[[], Any]] = {"unindexed": unindexed, "everything": everything, "floor": raw_fast,
                                               "everything_json": everything_json}
        if diagnose:
            calls["botocore"] = raw_scan(ddb, prefix + "partitions", uid)
            calls["botocore_limit_100"] = raw_scan(ddb, prefix + "partitions", uid, limit=100)
        log(f"scan cost, {size_label(size)}: unindexed query, full listing, raw Query (1 MB without "
            f"botocore's parser{'; 1 MB and Limit 100 with it' if diagnose else ''}); {runs} interleaved runs")
        samples = _interleaved(list(calls.values()), runs)
        medians = {name: statistics.median(s) for name, s in zip(calls, samples)}
        items = raw_fast()
        label = size_label(size)
        floor = medians["floor"]
        # (name, listing, seconds, how its client took the pages, whether it is the checked row)
        rows = (("unindexed query", unindexed, medians["unindexed"], "boto3", True),
                ("full listing", everything_json, medians["everything_json"],
                 "pages taken with json.loads, as the floor's", True),
                ("full listing", everything, medians["everything"], "boto3: botocore's parser walks every partition in the "
                 "client (reported)", False))
        for name, listing, seconds, client, checked in rows:
            examined = listing.items or items
            ratio = seconds / floor
            report.check(
                f"Full scan, {name} ({listing.returned:,} returned, {listing.pages} pages), {label}, {client}: "
                f"service ÷ raw Query loop of the same items (boto3, 1 MB pages, json.loads)",
                f"{ratio:.2f}× ({seconds:,.2f} s ÷ {floor:,.2f} s; {examined:,} items examined, "
                f"{seconds / examined * 1e6:,.0f} ÷ {floor / items * 1e6:,.0f} µs per item"
                + (f"; ÷ with botocore's parser {seconds / medians['botocore']:.2f}×)" if diagnose else ")"),
                "≤ 1.5×" if checked else "-", ratio <= 1.5 if checked else None)
        if diagnose:
            parsed, limited = medians["botocore"], medians["botocore_limit_100"]
            report.check(f"Raw Query loop, {label}: Limit=100 ÷ 1 MB pages; botocore's parser ÷ json.loads "
                         f"(diagnosis)", f"{limited / parsed:.2f}× ({limited:,.2f} s ÷ {parsed:,.2f} s); "
                         f"{parsed / floor:.2f}× ({parsed:,.2f} s ÷ {floor:,.2f} s)", "-", None)
        if size == largest:
            report.check(f"Longest single GetPartitions request, unindexed query, {label} "
                         f"({unindexed.pages} pages a listing)",
                         f"{unindexed.longest:,.2f} s", "≤ work budget + one DynamoDB page (~5 s)",
                         unindexed.longest <= 6.0)


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", help="partition counts (default 10000,100000; quick: 1000,5000)")
    parser.add_argument("--quick", action="store_true", help="small tables, one run: a smoke run")
    parser.add_argument("--runs", type=int, help="interleaved runs per case (default 3; quick 1)")
    parser.add_argument("--threads", type=int, default=4, help="client threads for loading (default 4)")
    parser.add_argument("--log-dir", type=Path, help="keep DynamoDB Local / server logs here")
    args = parser.parse_args(argv)
    args.sizes = sorted(int(s.replace("_", "")) for s in
                        (args.sizes or ("1000,5000" if args.quick else "10000,100000")).split(","))
    args.runs = args.runs or (1 if args.quick else 3)
    return args


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Start a stack, load the tables, measure, print the report."""
    args = parse_args(argv)
    report = common.Report()
    with tempfile.TemporaryDirectory(prefix="bench-scan-") as tmp:
        stack = CatalogStack(log_dir=args.log_dir or Path(tmp))
        try:
            stack.start()
            clients = [make_client("glue", stack.endpoint, args.threads) for _ in range(args.threads)]
            ddb = make_client("dynamodb", stack.ddb_endpoint, access_key=stack.ddb_access_key_id)
            clients[0].create_database(DatabaseInput={"Name": DATABASE})
            tables = {}
            for size in args.sizes:
                table = tables[size] = f"sales_{size_label(size)}"
                clients[0].create_table(DatabaseName=DATABASE, TableInput=table_input(table),
                                        PartitionIndexes=[QUERY_INDEX])
                log(f"loading {size:,} partitions ({table})")
                load(clients, table, [partition_input(v) for v in layout(size)])
            scan_cost(report, clients[0], ddb, stack.table_prefix, tables, args.runs)
        finally:
            stack.stop()
    report.print(" ".join([".venv/bin/python -m bench.bench_scan_cost", *(sys.argv[1:] if argv is None else argv)]),
                 "service and DynamoDB Local (in memory) in their own processes")


if __name__ == "__main__":
    main()
