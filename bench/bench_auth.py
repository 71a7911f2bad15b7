"""What SigV4 verification costs per request: GetPartitions with verification on and off.

Two API servers on one DynamoDB Local and one set of tables: the open one (GLUE_AUTH unset) and one
with GLUE_AUTH=sigv4, whose client signs with a key issued by ``python -m infra.identities admin
bootstrap``. A small table (2 partition keys, 20 partitions) is read with GetPartitions (all 20) by
one client each, alternating blocks of calls between the two servers so drift hits both alike;
the medians are compared. Also timed in process: ``sigv4.authenticate`` alone on a cached key.

Run: ``.venv/bin/python -m bench.bench_auth [--calls 400]``. Benchmarks are never tests.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import boto3

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from infra.local.stack import CLIENT_CONFIG, REGION, CatalogStack  # noqa: E402
from bench.common import Report, log, make_client  # noqa: E402

DATABASE, TABLE, PARTITIONS, BLOCK = "bench_auth", "events", 20, 20


def _setup(glue: Any) -> None:
    glue.create_database(DatabaseInput={"Name": DATABASE})
    columns = [{"Name": "id", "Type": "bigint"}]
    glue.create_table(DatabaseName=DATABASE, TableInput={
        "Name": TABLE, "PartitionKeys": [{"Name": "region", "Type": "string"}, {"Name": "day", "Type": "int"}],
        "StorageDescriptor": {"Columns": columns, "Location": "s3://bench/events/"}})
    glue.batch_create_partition(DatabaseName=DATABASE, TableName=TABLE, PartitionInputList=[
        {"Values": [f"r{i % 4}", str(i)], "StorageDescriptor": {"Columns": columns,
                                                                  "Location": f"s3://bench/events/{i}/"}}
        for i in range(PARTITIONS)])


def _timed(glue: Any) -> float:
    start = time.perf_counter()
    answer = glue.get_partitions(DatabaseName=DATABASE, TableName=TABLE)
    elapsed = time.perf_counter() - start
    assert len(answer["Partitions"]) == PARTITIONS
    return elapsed


def _in_process_cost(key_id: str, secret: str, rounds: int = 2000) -> float:
    """Microseconds per ``sigv4.authenticate`` with the key already cached (no store read)."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    from chalicelib.protocol import sigv4
    from chalicelib.store import identities

    known = identities.VerifiedKey(key_id, "arn:aws:iam::123456789012:user/admin", secret)
    identities.lookup_key = lambda _key_id: known  # type: ignore[assignment]  # the bench's own process only
    body = json.dumps({"DatabaseName": DATABASE, "TableName": TABLE}).encode()
    request = AWSRequest(method="POST", url="http://127.0.0.1:8000/", data=body, headers={
        "Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "AWSGlue.GetPartitions", "Host": "127.0.0.1:8000"})
    SigV4Auth(Credentials(key_id, secret), "glue", REGION).add_auth(request)
    headers = {name.lower(): value for name, value in request.headers.items()}
    start = time.perf_counter()
    for _ in range(rounds):
        sigv4.authenticate("glue", "POST", "/", headers, body)
    return (time.perf_counter() - start) / rounds * 1e6


def main() -> None:
    """Start the stack and both servers, measure, print the report."""
    options = argparse.ArgumentParser(description=__doc__)
    options.add_argument("--calls", type=int, default=400, help="GetPartitions calls per server")
    calls = options.parse_args().calls
    with tempfile.TemporaryDirectory(prefix="bench-auth-") as scratch, \
            CatalogStack(log_dir=Path(scratch) / "logs") as stack:
        auth_env = {"GLUE_AUTH": "sigv4", "GLUE_AUTH_KEY_FILE": str(Path(scratch) / "auth.key")}
        boot = subprocess.run([sys.executable, "-m", "infra.identities", "admin", "bootstrap"], cwd=REPO,
                              env={**stack.env, **auth_env}, capture_output=True, text=True, check=True)
        issued = json.loads(boot.stdout)
        signed_server = stack.extra_server(auth_env, name="sigv4").start()
        try:
            open_client = make_client("glue", stack.endpoint)
            signed_client = boto3.client("glue", endpoint_url=signed_server.endpoint, region_name=REGION,
                                         aws_access_key_id=issued["AccessKeyId"],
                                         aws_secret_access_key=issued["SecretAccessKey"], config=CLIENT_CONFIG)
            _setup(open_client)
            log(f"{PARTITIONS} partitions written; warming up")
            for _ in range(BLOCK):
                _timed(open_client)
                _timed(signed_client)
            samples: dict[str, list[float]] = {"open": [], "sigv4": []}
            while len(samples["sigv4"]) < calls:
                for name, glue in (("open", open_client), ("sigv4", signed_client)):
                    samples[name].extend(_timed(glue) for _ in range(BLOCK))
            log("measured; timing verification alone")
            alone = _in_process_cost(issued["AccessKeyId"], issued["SecretAccessKey"])
        finally:
            signed_server.stop()
    medians = {name: statistics.median(values) * 1000 for name, values in samples.items()}
    ratio = medians["sigv4"] / medians["open"]
    report = Report(["Server", "Calls", "Median ms", "p90 ms"])
    report.check("GetPartitions median, verification on / off", f"{ratio:.3f}x "
                 f"({medians['sigv4']:.2f} ms / {medians['open']:.2f} ms)", "<= 1.10x", ratio <= 1.10)
    report.check("sigv4.authenticate alone (in process, cached key)", f"{alone:.0f} us", "-", None)
    for name, values in samples.items():
        ordered = sorted(values)
        report.tables[0][1].append((name, str(len(values)), f"{medians[name]:.2f}",
                                    f"{ordered[int(len(ordered) * 0.9)] * 1000:.2f}"))
    report.notes.append(f"GetPartitions of all {PARTITIONS} partitions of a 2-key table; one client per server, "
                        f"blocks of {BLOCK} calls alternating between the servers; both servers on one DynamoDB "
                        "Local. The signed server reads the key once, then every CACHE_SECONDS (5 s).")
    report.print("python -m bench.bench_auth" + (f" --calls {calls}" if calls != 400 else ""),
                 f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")


if __name__ == "__main__":
    main()
