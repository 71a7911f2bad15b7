"""A Paimon commit naming many partitions: the answer stays within the work budget.

Starts DynamoDB Local and two API servers on the same store and local warehouse: one with the
work budget (``--budget``, 5 s as deployed), one whose budget is 600 s, which applies every
partition's statistics in the request, as every commit did before. Through each, pypaimon
creates a table partitioned by one key, writes a row, then commits a snapshot whose statistics
name ``--partitions`` new partitions (``rest_api.commit_snapshot``, what pypaimon's committer
sends). Printed side by side: the time to the commit's answer, and to the next commit being
accepted (a client retrying every 0.5 s, as pypaimon retries a commit answered "not committed";
the bounded server's cleaner and those retries apply what the first commit left).

Run: ``.venv/bin/python -m bench.bench_paimon_commit [--partitions 10000] [--budget 5] [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Optional, Sequence

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from bench.bench_paimon_drop import _identifier, print_side_by_side, side_by_side  # noqa: E402
from bench.common import command_line, log  # noqa: E402


def _commit(catalog: Any, table: Any, identifier: Any, base: Any, regions: Sequence[str]) -> bool:
    from pypaimon.snapshot.snapshot import Snapshot
    from pypaimon.snapshot.snapshot_commit import PartitionStatistics
    proposed = Snapshot(**{**base.__dict__, "id": base.id + 1, "uuid": str(uuid.uuid4())})
    stats = [PartitionStatistics(spec={"region": region}, record_count=10, file_size_in_bytes=100, file_count=1,
                                 last_file_creation_time=1) for region in regions]
    return catalog.rest_api.commit_snapshot(identifier, table.catalog_environment.uuid, base.uuid, proposed, stats)


def _table(catalog: Any, database: str) -> tuple[Any, Any]:
    """A table partitioned by ``region`` with one row written (its first snapshot)."""
    import pyarrow as pa
    from pypaimon.schema.schema import Schema
    arrow = pa.schema([pa.field("region", pa.string()), pa.field("n", pa.int64())])
    identifier = _identifier(database, "wide")
    catalog.create_table(identifier, Schema.from_pyarrow_schema(arrow, ["region"], None, {"bucket": "-1"}), False)
    table = catalog.get_table(identifier)
    builder = table.new_batch_write_builder()
    writer, committer = builder.new_write(), builder.new_commit()
    try:
        writer.write_arrow(pa.Table.from_pydict({"region": ["eu"], "n": [1]}, schema=arrow))
        committer.commit(writer.prepare_commit())
    finally:
        writer.close()
        committer.close()
    return table, identifier


def _run(catalog: Any, database: str, partitions: int, timeout: float) -> tuple[float, float, int]:
    """Seconds to the big commit's answer, to the next commit being accepted, and the next
    commit's attempts."""
    table, identifier = _table(catalog, database)
    base = catalog.load_snapshot(identifier).snapshot
    regions = [f"r{n:06d}" for n in range(partitions)]
    started = time.perf_counter()
    if not _commit(catalog, table, identifier, base, regions):
        raise SystemExit("the big commit was not accepted")
    answered = time.perf_counter() - started
    after = catalog.load_snapshot(identifier).snapshot
    attempts = 1
    while not _commit(catalog, table, identifier, after, ["eu"]):
        if time.perf_counter() - started > timeout:
            raise SystemExit(f"the next commit still not accepted after {timeout:.0f} s")
        attempts += 1
        time.sleep(0.5)
    return answered, time.perf_counter() - started, attempts


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, help="partitions the commit names (default 10,000; quick 2,000)")
    parser.add_argument("--budget", type=float, help="the bounded server's work budget, seconds (default 5; quick 0.2)")
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    args = parser.parse_args(argv)
    partitions = args.partitions or (2_000 if args.quick else 10_000)
    budget = args.budget if args.budget is not None else (0.2 if args.quick else 5.0)
    command = command_line("bench_paimon_commit", argv)

    def measure(catalog: Any, _: Any, database: str, label: str) -> tuple[float, str]:
        log(f"committing the statistics of {partitions:,} new partitions through the server with {label}")
        answered, next_accepted, attempts = _run(catalog, database, partitions, timeout=max(600.0, partitions / 20))
        return answered, f"{next_accepted:.2f} s ({attempts} attempt(s))"
    rows, ratio = side_by_side(budget, "every partition in the request, as before", "commit", measure)
    print_side_by_side(f"Paimon commit naming {partitions:,} new partitions", command,
                       ["server", "commit answered", "next commit accepted"], rows, ratio)


if __name__ == "__main__":
    main()
