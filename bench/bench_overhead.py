"""The service's own overhead on an indexed, selective GetPartitions, and where it goes.

Compares, interleaved in one run, a GetPartitions whose expression an index serves with a
straight DynamoDB Query (boto3 → DynamoDB Local) of the very index entries the service reads,
and breaks a GetPartitions down: DynamoDB requests it sends (the service's
``x-glue-ddb-requests`` header), CPU of the service process and of DynamoDB Local per call (from
/proc), and what boto3 itself spends parsing each answer on the client (the same for any server).

Run alone: ``.venv/bin/python -m bench.bench_overhead [--partitions 10000] [--runs 40] [--quick]``.
From bench/bench_partitions.py: :func:`measure_overhead` on a table it built.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence
from urllib.parse import urlsplit

import boto3
from botocore import parsers

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from bench import bench_partitions as bp  # noqa: E402
from bench import common  # noqa: E402
from bench.common import log, make_client  # noqa: E402
from chalicelib.store.dynamo import http1  # noqa: E402
from infra.local.stack import REGION, CatalogStack  # noqa: E402

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: Optional[int]) -> float:
    """User + system CPU seconds of process ``pid`` so far (0.0 when unknown or gone)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime (fields 14 and 15)


def compiler_cpu_seconds(pid: Optional[int]) -> float:
    """CPU seconds so far of the JIT compiler threads of java process ``pid`` (HotSpot names
    them "C1 CompilerThread<n>" and "C2 CompilerThread<n>"; 0.0 when unknown). While they still
    compile, they take a core from whatever else runs: on 2 cores, often the service."""
    if pid is None:
        return 0.0
    total = 0
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return 0.0
    for task in tasks:
        try:
            if not (task / "comm").read_text().startswith(("C1 CompilerThre", "C2 CompilerThre")):
                continue
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread ended meanwhile
        total += int(fields[11]) + int(fields[12])
    return total / _TICK


class _Timed:
    """One way of answering the query: wall-clock samples, CPU of the two server processes,
    the last raw response body (for the client-parse measure) and the service's headers."""

    def __init__(self, label: str, call: Callable[[], list[tuple[str, ...]]], pids: Sequence[Optional[int]],
                 parse: Callable[[], float]):
        self.label, self.call, self.pids, self.parse = label, call, pids, parse
        self.samples: list[float] = []
        self.parse_samples: list[float] = []
        self.cpu = [0.0 for _ in pids]
        self.result: list[tuple[str, ...]] = []

    def run(self, record: bool = True) -> None:
        before = [cpu_seconds(pid) for pid in self.pids]
        start = time.perf_counter()
        found = self.call()
        elapsed = time.perf_counter() - start
        after = [cpu_seconds(pid) for pid in self.pids]
        self.result = sorted(found)
        if record:
            self.samples.append(elapsed)
            self.cpu = [total + b - a for total, a, b in zip(self.cpu, before, after)]
            # Right after the call, under the same load: what boto3 spent parsing its answer.
            self.parse_samples.append(self.parse())

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def cpu_ms(self, which: int) -> float:
        """Mean CPU milliseconds of process ``which`` per call."""
        return self.cpu[which] * 1000 / len(self.samples)


def _parser(client: Any, operation: str, bodies: dict[str, bytes]) -> Callable[[], float]:
    """A function timing botocore's parse of the last ``bodies[operation]`` (seconds)."""
    model = client.meta.service_model.operation_model(operation)
    parser = parsers.create_parser(client.meta.service_model.protocol)

    def parse() -> float:
        start = time.perf_counter()
        parser.parse({"body": bodies[operation], "headers": {}, "status_code": 200}, model.output_shape)
        return time.perf_counter() - start
    return parse


class _RawPost:
    """POSTs of one prepared request over a kept-alive HTTP/1.1 connection, without boto3: no
    client-side signing, serializing or parsing, so only the server's time is left in the wall
    time (and the loopback's). Servers in open mode and DynamoDB Local check no signature, only
    the key id in the Authorization header."""

    def __init__(self, endpoint: str, target: str, content_type: str, service: str, key_id: str,
                 payload: dict[str, Any]) -> None:
        url = urlsplit(endpoint)
        body = json.dumps(payload).encode()
        host = f"{url.hostname}:{url.port}"
        self._request = (f"POST / HTTP/1.1\r\nHost: {host}\r\nContent-Type: {content_type}\r\n"
                         f"X-Amz-Target: {target}\r\nX-Amz-Date: 20260101T000000Z\r\n"
                         f"Authorization: AWS4-HMAC-SHA256 Credential={key_id}/20260101/{REGION}/{service}/"
                         f"aws4_request, SignedHeaders=host, Signature=0\r\n"
                         f"Content-Length: {len(body)}\r\n\r\n").encode(), body
        self._connection = http1.Connection(str(url.hostname), int(url.port or 80), 5, 60).open()

    def __call__(self) -> bytes:
        status, _, body, _ = self._connection.post(*self._request)
        if status != 200:
            raise RuntimeError(f"raw request answered {status}: {body[:300]!r}")
        return body

    def close(self) -> None:
        self._connection.close()


