"""The direct DynamoDB transport (chalicelib/store/dynamo/dynamo_http.py): its signature is botocore's,
its answers are botocore's, and whatever a retry may cure goes to botocore.

A canned HTTP server stands in for DynamoDB here (the integration tests run every call against
DynamoDB Local, which checks no signature: hence the comparison with botocore's signer)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import botocore.session
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from chalicelib.store import documents
from chalicelib.store.dynamo import dynamo_http


@pytest.mark.parametrize("token", [None, "session-token"])
@pytest.mark.parametrize("url,host", [("http://127.0.0.1:8000/", "127.0.0.1:8000"),
                                      ("https://dynamodb.eu-west-1.amazonaws.com/", "dynamodb.eu-west-1.amazonaws.com")])
def test_signature_is_botocores(token: str | None, url: str, host: str) -> None:
    body = json.dumps({"TableName": "t", "Key": {"k": {"S": "ü"}}}).encode()
    request = AWSRequest("POST", url, data=body, headers={
        "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.GetItem"})
    SigV4Auth(Credentials("AKIDEXAMPLE", "secret/key+", token), "dynamodb", "eu-west-1").add_auth(request)
    ours = dynamo_http.Signer("eu-west-1").headers(host, "/", "DynamoDB_20120810.GetItem", body, "AKIDEXAMPLE",
                                                   "secret/key+", token, request.headers["X-Amz-Date"])
    assert ours["Authorization"] == request.headers["Authorization"]
    assert ours.get("X-Amz-Security-Token") == request.headers.get("X-Amz-Security-Token")


class _Canned(BaseHTTPRequestHandler):
    """Answers every POST with the server's next canned (status, body); keeps what it was sent."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        length = int(self.headers["Content-Length"])
        self.server.received.append((dict(self.headers), self.rfile.read(length)))  # type: ignore[attr-defined]
        status, answer, *extra = self.server.answers.pop(0)  # type: ignore[attr-defined]
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (extra[0] if extra else {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        # Hang up without saying so (as an idle keep-alive connection is dropped by its peer).
        self.close_connection = self.server.hang_up  # type: ignore[attr-defined]

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture()
def server() -> Iterator[Any]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Canned)
    httpd.received, httpd.answers, httpd.hang_up = [], [], False  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _client(endpoint: str) -> Any:
    client = botocore.session.get_session().create_client(
        "dynamodb", region_name="us-east-1", endpoint_url=endpoint, aws_access_key_id="AKID",
        aws_secret_access_key="secret", config=botocore.config.Config(retries={"mode": "standard", "total_max_attempts": 1}))
    botocore_calls: list[str] = []
    original = client._make_api_call

    def through_botocore(operation: str, params: dict[str, Any]) -> dict[str, Any]:
        botocore_calls.append(operation)
        return original(operation, params)
    client._make_api_call = through_botocore
    dynamo_http.install(client)
    client.botocore_calls = botocore_calls
    return client


def test_answer_parsed_with_binary_decoded(server: Any) -> None:
    client = _client(f"http://127.0.0.1:{server.server_port}")
    server.answers.append((200, {"Item": {"k": {"S": "a"}, "doc": {"B": "aGk="}}}))
    answer = client.get_item(TableName="t", Key={"k": {"B": b"\x00\x01"}})
    assert answer["Item"] == {"k": {"S": "a"}, "doc": {"B": b"hi"}}
    headers, body = server.received[0]
    assert json.loads(body) == {"TableName": "t", "Key": {"k": {"B": "AAE="}}}
    assert headers["X-Amz-Target"] == "DynamoDB_20120810.GetItem"
    assert client.botocore_calls == []


@pytest.mark.parametrize("body", [
    b'{"Items":[{"k":{"S":"caf\xc3\xa9 \\u00e9\\n"},"n":{"N":"12345678901234567890123"}}],"Count":1,"ScannedCount":1}',
    b'{"ConsumedCapacity":{"CapacityUnits":0.1,"Table":{"CapacityUnits":1e-7}},"Count":0}',
    b'{"Item":{"k":{"S":"\\ud800 lone surrogate"}}}',  # orjson refuses it: json decodes it
])
def test_answers_decode_as_json_does(body: bytes) -> None:
    decoded = documents.loads(body)  # what dynamo_http parses answers with
    assert decoded == json.loads(body)
    assert json.dumps(decoded) == json.dumps(json.loads(body))  # types and float spellings too


def test_transact_write_gets_an_idempotency_token(server: Any) -> None:
    client = _client(f"http://127.0.0.1:{server.server_port}")
    server.answers.append((200, {}))
    client.transact_write_items(TransactItems=[{"Put": {"TableName": "t", "Item": {"k": {"S": "a"}}}}])
    assert len(json.loads(server.received[0][1])["ClientRequestToken"]) == 36


def test_refusal_is_botocores_exception(server: Any) -> None:
    client = _client(f"http://127.0.0.1:{server.server_port}")
    server.answers.append((400, {"__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
                                 "Message": "Transaction cancelled [ConditionalCheckFailed, None]",
                                 "CancellationReasons": [{"Code": "ConditionalCheckFailed", "Message": "no",
                                                          "Item": {"doc": {"B": "aGk="}}}, {"Code": "None"}]}))
    with pytest.raises(client.exceptions.TransactionCanceledException) as raised:
        client.transact_write_items(TransactItems=[{"Put": {"TableName": "t", "Item": {"k": {"S": "a"}}}}])
    response = raised.value.response
    assert response["Error"] == {"Code": "TransactionCanceledException",
                                 "Message": "Transaction cancelled [ConditionalCheckFailed, None]"}
    assert response["CancellationReasons"][0]["Item"] == {"doc": {"B": b"hi"}}
    assert response["CancellationReasons"][1] == {"Code": "None"}
    assert client.botocore_calls == []  # a refusal is final: not sent again


def test_condition_failure_keeps_message(server: Any) -> None:
    client = _client(f"http://127.0.0.1:{server.server_port}")
    server.answers.append((400, {"__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
                                 "message": "The conditional request failed"}))
    with pytest.raises(ClientError) as raised:
        client.put_item(TableName="t", Item={"k": {"S": "a"}}, ConditionExpression="attribute_not_exists(k)")
    assert type(raised.value).__name__ == "ConditionalCheckFailedException"
    assert raised.value.response["Error"]["Message"] == "The conditional request failed"


@pytest.mark.parametrize("status,answer", [
    (500, {"__type": "com.amazonaws.dynamodb.v20120810#InternalServerError", "message": "oops"}),
    (400, {"__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException", "message": "slow"}),
])
def test_what_a_retry_may_cure_goes_to_botocore(server: Any, status: int, answer: dict[str, Any]) -> None:
    client = _client(f"http://127.0.0.1:{server.server_port}")
    server.answers.extend([(status, answer), (200, {"Items": [], "Count": 0, "ScannedCount": 0})])
    result = client.query(TableName="t", KeyConditionExpression="k = :k", ExpressionAttributeValues={":k": {"S": "a"}})
    assert result["Count"] == 0
    assert client.botocore_calls == ["Query"]
    assert json.loads(server.received[0][1]) == json.loads(server.received[1][1])  # the same request, again


def test_unreachable_goes_to_botocore() -> None:
    with ThreadingHTTPServer(("127.0.0.1", 0), _Canned) as probe:
        port = probe.server_port  # free now: nothing listens on it below
    client = _client(f"http://127.0.0.1:{port}")
    with pytest.raises(Exception) as raised:
        client.get_item(TableName="t", Key={"k": {"S": "a"}})
    assert "Could not connect" in str(raised.value)  # botocore's EndpointConnectionError
    assert client.botocore_calls == ["GetItem"]


def test_control_plane_stays_botocores(server: Any) -> None:
    client = _client(f"http://127.0.0.1:{server.server_port}")
    server.answers.append((200, {"TableNames": []}))
    assert client.list_tables()["TableNames"] == []
    assert client.botocore_calls == ["ListTables"]


def test_write_answers_have_binary_decoded(server: Any) -> None:
    """ReturnValues, unprocessed writes and item collection keys come back as bytes, as botocore
    gives them (an UpdateItem's ALL_NEW document read as base64 text was a real bug)."""
    client = _client(f"http://127.0.0.1:{server.server_port}")
    server.answers.append((200, {"Attributes": {"doc": {"B": "aGk="}, "n": {"N": "1"}},
                                 "ItemCollectionMetrics": {"ItemCollectionKey": {"k": {"B": "aGk="}}}}))
    answer = client.update_item(TableName="t", Key={"k": {"S": "a"}}, UpdateExpression="SET n = :n",
                                ExpressionAttributeValues={":n": {"N": "1"}}, ReturnValues="ALL_NEW")
    assert answer["Attributes"] == {"doc": {"B": b"hi"}, "n": {"N": "1"}}
    assert answer["ItemCollectionMetrics"]["ItemCollectionKey"] == {"k": {"B": b"hi"}}
    server.answers.append((200, {"UnprocessedItems": {"t": [{"PutRequest": {"Item": {"doc": {"B": "aGk="}}}},
                                                             {"DeleteRequest": {"Key": {"k": {"B": "aGk="}}}}]}}))
    answer = client.batch_write_item(RequestItems={"t": [{"PutRequest": {"Item": {"doc": {"B": b"hi"}}}}]})
    assert answer["UnprocessedItems"]["t"] == [{"PutRequest": {"Item": {"doc": {"B": b"hi"}}}},
                                               {"DeleteRequest": {"Key": {"k": {"B": b"hi"}}}}]


def test_damaged_answer_goes_to_botocore(server: Any) -> None:
    """A body whose CRC32 is not the one DynamoDB sent is retried, as botocore retries it."""
    client = _client(f"http://127.0.0.1:{server.server_port}")
    server.answers.extend([(200, {"Items": [], "Count": 0}, {"x-amz-crc32": "1"}),
                           (200, {"Items": [], "Count": 0, "ScannedCount": 0})])
    assert client.query(TableName="t", KeyConditionExpression="k = :k",
                        ExpressionAttributeValues={":k": {"S": "a"}})["Count"] == 0
    assert client.botocore_calls == ["Query"]


def test_connection_dropped_while_idle_is_not_reused(server: Any) -> None:
    client = _client(f"http://127.0.0.1:{server.server_port}")
    server.hang_up = True
    server.answers.extend([(200, {}), (200, {})])
    client.put_item(TableName="t", Item={"k": {"S": "a"}})
    time.sleep(0.2)  # the server has closed its end by now
    client.put_item(TableName="t", Item={"k": {"S": "b"}})
    assert client.botocore_calls == []  # the second went out on a new connection, not through botocore
    assert len(server.received) == 2


@pytest.mark.parametrize("endpoint,host,path", [
    ("http://[::1]:8000", "[::1]:8000", "/"),
    ("https://dynamodb.us-east-1.amazonaws.com:443/", "dynamodb.us-east-1.amazonaws.com", "/"),
    ("http://localhost:4566/a b", "localhost:4566", "/a%20b"),
])
def test_host_and_path_as_botocore_writes_them(endpoint: str, host: str, path: str) -> None:
    client = botocore.session.get_session().create_client(
        "dynamodb", region_name="us-east-1", endpoint_url=endpoint, aws_access_key_id="AKID",
        aws_secret_access_key="secret")
    caller = dynamo_http.caller(dynamo_http.install(client))
    assert caller is not None
    assert (caller._host, caller._path) == (host, path)
