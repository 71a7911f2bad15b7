"""GetPartitions Segment: listing a whole table in 1, 4 or 10 parallel segments.

Every segment's Query carries its bucket range as a DynamoDB FilterExpression (docs/design.md,
"Segment"), so each request receives, parses and renders only its share; DynamoDB still reads
every candidate item for each segment. Printed: wall time of the full listing per
TotalSegments (segments fetched on parallel threads, NextToken followed), relative to one
segment, and the DynamoDB items read (x-glue-items-read).

Run: ``.venv/bin/python -m bench.bench_segments [--partitions 10000] [--quick]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_partitions import DATABASE, layout, load, partition_input, table_input  # noqa: E402
from bench.bench_scan import list_segment  # noqa: E402
from bench.common import log, make_client, print_table  # noqa: E402
from infra.local.stack import CatalogStack  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="2,000 partitions, 1 run")
    args = parser.parse_args()
    count, runs = (2_000, 1) if args.quick else (args.partitions, args.runs)
    with CatalogStack() as stack:
        clients = [make_client("glue", stack.endpoint, 10) for _ in range(10)]
        clients[0].create_database(DatabaseInput={"Name": DATABASE})
        clients[0].create_table(DatabaseName=DATABASE, TableInput=table_input("segments"))
        log(f"loading {count:,} partitions")
        load(clients[:4], "segments", [partition_input(v) for v in layout(count)])
        times: dict[int, list[float]] = {1: [], 4: [], 10: []}
        items: dict[int, int] = {}
        for run in range(runs + 1):  # run 0 warms up
            for total in times:
                started = time.perf_counter()
                with ThreadPoolExecutor(total) as pool:
                    parts = list(pool.map(lambda n: list_segment(clients[n], "segments", total, n), range(total)))
                seconds = time.perf_counter() - started
                if sum(found for found, _ in parts) != count:
                    raise SystemExit(f"TotalSegments {total}: {sum(f for f, _ in parts)} partitions, not {count}")
                if run:
                    times[total].append(seconds)
                    items[total] = sum(read for _, read in parts)
        one = statistics.median(times[1])
        print(f"\nFull listing of {count:,} partitions, segments on parallel threads, median of {runs} run(s)\n")
        print_table(["TotalSegments", "Median wall time", "÷ 1 segment", "DynamoDB items read"],
                    [[str(t), f"{statistics.median(v):.2f} s", f"{statistics.median(v) / one:.2f}", f"{items[t]:,}"]
                     for t, v in times.items()])


if __name__ == "__main__":
    main()
