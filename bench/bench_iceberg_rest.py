"""The Iceberg REST endpoint (issue #49), side by side in one run on one service over DynamoDB Local:

1. LoadTable (``GET /iceberg/v1/catalogs/<id>/namespaces/<ns>/tables/<t>``) ÷ Glue GetTable of the
   same table (``POST /``, ``AWSGlue.GetTable``), both as raw HTTP on keep-alive sessions so the
   client's own parsing is not what is compared; target ≤ 1.2. LoadTable is GetTable plus one read
   of the current metadata file and its JSON in the answer.
2. A pyiceberg append + commit through the REST catalog ÷ the same through pyiceberg's GlueCatalog
   (boto3 to the same service), each on its own table of the same schema, a small batch per append
   (the data and manifest files are written by the client either way); target ≤ 1.0.
3. A commit (one ``add-snapshot`` + ``set-snapshot-ref main``, raw HTTP, as a writer's commit is)
   on a table of ``--snapshots`` (1,000) snapshots ÷ on one of 10; target ≤ 1.3. The snapshots are
   committed through the endpoint first (their manifest lists are names only: the catalog never
   reads them). End to end, and the server's own time from each answer's ``Server-Timing``
   header: the spec makes every commit answer carry the whole metadata (500 KB at 1,000
   snapshots), which the network and the client's parser pay for whatever the server does. The
   caller's previous copy of the metadata is released off the clock (timed and printed apart).

The raw-HTTP sides use one keep-alive ``http.client`` connection each and parse answers with
orjson, as a lean client (Java's HttpClient and Jackson) would: Python's json module would add
3.4 ms of client work to each answer of the 1,000-snapshot table (500 KB), ``requests`` about
1 ms more, the same whatever the server does. Each pair alternates request by request, the order flipped every round; printed: median ms of
each side, the ratio of the medians and the median of the per-round ratios. Then the cold path: a
fresh server process (same DynamoDB), its first LoadTable and first commit on the large table, and
the second ones.

Run: ``.venv/bin/python -m bench.bench_iceberg_rest [--quick]`` (about two minutes; ``--quick``
well under one). Benchmarks are never tests.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Optional, Sequence
from urllib.parse import urlsplit

import orjson
import pyarrow as pa

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from bench.common import command_line, log, machine, make_client, print_table  # noqa: E402
from infra.local.stack import REGION, CatalogStack  # noqa: E402

from pyiceberg.catalog.glue import GlueCatalog  # noqa: E402
from pyiceberg.catalog.rest import RestCatalog  # noqa: E402
from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.types import LongType, NestedField, StringType  # noqa: E402

ACCOUNT = "123456789012"
NAMESPACE = "bench_iceberg"
SCHEMA = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "name", StringType()))
ROWS = pa.table({"id": pa.array(range(100), pa.int64()), "name": [f"n{i}" for i in range(100)]})
TARGETS = {"load": 1.2, "append": 1.0, "commit": 1.3}
AUTH = (f"AWS4-HMAC-SHA256 Credential={ACCOUNT}/20260101/{REGION}/glue/aws4_request, SignedHeaders=host, "
        "Signature=00")


class Connection:
    """One keep-alive HTTP/1.1 connection (http.client: the body read in one call, as a lean
    client reads it; ``requests`` adds ~1 ms of its own per 500 KB answer)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=600)

    def send(self, method: str, path: str, body: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[dict[str, str], bytes]:
        self.connection.request(method, path, body=body, headers={"Authorization": AUTH, **(headers or {})})
        answer = self.connection.getresponse()
        data = answer.read()
        if answer.status >= 400:
            raise RuntimeError(f"{method} {path}: {answer.status} {data[:300]!r}")
        return {k.lower(): v for k, v in answer.getheaders()}, data


class Endpoint:
    """Raw HTTP to one server: Iceberg REST paths and Glue's JSON 1.1, each on its own connection."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.server_ms: list[float] = []  # the Server-Timing of each commit answer
        self.rest, self.glue = Connection(url), Connection(url)

    def table_path(self, table: str) -> str:
        return f"/iceberg/v1/catalogs/{ACCOUNT}/namespaces/{NAMESPACE}/tables/{table}"

    def load_table(self, table: str) -> dict[str, Any]:
        _, data = self.rest.send("GET", self.table_path(table))
        return orjson.loads(data)  # type: ignore[no-any-return]

    def get_table(self, table: str) -> dict[str, Any]:
        _, data = self.glue.send("POST", "/", json.dumps({"DatabaseName": NAMESPACE, "Name": table}).encode(),
                                 {"X-Amz-Target": "AWSGlue.GetTable", "Content-Type": "application/x-amz-json-1.1"})
        return orjson.loads(data)  # type: ignore[no-any-return]

    def commit_snapshot(self, table: str, metadata: dict[str, Any]) -> dict[str, Any]:
        """Commit one more snapshot on ``main`` (as a writer's append commits), from ``metadata``."""
        parent = metadata.get("current-snapshot-id")
        parent = None if parent in (None, -1) else parent
        snapshot_id = uuid.uuid4().int >> 65
        sequence = metadata["last-sequence-number"] + 1
        snapshot = {"snapshot-id": snapshot_id, "sequence-number": sequence, "timestamp-ms": int(time.time() * 1000),
                    "manifest-list": f"{metadata['location']}/metadata/snap-{snapshot_id}.avro",
                    "summary": {"operation": "append", "added-records": "1"}, "schema-id": 0}
        if parent is not None:
            snapshot["parent-snapshot-id"] = parent
        body = {"requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": parent}],
                "updates": [{"action": "add-snapshot", "snapshot": snapshot},
                            {"action": "set-snapshot-ref", "ref-name": "main", "type": "branch",
                             "snapshot-id": snapshot_id}]}
        headers, data = self.rest.send("POST", self.table_path(table), orjson.dumps(body),
                                       {"Content-Type": "application/json"})
        self.server_ms.append(float(headers["server-timing"].split("dur=")[1]))
        return orjson.loads(data)["metadata"]  # type: ignore[no-any-return]


