"""A whole local service in child processes: DynamoDB Local + tables + the API server.

The tests and benchmarks use it to drive the real service over HTTP; every process it starts
is a child it can restart and always stops.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Union

import boto3
from botocore.config import Config

from infra.local.dynamodb_local import PREEXEC, DynamoDBLocal, free_port, stop_process

if TYPE_CHECKING:  # infra.local.tls imports cryptography: only a TLS stack loads it
    from infra.local.tls import TlsFiles

REPO = Path(__file__).resolve().parents[2]
REGION = "us-east-1"
# A non-numeric access key id: the service maps it to its default account 123456789012.
DEFAULT_ACCESS_KEY = "testing"
# One attempt: a test must see the service's first answer, not a retried one.
CLIENT_CONFIG = Config(retries={"total_max_attempts": 1, "mode": "standard"}, connect_timeout=5, read_timeout=60)


def client(endpoint: str, service: str = "glue", *, account: Optional[str] = None,
           access_key: Optional[str] = None, region: str = REGION, verify: Union[str, bool, None] = None) -> Any:
    """A boto3 client for the local service.

    The service takes the caller's account from the SigV4 access key id: a 12-digit key id
    *is* the account, so ``account="111122223333"`` signs as that account. ``verify``: the CA
    bundle of an https endpoint (boto3's own argument).
    """
    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name=region,
        aws_access_key_id=access_key or account or DEFAULT_ACCESS_KEY,
        aws_secret_access_key="testing",
        config=CLIENT_CONFIG,
        verify=verify,
    )


def store_env(ddb_endpoint: str, table_prefix: str, region: str = REGION,
              ddb_access_key_id: Optional[str] = None) -> dict[str, str]:
    """The process environment for a server or table creation against ``ddb_endpoint``.

    Credentials are fixed fakes and profiles are dropped: a developer's real AWS settings
    must never leak into a local run. ``ddb_access_key_id`` (GLUE_DDB_ACCESS_KEY_ID) names the
    catalog's database in DynamoDB Local (see infra/local/dynamodb_local.py); the process's
    AWS_ACCESS_KEY_ID stays a fake for everything else (e.g. a moto S3 warehouse).
    """
    env = {k: v for k, v in os.environ.items() if k not in ("AWS_PROFILE", "AWS_SESSION_TOKEN")}
    env.update(
        GLUE_DDB_ENDPOINT=ddb_endpoint,
        GLUE_TABLE_PREFIX=table_prefix,
        AWS_REGION=region,
        AWS_DEFAULT_REGION=region,
        AWS_ACCESS_KEY_ID="local",
        AWS_SECRET_ACCESS_KEY="local",
        PYTHONUNBUFFERED="1",
    )
    if ddb_access_key_id:
        env["GLUE_DDB_ACCESS_KEY_ID"] = ddb_access_key_id
    else:
        env.pop("GLUE_DDB_ACCESS_KEY_ID", None)
    return env


def random_prefix() -> str:
    """A table prefix no other run uses, so runs can share one DynamoDB."""
    return f"t{secrets.token_hex(4)}_"


def create_tables(env: dict[str, str]) -> None:
    """Create the tables in a fresh process (the store reads its settings once, at import)."""
    subprocess.run([sys.executable, "-m", "infra.local.tables"], cwd=REPO, env=env, check=True)


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """Block until 127.0.0.1:``port`` accepts connections; raise if ``proc`` dies first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited with code {proc.returncode} before listening on {port}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout:.0f}s")


