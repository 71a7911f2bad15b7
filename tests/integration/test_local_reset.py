"""``POST /_local/reset`` (infra/local/server.py, chalicelib/store/reset.py) and the request log
(app.py): driven over HTTP against a stack of its own, since a reset empties every account of the
DynamoDB tables it runs on (the session's stack is shared by every test)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from infra.local.stack import CatalogStack, client


def post(endpoint: str, path: str, body: bytes = b"") -> tuple[int, dict[str, Any], dict[str, str]]:
    request = urllib.request.Request(endpoint + path, data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"{}"), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}"), dict(error.headers)


def log_text(path: Path, needle: str, timeout: float = 5.0) -> str:
    """The server's log once it holds ``needle`` (lines are written as requests finish)."""
    deadline = time.monotonic() + timeout
    while True:
        text = path.read_text(errors="replace") if path.exists() else ""
        if needle in text or time.monotonic() > deadline:
            return text
        time.sleep(0.05)


@pytest.fixture(scope="module")
def own_stack(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A stack for this module alone, emptied before each test (by the reset under test)."""
    with CatalogStack(log_dir=tmp_path_factory.mktemp("reset-logs")) as running:
        yield running


@pytest.fixture(autouse=True)
def emptied(own_stack: CatalogStack) -> None:
    assert post(own_stack.endpoint, "/_local/reset")[0] == 200


def test_reset_empties_every_account_and_the_catalog_works_on(own_stack: CatalogStack) -> None:
    first, other = own_stack.client("glue"), own_stack.client("glue", account="111122223333")
    first.create_database(DatabaseInput={"Name": "sales"})
    first.create_table(DatabaseName="sales", TableInput={"Name": "orders", "PartitionKeys": [
        {"Name": "day", "Type": "string"}], "StorageDescriptor": {"Columns": [{"Name": "id", "Type": "int"}]}})
    first.create_partition(DatabaseName="sales", TableName="orders", PartitionInput={"Values": ["2024-01-01"]})
    other.create_database(DatabaseInput={"Name": "other"})

    status, body, _ = post(own_stack.endpoint, "/_local/reset")
    assert status == 200 and body["ItemsDeleted"] >= 4

    assert first.get_databases()["DatabaseList"] == []
    assert other.get_databases()["DatabaseList"] == []
    with pytest.raises(first.exceptions.EntityNotFoundException):
        first.get_table(DatabaseName="sales", Name="orders")
    first.create_database(DatabaseInput={"Name": "sales"})  # the same names again, from scratch
    first.create_table(DatabaseName="sales", TableInput={"Name": "orders"})
    assert first.get_partitions(DatabaseName="sales", TableName="orders")["Partitions"] == []
    # A second reset of an almost empty catalog is fine too.
    assert post(own_stack.endpoint, "/_local/reset")[0] == 200


@pytest.mark.parametrize("body", [b'{"AccountId": "123456789012"}', b"not json", b"[]"])
def test_reset_takes_no_parameters(own_stack: CatalogStack, body: bytes) -> None:
    own_stack.client("glue").create_database(DatabaseInput={"Name": "kept"})
    status, answer, headers = post(own_stack.endpoint, "/_local/reset", body)
    assert status == 400 and answer["__type"] == "InvalidInputException"
    assert headers["x-amzn-ErrorType"] == "InvalidInputException"
    assert [d["Name"] for d in own_stack.client("glue").get_databases()["DatabaseList"]] == ["kept"]


def test_reset_is_refused_when_signatures_are_verified(own_stack: CatalogStack) -> None:
    own_stack.client("glue").create_database(DatabaseInput={"Name": "kept"})
    signed = own_stack.extra_server({"GLUE_AUTH": "sigv4"}, name="sigv4").start()
    try:
        status, answer, headers = post(signed.endpoint, "/_local/reset")
    finally:
        signed.stop()
    assert status == 403 and answer["__type"] == "AccessDeniedException"
    assert "open mode only" in answer["Message"]
    assert [d["Name"] for d in own_stack.client("glue").get_databases()["DatabaseList"]] == ["kept"]


def test_one_log_line_per_request(own_stack: CatalogStack) -> None:
    glue = own_stack.client("glue")
    glue.create_database(DatabaseInput={"Name": "logged"})
    glue.get_database(Name="logged")
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_database(Name="missing")
    own_stack.client("lakeformation").get_data_lake_settings()
    post(own_stack.endpoint, "/no/such/path")
    assert own_stack.log_dir is not None
    text = log_text(own_stack.log_dir / "server.log", "/no/such/path")
    lines = text.splitlines()
    assert any(line.startswith("glue CreateDatabase 200 ") and " ms items_read=" in line for line in lines)
    reads = [line for line in lines if line.startswith("glue GetDatabase 200 ")]
    assert reads and int(reads[0].rsplit("items_read=", 1)[1]) >= 1
    assert any(line.startswith("glue GetDatabase 400 ") for line in lines)
    assert any(line.startswith("lakeformation GetDataLakeSettings 200 ") for line in lines)
    assert any(line.startswith("http POST /no/such/path 403 ") for line in lines)
    assert "Traceback" not in text  # a client's mistake logs no traceback


def test_the_request_log_turned_down(own_stack: CatalogStack) -> None:
    quiet = own_stack.extra_server({"GLUE_LOG_LEVEL": "warning"}, name="quiet").start()
    try:
        client(quiet.endpoint, "glue").get_databases()
        post(quiet.endpoint, "/no/such/path")
    finally:
        quiet.stop()
    assert own_stack.log_dir is not None
    text = (own_stack.log_dir / "server-quiet.log").read_text()
    assert "GetDatabases" not in text and "/no/such/path" not in text


def test_a_server_fault_is_logged_with_its_traceback(own_stack: CatalogStack) -> None:
    """Last in this module: it takes DynamoDB Local away (a store outage is the server's fault)."""
    assert own_stack.dynamodb is not None and own_stack.log_dir is not None
    own_stack.dynamodb.stop()
    glue = own_stack.client("glue")
    with pytest.raises(glue.exceptions.InternalServiceException):
        glue.get_databases()
    text = log_text(own_stack.log_dir / "server.log", "glue GetDatabases 500 ")
    assert "glue GetDatabases 500 " in text
    assert "Traceback (most recent call last)" in text and "unhandled error in glue:GetDatabases" in text
