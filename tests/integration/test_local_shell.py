"""``make shell`` / ``make reset`` (infra/local/shell.py) against a running server: its clients
reach the endpoint that HOST / PORT name, and a reset is refused where signatures are verified."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any, Callable
from urllib.parse import urlsplit

from infra.local.stack import REPO


def shell(port: int, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PORT": str(port), "HOST": "127.0.0.1", "GLUE_TLS": "0"}
    env.pop("AWS_ACCESS_KEY_ID", None)
    env.pop("AWS_SECRET_ACCESS_KEY", None)
    return subprocess.run([sys.executable, "-m", "infra.local.shell", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_the_shell_has_clients_for_the_endpoint(endpoint: str, glue: Any) -> None:
    port = urlsplit(endpoint).port
    assert port is not None
    result = shell(port, "-c", "glue.create_database(DatabaseInput={'Name': 'from_the_shell'}); "
                               "print(sorted(n[0] for n in iceberg.list_namespaces())); "
                               "print(lakeformation.get_data_lake_settings()['DataLakeSettings'] is not None)")
    assert result.returncode == 0, result.stderr
    assert "from_the_shell" in result.stdout and "True" in result.stdout
    assert glue.get_database(Name="from_the_shell")["Database"]["Name"] == "from_the_shell"


def test_make_reset_is_refused_with_signatures_on(start_server: Callable[..., Any]) -> None:
    signed = start_server(GLUE_AUTH="sigv4")
    result = shell(signed.port, "--reset")
    assert result.returncode == 1
    assert "reset refused (403)" in result.stderr and "open mode only" in result.stderr


def test_make_reset_without_a_server_says_so() -> None:
    from infra.local.dynamodb_local import free_port

    result = shell(free_port(), "--reset")
    assert result.returncode == 1 and "start make run first" in result.stderr


def test_make_reset_of_one_account(endpoint: str, make_client: Callable[..., Any]) -> None:
    """``make reset ACCOUNT=...``: only that account's catalog goes (safe on the session's shared
    server: both accounts are this test's own)."""
    from tests.integration.conftest import random_account

    emptied, kept = random_account(), random_account()
    for account in (emptied, kept):
        make_client("glue", account=account).create_database(DatabaseInput={"Name": "mine"})
    port = urlsplit(endpoint).port
    assert port is not None
    result = shell(port, "--reset", "--account", emptied)
    assert result.returncode == 0, result.stderr
    assert f"reset: account {emptied}'s catalog of http://127.0.0.1:{port} is empty" in result.stdout
    assert make_client("glue", account=emptied).get_databases()["DatabaseList"] == []
    assert [d["Name"] for d in make_client("glue", account=kept).get_databases()["DatabaseList"]] == ["mine"]

    refused = shell(port, "--reset", "--account", "12345")
    assert refused.returncode == 1 and "reset refused (400)" in refused.stderr and "12 digits" in refused.stderr
    assert shell(port, "--account", emptied).returncode == 2  # --account without --reset
