"""The local server over HTTPS (``CatalogStack(tls=True)``, as ``GLUE_TLS=1 make run`` serves it):
boto3, pyiceberg's RestCatalog and DuckDB's iceberg extension verify its certificate against the
stack's CA bundle, a client without that CA is refused, and a plain HTTP request to the TLS port is answered with a clear 400
at once instead of hanging. Behind TLS the server frames and keeps connections alive as over HTTP.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import time
import uuid
from pathlib import Path
from typing import Iterator

import pytest
from botocore.exceptions import ClientError, SSLError

from infra.local.stack import CatalogStack, client
from tests.integration.conftest import random_account
from tests.integration.test_iceberg_rest import ROWS, SCHEMA, rest_catalog


@pytest.fixture(scope="module")
def tls_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CatalogStack]:
    with CatalogStack(log_dir=tmp_path_factory.mktemp("tls-logs"), server_env={"GLUE_CLEANUP_THREAD": "0"},
                      tls=True) as stack:
        yield stack


def test_the_endpoint_is_https(tls_stack: CatalogStack) -> None:
    assert tls_stack.endpoint == f"https://127.0.0.1:{tls_stack.server.port}"
    assert tls_stack.ca_bundle is not None and Path(tls_stack.ca_bundle).is_file()


def test_boto3_verifies_the_server_against_the_ca_bundle(tls_stack: CatalogStack) -> None:
    account = random_account()
    glue = client(tls_stack.endpoint, "glue", account=account, verify=tls_stack.ca_bundle)
    name = f"db_{uuid.uuid4().hex[:10]}"
    glue.create_database(DatabaseInput={"Name": name})
    assert [d["Name"] for d in glue.get_databases()["DatabaseList"]] == [name]


def test_boto3_without_the_ca_is_refused(tls_stack: CatalogStack) -> None:
    glue = client(tls_stack.endpoint, "glue", verify=True)  # the system's CAs only
    with pytest.raises(SSLError):
        glue.get_databases()


@pytest.mark.parametrize("how", ["ssl.cabundle", "REQUESTS_CA_BUNDLE"])
def test_pyiceberg_rest_catalog_over_https(tls_stack: CatalogStack, how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CA through the catalog's ``ssl: {cabundle: ...}`` property, or requests' environment
    variable. requests lets REQUESTS_CA_BUNDLE (or CURL_CA_BUNDLE), when set, override the
    session's bundle, so the property works only without them."""
    for name in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)
    extra: dict = {}
    if how == "ssl.cabundle":
        extra["ssl"] = {"cabundle": tls_stack.ca_bundle}
    else:
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(tls_stack.ca_bundle))
    account = random_account()
    rest = rest_catalog(tls_stack.endpoint, account, **extra)
    namespace = f"ns_{uuid.uuid4().hex[:10]}"
    rest.create_namespace(namespace, {"comment": "over https"})
    assert (namespace,) in rest.list_namespaces()
    glue = tls_stack.client(account=account)
    assert glue.get_database(Name=namespace)["Database"]["Description"] == "over https"


def test_plain_http_to_the_tls_port_is_refused_at_once(tls_stack: CatalogStack) -> None:
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", tls_stack.server.port, timeout=10)
    connection.request("GET", "/iceberg/v1/config")
    response = connection.getresponse()
    assert response.status == 400
    assert response.getheader("x-amzn-ErrorType") == "BadRequestException"
    assert b"serves HTTPS only" in response.read()
    connection.close()
    assert time.monotonic() - started < 5

    glue = client(f"http://127.0.0.1:{tls_stack.server.port}", "glue")
    with pytest.raises(ClientError, match="serves HTTPS only"):
        glue.get_databases()


def test_keep_alive_and_framing_behind_tls(tls_stack: CatalogStack) -> None:
    """Two requests on one TLS connection, the second a chunked body: answered as over HTTP."""
    context = ssl.create_default_context(cafile=tls_stack.ca_bundle)
    context.set_alpn_protocols(["h2", "http/1.1"])
    with socket.create_connection(("127.0.0.1", tls_stack.server.port), timeout=10) as raw, \
            context.wrap_socket(raw, server_hostname="localhost") as conn:
        assert conn.version() in ("TLSv1.2", "TLSv1.3")
        assert conn.selected_alpn_protocol() == "http/1.1"  # offered h2 too: never chosen here
        files = conn.makefile("rb")
        for body in (b"Content-Length: 2\r\n\r\n{}", b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"):
            conn.sendall(b"POST / HTTP/1.1\r\nHost: localhost\r\nX-Amz-Target: AWSGlue.GetDatabases\r\n"
                         b"Content-Type: application/x-amz-json-1.1\r\n"
                         b"Authorization: AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/glue/aws4_request, "
                         b"SignedHeaders=host, Signature=00\r\n" + body)
            status = files.readline()
            assert status.startswith(b"HTTP/1.1 200"), status
            headers = {}
            while (line := files.readline()) != b"\r\n":
                name, _, value = line.decode().partition(":")
                headers[name.lower()] = value.strip()
            assert "connection" not in headers
            assert b"DatabaseList" in files.read(int(headers["content-length"]))


def test_duckdb_reads_over_https_with_ca_cert_file(tls_stack: CatalogStack, monkeypatch: pytest.MonkeyPatch) -> None:
    """DuckDB 1.5.5's iceberg extension (curl underneath) honours ``SET ca_cert_file`` alone, not
    SSL_CERT_FILE or CURL_CA_BUNDLE; without it the attach is refused."""
    duckdb = pytest.importorskip("duckdb")
    from tests.integration.test_iceberg_duckdb import _attach, _duckdb

    monkeypatch.delenv("REQUESTS_CA_BUNDLE", raising=False)
    monkeypatch.delenv("CURL_CA_BUNDLE", raising=False)
    account = random_account()
    rest = rest_catalog(tls_stack.endpoint, account, ssl={"cabundle": tls_stack.ca_bundle})
    namespace = f"duck_{uuid.uuid4().hex[:10]}"
    rest.create_namespace(namespace)
    rest.create_table(f"{namespace}.orders", SCHEMA).append(ROWS)

    refused = _duckdb()
    with pytest.raises(duckdb.Error, match="SSL"):
        _attach(refused, tls_stack.endpoint, account, account, "testing")

    con = _duckdb()
    con.execute(f"SET ca_cert_file = '{tls_stack.ca_bundle}'")
    _attach(con, tls_stack.endpoint, account, account, "testing")
    rows = con.execute(f"SELECT id, name FROM lake.{namespace}.orders ORDER BY id").fetchall()
    assert rows == [(1, "a"), (2, "b"), (3, "c")]
