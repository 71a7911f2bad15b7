"""Warm unindexed GetPartitions with and without the cache of rendered partitions (issue #46,
service/partition_cache.py), side by side in one run: two servers on one DynamoDB Local and one
table of ``--partitions`` (default 100,000, loaded through BatchCreatePartition, the digest then
compacted), one with ``GLUE_PARTITION_CACHE_BYTES=0``. The query of bench_bulk_first_read
(``shard >= 0 AND day = 17 AND region LIKE '%3'``: 364 matches at 100k, no index) alternates
between them request by request, the order flipped every round; then the same after a write
(an UpdatePartition of one partition between rounds: every listing of the cached server is
cold again, so it shows what the check and a refill cost). Printed: median ms of each side, the
ratio of the medians, the spread of the per-round ratios, and the items each read.

Run: ``.venv/bin/python -m bench.bench_partition_cache [--partitions 100000] [--rounds 40]``
(``--quick``: 20,000 partitions, 10 rounds). Benchmarks are never tests.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from bench import common  # noqa: E402
from bench.bench_bulk_first_read import (DATABASE, UNINDEXED, checked, expected, listing, load,  # noqa: E402
                                         partition_input, settle, table_input, values_of)
from bench.common import log, make_client  # noqa: E402
from infra.local.stack import CatalogStack  # noqa: E402


def alternate(rounds: int, left: Callable[[], Any], right: Callable[[], Any],
              between: Optional[Callable[[], None]] = None) -> tuple[list[Any], list[Any]]:
    lefts: list[Any] = []
    rights: list[Any] = []
    for number in range(rounds):
        if between is not None:
            between()
        first, second = (left, right) if number % 2 == 0 else (right, left)
        a, b = first(), second()
        (lefts if first is left else rights).append(a)
        (rights if first is left else lefts).append(b)
    return lefts, rights


def summary(what: str, cached: list[Any], plain: list[Any]) -> list[str]:
    c = statistics.median(r.total for r in cached)
    p = statistics.median(r.total for r in plain)
    ratios = sorted(x.total / y.total for x, y in zip(cached, plain))
    return [what, f"{c * 1000:.1f}", f"{p * 1000:.1f}", f"{c / p:.2f}",
            f"{ratios[len(ratios) // 4]:.2f}–{ratios[3 * len(ratios) // 4]:.2f}",
            f"{statistics.median(r.items_read or 0 for r in cached):.0f} / "
            f"{statistics.median(r.items_read or 0 for r in plain):.0f}"]


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, help="partitions of the table (default 100,000; quick 20,000)")
    parser.add_argument("--rounds", type=int, help="rounds per case (default 40; quick 10)")
    parser.add_argument("--threads", type=int, default=4, help="loading threads (default 4)")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    n = args.partitions or (20_000 if args.quick else 100_000)
    rounds = args.rounds or (10 if args.quick else 40)
    started = time.perf_counter()
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-cache-") as tmp:
        with CatalogStack(log_dir=Path(tmp)) as stack:
            plain_server = stack.extra_server({"GLUE_PARTITION_CACHE_BYTES": "0"}, name="nocache").start()
            try:
                clients = [make_client("glue", stack.endpoint, args.threads) for _ in range(args.threads)]
                cached, plain = clients[0], make_client("glue", plain_server.endpoint)
                ddb = make_client("dynamodb", stack.ddb_endpoint, access_key=stack.ddb_access_key_id)
                cached.create_database(DatabaseInput={"Name": DATABASE})
                cached.create_table(DatabaseName=DATABASE, TableInput=table_input("flat"))
                log(f"loading {n:,} partitions")
                loaded = load(clients, "flat", n)
                log(f"loaded in {loaded:,.0f} s; waiting for the digest's compaction")
                waited = settle(ddb, stack.table_prefix, "flat", timeout=300)
                want = expected(n, UNINDEXED)

                def on(client: Any) -> Callable[[], Any]:
                    return lambda: checked(listing(client, "flat", UNINDEXED), want, "listing")
                for client in (cached, plain):  # the first listing of each (the digest's rows read)
                    on(client)()
                warm = alternate(rounds, on(cached), on(plain))
                rows.append(summary("warm, no write between", *warm))
                touched = values_of(1)

                def write() -> None:
                    cached.update_partition(DatabaseName=DATABASE, TableName="flat", PartitionValueList=touched,
                                            PartitionInput=partition_input(1))
                after_write = alternate(max(4, rounds // 2), on(cached), on(plain), write)
                rows.append(summary("a write before every round", *after_write))
            finally:
                plain_server.stop()
    print(f"\n## Warm unindexed GetPartitions, cache ÷ no cache ({common.machine()}; "
          f"{time.perf_counter() - started:.0f} s; {n:,} partitions, digest compacted after {waited:.0f} s)\n")
    print(f"`{common.command_line('bench_partition_cache', argv)}`\n")
    common.print_table(["case", "ms with the cache", "ms without", "ratio of medians",
                        "per-round ratios (quartiles)", "items read (median, with / without)"], rows)


if __name__ == "__main__":
    main()
