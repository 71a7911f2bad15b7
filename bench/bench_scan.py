"""Unindexed GetPartitions and Segment listings: the partition digest against a read of every
partition, moto, and a raw boto3 Query loop over the same DynamoDB items, side by side.

* ``unindexed_rows``: an expression no index serves (the OR query of bench_partitions plus
  ``OR day IS NULL``, 192 matches at every size) on the service with the digest, on a second
  server on the same DynamoDB Local with it switched off (GLUE_PARTITION_DIGEST=0: every
  partition read, as before), on moto, and a raw boto3 Query of every partition item.
* ``segment_rows``: a full listing in 1 / 4 / 10 Segments on parallel threads, with and
  without the digest: wall time, and the DynamoDB items each segment read.

Both return rows for ``bench.common.print_table`` (headers ``UNINDEXED_HEADER`` and
``SEGMENT_HEADER``); bench_partitions can call them on its own tables. Alone:

Run: ``.venv/bin/python -m bench.bench_scan [--sizes 10000,100000] [--segments 10000] [--quick]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from bench.bench_partitions import (DATABASE, OR_QUERY, SCAN_SUFFIX, MotoServer, fetch, layout, load,  # noqa: E402
                                    partition_input, query_all, size_label, table_input, table_record)
from bench.common import log, make_client, print_table  # noqa: E402
from infra.local.stack import CatalogStack  # noqa: E402

UNINDEXED = f"({OR_QUERY}){SCAN_SUFFIX}"  # 192 matches; no index or key range serves it
UNINDEXED_HEADER = ["Size", "Case", "Median", "Min", "Runs", "Returned", "DynamoDB items read",
                    "÷ moto", "÷ raw Query"]
SEGMENT_HEADER = ["Partitions", "Case", "TotalSegments", "Median wall time", "÷ 1 segment",
                  "Items read per segment (max)", "Items read, all segments"]
NO_DIGEST = {"GLUE_PARTITION_DIGEST": "0"}


def _timed(call: Callable[[], Any], runs: int) -> tuple[list[float], Any]:
    samples, result = [], None
    for _ in range(runs):
        started = time.perf_counter()
        result = call()
        samples.append(time.perf_counter() - started)
    return samples, result


def _interleaved(calls: dict[str, Callable[[], Any]], runs: int) -> dict[str, tuple[list[float], Any]]:
    """Every call once per round (one unrecorded round first), order reversed every other round."""
    results: dict[str, tuple[list[float], Any]] = {name: ([], None) for name in calls}
    names = list(calls)
    for name in names:
        calls[name]()
    for round_number in range(runs):
        for name in names if round_number % 2 == 0 else reversed(names):
            samples, result = _timed(calls[name], 1)
            results[name] = (results[name][0] + samples, result)
    return results


def _seconds(value: float) -> str:
    return f"{value * 1000:,.0f} ms" if value < 10 else f"{value:,.1f} s"


def seconds_of(text: str) -> float:
    """The seconds a time cell of these tables shows (the inverse of ``_seconds``)."""
    number, unit = text.replace(",", "").split()
    return float(number) / 1000 if unit == "ms" else float(number)


def unindexed_rows(stack: CatalogStack, glue: Any, plain_glue: Optional[Any], moto_glue: Optional[Any],
                   ddb: Any, tables: dict[int, str], runs: int = 3) -> list[list[str]]:
    """Rows of UNINDEXED_HEADER: per size, the unindexed query on the service (digest), on
    ``plain_glue`` (a server with GLUE_PARTITION_DIGEST=0, or None), on moto (or None), and a raw
    boto3 Query loop reading every partition item of the table from DynamoDB Local."""
    rows: list[list[str]] = []
    for size, table in tables.items():
        uid = table_record(ddb, stack.table_prefix, table)["uid"]["S"]
        calls: dict[str, Callable[[], Any]] = {
            "service, digest": lambda t=table: fetch(glue, t, UNINDEXED),
            "raw boto3 Query of every partition item": lambda u=uid: (
                [], len(query_all(ddb, stack.table_prefix + "partitions", "table_uid", u, ConsistentRead=True))),
        }
        if plain_glue is not None:
            calls["service, every partition read (no digest)"] = lambda t=table: fetch(plain_glue, t, UNINDEXED)
        if moto_glue is not None:
            # moto's filter parser may not take IS NULL; the same answer without that alternative.
            calls["moto"] = lambda t=table: fetch(moto_glue, t, OR_QUERY)
        log(f"unindexed query, {size:,} partitions: {', '.join(calls)}; {runs} interleaved runs")
        results = _interleaved(calls, runs)
        moto = statistics.median(results["moto"][0]) if "moto" in results else None
        raw = statistics.median(results["raw boto3 Query of every partition item"][0])
        answers = {name: sorted(result[0]) for name, (_, result) in results.items() if not name.startswith("raw")}
        if len({tuple(a) for a in answers.values()}) != 1:
            raise RuntimeError(f"answers differ at {size:,}: { {k: len(v) for k, v in answers.items()} }")
        for name, (samples, result) in results.items():
            median = statistics.median(samples)
            returned = "-" if name.startswith("raw") else f"{len(result[0]):,}"
            items = f"{result[1]:,}" if result[1] is not None else "-"
            rows.append([size_label(size), name, _seconds(median), _seconds(min(samples)), str(len(samples)),
                         returned, items, f"{median / moto:.2f}" if moto else "-", f"{median / raw:.2f}"])
    return rows


def list_segment(client: Any, table: str, total: int, number: int) -> tuple[int, int]:
    """(partitions, items read) of one segment, every page."""
    kwargs: dict[str, Any] = {"DatabaseName": DATABASE, "TableName": table,
                              "Segment": {"SegmentNumber": number, "TotalSegments": total}}
    found = read = 0
    while True:
        page = client.get_partitions(**kwargs)
        found += len(page["Partitions"])
        read += int(page["ResponseMetadata"]["HTTPHeaders"].get("x-glue-items-read", 0))
        if not page.get("NextToken"):
            return found, read
        kwargs["NextToken"] = page["NextToken"]


def cores_busy(client: Any, table: str, pids: Sequence[Optional[int]], runs: int = 2) -> float:
    """How many cores a 1-Segment listing of ``table`` keeps busy: the CPU seconds of the
    processes ``pids`` (the service, DynamoDB Local) and of this one (the client) over the wall
    time, the best of ``runs``. Near the machine's core count, more Segments cannot finish
    sooner: the work is already spread over every core."""
    from bench.bench_write_cpu import cpu_seconds  # a /proc reader; this module's importers need not

    def cpu() -> float:
        return sum(cpu_seconds(pid) for pid in pids if pid is not None) + time.process_time()
    best = 0.0
    for _ in range(runs):
        cpu0, wall0 = cpu(), time.perf_counter()
        list_segment(client, table, 1, 0)
        best = max(best, (cpu() - cpu0) / (time.perf_counter() - wall0))
    return best


def segment_rows(clients: Sequence[Any], plain_clients: Optional[Sequence[Any]], table: str, count: int,
                 runs: int = 3) -> list[list[str]]:
    """Rows of SEGMENT_HEADER: the full listing of ``table`` (``count`` partitions) in 1, 4 and
    10 segments on parallel threads (``clients``: at least 10), with the digest and (with
    ``plain_clients``) without it."""
    servers = {"service, digest": clients}
    if plain_clients is not None:
        servers["service, no digest"] = plain_clients
    calls: dict[str, Callable[[], Any]] = {}
    for name, lanes in servers.items():
        for total in (1, 4, 10):
            def call(lanes: Sequence[Any] = lanes, total: int = total) -> list[tuple[int, int]]:
                with ThreadPoolExecutor(total) as pool:
                    return list(pool.map(lambda n: list_segment(lanes[n], table, total, n), range(total)))
            calls[f"{name}|{total}"] = call
    log(f"segments of {count:,} partitions: {len(calls)} cases, {runs} interleaved runs")
    results = _interleaved(calls, runs)
    rows = []
    for name in servers:
        one = statistics.median(results[f"{name}|1"][0])
        for total in (1, 4, 10):
            samples, parts = results[f"{name}|{total}"]
            if sum(found for found, _ in parts) != count:
                raise RuntimeError(f"{name}, {total} segments: {sum(f for f, _ in parts)} partitions, not {count}")
            median = statistics.median(samples)
            rows.append([f"{count:,}", name, str(total), _seconds(median), f"{median / one:.2f}",
                         f"{max(read for _, read in parts):,}", f"{sum(read for _, read in parts):,}"])
    return rows


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", help="partition counts for the unindexed query (default 10000,100000)")
    parser.add_argument("--segments", type=int, help="partitions of the Segment listing (default 10000)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-moto", action="store_true")
    parser.add_argument("--quick", action="store_true", help="2,000 and 5,000 partitions, 2 runs")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in (args.sizes or ("2000,5000" if args.quick else "10000,100000")).split(",")]
    segment_count = args.segments or (2000 if args.quick else 10_000)
    runs = 2 if args.quick else args.runs
    with tempfile.TemporaryDirectory(prefix="bench-scan-") as tmp, CatalogStack(log_dir=Path(tmp)) as stack:
        plain = stack.extra_server(NO_DIGEST, name="no-digest").start()
        moto = None if args.no_moto else MotoServer(Path(tmp) / "moto.log").start()
        try:
            ours = [make_client("glue", stack.endpoint, 10) for _ in range(10)]
            theirs = [make_client("glue", plain.endpoint, 10) for _ in range(10)]
            ddb = make_client("dynamodb", stack.ddb_endpoint, access_key=stack.ddb_access_key_id)
            ours[0].create_database(DatabaseInput={"Name": DATABASE})
            moto_glue = None
            if moto is not None:
                moto_glue = make_client("glue", moto.endpoint)
                moto_glue.create_database(DatabaseInput={"Name": DATABASE})
            tables = {size: f"scan_{size_label(size)}" for size in sizes}
            for size, table in tables.items():
                inputs = [partition_input(v) for v in layout(size)]
                ours[0].create_table(DatabaseName=DATABASE, TableInput=table_input(table))
                log(f"loading {size:,} partitions ({table})")
                load(ours[:4], table, inputs)
                if moto_glue is not None:
                    moto_glue.create_table(DatabaseName=DATABASE, TableInput=table_input(table))
                    load([moto_glue], table, inputs)
            unindexed = unindexed_rows(stack, ours[0], theirs[0], moto_glue, ddb, tables, runs)
            segment_table = tables.get(segment_count)
            if segment_table is None:
                segment_table = f"scan_{size_label(segment_count)}"
                ours[0].create_table(DatabaseName=DATABASE, TableInput=table_input(segment_table))
                load(ours[:4], segment_table, [partition_input(v) for v in layout(segment_count)])
            segments = segment_rows(ours, theirs, segment_table, segment_count, runs)
        finally:
            plain.stop()
            if moto is not None:
                moto.stop()
    print(f"\nUnindexed GetPartitions `{UNINDEXED}` (moto: without `{SCAN_SUFFIX.strip()}`)\n")
    print_table(UNINDEXED_HEADER, unindexed)
    print(f"\nFull listing of {segment_count:,} partitions in Segments, on parallel threads\n")
    print_table(SEGMENT_HEADER, segments)


if __name__ == "__main__":
    main()
