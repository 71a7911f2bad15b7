"""``make run`` end to end (``python -m infra.local.run``, what the Makefile target runs), on free
ports and a data directory of its own: the mode banner, the HOST warning, the administrator
bootstrap in sigv4 mode, and DynamoDB Local's catalog hidden from other credentials.
"""

from __future__ import annotations

import importlib.util
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

import boto3
import pytest

from infra.local.dynamodb_local import KEY_FILE_NAME, PREEXEC, free_port
from infra.local.stack import REGION, REPO, client

READY = "Ctrl-C stops everything."
# What a developer's shell may set that would point this run elsewhere.
_CALLERS_SETTINGS = {"GLUE_AUTH", "HOST", "AWS_PROFILE", "GLUE_TABLE_PREFIX", "GLUE_DDB_ENDPOINT", "LOCALSTACK_HOST",
                     "GLUE_USE_LOCALSTACK", "PAIMON_WAREHOUSE", "GLUE_AUTH_KEY_FILE"}


class MakeRun:
    """One ``python -m infra.local.run`` child; its merged output, line by line."""

    def __init__(self, data_dir: Path, **env: str) -> None:
        self.port, self.ddb_port = free_port(), free_port()
        self.data_dir = data_dir
        full = {k: v for k, v in os.environ.items() if k not in _CALLERS_SETTINGS}
        full.update(PORT=str(self.port), DDB_PORT=str(self.ddb_port), GLUE_LOCAL_DATA_DIR=str(data_dir),
                    AWS_REGION=REGION, PYTHONUNBUFFERED="1",
                    PAIMON_WAREHOUSE=(data_dir / "paimon-warehouse").as_uri(), **env)
        self.process = subprocess.Popen([sys.executable, "-m", "infra.local.run"], cwd=REPO, env=full,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, preexec_fn=PREEXEC)
        self.lines: "queue.SimpleQueue[str]" = queue.SimpleQueue()
        self.output: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_ready(self, timeout: float = 180.0) -> str:
        """Everything printed until the server serves; fails on an early exit or a timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            self.output.append(line)
            if line == READY:
                return "\n".join(self.output)
        pytest.fail("make run did not come up:\n" + "\n".join(self.output))

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        """The first line printed from now on that contains ``text``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                continue
            self.output.append(line)
            if text in line:
                return line
        pytest.fail(f"make run printed no line with {text!r}:\n" + "\n".join(self.output))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def make_run(tmp_path: Path) -> Iterator[Callable[..., MakeRun]]:
    """``make_run(HOST=..., GLUE_AUTH=...)`` starts one; all are stopped after the test."""
    started: list[MakeRun] = []

    def start(**env: str) -> MakeRun:
        run = MakeRun(tmp_path / f"data{len(started)}", **env)
        started.append(run)
        return run

    yield start
    for run in started:
        run.stop()


def test_open_mode_on_every_interface_warns_and_hides_the_store(make_run: Callable[..., MakeRun]) -> None:
    run = make_run(HOST="0.0.0.0")
    output = run.wait_ready()
    assert output.splitlines()[0].startswith("open mode: the access key id names the account")
    assert "WARNING: HOST=0.0.0.0 serves the catalog beyond this machine in OPEN mode" in output
    assert f"Glue + Lake Formation API: http://127.0.0.1:{run.port} (listening on 0.0.0.0)" in output

    glue = client(f"http://127.0.0.1:{run.port}", "glue")
    glue.create_database(DatabaseInput={"Name": "made_by_make_run"})
    assert "made_by_make_run" in [d["Name"] for d in glue.get_databases()["DatabaseList"]]
    # The request log on make run's terminal: the time, then one line per request.
    logged = run.wait_for("glue GetDatabases 200 ")
    assert re.fullmatch(r"\d\d:\d\d:\d\d glue GetDatabases 200 \d+\.\d ms items_read=\d+", logged), logged
    assert not any("pynamo" in line for line in run.output)  # PynamoDB's notes at start stay quiet

    key_file = run.data_dir / "dynamodb" / KEY_FILE_NAME
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    ddb_url = f"http://127.0.0.1:{run.ddb_port}"
    owner = boto3.client("dynamodb", endpoint_url=ddb_url, region_name=REGION,
                         aws_access_key_id=key_file.read_text().strip(), aws_secret_access_key="x")
    assert "glue_catalog_databases" in owner.list_tables()["TableNames"]
    for key in ("local", "testing", "123456789012"):
        other = boto3.client("dynamodb", endpoint_url=ddb_url, region_name=REGION,
                             aws_access_key_id=key, aws_secret_access_key=key)
        assert other.list_tables()["TableNames"] == []