class ServerProcess:
    """``python -m infra.local.server`` as a child process on a fixed port; over HTTPS with the
    certificate and key of ``tls`` (see infra/local/tls.py)."""

    def __init__(self, env: dict[str, str], port: Optional[int] = None, log_path: Optional[Path] = None,
                 tls: Optional["TlsFiles"] = None):
        self.env = env
        self.port = port or free_port()
        self.log_path = log_path
        self.tls = tls
        self.process: Optional[subprocess.Popen[bytes]] = None

    @property
    def endpoint(self) -> str:
        """The service URL."""
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> "ServerProcess":
        """Start the server and wait until it accepts connections."""
        log = open(self.log_path, "ab") if self.log_path else None
        command = [sys.executable, "-m", "infra.local.server", "--port", str(self.port)]
        if self.tls is not None:
            command += ["--tls-cert", str(self.tls.cert), "--tls-key", str(self.tls.key)]
        try:
            self.process = subprocess.Popen(
                command,
                cwd=REPO,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL if log is None else log,
                stderr=subprocess.STDOUT,
                preexec_fn=PREEXEC,
            )
        finally:
            if log is not None:
                log.close()  # the child holds its own descriptor
        try:
            wait_for_port(self.port, self.process, timeout)
        except Exception as exc:
            self.stop()
            raise RuntimeError(f"API server did not start: {exc}\n{self.log_tail()}") from exc
        return self

    def stop(self) -> None:
        """Stop the server (always safe to call)."""
        stop_process(self.process)
        self.process = None

    def restart(self) -> None:
        """Stop and start again on the same port, so existing clients keep their endpoint."""
        self.stop()
        self.start()

    def log_tail(self, lines: int = 40) -> str:
        """The end of the server's log, for error messages."""
        if not self.log_path or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


def localstack_dynamodb_endpoint() -> Optional[str]:
    """The DynamoDB endpoint of the user's LocalStack, or None when none is configured.

    Configured means LOCALSTACK_HOST is set (``host:port``) or GLUE_USE_LOCALSTACK=1
    (then localstack-client's default, localhost:4566).
    """
    if not os.environ.get("LOCALSTACK_HOST") and os.environ.get("GLUE_USE_LOCALSTACK") != "1":
        return None
    from localstack_client.config import get_service_endpoint

    return get_service_endpoint("dynamodb")


