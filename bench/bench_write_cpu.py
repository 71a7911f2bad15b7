"""Server CPU per 10,000 partitions written with BatchCreatePartition (what a Lambda bills).

The service's process and DynamoDB Local's each have their CPU time (utime + stime from
/proc/<pid>/stat) read before and after BatchCreatePartition of N partitions (100 a call, from
a few client threads) into a fresh table with 0 and with 3 partition indexes; printed per
10,000 partitions. The client's own CPU is not counted: it runs in this process.

Run alone: ``.venv/bin/python -m bench.bench_write_cpu [--partitions 10000] [--quick]``
From another benchmark: ``write_cpu(stack, partitions=10_000, threads=4)`` with a running
:class:`infra.local.stack.CatalogStack`; it prints its table and returns the figures.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_partitions import DATABASE, WRITE_INDEXES, layout, load, partition_input, table_input  # noqa: E402
from bench.common import log, make_client, print_table  # noqa: E402
from infra.local.stack import CatalogStack  # noqa: E402

TARGET_CPU_SECONDS = 1.0  # server CPU-s per 10,000 partitions (issue #16)
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


def write_cpu(stack: CatalogStack, partitions: int = 10_000, threads: int = 4,
              index_counts: Sequence[int] = (0, 3)) -> dict[int, dict[str, float]]:
    """Write ``partitions`` partitions into a new table per index count and print the service's
    and DynamoDB Local's CPU-seconds per 10,000 partitions.

    Returns ``{indexes: {"server": cpu_s_per_10k, "server_system": its kernel part,
    "dynamodb": cpu_s_per_10k (NaN if external), "seconds": wall_s}}``. The tables go into the
    database ``bench`` (created unless it exists).
    """
    clients = [make_client("glue", stack.endpoint, threads) for _ in range(threads)]
    try:
        clients[0].create_database(DatabaseInput={"Name": DATABASE})
    except clients[0].exceptions.AlreadyExistsException:
        pass
    inputs = [partition_input(v) for v in layout(partitions, seed=7)]
    server_pid, ddb_pid = _pids(stack)
    scale = 10_000 / partitions
    results: dict[int, dict[str, float]] = {}
    for indexes in index_counts:
        table = f"cpu_{indexes}idx_{time.time_ns() % 10**9}"
        clients[0].create_table(DatabaseName=DATABASE, TableInput=table_input(table),
                                PartitionIndexes=WRITE_INDEXES[:indexes])
        # A first call warms the code paths (imports, caches) a long-running Lambda has warm too.
        clients[0].batch_create_partition(DatabaseName=DATABASE, TableName=table,
                                          PartitionInputList=[partition_input(["xx", "warm", "1999", "1", "1"])])
        log(f"write CPU: BatchCreatePartition of {partitions:,} partitions, {indexes} indexes")
        server0 = cpu_times(server_pid)
        ddb0 = cpu_seconds(ddb_pid) if ddb_pid else float("nan")
        wall = load(clients, table, inputs)
        server1 = cpu_times(server_pid)
        ddb1 = cpu_seconds(ddb_pid) if ddb_pid else float("nan")
        user, system = ((after - before) * scale for before, after in zip(server0, server1))
        results[indexes] = {"server": user + system, "server_system": system,
                            "dynamodb": (ddb1 - ddb0) * scale, "seconds": wall}
    print(f"\nCPU-seconds per 10,000 partitions written (BatchCreatePartition, 100 a call, {threads} client "
          f"threads, {partitions:,} partitions a run; /proc/<pid>/stat utime+stime)\n")
    print_table(["Indexes", "Service process (of which system)", f"Target ≤ {TARGET_CPU_SECONDS:g}",
                 "DynamoDB Local", "Wall time"],
                [[str(i), f"{r['server']:.2f} CPU-s ({r['server_system']:.2f})",
                  "yes" if r["server"] <= TARGET_CPU_SECONDS else "**NO**",
                  f"{r['dynamodb']:.2f} CPU-s", f"{r['seconds']:.1f} s"] for i, r in results.items()])
    return results


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--quick", action="store_true", help="2,000 partitions: a smoke run")
    args = parser.parse_args(argv)
    with CatalogStack() as stack:
        write_cpu(stack, 2_000 if args.quick else args.partitions, args.threads)


if __name__ == "__main__":
    main()
