"""The local HTTP server's own behaviour, on an in-process stub app (no Java, no DynamoDB)."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from typing import Iterator

import pytest
from chalice import Chalice, Response
from chalice.config import Config

from infra.local.server import MAX_BODY_BYTES, GatewayServer

JSON_11 = "application/x-amz-json-1.1"


def stub_app() -> Chalice:
    app = Chalice(app_name="stub")

    @app.route("/", methods=["POST"], content_types=[JSON_11, "application/json"])
    def echo() -> Response:
        time.sleep(0.001)  # widens the window in which a shared current_request would be swapped
        body = app.current_request.raw_body or b""
        return Response(body=json.dumps({"size": len(body)}), status_code=200,
                        headers={"Content-Type": JSON_11})

    return app


@pytest.fixture
def port() -> Iterator[int]:
    server = GatewayServer(("127.0.0.1", 0), stub_app(), Config.create(app_name="stub"))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.server_port
    finally:
        server.shutdown()
        server.server_close()


def raw_exchange(port: int, request: bytes) -> bytes:
    """Send raw bytes and return the first complete response (head + Content-Length body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(request)
        data = b""
        while True:
            head, sep, body = data.partition(b"\r\n\r\n")
            if sep:
                length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                if len(body) >= length:
                    return data
            chunk = sock.recv(65536)
            if not chunk:
                return data
            data += chunk


def test_keep_alive_connection_serves_many_requests(port: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    for size in (0, 10, 1000):
        conn.request("POST", "/", body=b"x" * size, headers={"Content-Type": JSON_11})
        response = conn.getresponse()
        assert response.status == 200
        assert json.loads(response.read()) == {"size": size}
        assert response.getheader("Connection") is None  # stays open
    conn.close()


def test_whole_response_leaves_in_one_segment(port: int) -> None:
    request = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(request)
        first = sock.recv(65536)
    assert first.startswith(b"HTTP/1.1 200")
    assert first.endswith(b'{"size": 2}')


def test_oversized_body_gets_413_without_being_sent(port: int) -> None:
    head = (f"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: {JSON_11}\r\n"
            f"Content-Length: {MAX_BODY_BYTES + 1}\r\n\r\n").encode()
    answer = raw_exchange(port, head)
    status, _, rest = answer.partition(b"\r\n")
    assert status == b"HTTP/1.1 413 Request Entity Too Large"
    headers, _, body = rest.partition(b"\r\n\r\n")
    assert b"x-amzn-ErrorType: RequestEntityTooLargeException" in headers
    assert json.loads(body)["__type"] == "RequestEntityTooLargeException"


def test_expect_100_continue_refused_when_too_large(port: int) -> None:
    head = (f"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: {JSON_11}\r\nExpect: 100-continue\r\n"
            f"Content-Length: {MAX_BODY_BYTES + 1}\r\n\r\n").encode()
    assert raw_exchange(port, head).startswith(b"HTTP/1.1 413")


def test_chunked_body_is_read(port: int) -> None:
    request = (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               b"Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
    answer = raw_exchange(port, request)
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b'{"size": 5}')


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"GARBAGE\r\n\r\n",
        b"GET / HTTP/2.0\r\n\r\n",
        b"BREW / HTTP/1.1\r\nHost: x\r\n\r\n",
        b"POST /no/such/path HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml\r\nContent-Length: 0\r\n\r\n",
        b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n",
    ],
    ids=["bad-length", "negative-length", "bad-chunk", "garbage", "http2", "unknown-method",
         "unknown-path", "unlisted-content-type", "long-uri"],
)
def test_malformed_requests_get_a_4xx(port: int, request_bytes: bytes) -> None:
    answer = raw_exchange(port, request_bytes)
    status = int(answer.split(b" ", 2)[1])
    assert 400 <= status < 500, answer[:200]


def test_concurrent_requests_each_see_their_own_request(port: int) -> None:
    # app.current_request must be thread-local, or threads would read each other's bodies.
    errors: list[str] = []

    def worker(size: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for _ in range(30):
            conn.request("POST", "/", body=b"x" * size, headers={"Content-Type": JSON_11})
            got = json.loads(conn.getresponse().read())["size"]
            if got != size:
                errors.append(f"sent {size}, app saw {got}")
        conn.close()

    threads = [threading.Thread(target=worker, args=(size,)) for size in range(1, 9)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
