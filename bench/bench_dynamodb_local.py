"""DynamoDB Local with the JVM flags the local stack gives it, against the JVM's defaults.

Starts two DynamoDB Local processes, one with ``infra.local.dynamodb_local.JVM_FLAGS`` (the
quick compiler only, one collector thread) and one without, and sends both the same requests,
interleaved op by op, of the kinds the catalog sends on every Paimon or Glue call: a consistent
BatchGetItem of 16 keys (a permission check with its table's items), an UpdateItem with a
condition-free expression, a consistent GetItem and a Query. For each process it reads the CPU
time the kernel charged it (``/proc/PID/stat``) over windows of requests, so the cold start (the
first requests of a fresh process, where the JVM's optimising compiler works hardest) and the
warm state are both shown, and the time to start and answer a first CreateTable.

The ratios are the flags' process ÷ the defaults' process, measured side by side in one run.
Benchmarks are never tests.

Run: ``.venv/bin/python -m bench.bench_dynamodb_local [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from infra.local import dynamodb_local  # noqa: E402
from bench.common import command_line, log, machine, print_table  # noqa: E402

TABLE = "bench_items"
# Windows of requests, by their position in the process's life: [start, end).
WINDOWS = ((0, 300), (300, 1500), (1500, 3000))
QUICK_WINDOWS = ((0, 300), (300, 900))


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run (900 requests, 1 start)")
    parser.add_argument("--starts", type=int, help="fresh starts timed per configuration (default 3; quick 1)")
    args = parser.parse_args(argv)
    args.starts = args.starts or (1 if args.quick else 3)
    return args


class Instance:
    """One DynamoDB Local process started with the given JVM flags (the rest of its command as the stack's)."""

    def __init__(self, flags: Sequence[str]) -> None:
        self.local = dynamodb_local.DynamoDBLocal(jvm_flags=flags)

    def start(self) -> float:
        """Start it and create the table; the seconds from launch to the table's creation."""
        started = time.perf_counter()
        self.local.start()
        self.client = self.local.client()
        self.client.create_table(
            TableName=TABLE, BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                  {"AttributeName": "sk", "AttributeType": "S"}])
        return time.perf_counter() - started

    def cpu_seconds(self) -> float:
        assert self.local.process is not None
        fields = Path(f"/proc/{self.local.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.local.stop()


def operations(client: Any) -> list[Callable[[], Any]]:
    """The request kinds, in the order they are sent round robin."""
    keys = [{"pk": {"S": "t"}, "sk": {"S": f"{i:04d}"}} for i in range(16)]
    return [
        lambda: client.batch_get_item(RequestItems={TABLE: {"Keys": keys, "ConsistentRead": True}}),
        lambda: client.update_item(
            TableName=TABLE, Key={"pk": {"S": "t"}, "sk": {"S": "0002"}},
            UpdateExpression="SET n = if_not_exists(n, :zero) + :one",
            ExpressionAttributeValues={":zero": {"N": "0"}, ":one": {"N": "1"}}),
        lambda: client.get_item(TableName=TABLE, Key={"pk": {"S": "t"}, "sk": {"S": "0001"}}, ConsistentRead=True),
        lambda: client.query(TableName=TABLE, KeyConditionExpression="pk = :p",
                             ExpressionAttributeValues={":p": {"S": "t"}}, Limit=10),
    ]


def seed(client: Any) -> None:
    for i in range(32):
        client.put_item(TableName=TABLE, Item={"pk": {"S": "t"}, "sk": {"S": f"{i:04d}"}, "v": {"S": "x" * 400}})


def request_windows(windows: Sequence[tuple[int, int]]) -> list[list[str]]:
    """CPU and wall time per request, window by window, of both processes fed alternately."""
    tuned, default = Instance(dynamodb_local.JVM_FLAGS), Instance(())
    try:
        for instance in (tuned, default):
            instance.start()
            seed(instance.client)
        ops = {id(tuned): operations(tuned.client), id(default): operations(default.client)}
        rows = []
        sent = 0
        for start, end in windows:
            cpu_before = {id(i): i.cpu_seconds() for i in (tuned, default)}
            walls: dict[int, list[float]] = {id(tuned): [], id(default): []}
            for n in range(sent, end):
                for instance in ((tuned, default) if n % 2 == 0 else (default, tuned)):
                    began = time.perf_counter()
                    ops[id(instance)][n % 4]()
                    walls[id(instance)].append(time.perf_counter() - began)
            sent = end
            count = end - start
            cpu = {k: (i.cpu_seconds() - cpu_before[k]) / count * 1000 for k, i in ((id(tuned), tuned), (id(default), default))}
            wall = {k: statistics.median(v) * 1000 for k, v in walls.items()}
            rows.append([f"requests {start:,}-{end:,} of a fresh process",
                         f"{cpu[id(tuned)]:.2f} / {cpu[id(default)]:.2f}", f"{cpu[id(tuned)] / cpu[id(default)]:.2f}",
                         f"{wall[id(tuned)]:.2f} / {wall[id(default)]:.2f}", f"{wall[id(tuned)] / wall[id(default)]:.2f}"])
            log(f"  {rows[-1]}")
        return rows
    finally:
        tuned.stop()
        default.stop()


def start_times(starts: int) -> list[list[str]]:
    times: dict[str, list[float]] = {"tuned": [], "default": []}
    for round_no in range(starts):
        order = (("tuned", dynamodb_local.JVM_FLAGS), ("default", ()))
        for name, flags in (order if round_no % 2 == 0 else order[::-1]):
            instance = Instance(flags)
            try:
                times[name].append(instance.start())
            finally:
                instance.stop()
    tuned, default = statistics.median(times["tuned"]), statistics.median(times["default"])
    return [[f"start to a created table, median of {starts}", f"{tuned:.2f} s / {default:.2f} s", f"{tuned / default:.2f}"]]


def main(argv: Optional[Sequence[str]] = None) -> None:
    args = parse_args(argv)
    command = command_line("bench_dynamodb_local", argv)
    flags = " ".join(dynamodb_local.JVM_FLAGS)
    started = time.perf_counter()
    log(f"1. requests to two fresh processes, {flags} and the JVM's defaults, interleaved")
    request_rows = request_windows(QUICK_WINDOWS if args.quick else WINDOWS)
    log("2. start times")
    start_rows = start_times(args.starts)
    print(f"\n## DynamoDB Local's JVM flags\n\n`{command}`: {machine()}; `{flags}` ÷ the JVM's defaults; "
          f"whole run {time.perf_counter() - started:,.0f} s.\n")
    print_table(["requests", "CPU ms per request (flags / defaults)", "ratio", "median wall ms (flags / defaults)",
                 "ratio"], request_rows)
    print()
    print_table(["start", "flags / defaults", "ratio"], start_rows)


if __name__ == "__main__":
    main()
