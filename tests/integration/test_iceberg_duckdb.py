"""DuckDB's iceberg extension reads, through this service's Iceberg REST endpoint, a table that
pyiceberg's RestCatalog created and appended to: both sign with SigV4 for ``glue`` against a
server that verifies signatures (GLUE_AUTH=sigv4) with a key it issued.

DuckDB 1.5.5 (extension iceberg 45163a28) over plain http: ``AUTHORIZATION_TYPE 'sigv4'`` takes
the scheme from ENDPOINT, but reads the signing service and region from an AWS host name
(``glue.<region>.amazonaws.com``) unless ``SIGV4_SERVICE`` / ``SIGV4_REGION`` say them;
``ENDPOINT_TYPE 'glue'`` ignores ENDPOINT and always calls https://glue.<region>.amazonaws.com.
The extensions install from their PyPI wheels' files (a plain INSTALL downloads).
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from infra.local.stack import REGION, REPO, CatalogStack, ServerProcess
from tests.integration.conftest import random_account
from tests.integration.test_iceberg_rest import ROWS, SCHEMA, rest_catalog

duckdb = pytest.importorskip("duckdb")

EXTENSIONS = ("httpfs", "avro", "iceberg")


def _run_identities(env: dict[str, str], *args: str) -> str:
    return subprocess.run([sys.executable, "-m", "infra.identities", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def signed(stack: CatalogStack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, str, str]]:
    """A server that verifies SigV4, and a key it issued to a principal of an account of its own."""
    key_file = tmp_path_factory.mktemp("duckdb-auth") / "auth.key"
    server_env = {"GLUE_AUTH": "sigv4", "GLUE_AUTH_KEY_FILE": str(key_file)}
    env = {**stack.env, **server_env}
    principal = f"arn:aws:iam::{random_account()}:user/duckdb"
    _run_identities(env, "principals", "create", principal)
    key = json.loads(_run_identities(env, "keys", "create", principal))
    server = stack.extra_server(server_env, name="duckdb").start()
    try:
        yield server, key["AccessKeyId"], key["SecretAccessKey"]
    finally:
        server.stop()


def _duckdb() -> Any:
    """A DuckDB connection with httpfs, avro and iceberg loaded from their wheels."""
    con = duckdb.connect()
    for name in EXTENSIONS:
        package = __import__(f"duckdb_extension_{name}")
        path = Path(package.__file__).parent / "extensions" / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"
        con.execute(f"INSTALL '{path}'")
        con.execute(f"LOAD {name}")
    return con


def _attach(con: Any, endpoint: str, warehouse: str, key_id: str, secret: str) -> None:
    con.execute(f"CREATE OR REPLACE SECRET glue_key (TYPE s3, KEY_ID '{key_id}', SECRET '{secret}', REGION '{REGION}')")
    con.execute(f"ATTACH '{warehouse}' AS lake (TYPE iceberg, ENDPOINT '{endpoint}/iceberg', "
                f"AUTHORIZATION_TYPE 'sigv4', SECRET glue_key, SIGV4_SERVICE 'glue', SIGV4_REGION '{REGION}')")


def test_duckdb_reads_what_pyiceberg_wrote_through_the_rest_catalog(signed):
    server, key_id, secret = signed
    rest = rest_catalog(server.endpoint, ":", **{"client.access-key-id": key_id, "client.secret-access-key": secret})
    namespace = f"duck_{uuid.uuid4().hex[:10]}"
    rest.create_namespace(namespace)
    table = rest.create_table(f"{namespace}.orders", SCHEMA)
    table.append(ROWS)
    table.append(ROWS.slice(0, 1))

    con = _duckdb()
    _attach(con, server.endpoint, ":", key_id, secret)
    tables = con.execute("SELECT database, schema, name FROM (SHOW ALL TABLES) WHERE database = 'lake'").fetchall()
    assert ("lake", namespace, "orders") in tables
    rows = con.execute(f"SELECT id, name, ts FROM lake.{namespace}.orders ORDER BY id, name").fetchall()
    assert [(i, n) for i, n, _ in rows] == [(1, "a"), (1, "a"), (2, "b"), (3, "c")]
    assert con.execute(f"SELECT count(*) FROM lake.{namespace}.orders WHERE ts >= TIMESTAMPTZ '1970-01-02 00:00:00+00'"
                       ).fetchone() == (2,)


def test_duckdb_with_a_wrong_secret_is_refused(signed):
    server, key_id, _ = signed
    con = _duckdb()
    with pytest.raises(duckdb.Error, match="Forbidden_403"):
        _attach(con, server.endpoint, ":", key_id, "not-the-secret")
        con.execute("SHOW ALL TABLES").fetchall()
