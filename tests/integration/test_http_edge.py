"""The HTTP edge of the running service: framing, limits, timeouts and the framework's own errors.

boto3 cannot send a malformed request, so most of these speak raw HTTP over a socket; the
framework's 415/405/403 are also checked through boto3 (altered just before sending), to see
that botocore maps them to an error code.
"""

from __future__ import annotations

import json
import socket
import threading
from typing import Callable
from urllib.parse import urlsplit

import botocore.exceptions
import pytest

from infra.local.server import DRAIN_BYTES, MAX_BODY_BYTES
from infra.local.stack import client
from tests.integration.conftest import random_account

AUTH = ("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/glue/aws4_request, "
        "SignedHeaders=host, Signature=0")


def _address(endpoint: str) -> tuple[str, int]:
    parts = urlsplit(endpoint)
    return parts.hostname or "127.0.0.1", parts.port or 80


def exchange(endpoint: str, request: bytes, timeout: float = 60) -> bytes:
    """Send raw bytes, stop sending, and read the answer until the server closes or it is whole."""
    with socket.create_connection(_address(endpoint), timeout=timeout) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
        return data


def parse(answer: bytes) -> tuple[int, dict[str, str], dict]:
    assert answer, "the connection was dropped without an answer"
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {name.strip().lower(): value.strip()
               for name, _, value in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split(" ", 2)[1]), headers, json.loads(body)


def glue_request(framing: bytes, body: bytes = b"", target: str = "AWSGlue.GetDatabases") -> bytes:
    return (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-amz-json-1.1\r\n"
            b"X-Amz-Target: " + target.encode() + b"\r\nAuthorization: " + AUTH.encode() + b"\r\n"
            + framing + b"\r\n" + body)


