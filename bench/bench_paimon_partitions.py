"""Paimon list-by-filter (the Java RESTCatalog's ``partitions/list-by-filter``): its cost follows the
matches, not the table, because it is planned like a Glue GetPartitions Expression.

Creates two Paimon tables through pypaimon (partition keys region STRING, dt STRING, hr INT) and
bulk-loads their partitions through Glue BatchCreatePartition (a Paimon partition is a Glue
partition), ``--sizes`` of them (default 10,000 and 100,000). Then, through raw HTTP with the
Java client's request body (ListPartitionsByFilterRequest: ``filter`` = the predicate's flat
JSON), two selective predicates with literals drawn at random each round:

* ``region = R AND dt = D`` (24 matches): a key range on the partitions table's leading keys;
* ``dt = D AND hr = H`` (40 matches): no key range; served by the partition digest.

Printed: each query's first request right after its table's bulk load (cold), how long the
background compaction of the load's digest deltas took, then the median
latency over the rounds at each size and the ratio largest ÷ smallest (rounds interleaved), and
DynamoDB items read ÷ partitions returned (the ``x-glue-items-read`` header).

Run: ``.venv/bin/python -m bench.bench_paimon_partitions [--sizes 10000,100000] [--rounds 30] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional, Sequence

import requests

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from bench.common import command_line, log, machine, make_client, print_table, run_parallel  # noqa: E402
from infra.local.stack import REGION, CatalogStack  # noqa: E402

ACCOUNT = "123456789012"
WAREHOUSE = "bench"
DATABASE = "bench"
REGIONS = [f"r{n:02d}" for n in range(40)]
HOURS = range(24)


def _dates(size: int) -> list[str]:
    days = max(1, math.ceil(size / (len(REGIONS) * len(HOURS))))
    start = 19_000  # 2022-01-08, as days since the epoch
    return [time.strftime("%Y-%m-%d", time.gmtime((start + n) * 86_400)) for n in range(days)]


def _leaf(function: str, name: str, index: int, kind: str, value: Any) -> dict[str, Any]:
    return {"kind": "LEAF", "transform": {"name": "FIELD_REF", "fieldRef": {"index": index, "name": name,
                                                                           "type": kind}},
            "function": function, "literals": [value]}


def _and(*children: dict[str, Any]) -> str:
    return json.dumps({"kind": "COMPOUND", "function": "AND", "children": list(children)}, separators=(",", ":"))


def key_range(region: str, dt: str) -> str:
    return _and(_leaf("EQUAL", "region", 0, "STRING", region), _leaf("EQUAL", "dt", 1, "STRING", dt))


def digest(dt: str, hour: int) -> str:
    return _and(_leaf("EQUAL", "dt", 1, "STRING", dt), _leaf("EQUAL", "hr", 2, "INT", hour))


QUERIES = {"region = R AND dt = D (key range, 24 matches)": lambda dates, rng: key_range(rng.choice(REGIONS),
                                                                                          rng.choice(dates)),
           "dt = D AND hr = H (digest, 40 matches)": lambda dates, rng: digest(rng.choice(dates), rng.choice(HOURS))}


def make_table(endpoint: str, name: str) -> None:
    from pypaimon.catalog.catalog_factory import CatalogFactory
    from pypaimon.schema import data_types as pt
    from pypaimon.schema.schema import Schema
    catalog = CatalogFactory.create({"metastore": "rest", "uri": endpoint, "warehouse": WAREHOUSE,
                                     "token.provider": "bear", "token": f"{ACCOUNT}/{REGION}"})
    if DATABASE not in catalog.list_databases():
        catalog.create_database(DATABASE, True)
    fields = [pt.DataField(0, "region", pt.AtomicType("STRING")), pt.DataField(1, "dt", pt.AtomicType("STRING")),
              pt.DataField(2, "hr", pt.AtomicType("INT")), pt.DataField(3, "v", pt.AtomicType("BIGINT"))]
    catalog.create_table(f"{DATABASE}.{name}", Schema(fields=fields, partition_keys=["region", "dt", "hr"],
                                                      options={"bucket": "-1"}), False)


def load(endpoint: str, name: str, size: int) -> float:
    """The table's partitions through Glue BatchCreatePartition, 100 a call on 4 threads; seconds.
    Whole days of 40 regions x 24 hours: ``size`` rounded up to 960 (10,000 is 10,560)."""
    inputs = [{"Values": [r, d, str(h)], "StorageDescriptor": {"Location": f"file:///bench/{name}/{r}/{d}/{h}"}}
              for d in _dates(size) for r in REGIONS for h in HOURS]
    chunks = [inputs[i:i + 100] for i in range(0, len(inputs), 100)]
    clients = [make_client("glue", endpoint) for _ in range(4)]

    def work(client: Any, chunk: list[dict[str, Any]]) -> None:
        answer = client.batch_create_partition(DatabaseName=DATABASE, TableName=name, PartitionInputList=chunk)
        if answer.get("Errors"):
            raise RuntimeError(answer["Errors"][:2])
    return run_parallel(clients, chunks, work)


class Lister:
    """list-by-filter over one keep-alive connection; every page followed."""

    def __init__(self, endpoint: str) -> None:
        self.session = requests.Session()
        self.session.headers.update({"Authorization": f"Bearer {ACCOUNT}/{REGION}",
                                     "Content-Type": "application/json"})
        self.endpoint = endpoint

    def list(self, table: str, predicate: str) -> tuple[float, int, int]:
        """(seconds, partitions returned, items read)."""
        url = f"{self.endpoint}/v1/{WAREHOUSE}/databases/{DATABASE}/tables/{table}/partitions/list-by-filter"
        started = time.perf_counter()
        returned = items = 0
        token = None
        while True:
            body: dict[str, Any] = {"filter": predicate, "maxResults": 100}
            if token:
                body["pageToken"] = token
            response = self.session.post(url, data=json.dumps(body), timeout=300)
            if response.status_code != 200:
                raise RuntimeError(f"list-by-filter: {response.status_code} {response.text[:300]}")
            answer = response.json()
            returned += len(answer["partitions"])
            items += int(response.headers["x-glue-items-read"])
            token = answer.get("nextPageToken")
            if not token:
                return time.perf_counter() - started, returned, items


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", help="partitions per table, comma-separated (default 10000,100000; quick 1000,5000)")
    parser.add_argument("--rounds", type=int, help="measured rounds (default 30; quick 5)")
    parser.add_argument("--quick", action="store_true", help="a smoke run on small tables")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in (args.sizes or ("1000,5000" if args.quick else "10000,100000")).split(",")]
    rounds = args.rounds or (5 if args.quick else 30)
    command = command_line("bench_paimon_partitions", argv)
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="bench-paimon-partitions-") as tmp:
        with CatalogStack(log_dir=Path(tmp) / "logs",
                          server_env={"PAIMON_WAREHOUSE": Path(tmp, "warehouse").as_uri()}) as stack:
            lister = Lister(stack.endpoint)
            cold: list[list[str]] = []
            for size in sizes:
                name = f"t{size}"
                make_table(stack.endpoint, name)
                log(f"loading {len(_dates(size)) * 960:,} partitions into {name}")
                seconds = load(stack.endpoint, name, size)
                log(f"loaded in {seconds:.1f} s ({size / seconds:,.0f} partitions/s)")
                dates = _dates(size)
                for label, make in QUERIES.items():
                    took, returned, items = lister.list(name, make(dates, rng))
                    cold.append([f"{size:,}", label, f"{took * 1000:.0f} ms", f"{returned}", f"{items}"])
            # The bulk load leaves the digest as a backlog of deltas (2 items per 100 partitions)
            # that the background cleaner compacts (docs/design.md, "Partition digest"): the
            # rounds measure the settled table, the wait is reported.
            waited = time.perf_counter()
            for size in sizes:
                while True:
                    _, returned, items = lister.list(f"t{size}", digest(_dates(size)[0], 0))
                    if items <= 1.2 * returned + 8 or time.perf_counter() - waited > 300:
                        break
                    time.sleep(2)
            waited = time.perf_counter() - waited
            log(f"digests compacted after {waited:.0f} s; {rounds} rounds of both queries on every table, interleaved")
            times: dict[tuple[int, str], list[float]] = {}
            reads: dict[tuple[int, str], list[int]] = {}
            for _ in range(rounds):
                for size in sizes:
                    for label, make in QUERIES.items():
                        took, returned, items = lister.list(f"t{size}", make(_dates(size), rng))
                        times.setdefault((size, label), []).append(took)
                        reads.setdefault((size, label), []).extend([returned, items])
    print(f"\n## Paimon list-by-filter, planned like GetPartitions\n\n`{command}`: {machine()}; "
          f"DynamoDB Local in memory, one server process.\n")
    print("First request of each query right after its table's bulk load (cold):\n")
    print_table(["partitions", "query", "latency", "returned", "items read"], cold)
    rows = []
    for label in QUERIES:
        medians = {size: statistics.median(times[(size, label)]) for size in sizes}
        returned = sum(reads[(sizes[-1], label)][0::2])
        items = sum(reads[(sizes[-1], label)][1::2])
        rows.append([label] + [f"{medians[size] * 1000:.1f} ms" for size in sizes]
                    + [f"{medians[sizes[-1]] / medians[sizes[0]]:.2f}", f"{items / returned:.2f}"])
    print(f"\nThe background compaction of the load's digest deltas was done {waited:.0f} s after the cold "
          f"requests. Then the median over {rounds} rounds, literals drawn at random each round:\n")
    print_table(["query"] + [f"at {size:,}" for size in sizes]
                + [f"latency {sizes[-1]:,} ÷ {sizes[0]:,}", f"items read ÷ returned at {sizes[-1]:,}"], rows)


if __name__ == "__main__":
    main()
