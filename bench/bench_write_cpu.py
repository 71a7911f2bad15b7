"""Server CPU per 10,000 partitions written with BatchCreatePartition (what a Lambda bills).

The service's process and DynamoDB Local's each have their CPU time (utime + stime from
/proc/<pid>/stat) read before and after BatchCreatePartition of N partitions (100 a call) into
a fresh table with 0 and with 3 partition indexes; printed per 10,000 partitions. Two ways:
from a few client threads at once (a bulk load against one local server), and one request at a
time (one Lambda instance serves one request at a time, so nothing else competes in its
process). Each way runs a few times, alternating; medians and ranges are printed, since a VM's
CPU speed drifts. The client's own CPU is not counted: it runs in this process.

Run alone: ``.venv/bin/python -m bench.bench_write_cpu [--partitions 10000] [--repeats 3] [--quick]``
From another benchmark: ``write_cpu(stack, partitions=10_000, threads=4, repeats=3)`` with a
running :class:`infra.local.stack.CatalogStack`; it prints its table and returns the figures."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_partitions import DATABASE, WRITE_INDEXES, layout, load, partition_input, table_input  # noqa: E402
from bench.common import log, make_client, print_table  # noqa: E402
from infra.local.stack import CatalogStack  # noqa: E402

TARGET_CPU_SECONDS = 1.0  # server CPU-s per 10,000 partitions (issue #16)
# What the target is judged on: partitions without indexes (the "about 2 CPU-s" was
# measured so: docs/pipelines.md, 1.0 CPU-s per 5,000, 0 indexes), one request at a time (one
# Lambda instance serves one request at a time, and Lambda bills that). Each index adds an item
# per partition; that and the threaded way are reported beside it, not judged.
JUDGED_INDEXES = 0
_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_times(pid: int) -> tuple[float, float]:
    """(utime, stime) of process ``pid`` (all its threads), in seconds."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    # The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[11]) / _TICKS, int(fields[12]) / _TICKS  # fields 14 and 15 of proc(5)


def cpu_seconds(pid: int) -> float:
    """utime + stime of process ``pid``, in seconds."""
    return sum(cpu_times(pid))


def _pids(stack: CatalogStack) -> tuple[int, Optional[int]]:
    server = stack.server.process
    if server is None:
        raise RuntimeError("the stack's API server is not running")
    ddb = stack.dynamodb.process if stack.dynamodb is not None else None
    return server.pid, ddb.pid if ddb is not None else None


def _write_once(clients: Sequence[Any], inputs: Sequence[dict[str, Any]], indexes: int,
                pids: tuple[int, Optional[int]]) -> dict[str, float]:
    """BatchCreatePartition of ``inputs`` into a new table with ``indexes`` indexes, from as many
    threads as ``clients``; the CPU the two processes spent and the wall time."""
    server_pid, ddb_pid = pids
    table = f"cpu_{indexes}idx_{time.time_ns() % 10**9}"
    clients[0].create_table(DatabaseName=DATABASE, TableInput=table_input(table),
                            PartitionIndexes=WRITE_INDEXES[:indexes])
    # A first call warms the code paths (imports, caches) a long-running Lambda has warm too.
    clients[0].batch_create_partition(DatabaseName=DATABASE, TableName=table,
                                      PartitionInputList=[partition_input(["xx", "warm", "1999", "1", "1"])])
    server0 = cpu_times(server_pid)
    ddb0 = cpu_seconds(ddb_pid) if ddb_pid else float("nan")
    wall = load(clients, table, inputs)
    server1 = cpu_times(server_pid)
    ddb1 = cpu_seconds(ddb_pid) if ddb_pid else float("nan")
    user, system = ((after - before) for before, after in zip(server0, server1))
    return {"server": user + system, "server_system": system, "dynamodb": ddb1 - ddb0, "seconds": wall}