@pytest.mark.parametrize("framing, body", [
    (b"Content-Length: \xc2\xb2\r\n", b"{}"),
    (b"Content-Length: \xb2\r\n", b"{}"),
    (b"Content-Length: +2\r\n", b"{}"),
    (b"Content-Length: 2\r\nContent-Length: 20\r\n", b"{}"),
    (b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n", b"2\r\n{}\r\n0\r\n\r\n"),
    (b"Transfer-Encoding: chunked\r\n", b"-1\r\n"),
    (b"Transfer-Encoding: chunked\r\n", b"2;ext=1\r\n{}\r\n0\r\n\r\n"),
    (b"Transfer-Encoding: chunked\r\n", b"2\r\n{}0\r\n\r\n"),
    (b"Transfer-Encoding: chunked\r\n", b"10\r\n{}"),
    (b"Content-Length: 100\r\n", b"{}"),
], ids=["superscript-two-utf8", "superscript-two-latin1", "plus-sign", "two-lengths",
        "length-and-chunked", "negative-chunk", "chunk-extension", "missing-crlf",
        "ends-in-chunk", "ends-early"])
def test_bad_framing_gets_an_aws_shaped_400(endpoint, glue, framing, body):
    status, headers, payload = parse(exchange(endpoint, glue_request(framing, body)))
    assert status == 400
    assert payload["__type"] == "BadRequestException" and payload["Message"]
    assert headers["x-amzn-errortype"] == "BadRequestException"
    assert headers["connection"] == "close"
    assert "DatabaseList" in glue.get_databases(MaxResults=1)  # the server still serves


MiB = 1024 * 1024
# A valid 1 MiB chunk: what a client streaming a large chunked body keeps sending.
_CHUNK = b"100000\r\n" + b" " * MiB + b"\r\n"


def _send_until_refused(endpoint: str, head: bytes, filler: bytes, limit: int) -> tuple[int, bytes]:
    """Send ``head``, then ``filler`` again and again until the server stops the upload (a send
    fails) or ``limit`` bytes went out; the bytes sent and every byte answered."""
    with socket.create_connection(_address(endpoint), timeout=60) as sock:
        sent = 0
        try:
            sock.sendall(head)
            while sent < limit:
                sock.sendall(filler)
                sent += len(filler)
        except OSError:  # reset: the server closed the connection without reading the rest
            pass
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass
        return sent, answer


@pytest.mark.parametrize("framing, start, filler, status", [
    (b"Transfer-Encoding: chunked\r\n", b"zz\r\n", b"x" * MiB, 400),
    (b"Transfer-Encoding: chunked\r\n", b"2;ext=1\r\n", b"x" * MiB, 400),
    (b"Transfer-Encoding: chunked\r\n", b"2\r\n{}XX", b"x" * MiB, 400),
    (b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n", b"", _CHUNK, 400),
    (b"Transfer-Encoding: chunked\r\n", b"", _CHUNK, 413),
    (b"Content-Length: %d\r\n" % (DRAIN_BYTES + 1), b"", b" " * MiB, 413),
], ids=["bad-chunk-size", "chunk-extension", "missing-crlf", "length-and-chunked", "chunked-over-the-limit",
        "declared-beyond-the-drain"])
def test_a_refused_upload_is_not_read_any_further(endpoint, glue, framing, start, filler, status):
    """The server answers and closes at once: the client's sends fail after what the sockets'
    buffers hold (a few MiB), not after the 256 MiB it is ready to send (the server used to read
    and discard for 2 seconds, up to 200 MB on loopback)."""
    limit = 256 * MiB
    sent, answer = _send_until_refused(endpoint, glue_request(framing, start), filler, limit)
    got, headers, payload = parse(answer)
    expected = "BadRequestException" if status == 400 else "RequestEntityTooLargeException"
    assert (got, payload["__type"], headers["x-amzn-errortype"]) == (status, expected, expected)
    assert headers["connection"] == "close"
    # MAX_BODY_BYTES of chunks are read before the 413; the rest is at most the socket buffers.
    assert sent < MAX_BODY_BYTES + 48 * MiB < limit, f"{sent / MiB:.0f} MiB were accepted after the refusal"
    assert "DatabaseList" in glue.get_databases(MaxResults=1)  # the server still serves


def test_chunked_request_is_served(endpoint):
    body = b'{"MaxResults": 1}'
    chunks = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    status, _, payload = parse(exchange(endpoint, glue_request(b"Transfer-Encoding: chunked\r\n", chunks)))
    assert status == 200 and "DatabaseList" in payload


def test_huge_content_length_is_refused_before_reading(endpoint):
    status, _, payload = parse(exchange(endpoint, glue_request(b"Content-Length: " + b"9" * 40 + b"\r\n")))
    assert status == 413 and payload["__type"] == "RequestEntityTooLargeException"


@pytest.mark.parametrize("method, path, content_type, status, error_type", [
    ("POST", "/", "text/xml", 415, "UnsupportedMediaTypeException"),
    ("POST", "/GetDataLakeSettings", "text/xml", 415, "UnsupportedMediaTypeException"),
    ("GET", "/", "application/x-amz-json-1.1", 405, "MethodNotAllowedException"),
    ("DELETE", "/GetDataLakeSettings", "application/json", 405, "MethodNotAllowedException"),
    ("POST", "/no/such/path", "application/json", 403, "MissingAuthenticationTokenException"),
])
def test_framework_errors_are_aws_shaped(endpoint, method, path, content_type, status, error_type):
    request = (f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {content_type}\r\n"
               f"X-Amz-Target: AWSGlue.GetDatabases\r\nAuthorization: {AUTH}\r\nContent-Length: 2\r\n\r\n{{}}")
    got_status, headers, payload = parse(exchange(endpoint, request.encode()))
    assert got_status == status
    assert payload["__type"] == error_type and payload["Message"]
    assert headers["x-amzn-errortype"] == error_type


def _alter(client, operation: str, change: Callable) -> None:
    def before_send(request, **_):
        change(request)
    client.meta.events.register(f"before-send.{client.meta.service_model.endpoint_prefix}.{operation}",
                                before_send)


@pytest.mark.parametrize("service, operation, call", [
    ("glue", "GetDatabases", lambda c: c.get_databases()),
    ("lakeformation", "GetDataLakeSettings", lambda c: c.get_data_lake_settings()),
])
@pytest.mark.parametrize("change, status, error_type", [
    (lambda r: r.headers.__setitem__("Content-Type", "text/xml"), 415, "UnsupportedMediaTypeException"),
    (lambda r: setattr(r, "method", "PUT"), 405, "MethodNotAllowedException"),
    (lambda r: setattr(r, "url", r.url.rstrip("/") + "/no/such/path"), 403,
     "MissingAuthenticationTokenException"),
], ids=["415", "405", "403"])
def test_boto3_maps_framework_errors_to_codes(make_client, service, operation, call, change, status,
                                              error_type):
    client = make_client(service)
    _alter(client, operation, change)
    with pytest.raises(botocore.exceptions.ClientError) as raised:
        call(client)
    error = raised.value.response
    assert error["Error"]["Code"] == error_type
    assert error["ResponseMetadata"]["HTTPStatusCode"] == status
    assert error["Error"]["Message"]


def test_concurrent_large_invalid_bodies_are_each_answered(endpoint, glue):
    # Eight ~9 MB batches of 400k invalid partitions at once: each used to word 1.2M errors.
    body = json.dumps({"DatabaseName": "d", "TableName": "t",
                       "PartitionInputList": [{"Values": [1, 2, 3]}] * 400_000}).encode()
    request = glue_request(b"Content-Length: %d\r\n" % len(body), body, "AWSGlue.BatchCreatePartition")
    answers: list[tuple[int, dict]] = []

    def post() -> None:
        status, _, payload = parse(exchange(endpoint, request, timeout=120))
        answers.append((status, payload))

    threads = [threading.Thread(target=post) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(answers) == 8
    for status, payload in answers:
        assert status == 400 and payload["__type"] == "InvalidInputException"
        assert payload["Message"].startswith("More than 10 validation errors detected")
    assert "DatabaseList" in glue.get_databases(MaxResults=1)


def test_stalled_body_is_answered_and_released(start_server):
    server = start_server(GLUE_LOCAL_REQUEST_TIMEOUT="1")
    # Declares 1 MB, sends 10 bytes, then waits: the server answers 408 instead of waiting forever.
    with socket.create_connection(_address(server.endpoint), timeout=60) as sock:
        sock.sendall(glue_request(b"Content-Length: 1000000\r\n", b"{" + b" " * 9))
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    status, headers, payload = parse(answer)
    assert status == 408 and payload["__type"] == "RequestTimeoutException"
    assert headers["connection"] == "close"
    assert "DatabaseList" in client(server.endpoint).get_databases(MaxResults=1)


def _raw_request(method: str, path: str, headers: list[tuple[str, str]], body: bytes) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: x", *(f"{name}: {value}" for name, value in headers),
             f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _sigv4(account: str, service: str = "glue") -> str:
    return (f"AWS4-HMAC-SHA256 Credential={account}/20260101/us-east-1/{service}/aws4_request, "
            "SignedHeaders=host, Signature=0")


@pytest.mark.parametrize("second_name", ["Authorization", "authorization"])
def test_two_authorization_headers_are_refused_in_the_open_mode(endpoint, make_client, second_name):
    """Two Authorization headers name two callers: AWS refuses them as an incomplete signature,
    on every protocol (Glue's 400, Lake Formation's 403, Paimon's 401), and nothing is stored."""
    first, second = random_account(), random_account()
    name = "dup_" + first
    glue_body = json.dumps({"DatabaseInput": {"Name": name}}).encode()
    answer = exchange(endpoint, _raw_request("POST", "/", [
        ("Content-Type", "application/x-amz-json-1.1"), ("X-Amz-Target", "AWSGlue.CreateDatabase"),
        ("Authorization", _sigv4(first)), (second_name, _sigv4(second))], glue_body))
    status, headers, payload = parse(answer)
    assert (status, payload["__type"]) == (400, "IncompleteSignatureException")
    assert "more than one 'Authorization' header" in payload["Message"]

    answer = exchange(endpoint, _raw_request("POST", "/StartTransaction", [
        ("Content-Type", "application/json"), ("Authorization", _sigv4(first, "lakeformation")),
        (second_name, _sigv4(first, "lakeformation"))], b"{}"))
    status, headers, payload = parse(answer)
    assert (status, payload["__type"], headers["x-amzn-errortype"]) == (
        403, "IncompleteSignatureException", "IncompleteSignatureException")

    paimon_body = json.dumps({"name": name, "options": {}}).encode()
    answer = exchange(endpoint, _raw_request("POST", "/v1/w1/databases", [
        ("Content-Type", "application/json"), ("Authorization", f"Bearer {first}"),
        (second_name, f"Bearer {second}")], paimon_body))
    status, _, payload = parse(answer)
    assert status == 401 and payload["code"] == 401 and "more than one 'Authorization'" in payload["message"]

    for account in (first, second):
        glue = make_client("glue", account=account)
        with pytest.raises(glue.exceptions.EntityNotFoundException):
            glue.get_database(Name=name)
    assert make_client("glue", account=first).get_databases()["DatabaseList"] == []


def test_one_authorization_header_is_still_served(endpoint, make_client):
    account = random_account()
    name = "one_" + account
    answer = exchange(endpoint, _raw_request("POST", "/v1/w1/databases", [
        ("Content-Type", "application/json"), ("Authorization", f"Bearer {account}")],
        json.dumps({"name": name, "options": {}}).encode()))
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:200]
    assert make_client("glue", account=account).get_database(Name=name)["Database"]["Name"] == name