class CatalogStack:
    """DynamoDB (Local, in memory or under ``db_path``; or an external one) + tables + API server.

    With ``external_ddb`` (e.g. a LocalStack endpoint) no DynamoDB process is started and
    ``restart_dynamodb`` is unavailable. ``server_env``: extra environment variables for the
    API server only (test hooks such as GLUE_FAULT_CRASH_AT or GLUE_LF_IDLE_SECONDS). ``tls``:
    the server speaks HTTPS only, with a CA and certificate of the stack's own (``ca_bundle``).
    """

    def __init__(self, db_path: Union[str, Path, None] = None, log_dir: Optional[Path] = None,
                 table_prefix: Optional[str] = None, external_ddb: Optional[str] = None,
                 server_env: Optional[dict[str, str]] = None, tls: bool = False):
        self.table_prefix = table_prefix or random_prefix()
        self.log_dir = log_dir
        if log_dir is not None:
            log_dir.mkdir(parents=True, exist_ok=True)
        self._ddb_log: Any = subprocess.DEVNULL
        self.dynamodb: Optional[DynamoDBLocal] = None
        if external_ddb is None:
            if log_dir is not None:
                self._ddb_log = open(log_dir / "dynamodb.log", "ab")
            self.dynamodb = DynamoDBLocal(db_path=db_path, log=self._ddb_log, region=REGION)
        self.ddb_endpoint = external_ddb or self.dynamodb.endpoint  # type: ignore[union-attr]
        self.env = store_env(self.ddb_endpoint, self.table_prefix, ddb_access_key_id=self.ddb_access_key_id)
        # The Paimon warehouse (table directories: schema, snapshot, tag files) is the stack's own,
        # like its DynamoDB tables, so no run writes into the repository's .data or sees another
        # run's files. Given explicitly (env or server_env), it is the caller's and is kept.
        self._own_warehouse: Optional[str] = None
        if not (server_env or {}).get("PAIMON_WAREHOUSE") and not os.environ.get("PAIMON_WAREHOUSE"):
            self._own_warehouse = tempfile.mkdtemp(prefix="paimon-warehouse-")
            self.env["PAIMON_WAREHOUSE"] = Path(self._own_warehouse).as_uri()
        # The key file that encrypts the identities' secrets locally (GLUE_AUTH_KEY_FILE): the
        # stack's own too, in a 0700 directory, rather than the repository's .data/auth.key.
        self._own_auth_dir: Optional[str] = None
        if not (server_env or {}).get("GLUE_AUTH_KEY_FILE") and not os.environ.get("GLUE_AUTH_KEY_FILE"):
            self._own_auth_dir = tempfile.mkdtemp(prefix="glue-auth-")
            self.env["GLUE_AUTH_KEY_FILE"] = str(Path(self._own_auth_dir) / "auth.key")
        self.tls: Optional[TlsFiles] = None
        self._own_tls_dir: Optional[str] = None
        if tls:
            from infra.local import tls as local_tls

            self._own_tls_dir = tempfile.mkdtemp(prefix="glue-tls-")
            self.tls = local_tls.ensure(Path(self._own_tls_dir))
        self.server = ServerProcess({**self.env, **(server_env or {})},
                                    log_path=log_dir / "server.log" if log_dir else None, tls=self.tls)

    @property
    def endpoint(self) -> str:
        """The service URL (stable across restarts)."""
        return self.server.endpoint

    @property
    def ca_bundle(self) -> Optional[str]:
        """With ``tls``, the CA bundle that verifies the server's certificate; else None."""
        return str(self.tls.ca_cert) if self.tls is not None else None

    def client(self, service: str = "glue", **kwargs: Any) -> Any:
        """A boto3 client for this stack's server (see :func:`client` for the arguments); with
        ``tls`` it verifies the server against ``ca_bundle``."""
        kwargs.setdefault("verify", self.ca_bundle)
        return client(self.endpoint, service, **kwargs)

    @property
    def ddb_access_key_id(self) -> Optional[str]:
        """The access key id naming the catalog's database in DynamoDB Local (None: external)."""
        return self.dynamodb.access_key_id if self.dynamodb is not None else None

    def ddb_client(self, **kwargs: Any) -> Any:
        """A boto3 DynamoDB client that sees the catalog's tables (for tests reaching under the API)."""
        if self.dynamodb is not None:
            return self.dynamodb.client(**kwargs)
        return boto3.client("dynamodb", endpoint_url=self.ddb_endpoint, region_name=REGION,
                            aws_access_key_id="local", aws_secret_access_key="local", **kwargs)

    def start(self) -> "CatalogStack":
        """Start DynamoDB Local, create the tables, start the server."""
        try:
            if self.dynamodb is not None:
                self.dynamodb.start()
            create_tables(self.env)
            self.server.start()
        except BaseException:
            self.stop()
            raise
        return self

    def restart_server(self, server_env: Optional[dict[str, str]] = None) -> None:
        """Restart only the API server process; with ``server_env``, under these extra
        environment variables instead of the ones it had."""
        if server_env is not None:
            self.server.env = {**self.env, **server_env}
        self.server.restart()

    def extra_server(self, server_env: dict[str, str], port: Optional[int] = None,
                     name: str = "extra", tls: Optional["TlsFiles"] = None) -> ServerProcess:
        """One more API server (not started) on this stack's DynamoDB and tables, with extra
        environment variables (over HTTPS with ``tls``); the caller starts and stops it."""
        log_path = self.log_dir / f"server-{name}.log" if self.log_dir else None
        return ServerProcess({**self.env, **server_env}, port=port, log_path=log_path, tls=tls)

    def restart_dynamodb(self) -> None:
        """Restart DynamoDB Local on the same port (data survives only with ``db_path``)."""
        if self.dynamodb is None:
            raise RuntimeError("this stack uses an external DynamoDB; it cannot restart it")
        self.dynamodb.stop()
        self.dynamodb.start()

    def restart(self) -> None:
        """Stop both processes and start them again, as after a machine reboot."""
        self.server.stop()
        self.restart_dynamodb()
        self.server.start()

    def stop(self) -> None:
        """Stop everything this stack started (always safe to call)."""
        try:
            self.server.stop()
        finally:
            if self.dynamodb is not None:
                self.dynamodb.stop()
            if hasattr(self._ddb_log, "close"):
                self._ddb_log.close()
            if self._own_warehouse is not None:
                shutil.rmtree(self._own_warehouse, ignore_errors=True)
            if self._own_auth_dir is not None:
                shutil.rmtree(self._own_auth_dir, ignore_errors=True)
            if self._own_tls_dir is not None:
                shutil.rmtree(self._own_tls_dir, ignore_errors=True)

    def __enter__(self) -> "CatalogStack":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