def _raw_ratio(glue: Any, ddb: Any, prefix: str, table: str, database: str, expression: str, index_uid: str,
               low: str, high: str, runs: int) -> tuple[float, float]:
    """Medians (seconds) of the GetPartitions and of the straight Query as raw HTTP POSTs,
    interleaved: the servers' side of each, without boto3 on the client."""
    service = _RawPost(glue.meta.endpoint_url, "AWSGlue.GetPartitions", "application/x-amz-json-1.1", "glue",
                       glue._request_signer._credentials.access_key,
                       {"DatabaseName": database, "TableName": table, "Expression": expression})
    query = _RawPost(ddb.meta.endpoint_url, "DynamoDB_20120810.Query", "application/x-amz-json-1.0", "dynamodb",
                     ddb._request_signer._credentials.access_key,
                     {"TableName": prefix + "partition_index_entries", "ConsistentRead": True,
                      "KeyConditionExpression": "#h = :h AND #k BETWEEN :lo AND :hi",
                      "ExpressionAttributeNames": {"#h": "index_uid", "#k": "key"},
                      "ExpressionAttributeValues": {":h": {"S": index_uid}, ":lo": {"S": low}, ":hi": {"S": high}}})
    samples: dict[Any, list[float]] = {service: [], query: []}
    try:
        for number in range(runs + 3):
            for post in (service, query) if number % 2 == 0 else (query, service):
                start = time.perf_counter()
                answer = post()
                if number >= 3:  # the first three of each warm up
                    samples[post].append(time.perf_counter() - start)
                if post is query and b"LastEvaluatedKey" in answer:
                    raise RuntimeError("the raw Query has more than one page: not comparable")
    finally:
        service.close()
        query.close()
    return statistics.median(samples[service]), statistics.median(samples[query])


def measure_overhead(report: common.Report, glue: Any, ddb: Any, prefix: str, table: str, runs: int,
                     server_pid: Optional[int] = None, ddb_pid: Optional[int] = None,
                     database: str = bp.DATABASE, expression: str = bp.SELECTIVE,
                     triple: tuple[str, str, int] = bp.PINNED[0], target: float = 1.5,
                     warmup: int = 200) -> float:
    """Add to ``report`` the ratio indexed selective GetPartitions ÷ straight DynamoDB Query of
    the same index entries (medians of ``runs`` interleaved calls each) and the breakdown of a
    GetPartitions. ``table``: a table of bench_partitions' layout holding ``triple``, with its
    first index on (country, category, year); ``glue`` / ``ddb``: boto3 clients of the service
    and of its DynamoDB; ``server_pid`` / ``ddb_pid``: the two processes, for their CPU (None:
    not reported); ``warmup``: untimed calls of each kind first. Returns the ratio."""
    index_uid = bp.index_uids(bp.table_record(ddb, prefix, table))[0]
    low, high = bp.entry_bounds(ddb, prefix, index_uid, triple)
    bodies: dict[str, bytes] = {}
    headers: dict[str, str] = {}

    def keep(name: str) -> Callable[..., None]:
        def hook(http_response: Any, **_: Any) -> None:
            bodies[name] = http_response.content
            if name == "GetPartitions":
                headers.update(http_response.headers)
        return hook

    glue.meta.events.register("after-call.glue.GetPartitions", keep("GetPartitions"), unique_id="overhead-gp")
    ddb.meta.events.register("after-call.dynamodb.Query", keep("Query"), unique_id="overhead-q")
    straight = bp.direct_query(ddb, prefix, index_uid, low, high)
    pids = (server_pid, ddb_pid)
    service = _Timed("GetPartitions", lambda: bp.fetch(glue, table, expression)[0], pids,
                     _parser(glue, "GetPartitions", bodies))
    raw = _Timed("Query", lambda: straight()[0], pids, _parser(ddb, "Query", bodies))
    try:
        # Untimed first: DynamoDB Local's JIT compiles its Query and BatchGetItem paths during
        # the first few hundred calls, on the cores the service shares (a start-up cost, which a
        # deployed DynamoDB never charges); the report prints what it still spends while measured.
        for _ in range(warmup):
            service.run(record=False)
            raw.run(record=False)
        compiling = compiler_cpu_seconds(ddb_pid)
        for number in range(runs):
            for case in (service, raw) if number % 2 == 0 else (raw, service):
                case.run()
        compiling = compiler_cpu_seconds(ddb_pid) - compiling
    finally:
        glue.meta.events.unregister("after-call.glue.GetPartitions", unique_id="overhead-gp")
        ddb.meta.events.unregister("after-call.dynamodb.Query", unique_id="overhead-q")
    if service.result != raw.result:
        raise RuntimeError(f"GetPartitions returned {len(service.result)} partitions, the Query "
                           f"{len(raw.result)} entries: answers differ")
    ratio = service.median / raw.median
    count = len(service.result)
    report.check(f"Indexed selective GetPartitions ({count} matches) ÷ a straight DynamoDB Query of the "
                 f"same {count} index entries (medians, {runs} interleaved runs)",
                 f"{ratio:.2f}× ({bp.ms(service.median)} ÷ {bp.ms(raw.median)})", f"≤ {target}",
                 ratio <= target)
    parse_service = statistics.median(service.parse_samples) * 1000
    parse_raw = statistics.median(raw.parse_samples) * 1000
    requests = headers.get("x-glue-ddb-requests", "?")
    parts = [f"{requests} DynamoDB requests (x-glue-ddb-requests)"]
    if server_pid is not None:
        parts.append(f"service CPU {service.cpu_ms(0):.1f} ms")
    if ddb_pid is not None:
        parts.append(f"DynamoDB Local CPU {service.cpu_ms(1):.1f} ms (straight Query: {raw.cpu_ms(1):.1f} ms; "
                     f"its JIT compiler threads {compiling * 1000 / (2 * runs):.1f} ms a call of either kind "
                     f"while measured)")
    parts.append(f"boto3 parsing the answer on the client (timed again after each call) {parse_service:.1f} ms "
                 f"({len(bodies['GetPartitions']):,} B; the straight Query's: {parse_raw:.1f} ms, "
                 f"{len(bodies['Query']):,} B)")
    report.check("GetPartitions above, per call", "; ".join(parts), "report", None)
    # boto3's parsing is the client's, and a Glue answer is a deeper shape than DynamoDB's items:
    # without it on both sides, what is left is the server side of each.
    server_side, raw_side = service.median * 1000 - parse_service, raw.median * 1000 - parse_raw
    if server_side > 0 and raw_side > 0:
        report.check("The same ratio without boto3's client-side parsing on either side (diagnosis)",
                     f"{server_side / raw_side:.2f}× ({server_side:.1f} ms ÷ {raw_side:.1f} ms)", "report", None)
    # Measured, not estimated: both requests as raw HTTP POSTs, no boto3 on either side.
    raw_service, raw_query = _raw_ratio(glue, ddb, prefix, table, database, expression, index_uid, low, high, runs)
    report.check("The same two requests as raw HTTP POSTs, no boto3 on either side: the servers' side only "
                 "(diagnosis)", f"{raw_service / raw_query:.2f}× ({bp.ms(raw_service)} ÷ {bp.ms(raw_query)})",
                 "report", None)
    return ratio