def test_sigv4_mode_on_loopback_bootstraps_an_administrator(make_run: Callable[..., MakeRun]) -> None:
    run = make_run(GLUE_AUTH="sigv4")
    output = run.wait_ready()
    assert output.splitlines()[0].startswith("SigV4 authentication on")
    assert "WARNING" not in output
    assert f"Glue + Lake Formation API: http://127.0.0.1:{run.port}\n" in output + "\n"
    if importlib.util.find_spec("infra.identities") is None:
        assert "no infra.identities admin command here; no administrator key created" in output
    else:
        assert "AccessKeyId" in output and "SecretAccessKey" in output


def test_the_cleaner_runs_and_empties_a_deleted_database(make_run: Callable[..., MakeRun]) -> None:
    run = make_run(GLUE_CLEANUP_POLL_SECONDS="0.5")
    run.wait_ready()
    glue = client(f"http://127.0.0.1:{run.port}", "glue")
    glue.create_database(DatabaseInput={"Name": "doomed"})
    glue.create_table(DatabaseName="doomed", TableInput={
        "Name": "t", "PartitionKeys": [{"Name": "day", "Type": "string"}],
        "StorageDescriptor": {"Columns": [{"Name": "x", "Type": "int"}], "Location": "s3://b/t/"}})
    glue.batch_create_partition(DatabaseName="doomed", TableName="t", PartitionInputList=[
        {"Values": [f"2026-01-{day:02d}"], "StorageDescriptor": {"Location": f"s3://b/t/{day}/"}}
        for day in range(1, 6)])
    key_file = run.data_dir / "dynamodb" / KEY_FILE_NAME
    owner = boto3.client("dynamodb", endpoint_url=f"http://127.0.0.1:{run.ddb_port}", region_name=REGION,
                         aws_access_key_id=key_file.read_text().strip(), aws_secret_access_key="x")

    def partitions() -> int:
        return owner.scan(TableName="glue_catalog_partitions", Select="COUNT")["Count"]

    assert partitions() == 5
    glue.delete_database(Name="doomed")  # answers at once; the contents are the cleaner's
    deadline = time.monotonic() + 60
    while partitions() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert partitions() == 0, "make run's background cleaner did not delete the partitions"


def test_glue_tls_serves_https_on_the_same_port(make_run: Callable[..., MakeRun]) -> None:
    run = make_run(GLUE_TLS="1")
    output = run.wait_ready()
    ca = run.data_dir / "tls" / "ca.pem"
    assert f"Glue + Lake Formation API: https://127.0.0.1:{run.port}\n" in output + "\n"
    assert f"AWS_CA_BUNDLE={ca}" in output and f"SET ca_cert_file = '{ca}'" in output
    assert oct((run.data_dir / "tls" / "server-key.pem").stat().st_mode & 0o777) == "0o600"
    glue = client(f"https://127.0.0.1:{run.port}", "glue", verify=str(ca))
    glue.create_database(DatabaseInput={"Name": "over_https"})
    assert "over_https" in [d["Name"] for d in glue.get_databases()["DatabaseList"]]


def test_a_misspelt_glue_tls_is_refused(make_run: Callable[..., MakeRun]) -> None:
    run = make_run(GLUE_TLS="yes please")
    assert run.process.wait(30) != 0
    lines = []
    while not lines or lines[-1] != "GLUE_TLS='yes please': use 1 (HTTPS) or 0 (plain HTTP)":
        lines.append(run.lines.get(timeout=10))  # queue.Empty: the message never came
