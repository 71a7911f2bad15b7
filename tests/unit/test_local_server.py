"""The local HTTP server's own behaviour, on an in-process stub app (no Java, no DynamoDB)."""

from __future__ import annotations

import http.client
import io
import json
import socket
import threading
import time
from typing import Iterator

import pytest
from chalice import Chalice, Response
from chalice.config import Config

from infra.local.server import MAX_BODY_BYTES, GatewayServer
from infra.local import server as server_module

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
def server() -> Iterator[GatewayServer]:
    # A short request timeout, so that the stalling clients below are cut off quickly.
    server = GatewayServer(("127.0.0.1", 0), stub_app(), Config.create(app_name="stub"), request_timeout=1.0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def port(server: GatewayServer) -> int:
    return server.server_port


def raw_exchange(port: int, request: bytes) -> bytes:
    """Send raw bytes and return the first complete response (head + Content-Length body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(request)
        return one_answer(sock)


def one_answer(sock: socket.socket) -> bytes:
    """The next complete response on ``sock`` (head + Content-Length body), or what arrived
    before the peer closed."""
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


def parse(answer: bytes) -> tuple[int, dict[str, str], bytes]:
    """Status, headers (lower-case names) and body of one raw response."""
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(lines[0].split(" ", 2)[1]), headers, body


def assert_still_serving(port: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("POST", "/", body=b"{}", headers={"Content-Type": JSON_11})
    assert conn.getresponse().status == 200
    conn.close()


def assert_aws_error(answer: bytes, status: int, error_type: str) -> dict[str, str]:
    assert answer, "the connection was dropped without an answer"
    got_status, headers, body = parse(answer)
    assert got_status == status, answer[:300]
    assert json.loads(body)["__type"] == error_type
    assert json.loads(body)["Message"]
    assert headers["x-amzn-errortype"] == error_type
    return headers


POST = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"


@pytest.mark.parametrize("value", ["\u00b2", "+5", "-1", "5 5", "0x5", "5.0", "1e3", "", "\u0665"],
                         ids=["superscript-two", "plus", "minus", "two-numbers", "hex", "decimal",
                              "exponent", "empty", "arabic-digit"])
def test_content_length_must_be_ascii_digits(port: int, value: str) -> None:
    # '\u00b2'.isdigit() is True and int('\u00b2') raises: this used to drop the connection.
    request = POST + b"Content-Length: " + value.encode("utf-8") + b"\r\n\r\n{}"
    headers = assert_aws_error(raw_exchange(port, request), 400, "BadRequestException")
    assert headers["connection"] == "close"
    assert_still_serving(port)


@pytest.mark.parametrize("value", ["\t2", "00002", "2, 2"], ids=["whitespace", "leading-zeros", "repeated"])
def test_equivalent_content_lengths_are_read(port: int, value: str) -> None:
    answer = raw_exchange(port, POST + b"Content-Length: " + value.encode() + b"\r\n\r\n{}")
    assert parse(answer)[0] == 200 and parse(answer)[2] == b'{"size": 2}'


@pytest.mark.parametrize("value", ["99999999999999999999999", "9" * 5000])
def test_huge_content_length_is_too_large(port: int, value: str) -> None:
    answer = raw_exchange(port, POST + b"Content-Length: " + value.encode() + b"\r\n\r\n")
    assert_aws_error(answer, 413, "RequestEntityTooLargeException")


@pytest.mark.parametrize("framing", [
    b"Content-Length: 2\r\nContent-Length: 3\r\n",
    b"Content-Length: 2, 3\r\n",
    b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n",
    b"Transfer-Encoding: gzip, chunked\r\n",
    b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
    b"Transfer-Encoding: identity\r\n",
    b"Transfer-Encoding: xchunked\r\n",
], ids=["two-lengths", "length-list", "length-and-chunked", "gzip-chunked", "chunked-twice",
        "identity", "xchunked"])
def test_ambiguous_framing_is_refused(port: int, framing: bytes) -> None:
    # Two parsers could disagree on where such a body ends (request smuggling).
    answer = raw_exchange(port, POST + framing + b"\r\n2\r\n{}\r\n0\r\n\r\n")
    headers = assert_aws_error(answer, 400, "BadRequestException")
    assert headers["connection"] == "close"
    assert_still_serving(port)


CHUNKED = POST + b"Transfer-Encoding: chunked\r\n\r\n"


@pytest.mark.parametrize("chunks", [
    b"-1\r\n",
    b"+2\r\n{}\r\n0\r\n\r\n",
    b"0x2\r\n{}\r\n0\r\n\r\n",
    b"1_0\r\n",
    b" 2\r\n{}\r\n0\r\n\r\n",
    b"2;name=value\r\n{}\r\n0\r\n\r\n",
    b"2\n{}\n0\n\n",
    b"2\r\n{}XX0\r\n\r\n",
    b"123456789\r\n",
    b"2\r\n{",
    b"2\r\n{}\r\n",
    b"2\r\n{}\r\n0\r\n",
    b"2\r\n{}\r\n0\r\nTrailer: x\r\n",
], ids=["negative", "plus", "hex-prefix", "underscore", "leading-space", "extension", "bare-lf",
        "missing-crlf", "too-many-digits", "ends-in-chunk", "ends-before-last-chunk",
        "ends-before-final-crlf", "ends-in-trailers"])
def test_malformed_chunks_get_a_400_and_the_connection_closes(port: int, chunks: bytes) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(CHUNKED + chunks)
        sock.shutdown(socket.SHUT_WR)  # a body that ends early ends here
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    headers = assert_aws_error(answer, 400, "BadRequestException")
    assert headers["connection"] == "close"
    assert_still_serving(port)


def test_chunks_with_trailers_and_upper_case_hex(port: int) -> None:
    body = b"{" + b" " * 26 + b"}"
    answer = raw_exchange(port, CHUNKED + b"1C\r\n" + body + b"\r\n0\r\nX-Checksum: 1\r\n\r\n")
    assert parse(answer)[0] == 200 and parse(answer)[2] == b'{"size": 28}'


def test_chunked_body_over_the_limit_is_refused(port: int) -> None:
    chunk = b"x" * (1024 * 1024)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(CHUNKED)
        answer = b""
        try:
            for _ in range(11):
                sock.sendall(b"100000\r\n" + chunk + b"\r\n")
        except OSError:
            pass  # the server may stop reading once it has answered
        while chunk := sock.recv(65536):
            answer += chunk
    assert_aws_error(answer, 413, "RequestEntityTooLargeException")


def test_expect_100_continue_refused_when_badly_framed(port: int) -> None:
    request = POST + b"Expect: 100-continue\r\nContent-Length: +5\r\n\r\n"
    answer = raw_exchange(port, request)
    assert not answer.startswith(b"HTTP/1.1 100")
    assert_aws_error(answer, 400, "BadRequestException")


def read_until_closed(sock: socket.socket) -> bytes:
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    return answer


def test_stalled_body_is_cut_off(server: GatewayServer) -> None:
    # Declares 1 MB, sends 10 bytes and stalls: the thread must not wait for the rest forever.
    with socket.create_connection(("127.0.0.1", server.server_port), timeout=30) as sock:
        sock.sendall(POST + b"Content-Length: 1000000\r\n\r\n" + b"x" * 10)
        answer = read_until_closed(sock)
    headers = assert_aws_error(answer, 408, "RequestTimeoutException")
    assert headers["connection"] == "close"
    assert_still_serving(server.server_port)


def test_trickled_body_is_cut_off_by_the_request_deadline(server: GatewayServer) -> None:
    # Each byte arrives well within the per-receive timeout; the request as a whole does not.
    with socket.create_connection(("127.0.0.1", server.server_port), timeout=30) as sock:
        sock.sendall(POST + b"Content-Length: 100\r\n\r\n")
        sock.settimeout(0.2)
        answer = b""
        for _ in range(100):
            try:
                sock.sendall(b" ")
                answer += sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                break
            if answer:
                break
        sock.settimeout(30)
        try:
            answer += read_until_closed(sock)
        except OSError:
            pass
    assert_aws_error(answer, 408, "RequestTimeoutException")


def test_trickled_headers_are_cut_off(server: GatewayServer) -> None:
    with socket.create_connection(("127.0.0.1", server.server_port), timeout=30) as sock:
        sock.sendall(b"POST / HTTP/1.1\r\n")
        sock.settimeout(0.2)
        closed = False
        for _ in range(100):
            try:
                sock.sendall(b"X")
                closed = sock.recv(65536) == b""
            except socket.timeout:
                continue
            except OSError:
                closed = True
            if closed:
                break
    assert closed, "the server kept a connection whose headers never ended"
    assert_still_serving(server.server_port)


@pytest.mark.parametrize("authorization", [None, b"AWS4-HMAC-SHA256 Credential=x", b'\xe9"'],
                         ids=["unsigned", "signed", "non-ascii"])
def test_unknown_path_is_api_gateways_403(port: int, authorization: bytes | None) -> None:
    request = b"POST /no/such/path HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n"
    if authorization is not None:
        request += b"Authorization: " + authorization + b"\r\n"
    answer = raw_exchange(port, request + b"\r\n")
    assert_aws_error(answer, 403, "MissingAuthenticationTokenException")
    assert_still_serving(port)


def test_large_bodies_take_turns(server: GatewayServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every large body must still be answered when more arrive than there are slots.
    monkeypatch.setattr(server_module, "LARGE_BODY_BYTES", 1000)
    sizes: list[int] = []

    def post() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=30)
        conn.request("POST", "/", body=b"x" * 5000, headers={"Content-Type": JSON_11})
        sizes.append(json.loads(conn.getresponse().read())["size"])
        conn.close()

    threads = [threading.Thread(target=post) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sizes == [5000] * 6


def test_request_headers_are_read_without_the_email_package() -> None:
    block = (b"Host: x\r\nX-Amz-Target: AWSGlue.GetDatabase\r\nx-amz-target: second\r\n"
             b"X-Folded: one\r\n\ttwo\r\nno colon here\r\nEmpty:\r\n\r\nbody")
    reader = io.BytesIO(block)
    headers = server_module.read_headers(reader)
    assert headers.get("x-amz-target") == "AWSGlue.GetDatabase"  # the first, by any case
    assert headers.get_all("X-AMZ-TARGET") == ["AWSGlue.GetDatabase", "second"]
    assert headers.get("X-Folded") == "one two"  # an obsolete fold joined with a space
    assert headers.get("Empty") == "" and headers.get("Missing") is None
    assert headers.get("Missing", "default") == "default" and headers.get_all("Missing") is None
    assert [name for name, _ in headers.items()] == ["Host", "X-Amz-Target", "x-amz-target", "X-Folded", "Empty"]
    assert reader.read() == b"body"  # the body is left for the handler


@pytest.mark.parametrize("block", [b"X-Long: " + b"a" * 70_000 + b"\r\n\r\n",
                                   b"".join(b"X-H%d: v\r\n" % n for n in range(101)) + b"\r\n"],
                         ids=["line-too-long", "too-many-headers"])
def test_header_limits_answer_431_and_the_server_goes_on(port: int, block: bytes) -> None:
    answer = raw_exchange(port, b"POST / HTTP/1.1\r\n" + block)
    headers = assert_aws_error(answer, 431, "BadRequestException")
    assert headers["connection"] == "close"
    assert_still_serving(port)


def test_keep_alive_and_close_follow_the_connection_header(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        request = POST + b"Content-Length: 2\r\n\r\n{}"
        sock.sendall(request)
        assert parse(one_answer(sock))[0] == 200
        sock.sendall(request)  # HTTP/1.1 keeps the connection open by default
        assert parse(one_answer(sock))[0] == 200
        sock.sendall(POST + b"Connection: close\r\nContent-Length: 2\r\n\r\n{}")
        assert parse(one_answer(sock))[0] == 200
        assert sock.recv(10) == b""  # and closes it when asked
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"POST / HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
        assert parse(one_answer(sock))[0] == 200
        assert sock.recv(10) == b""  # HTTP/1.0 without keep-alive: closed



def test_a_greedy_route_matches_only_what_no_other_route_does() -> None:
    from infra.local.server import GreedyRouteMatcher
    matcher = GreedyRouteMatcher(["/v1/{prefix}/databases", "/v1/{prefix}/databases/{database}", "/v1/{prefix}",
                                  "/v1/{prefix}/{proxy+}", "/{operation}"])
    assert matcher.match_route("/v1/w/databases/d").route == "/v1/{prefix}/databases/{database}"
    assert matcher.match_route("/v1/w").route == "/v1/{prefix}"
    found = matcher.match_route("/v1/w/databases/d/tables/t/nothing?x=1")
    assert found.route == "/v1/{prefix}/{proxy+}"
    assert found.captured == {"prefix": "w", "proxy": "databases/d/tables/t/nothing"}
    assert found.query_params == {"x": ["1"]}
    assert matcher.match_route("/GetTable").route == "/{operation}"
    with pytest.raises(ValueError):
        matcher.match_route("/a/b/c")
