"""The Paimon REST catalog through pypaimon, measured side by side in one run.

Starts DynamoDB Local and the service (its Paimon warehouse in a temporary directory) and
measures, with pypaimon 2.1.0 as the client:

* a write + commit + read loop on a partitioned primary-key table, through this catalog
  (``RESTCatalog``) and through pypaimon's own filesystem catalog on the same data, interleaved
  round by round: ratio of median wall time (target <= 1.2), and how much of the loop is
  pypaimon's HTTP calls to the catalog (the ratio without them: what is the client's own);
  ``--reuse-file-io`` runs it on a RESTCatalog changed as ``reusing_file_io`` says;
* commit latency as the snapshot history grows: small commits to one append table, timed around
  snapshot 10 and again around snapshot 1,000 (quick: 200), both the whole pypaimon commit and
  the catalog's share of it (the ``commit`` REST call pypaimon makes): ratio at 1,000 / at 10
  (target <= 1.3: a commit reads the table head, never the history);
* listing 10,000 partitions (quick: 1,000) page by page through the REST API: DynamoDB items
  read (the service's ``x-glue-items-read`` header) / partitions returned (target <= 1.2), with
  the listed record counts checked against what was written.

Machines are noisy and absolute times drift, so every comparison is a ratio of figures taken in
the same run. Benchmarks are never tests.

Run: ``.venv/bin/python -m bench.bench_paimon [--quick]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import pyarrow as pa
import requests

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from infra.local.stack import CatalogStack  # noqa: E402
from bench.common import command_line, log, machine, print_table  # noqa: E402

from pypaimon import Schema  # noqa: E402
from pypaimon.catalog.catalog_factory import CatalogFactory  # noqa: E402

WAREHOUSE = "bench_wh"
ACCOUNT = "123456789012"
DATABASE = "bench"


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run (fewer rounds, 200 snapshots, 1,000 partitions)")
    parser.add_argument("--rounds", type=int, help="write+commit+read rounds per catalog (default 20; quick 5)")
    parser.add_argument("--rows", type=int, default=2000, help="rows written per round (default 2,000)")
    parser.add_argument("--snapshots", type=int, help="snapshots at the second commit measurement (default 1,000; quick 200)")
    parser.add_argument("--partitions", type=int, help="partitions listed page by page (default 10,000; quick 1,000)")
    parser.add_argument("--page", type=int, default=1000, help="maxResults of the partition listing (default 1,000)")
    parser.add_argument("--reuse-file-io", action="store_true",
                        help="the loop on a RESTCatalog changed to keep one FileIO per table (a client change: "
                             "what of the loop's gap is pypaimon's; see reusing_file_io)")
    args = parser.parse_args(argv)
    args.rounds = args.rounds or (5 if args.quick else 20)
    args.snapshots = args.snapshots or (200 if args.quick else 1000)
    args.partitions = args.partitions or (1000 if args.quick else 10000)
    return args


def rest_options(endpoint: str) -> dict[str, str]:
    """RESTCatalog options for the service: a bearer token naming the account."""
    return {"metastore": "rest", "uri": endpoint, "warehouse": WAREHOUSE, "token.provider": "bear",
            "token": ACCOUNT}


def median_ms(samples: Sequence[float]) -> float:
    return statistics.median(samples) * 1000


# ----------------------------------------------------------------------------------------------
# 1. write + commit + read through the REST catalog vs the filesystem catalog

PK_SCHEMA = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    pa.field("dt", pa.string(), nullable=False),
    ("name", pa.string()),
    ("amount", pa.float64()),
])


def round_data(round_no: int, rows: int) -> pa.Table:
    """Rows of one round: new keys plus updates of the previous round's keys, over 4 partitions."""
    start = round_no * rows // 2
    ids = list(range(start, start + rows))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "dt": pa.array([f"2026-11-{1 + i % 4:02d}" for i in ids]),
        "name": pa.array([f"name-{i}-{round_no}" for i in ids]),
        "amount": pa.array([i * 0.5 + round_no for i in ids], pa.float64()),
    }, schema=PK_SCHEMA)