def write_cpu(stack: CatalogStack, partitions: int = 10_000, threads: int = 4,
              index_counts: Sequence[int] = (0, 3), repeats: int = 3) -> dict[int, dict[str, float]]:
    """Write ``partitions`` partitions into new tables per index count and print the service's
    and DynamoDB Local's CPU-seconds per 10,000 partitions: from ``threads`` client threads (as
    a bulk load drives one local server), and one request at a time (as one Lambda instance
    serves them: nothing else runs in its process). Each way runs ``repeats`` times, the ways
    alternating, and the medians are reported with the range: a VM's CPU speed drifts by a
    third from one minute to the next, so one run says little.

    Returns ``{indexes: {"server": median cpu_s_per_10k from ``threads`` threads, "serial": the
    same one request at a time, "server_low"/"server_high" and "serial_low"/"serial_high": the
    ranges, "server_system": kernel part, "dynamodb": cpu_s_per_10k (NaN if external),
    "seconds": wall_s}}``. The tables go into the database ``bench`` (created unless it exists).
    """
    clients = [make_client("glue", stack.endpoint, threads) for _ in range(threads)]
    try:
        clients[0].create_database(DatabaseInput={"Name": DATABASE})
    except clients[0].exceptions.AlreadyExistsException:
        pass
    inputs = [partition_input(v) for v in layout(partitions, seed=7)]
    pids = _pids(stack)
    scale = 10_000 / partitions
    ways = {"server": clients, "serial": clients[:1]}
    results: dict[int, dict[str, float]] = {}
    for indexes in index_counts:
        runs: dict[str, list[dict[str, float]]] = {way: [] for way in ways}
        for number in range(repeats):
            for way, way_clients in ways.items():
                log(f"write CPU: BatchCreatePartition of {partitions:,} partitions, {indexes} indexes, "
                    f"{len(way_clients)} client thread(s), run {number + 1} of {repeats}")
                runs[way].append({k: v * scale if k != "seconds" else v
                                  for k, v in _write_once(way_clients, inputs, indexes, pids).items()})
        figures: dict[str, float] = {}
        for way, measured in runs.items():
            seconds = sorted(r["server"] for r in measured)
            figures[way], figures[f"{way}_low"], figures[f"{way}_high"] = (statistics.median(seconds), seconds[0],
                                                                           seconds[-1])
        threaded = runs["server"]
        figures["server_system"] = statistics.median(r["server_system"] for r in threaded)
        figures["dynamodb"] = statistics.median(r["dynamodb"] for r in threaded)
        figures["seconds"] = statistics.median(r["seconds"] for r in threaded)
        results[indexes] = figures
    print(f"\nCPU-seconds per 10,000 partitions written (BatchCreatePartition, 100 a call, {partitions:,} "
          f"partitions a run; /proc/<pid>/stat utime+stime; medians of {repeats} runs, range in brackets)\n")

    def cpu(figures: dict[str, float], way: str) -> str:
        return f"{figures[way]:.2f} CPU-s [{figures[way + '_low']:.2f}–{figures[way + '_high']:.2f}]"
    print_table(["Indexes", f"Service process, {threads} client threads (of which system)",
                 "Service process, one request at a time",
                 f"Target ≤ {TARGET_CPU_SECONDS:g} (one request at a time, {JUDGED_INDEXES} indexes)",
                 f"DynamoDB Local ({threads} threads)", "Wall time"],
                [[str(i), f"{cpu(r, 'server')} ({r['server_system']:.2f})", cpu(r, "serial"), _verdict(i, r),
                  f"{r['dynamodb']:.2f} CPU-s", f"{r['seconds']:.1f} s"] for i, r in results.items()])
    return results


def _verdict(indexes: int, figures: dict[str, float]) -> str:
    if indexes != JUDGED_INDEXES:
        return "report"
    return "yes" if figures["serial"] <= TARGET_CPU_SECONDS else "**NO**"


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--repeats", type=int, help="runs of each way, alternating (default 3; quick 1)")
    parser.add_argument("--quick", action="store_true", help="2,000 partitions, one run each: a smoke run")
    args = parser.parse_args(argv)
    with CatalogStack() as stack:
        write_cpu(stack, 2_000 if args.quick else args.partitions, args.threads,
                  repeats=args.repeats or (1 if args.quick else 3))


if __name__ == "__main__":
    main()
