"""A full GetPartitions listing with ExcludeColumnSchema against the same listing without it.

Spark and Athena-style readers list partitions with ExcludeColumnSchema (the table's schema is
enough for them): the service then answers each partition without its StorageDescriptor's
Columns, which it cannot splice from the stored text as it is but must decode and encode again.
Printed, side by side in interleaved rounds on one table: the service's CPU (from /proc) and
the wall time of a whole listing either way, and their ratios (ExcludeColumnSchema ÷ full).
Before 2026-11-28 the edit went through ``json`` both ways: 1.43× the full listing's service
CPU in this benchmark (0.73 ÷ 0.51 CPU-s for 10,000 partitions); by orjson, 0.81–0.88×.

Run: ``.venv/bin/python -m bench.bench_exclude_columns [--partitions 10000] [--runs 3] [--quick]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from bench import bench_partitions as bp  # noqa: E402
from bench import common  # noqa: E402
from bench.bench_overhead import build_table, cpu_seconds  # noqa: E402
from bench.common import log, make_client  # noqa: E402
from infra.local.stack import CatalogStack  # noqa: E402


def list_all(glue: Any, table: str, exclude: bool) -> int:
    """Partitions in a whole listing (pages of 1,000, NextToken followed)."""
    kwargs: dict[str, Any] = {"DatabaseName": bp.DATABASE, "TableName": table, "MaxResults": 1000,
                              "ExcludeColumnSchema": exclude}
    count = 0
    while True:
        page = glue.get_partitions(**kwargs)
        count += len(page["Partitions"])
        if not page.get("NextToken"):
            return count
        kwargs["NextToken"] = page["NextToken"]


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, help="partitions in the table (default 10000; quick 1000)")
    parser.add_argument("--runs", type=int, help="interleaved rounds (default 3; quick 1)")
    parser.add_argument("--quick", action="store_true", help="a small table, one round: a smoke run")
    args = parser.parse_args(argv)
    partitions = args.partitions or (1000 if args.quick else 10000)
    runs = args.runs or (1 if args.quick else 3)
    report = common.Report()
    with CatalogStack() as stack:
        clients = [make_client("glue", stack.endpoint) for _ in range(4)]
        glue = clients[0]
        glue.create_database(DatabaseInput={"Name": bp.DATABASE})
        log(f"loading {partitions:,} partitions")
        build_table(glue, clients, "sales", partitions)
        server = stack.server.process
        pid = server.pid if server is not None else None
        cpu: dict[bool, list[float]] = {False: [], True: []}
        wall: dict[bool, list[float]] = {False: [], True: []}
        for number in range(runs + 1):  # round 0 warms up
            for exclude in (False, True) if number % 2 else (True, False):
                before, started = cpu_seconds(pid), time.perf_counter()
                found = list_all(glue, "sales", exclude)
                seconds, used = time.perf_counter() - started, cpu_seconds(pid) - before
                if found != partitions:
                    raise SystemExit(f"listed {found} partitions, not {partitions}")
                if number:
                    wall[exclude].append(seconds)
                    cpu[exclude].append(used)
    full_cpu, slim_cpu = statistics.median(cpu[False]), statistics.median(cpu[True])
    full_wall, slim_wall = statistics.median(wall[False]), statistics.median(wall[True])
    report.check(f"Full listing of {partitions:,} partitions, service CPU: ExcludeColumnSchema ÷ full "
                 f"(medians of {runs} interleaved rounds)",
                 f"{slim_cpu / full_cpu:.2f} ({slim_cpu:.2f} ÷ {full_cpu:.2f} CPU-s)", "report", None)
    report.check("Same, wall time through boto3 (the client parses fewer members without Columns)",
                 f"{slim_wall / full_wall:.2f} ({slim_wall:.2f} ÷ {full_wall:.2f} s)", "report", None)
    report.print(common.command_line("bench_exclude_columns", argv),
                 f"{common.machine()}; service and DynamoDB Local (in memory) each in their own process")


if __name__ == "__main__":
    main()