def write_commit_read(catalog: Any, identifier: str, data: pa.Table) -> int:
    """One loop iteration as a user writes it: write, commit, then read the whole table back."""
    table = catalog.get_table(identifier)
    builder = table.new_batch_write_builder()
    write = builder.new_write()
    commit = builder.new_commit()
    write.write_arrow(data)
    commit.commit(write.prepare_commit())
    write.close()
    commit.close()
    read_builder = table.new_read_builder()
    splits = read_builder.new_scan().plan().splits()
    return read_builder.new_read().to_arrow(splits).num_rows


class CatalogCallTimer:
    """Wall time and count of pypaimon's HTTP calls to the catalog (``HttpClient._execute_request``),
    so a loop's time splits into the catalog's calls and the client's own work."""

    def __init__(self) -> None:
        from pypaimon.api.client import HttpClient

        self.seconds = 0.0
        self.calls = 0
        original: Callable[..., Any] = HttpClient._execute_request
        timer = self

        def timed(self_: Any, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(self_, *args, **kwargs)
            finally:
                timer.seconds += time.perf_counter() - started
                timer.calls += 1

        HttpClient._execute_request = timed  # type: ignore[method-assign]


def reusing_file_io(catalog: Any) -> Any:
    """``catalog`` (a RESTCatalog) made to keep one FileIO per table path, as pypaimon's
    filesystem catalog keeps one for all its tables.

    pypaimon 2.1.0's ``RESTCatalog.get_table`` builds a new FileIO, and with it a new pyarrow
    filesystem, for every table it returns, and its cache of Parquet footers
    (``format_pyarrow_reader._FileFormatDatasetCache``) is keyed by the filesystem's identity: so
    each loop's read opens every data file's footer again, where the filesystem catalog's reads
    find them cached. A change to the client, not the catalog (``--reuse-file-io``), to show what
    of the loop's gap is pypaimon's own.
    """
    made: dict[str, Any] = {}
    build: Callable[[str], Any] = catalog.file_io_from_options

    def file_io_from_options(table_path: str) -> Any:
        if table_path not in made:
            made[table_path] = build(table_path)
        return made[table_path]

    catalog.file_io_from_options = file_io_from_options
    return catalog


def loop_ratio(args: argparse.Namespace, rest: Any, fs: Any) -> list[list[str]]:
    schema = Schema.from_pyarrow_schema(PK_SCHEMA, partition_keys=["dt"], primary_keys=["id", "dt"],
                                        options={"bucket": "2"})
    for catalog in (rest, fs):
        catalog.create_table(f"{DATABASE}.loop", schema, False)
    timer = CatalogCallTimer()
    times: dict[str, list[float]] = {"rest": [], "fs": []}
    http: list[float] = []
    calls: list[int] = []
    rows: dict[str, int] = {}
    for round_no in range(args.rounds):
        data = round_data(round_no, args.rows)
        # Interleaved, and the order alternates, so drift and warm-up hit both alike.
        order = [("rest", rest), ("fs", fs)] if round_no % 2 == 0 else [("fs", fs), ("rest", rest)]
        for name, catalog in order:
            seconds, count = timer.seconds, timer.calls
            started = time.perf_counter()
            rows[name] = write_commit_read(catalog, f"{DATABASE}.loop", data)
            times[name].append(time.perf_counter() - started)
            if name == "rest":
                http.append(timer.seconds - seconds)
                calls.append(timer.calls - count)
    if rows["rest"] != rows["fs"]:
        raise SystemExit(f"the two catalogs read back different tables: {rows}")
    rest_ms, fs_ms, http_ms = median_ms(times["rest"]), median_ms(times["fs"]), median_ms(http)
    client = ", pypaimon keeping one FileIO per table (--reuse-file-io)" if args.reuse_file_io else ""
    return [
        [f"write {args.rows:,} rows + commit + read all ({rows['rest']:,} rows at the end), "
         f"median of {args.rounds}{client}", f"{rest_ms:,.0f} ms", f"{fs_ms:,.0f} ms", f"{rest_ms / fs_ms:.2f}", "<= 1.2"],
        [f"of which pypaimon's HTTP calls to the catalog ({statistics.median(calls):.0f} a loop), median",
         f"{http_ms:,.0f} ms", "", f"{(rest_ms - http_ms) / fs_ms:.2f} without them", "(reported)"],
    ]


# ----------------------------------------------------------------------------------------------
# 2. commit latency at 10 snapshots and at 1,000

APPEND_SCHEMA = pa.schema([("k", pa.int64()), ("v", pa.string())])


class CommitTimer:
    """Times the catalog's share of a pypaimon commit: its REST ``commit`` call.

    pypaimon commits through a catalog it loads anew for the commit, so the method is wrapped on
    the class, not on one catalog's instance.
    """

    def __init__(self) -> None:
        from pypaimon.api.rest_api import RESTApi

        self.samples: list[float] = []
        original: Callable[..., Any] = RESTApi.commit_snapshot
        samples = self.samples

        def timed(self_: Any, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(self_, *args, **kwargs)
            finally:
                samples.append(time.perf_counter() - started)

        RESTApi.commit_snapshot = timed  # type: ignore[method-assign]


def commit_latency(args: argparse.Namespace, rest: Any) -> list[list[str]]:
    schema = Schema.from_pyarrow_schema(APPEND_SCHEMA)
    rest.create_table(f"{DATABASE}.commits", schema, False)
    table = rest.get_table(f"{DATABASE}.commits")
    timer = CommitTimer()
    window = 10 if args.quick else 20
    early = range(5, 5 + window)  # snapshots ~10 (the first few warm the connection)
    late = range(args.snapshots - window, args.snapshots)
    whole: dict[str, list[float]] = {"early": [], "late": []}
    server: dict[str, list[float]] = {"early": [], "late": []}
    for n in range(args.snapshots):
        data = pa.table({"k": pa.array([n], pa.int64()), "v": pa.array([f"v{n}"])}, schema=APPEND_SCHEMA)
        builder = table.new_batch_write_builder()
        write, commit = builder.new_write(), builder.new_commit()
        write.write_arrow(data)
        messages = write.prepare_commit()
        before = len(timer.samples)
        started = time.perf_counter()
        commit.commit(messages)
        elapsed = time.perf_counter() - started
        write.close()
        commit.close()
        phase = "early" if n in early else "late" if n in late else None
        if phase:
            whole[phase].append(elapsed)
            server[phase].append(sum(timer.samples[before:]))
        if (n + 1) % 100 == 0:
            log(f"  {n + 1:,} snapshots")
    latest = rest.rest_api.load_snapshot(rest_identifier(DATABASE, "commits"))
    snapshot_id = latest.snapshot.id if latest is not None else None
    if snapshot_id != args.snapshots:
        raise SystemExit(f"expected snapshot {args.snapshots}, the catalog has {snapshot_id}")
    rows = []
    for label, samples in (("catalog's commit call (REST)", server), ("whole pypaimon commit", whole)):
        at_early, at_late = median_ms(samples["early"]), median_ms(samples["late"])
        rows.append([label, f"{at_early:,.1f} ms", f"{at_late:,.1f} ms", f"{at_late / at_early:.2f}",
                     "<= 1.3" if label.startswith("catalog") else "(reported)"])
    return rows


def rest_identifier(database: str, table: str) -> Any:
    from pypaimon.common.identifier import Identifier
    return Identifier.create(database, table)


# ----------------------------------------------------------------------------------------------
# 3. listing partitions page by page

def list_partitions(args: argparse.Namespace, rest: Any, endpoint: str) -> list[list[str]]:
    part_schema = pa.schema([("p", pa.int32()), ("v", pa.int64())])
    schema = Schema.from_pyarrow_schema(part_schema, partition_keys=["p"])
    rest.create_table(f"{DATABASE}.parts", schema, False)
    table = rest.get_table(f"{DATABASE}.parts")
    per_commit = 2000
    expected: dict[str, int] = {}
    for start in range(0, args.partitions, per_commit):
        keys = list(range(start, min(start + per_commit, args.partitions)))
        # Partition p gets (p % 3) + 1 rows, so record counts differ between partitions.
        ps = [p for p in keys for _ in range(p % 3 + 1)]
        data = pa.table({"p": pa.array(ps, pa.int32()), "v": pa.array(range(len(ps)), pa.int64())},
                        schema=part_schema)
        builder = table.new_batch_write_builder()
        write, commit = builder.new_write(), builder.new_commit()
        write.write_arrow(data)
        commit.commit(write.prepare_commit())
        write.close()
        commit.close()
        for p in keys:
            expected[str(p)] = p % 3 + 1
        log(f"  {len(expected):,} partitions written")
    url = f"{endpoint}/v1/{WAREHOUSE}/databases/{DATABASE}/tables/parts/partitions"
    headers = {"Authorization": f"Bearer {ACCOUNT}"}
    items = pages = 0
    seen: dict[str, int] = {}
    token: Optional[str] = None
    started = time.perf_counter()
    while True:
        params = {"maxResults": str(args.page), **({"pageToken": token} if token else {})}
        response = requests.get(url, params=params, headers=headers, timeout=300)
        response.raise_for_status()
        body = response.json()
        items += int(response.headers["x-glue-items-read"])
        pages += 1
        for partition in body.get("partitions") or []:
            seen[partition["spec"]["p"]] = partition["recordCount"]
        token = body.get("nextPageToken")
        if not token:
            break
    elapsed = time.perf_counter() - started
    if seen != expected:
        wrong = [k for k in expected if seen.get(k) != expected[k]][:5]
        raise SystemExit(f"listed {len(seen):,} partitions of {len(expected):,}; first differences: {wrong}")
    # The server caps maxResults (Paimon's servers do too), so the page size is what came back.
    return [[f"list {len(seen):,} partitions in {pages} pages (maxResults {args.page:,}, "
             f"{len(seen) / pages:,.0f} a page)", f"{items:,}",
             f"{items / len(seen):.3f}", "<= 1.2", f"{elapsed:.1f} s"]]


# ----------------------------------------------------------------------------------------------

def main(argv: Optional[Sequence[str]] = None) -> None:
    args = parse_args(argv)
    command = command_line("bench_paimon", argv)
    import pypaimon
    env = (f"{machine()}, pypaimon {getattr(pypaimon, '__version__', '2.1.0')}, "
           f"pyarrow {pa.__version__}; service and DynamoDB Local (in memory) each in their own process")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-paimon-") as tmp:
        rest_wh = Path(tmp) / "rest-warehouse"
        fs_wh = Path(tmp) / "fs-warehouse"
        stack = CatalogStack(log_dir=Path(tmp) / "logs",
                             server_env={"PAIMON_WAREHOUSE": f"file://{rest_wh}"})
        try:
            log("starting DynamoDB Local + service")
            stack.start()
            rest = CatalogFactory.create(rest_options(stack.endpoint))
            if args.reuse_file_io:
                rest = reusing_file_io(rest)
            fs = CatalogFactory.create({"warehouse": f"file://{fs_wh}"})
            for catalog in (rest, fs):
                catalog.create_database(DATABASE, False)
            log("1. write + commit + read loop, REST catalog vs filesystem catalog")
            loop_rows = loop_ratio(args, rest, fs)
            log(f"2. commit latency up to {args.snapshots:,} snapshots")
            commit_rows = commit_latency(args, rest)
            log(f"3. {args.partitions:,} partitions listed page by page")
            list_rows = list_partitions(args, rest, stack.endpoint)
        finally:
            stack.stop()
    print(f"\n## Paimon REST catalog benchmark\n\n`{command}`: {env}; whole run "
          f"{time.perf_counter() - started:,.0f} s.\n")
    print_table(["loop", "this catalog (REST)", "pypaimon filesystem catalog", "ratio", "target"], loop_rows)
    print()
    print_table(["commit latency", "at snapshot ~10", f"at snapshot ~{args.snapshots:,}", "ratio", "target"],
                commit_rows)
    print()
    print_table(["partition listing", "DynamoDB items read", "items / partition", "target", "time"], list_rows)


if __name__ == "__main__":
    main()
