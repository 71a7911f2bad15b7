"""The direct transport's HTTP/1.1 connection (chalicelib/store/dynamo/http1.py): every way an answer's
body may be framed, interim answers, and what makes it give up (a ProtocolError, an OSError, so
the caller retries through botocore). A raw socket server sends exactly the bytes each test
wants; the integration tests run the same code against DynamoDB Local."""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from typing import Iterator

import pytest

from chalicelib.store.dynamo import http1

_HEAD = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n"


class _Scripted:
    """Accepts one connection; for each request read, sends the next scripted answer (bytes), or
    closes the connection when the script says None; closes it after the last answer."""

    def __init__(self, answers: list[bytes | None]) -> None:
        self.answers = answers
        self.requests: list[bytes] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            pending = b""
            for answer in self.answers:
                while b"\r\n\r\n" not in pending or len(pending.split(b"\r\n\r\n", 1)[1]) < 4:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    pending += chunk
                head, rest = pending.split(b"\r\n\r\n", 1)
                self.requests.append(head + b"\r\n\r\n" + rest[:4])
                pending = rest[4:]
                if answer is None:
                    return
                conn.sendall(answer)

    def close(self) -> None:
        self.listener.close()


@pytest.fixture()
def scripted() -> Iterator[list[_Scripted]]:
    made: list[_Scripted] = []
    yield made
    for server in made:
        server.close()


def _connect(made: list[_Scripted], answers: list[bytes | None]) -> http1.Connection:
    server = _Scripted(answers)
    made.append(server)
    return http1.Connection("127.0.0.1", server.port, 5.0, 5.0).open()


def test_content_length_and_keep_alive(scripted: list[_Scripted]) -> None:
    connection = _connect(scripted, [
        b"HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.0\r\nContent-Length: 2\r\n"
        b"x-amz-crc32: 1\r\n\r\n{}",
        b"HTTP/1.1 400 Bad Request\r\nContent-Length: 5\r\n\r\nabcde",
    ])
    assert connection.post(_HEAD, b"body") == (
        200, {"content-type": "application/x-amz-json-1.0", "content-length": "2", "x-amz-crc32": "1"}, b"{}", False)
    status, _, data, will_close = connection.post(_HEAD, b"body")
    assert (status, data, will_close) == (400, b"abcde", False)
    assert scripted[0].requests == [_HEAD + b"body"] * 2
    connection.close()


def test_chunked_body_with_extensions_and_trailers(scripted: list[_Scripted]) -> None:
    connection = _connect(scripted, [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3;ext=1\r\n{\"a\r\n5\r\n\":1}x\r\n0\r\nTrailer: t\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
    ])
    assert connection.post(_HEAD, b"body")[2] == b'{"a":1}x'
    assert connection.post(_HEAD, b"body")[2] == b"{}"  # the chunked answer was read to its end


def test_interim_answer_is_skipped(scripted: list[_Scripted]) -> None:
    connection = _connect(scripted, [b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"])
    assert connection.post(_HEAD, b"body")[::2] == (200, b"{}")


@pytest.mark.parametrize("answer,body", [
    (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}", b"{}"),
    (b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}", b"{}"),
    (b"HTTP/1.1 200 OK\r\n\r\n{\"up to\": \"the close\"}", b'{"up to": "the close"}'),
])
def test_answers_that_end_the_connection(scripted: list[_Scripted], answer: bytes, body: bytes) -> None:
    connection = _connect(scripted, [answer])  # then the server closes its end
    _, _, data, will_close = connection.post(_HEAD, b"body")
    assert (data, will_close) == (body, True)


def test_no_body_statuses(scripted: list[_Scripted]) -> None:
    connection = _connect(scripted, [b"HTTP/1.1 204 No Content\r\n\r\n", b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"])
    assert connection.post(_HEAD, b"body")[2] == b""
    assert connection.post(_HEAD, b"body")[::2] == (200, b"")


def test_repeated_header_values_are_joined(scripted: list[_Scripted]) -> None:
    connection = _connect(scripted, [b"HTTP/1.1 200 OK\r\nX-A: 1\r\nx-a: 2\r\nContent-Length: 0\r\n\r\n"])
    assert connection.post(_HEAD, b"body")[1]["x-a"] == "1, 2"


@pytest.mark.parametrize("answer", [
    None,  # hung up without answering
    b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}",  # cut short
    b"SPDY/3 200 OK\r\n\r\n",
    b"HTTP/1.1 OK\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * 101 + b"\r\n",
])
def test_what_is_not_http_raises_protocol_error(scripted: list[_Scripted], answer: bytes | None) -> None:
    connection = _connect(scripted, [answer])  # then the server closes its end
    with pytest.raises(OSError):
        connection.post(_HEAD, b"body")


def test_closed_connection_refuses_to_post() -> None:
    connection = http1.Connection("127.0.0.1", 9, 1.0, 1.0)
    with pytest.raises(http1.ProtocolError):
        connection.post(_HEAD, b"body")
    connection.close()
    connection.close()  # idempotent


def test_tls_with_the_callers_trust(tmp_path: Path) -> None:
    """HTTPS: the handshake checks the server's certificate (for its host name) against the
    context the caller gives, as DynamoDB's real endpoints need."""
    pytest.importorskip("cryptography")
    import datetime
    import ssl

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert_file, key_file)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        for _ in range(2):
            conn, _ = listener.accept()
            try:
                with server_context.wrap_socket(conn, server_side=True) as tls:
                    received = b""
                    while not received.endswith(b"body"):
                        received += tls.recv(65536)
                    tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
            except (ssl.SSLError, OSError):
                conn.close()  # the untrusting client hangs up during the handshake
    threading.Thread(target=serve, daemon=True).start()
    try:
        trusting = ssl.create_default_context(cafile=str(cert_file))
        connection = http1.Connection("localhost", port, 5.0, 5.0, trusting).open()
        assert connection.post(_HEAD, b"body")[::2] == (200, b"{}")
        connection.close()
        with pytest.raises(ssl.SSLCertVerificationError):
            http1.Connection("localhost", port, 5.0, 5.0, ssl.create_default_context()).open()
    finally:
        listener.close()
