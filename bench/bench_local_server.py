"""Keep-alive latency of ``chalice local`` versus ``infra.local.server``, measured with boto3.

The servers run the same one-route stub app (a Glue ``GetDatabases`` that returns an empty
list), so the numbers show only what the HTTP layer costs a keep-alive client, and the server
CPU each request costs (from /proc). A third run is ``infra.local.server`` with http.server's
own header parsing (the email package) put back, side by side with its own.

Run: ``.venv/bin/python bench/bench_local_server.py [--seconds 3]`` (or ``make bench``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import boto3
from botocore.config import Config

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.bench_write_cpu import cpu_seconds  # noqa: E402
from infra.local.dynamodb_local import free_port  # noqa: E402

# infra.local.server with http.server's parse_request (headers parsed by the email package), the
# request deadline kept: what the server did before it read headers itself.
EMAIL_HEADERS_SERVER = """
import sys, time
from http.server import BaseHTTPRequestHandler
from infra.local import server

def parse_request(self):
    self._reader.deadline = time.monotonic() + self.server.request_timeout
    return BaseHTTPRequestHandler.parse_request(self)

server.GatewayHandler.parse_request = parse_request
server.main(sys.argv[1:])
"""

STUB_APP = '''
from chalice import Chalice, Response

app = Chalice(app_name="bench-stub")


@app.route("/", methods=["POST"], content_types=["application/x-amz-json-1.1", "application/json"])
def glue():
    return Response(body='{"DatabaseList": []}', status_code=200,
                    headers={"Content-Type": "application/x-amz-json-1.1"})
'''


def write_stub_project(root: Path) -> None:
    """A minimal chalice project: ``chalice local`` refuses to start without .chalice/config.json."""
    (root / "app.py").write_text(STUB_APP)
    (root / ".chalice").mkdir()
    (root / ".chalice" / "config.json").write_text(json.dumps({"version": "2.0", "app_name": "bench-stub"}))


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    """Block until something accepts connections on 127.0.0.1:port."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listens on port {port}")


def glue_client(endpoint: str) -> Any:
    """A keep-alive boto3 Glue client, warmed up (connection, signer, model loading)."""
    glue = boto3.client(
        "glue",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="bench",
        aws_secret_access_key="bench",
        config=Config(retries={"total_max_attempts": 1}),
    )
    for _ in range(3):
        glue.get_databases()
    return glue


def measure(servers: dict[str, tuple[Any, int]], seconds: float, max_requests: int,
            rounds: int = 10) -> dict[str, tuple[int, float, float]]:
    """GetDatabases over each server's client (name -> (client, server pid)), in ``rounds``
    interleaved turns of ``seconds / rounds`` each, so that the machine's drift falls on all
    alike; per server: (requests, elapsed seconds, server CPU seconds meanwhile)."""
    totals = {name: [0, 0.0, 0.0] for name in servers}
    for _ in range(rounds):
        for name, (glue, pid) in servers.items():
            total = totals[name]
            count, cpu, start = 0, cpu_seconds(pid), time.perf_counter()
            while count < max_requests // rounds and time.perf_counter() - start < seconds / rounds:
                glue.get_databases()
                count += 1
            total[0] += count
            total[1] += time.perf_counter() - start
            total[2] += cpu_seconds(pid) - cpu
    return {name: (int(count), elapsed, cpu) for name, (count, elapsed, cpu) in totals.items()}


@contextlib.contextmanager
def running(cmd: list[str], cwd: Path, port: int) -> Iterator[int]:
    """Start one server, yield its pid once it listens, and always stop it."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc)
        yield proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> None:
    """Measure both servers and print requests per second side by side."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="measuring time per server (in 10 interleaved turns)")
    parser.add_argument("--max-requests", type=int, default=20000)
    args = parser.parse_args()
    chalice_cli = shutil.which("chalice", path=str(Path(sys.executable).parent)) or "chalice"
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        write_stub_project(project)
        ports = [free_port() for _ in range(3)]
        ours = ["--port", str(ports[1]), "--project-dir", str(project)]
        servers = {
            "chalice local": ([chalice_cli, "local", "--no-autoreload", "--port", str(ports[0])], project, ports[0]),
            "infra.local.server": ([sys.executable, "-m", "infra.local.server", *ours], REPO, ports[1]),
            "same, email headers": ([sys.executable, "-c", EMAIL_HEADERS_SERVER, "--port", str(ports[2]),
                                     "--project-dir", str(project)], REPO, ports[2]),
        }
        with contextlib.ExitStack() as stack:
            clients = {}
            for name, (cmd, cwd, port) in servers.items():
                pid = stack.enter_context(running(cmd, cwd, port))
                clients[name] = (glue_client(f"http://127.0.0.1:{port}"), pid)
            results = measure(clients, args.seconds, args.max_requests)

    print(f"{'server (boto3, keep-alive)':<28} {'requests':>9} {'req/s':>9} {'ms/req':>8} {'server CPU ms/req':>18}")
    rates, cpu = {}, {}
    for name, (count, elapsed, seconds_cpu) in results.items():
        rates[name] = count / elapsed
        cpu[name] = 1000 * seconds_cpu / count
        print(f"{name:<28} {count:>9} {rates[name]:>9.1f} {1000 * elapsed / count:>8.2f} {cpu[name]:>18.3f}")
    print(f"ratio infra.local.server / chalice local: {rates['infra.local.server'] / rates['chalice local']:.1f}x")
    print(f"server CPU per request, own header reading ÷ the email package's: "
          f"{cpu['infra.local.server'] / cpu['same, email headers']:.2f}")

if __name__ == "__main__":
    main()
