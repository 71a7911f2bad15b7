"""Keep-alive latency of ``chalice local`` versus ``infra.local.server``, measured with boto3.

Both servers run the same one-route stub app (a Glue ``GetDatabases`` that returns an empty
list), so the numbers show only what the HTTP layer costs a keep-alive client.

Run: ``.venv/bin/python bench/bench_local_server.py [--seconds 3]`` (or ``make bench``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import boto3
from botocore.config import Config

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from infra.local.dynamodb_local import free_port  # noqa: E402

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


def measure(endpoint: str, seconds: float, max_requests: int) -> tuple[int, float]:
    """Send GetDatabases over one keep-alive boto3 client; return (requests, elapsed seconds)."""
    glue = boto3.client(
        "glue",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="bench",
        aws_secret_access_key="bench",
        config=Config(retries={"total_max_attempts": 1}),
    )
    for _ in range(3):  # warm-up: connection, signer, model loading
        glue.get_databases()
    count, start = 0, time.perf_counter()
    while count < max_requests and time.perf_counter() - start < seconds:
        glue.get_databases()
        count += 1
    return count, time.perf_counter() - start


def run_server(cmd: list[str], cwd: Path, port: int, seconds: float, max_requests: int) -> tuple[int, float]:
    """Start one server, measure it and always stop it."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc)
        return measure(f"http://127.0.0.1:{port}", seconds, max_requests)
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
    parser.add_argument("--seconds", type=float, default=3.0, help="measuring time per server")
    parser.add_argument("--max-requests", type=int, default=20000)
    args = parser.parse_args()
    chalice_cli = shutil.which("chalice", path=str(Path(sys.executable).parent)) or "chalice"
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        write_stub_project(project)
        port_a, port_b = free_port(), free_port()
        servers = {
            "chalice local": [chalice_cli, "local", "--no-autoreload", "--port", str(port_a)],
            "infra.local.server": [
                sys.executable, "-m", "infra.local.server",
                "--port", str(port_b), "--project-dir", str(project),
            ],
        }
        results = {}
        for (name, cmd), port in zip(servers.items(), (port_a, port_b)):
            cwd = project if name == "chalice local" else REPO
            results[name] = run_server(cmd, cwd, port, args.seconds, args.max_requests)

    print(f"{'server (boto3, keep-alive)':<28} {'requests':>9} {'req/s':>9} {'ms/req':>8}")
    rates = {}
    for name, (count, elapsed) in results.items():
        rates[name] = count / elapsed
        print(f"{name:<28} {count:>9} {rates[name]:>9.1f} {1000 * elapsed / count:>8.2f}")
    print(f"ratio infra.local.server / chalice local: {rates['infra.local.server'] / rates['chalice local']:.1f}x")


if __name__ == "__main__":
    main()