def build_table(glue: Any, clients: Sequence[Any], table: str, partitions: int) -> None:
    """A table of bench_partitions' layout with ``partitions`` partitions and its query index."""
    glue.create_table(DatabaseName=bp.DATABASE, TableInput=bp.table_input(table), PartitionIndexes=[bp.QUERY_INDEX])
    bp.load(clients, table, [bp.partition_input(v) for v in bp.layout(partitions)])


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Start a stack, build one table, measure, print the report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, help="partitions in the table (default 10000; quick 1000)")
    parser.add_argument("--runs", type=int, help="interleaved runs per case (default 40; quick 10)")
    parser.add_argument("--quick", action="store_true", help="a small table and few runs: a smoke run")
    args = parser.parse_args(argv)
    partitions = args.partitions or (1000 if args.quick else 10000)
    runs = args.runs or (10 if args.quick else 40)
    command = common.command_line("bench_overhead", argv)
    env = (f"{common.machine()}, boto3 {boto3.__version__}; service and DynamoDB Local "
           f"(in memory) each in their own process")
    report = common.Report()
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as tmp:
        stack = CatalogStack(log_dir=Path(tmp))
        try:
            log(f"starting DynamoDB Local + service (logs in {tmp})")
            stack.start()
            clients = [make_client("glue", stack.endpoint) for _ in range(4)]
            ddb = make_client("dynamodb", stack.ddb_endpoint, access_key=stack.ddb_access_key_id)
            clients[0].create_database(DatabaseInput={"Name": bp.DATABASE})
            log(f"loading {partitions:,} partitions")
            build_table(clients[0], clients, "sales", partitions)
            log(f"measuring, {runs} interleaved runs per case")
            server = stack.server.process
            dynamodb = stack.dynamodb.process if stack.dynamodb is not None else None
            measure_overhead(report, clients[0], ddb, stack.table_prefix, "sales", runs,
                             server.pid if server else None, dynamodb.pid if dynamodb else None,
                             warmup=20 if args.quick else 200)
        finally:
            stack.stop()
    report.notes.append(f"{partitions:,} partitions in the table; the query's key range holds {bp.PER_TRIPLE}.")
    report.print(command, env)


if __name__ == "__main__":
    main()
