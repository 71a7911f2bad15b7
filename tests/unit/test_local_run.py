"""``make run``'s mode banner and HOST warning (infra/local/run.py), without starting anything."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from infra.local import run
from infra.local.run import OPEN, SIGV4, auth_mode, client_url, host_warning, is_loopback, mode_banner


@pytest.mark.parametrize("env, mode", [
    ({}, OPEN), ({"GLUE_AUTH": ""}, OPEN), ({"GLUE_AUTH": "open"}, OPEN), ({"GLUE_AUTH": " OPEN "}, OPEN),
    ({"GLUE_AUTH": "sigv4"}, SIGV4), ({"GLUE_AUTH": "SigV4"}, SIGV4),
    # A misspelt value must not open the catalog (the server decides the same way).
    ({"GLUE_AUTH": "opne"}, SIGV4), ({"GLUE_AUTH": "none"}, SIGV4),
])
def test_auth_mode(env: dict[str, str], mode: str) -> None:
    assert auth_mode(env) == mode


@pytest.mark.parametrize("host", ["127.0.0.1", "127.1.2.3", "::1", "localhost"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.5", "192.168.1.20", "no-such-host.invalid"])
def test_hosts_beyond_loopback(host: str) -> None:
    assert not is_loopback(host)


def test_the_banner_names_the_mode() -> None:
    assert mode_banner(OPEN).startswith("open mode: the access key id names the account")
    assert "for local testing only" in mode_banner(OPEN)
    assert mode_banner(SIGV4).startswith("SigV4 authentication on")


@pytest.mark.parametrize("host", ["0.0.0.0", "10.0.0.5", "::"])
def test_open_mode_beyond_loopback_warns(host: str) -> None:
    warning = host_warning(host, OPEN)
    assert warning is not None
    assert f"WARNING: HOST={host}" in warning and "OPEN mode" in warning and "GLUE_AUTH=sigv4" in warning


@pytest.mark.parametrize("host, mode", [("127.0.0.1", OPEN), ("localhost", OPEN), ("0.0.0.0", SIGV4),
                                        ("10.0.0.5", SIGV4)])
def test_no_warning_on_loopback_or_with_signatures(host: str, mode: str) -> None:
    assert host_warning(host, mode) is None


def test_client_url() -> None:
    assert client_url("127.0.0.1", 8000) == "http://127.0.0.1:8000"
    assert client_url("0.0.0.0", 8000) == "http://127.0.0.1:8000"
    assert client_url("10.0.0.5", 9000) == "http://10.0.0.5:9000"
    assert client_url("::", 8000) == "http://[::1]:8000"


def test_bootstrap_is_skipped_without_the_identities_command(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(run.importlib.util, "find_spec", lambda name: None)
    assert run.bootstrap_admin() is False
    assert "no infra.identities admin command here; no administrator key created" in capsys.readouterr().err


def test_bootstrap_runs_the_admin_command_and_survives_its_failure(monkeypatch: pytest.MonkeyPatch,
                                                                  capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(run.importlib.util, "find_spec", lambda name: object())
    monkeypatch.setattr(run, "BOOTSTRAP", [sys.executable, "-c", "print('AccessKeyId: printed once')"])
    assert run.bootstrap_admin() is True
    assert "AccessKeyId: printed once" in capfd.readouterr().out
    monkeypatch.setattr(run, "BOOTSTRAP", [sys.executable, "-c", "import sys; sys.exit(3)"])
    assert run.bootstrap_admin() is True
    assert "exited with 3; no administrator key was printed" in capfd.readouterr().err


def test_the_bootstrap_command_is_the_identities_admin_bootstrap() -> None:
    assert run.BOOTSTRAP[1:] == ["-m", "infra.identities", "admin", "bootstrap"]


def test_a_damaged_key_file_is_one_line_and_data_dir_parents_are_made(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from infra.local import dynamodb_local

    data_dir = tmp_path / "not" / "made" / "yet"
    monkeypatch.setattr(run, "DATA_DIR", data_dir)
    monkeypatch.setattr(run, "ensure_installed", lambda: None)
    monkeypatch.setattr(run, "localstack_dynamodb_endpoint", lambda: None)

    def busy(self: object) -> None:
        raise RuntimeError("port 8001 is in use")

    monkeypatch.setattr(dynamodb_local.DynamoDBLocal, "start", busy)
    with pytest.raises(SystemExit, match="port 8001 is in use; set DDB_PORT"):
        run.start_dynamodb()  # got as far as starting: the nested data directory was made
    key_file = data_dir / "dynamodb" / dynamodb_local.KEY_FILE_NAME
    for damaged in (b"", b"\xff\xfe", b"a/b"):
        key_file.write_bytes(damaged)
        with pytest.raises(SystemExit) as caught:
            run.start_dynamodb()
        message = str(caught.value.code)
        assert message.startswith("cannot use the data directory") and "\n" not in message
        assert dynamodb_local.KEY_FILE_NAME in message


def test_make_identities_needs_make_run_first(tmp_path: Path) -> None:
    import subprocess

    from infra.local.stack import REPO

    # -o the server's stamp: the check comes first, and nothing is (re)installed into the shared venv.
    result = subprocess.run(["make", "-s", "-f", str(REPO / "Makefile"), "-C", str(tmp_path), "-o", ".venv/.run-installed",
                             "identities", "ARGS=keys list"], capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert "catalog-access-key-id is missing: start make run first" in result.stderr