def alternate(rounds: int, first: Callable[[], Any], second: Callable[[], Any],
              after: Optional[Callable[[], None]] = None) -> tuple[list[float], list[float]]:
    """Time ``first`` and ``second`` alternately, the order flipped every round (seconds);
    ``after`` runs after each call, off the clock."""
    a: list[float] = []
    b: list[float] = []
    for i in range(rounds):
        pair = [(first, a), (second, b)] if i % 2 == 0 else [(second, b), (first, a)]
        for call, times in pair:
            started = time.perf_counter()
            call()
            times.append(time.perf_counter() - started)
            if after is not None:
                after()
    return a, b


def summary(label: str, numerator: list[float], denominator: list[float], target: float) -> list[str]:
    ratio = statistics.median(numerator) / statistics.median(denominator)
    per_round = statistics.median(n / d for n, d in zip(numerator, denominator))
    met = "✓" if ratio <= target else "✗"
    return [label, f"{statistics.median(numerator) * 1000:.1f}", f"{statistics.median(denominator) * 1000:.1f}",
            f"{ratio:.2f}", f"{per_round:.2f}", f"≤ {target}", met]


def rest_catalog(url: str) -> RestCatalog:
    return RestCatalog("bench", **{"uri": f"{url}/iceberg", "warehouse": ACCOUNT, "rest.sigv4-enabled": "true",
                                   "rest.signing-name": "glue", "rest.signing-region": REGION,
                                   "client.access-key-id": ACCOUNT, "client.secret-access-key": "x",
                                   "client.region": REGION})


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshots", type=int, help="snapshots of the large table (default 1,000; quick 200)")
    parser.add_argument("--rounds", type=int, help="rounds per pair (default 200 loads, 30 appends, 100 commits)")
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    args = parser.parse_args(argv)
    snapshots = args.snapshots or (200 if args.quick else 1000)
    loads, appends, commits = ((args.rounds,) * 3 if args.rounds else ((40, 8, 20) if args.quick else (200, 30, 100)))
    command = command_line("bench_iceberg_rest", argv)
    started = time.perf_counter()
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-iceberg-") as tmp:
        with CatalogStack(log_dir=Path(tmp)) as stack:
            url = stack.endpoint
            endpoint = Endpoint(url)
            rest = rest_catalog(url)
            rest.create_namespace(NAMESPACE)
            glue = GlueCatalog("bench_glue", client=make_client("glue", url, access_key=ACCOUNT))

            log("1. LoadTable ÷ GetTable (a table of 10 appends)")
            orders = rest.create_table(f"{NAMESPACE}.orders", SCHEMA)
            for _ in range(10):
                orders.append(ROWS)
            load, get = alternate(loads, lambda: endpoint.load_table("orders"), lambda: endpoint.get_table("orders"))
            rows.append(summary("LoadTable ÷ Glue GetTable", load, get, TARGETS["load"]))

            log("2. append + commit: REST ÷ GlueCatalog")
            through_rest = rest.create_table(f"{NAMESPACE}.via_rest", SCHEMA)
            through_glue = glue.create_table(f"{NAMESPACE}.via_glue", SCHEMA, location=(Path(tmp) / "via_glue").as_uri())
            by_rest, by_glue = alternate(appends, lambda: through_rest.append(ROWS), lambda: through_glue.append(ROWS))
            rows.append(summary("pyiceberg append+commit, REST ÷ GlueCatalog", by_rest, by_glue, TARGETS["append"]))

            log(f"3. commit at {snapshots:,} snapshots ÷ at 10")
            state: dict[str, dict[str, Any]] = {}
            for name, count in (("small", 10), ("large", snapshots)):
                rest.create_table(f"{NAMESPACE}.{name}", SCHEMA)
                metadata = endpoint.load_table(name)["metadata"]
                for i in range(count):
                    metadata = endpoint.commit_snapshot(name, metadata)
                    if name == "large" and i % 200 == 199:
                        log(f"   {i + 1:,} snapshots committed")
                state[name] = metadata

            server: dict[str, list[float]] = {"large": [], "small": []}

            # The caller's previous copy of the metadata is released off the clock: freeing some
            # 6,000 objects of a 1,000-snapshot table is the client's housekeeping, not the
            # commit's (timed apart and printed below).
            previous: list[tuple[str, dict[str, Any]]] = []
            released: dict[str, list[float]] = {"large": [], "small": []}

            def commit(name: str) -> Callable[[], None]:
                def call() -> None:
                    previous.append((name, state[name]))
                    state[name] = endpoint.commit_snapshot(name, state[name])
                    server[name].append(endpoint.server_ms[-1] / 1000)
                return call

            def release() -> None:
                name = previous[-1][0]
                begun = time.perf_counter()
                previous.clear()
                released[name].append(time.perf_counter() - begun)
            large, small = alternate(commits, commit("large"), commit("small"), release)
            rows.append(summary(f"commit at {snapshots:,} ÷ at 10 snapshots, end to end", large, small,
                                TARGETS["commit"]))
            rows.append(summary("same, the server's own time (Server-Timing)", server["large"], server["small"],
                                TARGETS["commit"]))
            metadata_bytes = len(json.dumps(state["large"]))

            log("cold path: a fresh server process")
            stack.restart_server()
            fresh = Endpoint(stack.endpoint)
            cold: list[str] = []
            for label, call in (("LoadTable (large)", lambda: fresh.load_table("large")),
                                ("commit (large)", lambda: state.__setitem__(
                                    "large", fresh.commit_snapshot("large", fresh.load_table("large")["metadata"])))):
                times = []
                for _ in range(2):
                    begun = time.perf_counter()
                    call()
                    times.append(time.perf_counter() - begun)
                cold.append(f"{label}: first {times[0] * 1000:.0f} ms, second {times[1] * 1000:.0f} ms")
    print(f"\n## Iceberg REST ({machine()}; {time.perf_counter() - started:.0f} s)\n")
    print(f"`{command}`\n")
    print_table(["measure", "ms (numerator)", "ms (denominator)", "ratio of medians", "median per-round ratio",
                 "target", "met?"], rows)
    print(f"\nThe large table's metadata: {metadata_bytes:,} bytes of JSON. Releasing the caller's previous "
          f"copy (off the clock): {statistics.median(released['large']) * 1000:.2f} ms large, "
          f"{statistics.median(released['small']) * 1000:.2f} ms small. Cold path (the commit "
          "includes its LoadTable): " + "; ".join(cold))


if __name__ == "__main__":
    main()
