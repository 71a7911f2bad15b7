"""The test harness itself: DynamoDB Local, the server subprocess, restarts, the 10 MiB cap.

Nothing here depends on a Glue action being implemented.
"""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

from infra.local.server import MAX_BODY_BYTES
from infra.local.stack import CatalogStack


def post(endpoint: str, body: bytes, method: str = "POST") -> tuple[int, dict[str, str], bytes]:
    url = urlsplit(endpoint)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        conn.request(method, "/", body=body, headers={
            "Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "AWSGlue.GetDatabases"})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def test_body_over_10_mib_is_refused_with_413(endpoint: str) -> None:
    status, headers, body = post(endpoint, b"{" + b" " * MAX_BODY_BYTES + b"}")
    assert status == 413
    assert headers["x-amzn-ErrorType"] == "RequestEntityTooLargeException"
    assert json.loads(body)["__type"] == "RequestEntityTooLargeException"


def test_dynamodb_local_is_reachable_and_has_the_tables(stack: CatalogStack) -> None:
    names = stack.ddb_client().list_tables()["TableNames"]
    assert any(name.startswith(stack.table_prefix) for name in names), names


def test_server_process_restarts(stack: CatalogStack, restart_server) -> None:  # noqa: ANN001
    before = stack.server.process.pid
    restart_server()
    assert stack.server.process.pid != before
    status, _, _ = post(stack.endpoint, b"", method="GET")
    assert status == 405  # answered by the app's router: the new process serves


def test_persistent_stack_keeps_data_across_restarts(persistent_stack: CatalogStack) -> None:
    client = persistent_stack.ddb_client()
    table = persistent_stack.table_prefix + "harness_probe"
    client.create_table(TableName=table, BillingMode="PAY_PER_REQUEST",
                        AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                        KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}])
    client.put_item(TableName=table, Item={"k": {"S": "kept"}})
    persistent_stack.restart()
    item = persistent_stack.ddb_client().get_item(TableName=table, Key={"k": {"S": "kept"}})
    assert item["Item"] == {"k": {"S": "kept"}}
