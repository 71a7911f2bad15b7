"""``make run``: the whole service on this machine, until Ctrl-C or SIGTERM.

DynamoDB Local persists under ``.data/dynamodb`` (port ``$DDB_PORT``, default 8001), or, with
LOCALSTACK_HOST / GLUE_USE_LOCALSTACK=1, the DynamoDB of a LocalStack you run yourself.
The Glue + Lake Formation API is served on ``http://$HOST:$PORT`` (default 127.0.0.1:8000).

Authentication (``GLUE_AUTH``): unset or ``open`` is the open mode for local testing, where the
access key id names the account (as moto and LocalStack do) and no signature is checked; it
warns loudly when ``HOST`` is not a loopback address. ``GLUE_AUTH=sigv4`` verifies every
request against the service's own identities and creates (and prints, once) the first
administrator's key.

``GLUE_TLS=1`` serves the same port over HTTPS only, with a certificate from a CA of this machine's
own, both kept under ``.data/tls`` (infra/local/tls.py); the banner says how to give clients the
CA bundle.
"""

from __future__ import annotations

import importlib.util
import ipaddress
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Mapping, Optional

from infra.local.dynamodb_local import (
    FAKE_CREDENTIALS,
    KEY_FILE_NAME,
    DynamoDBLocal,
    endpoint_ready,
    ensure_installed,
)
from infra.local.stack import localstack_dynamodb_endpoint

if TYPE_CHECKING:  # infra.local.tls imports cryptography: only a TLS run loads it
    from infra.local.tls import TlsFiles

REPO = Path(__file__).resolve().parents[2]
# GLUE_LOCAL_DATA_DIR: elsewhere than the repository's .data (the tests run make run's code so).
DATA_DIR = Path(os.environ.get("GLUE_LOCAL_DATA_DIR") or REPO / ".data").resolve()
DEFAULT_HOST = "127.0.0.1"
OPEN, SIGV4 = "open", "sigv4"
# The other half of issue #15: the identities admin command (prints the first administrator's
# key once). Called only when the module exists.
IDENTITIES_MODULE = "infra.identities"
BOOTSTRAP = [sys.executable, "-m", IDENTITIES_MODULE, "admin", "bootstrap"]


def tls_requested(env: Mapping[str, str]) -> bool:
    """Whether GLUE_TLS asks for HTTPS: ``1`` (or true/yes/on) does, unset or ``0`` (false/no/off)
    does not; anything else is a ValueError, so a misspelt value does not serve plain HTTP unawares."""
    value = (env.get("GLUE_TLS") or "0").strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"GLUE_TLS={env.get('GLUE_TLS')!r}: use 1 (HTTPS) or 0 (plain HTTP)")


def certificate_names(host: str) -> list[str]:
    """The server certificate's names: localhost, 127.0.0.1, ::1, and HOST when it is a name or
    address of its own (a wildcard bind is reached here through loopback)."""
    from infra.local.tls import DEFAULT_NAMES

    names = list(DEFAULT_NAMES)
    if host not in ("", "0.0.0.0", "::") and host not in names:
        names.append(host)
    return names


def tls_banner(files: "TlsFiles", names: list[str]) -> list[str]:
    """How to point clients at the local CA, printed under the https URL."""
    ca = files.ca_cert
    return [
        f"  HTTPS: certificate for {', '.join(names)} from the local CA {shown(ca)}; clients must trust that CA:",
        f"    boto3, the AWS CLI: AWS_CA_BUNDLE={ca} (or verify=..., --ca-bundle ...)",
        f"    requests, pyiceberg, pypaimon: REQUESTS_CA_BUNDLE={ca} (pyiceberg: or catalog property ssl.cabundle)",
        f"    DuckDB: SET ca_cert_file = '{ca}';  OpenSSL tools and Python's ssl: SSL_CERT_FILE={ca}",
        f"    Java: keytool -importcert -noprompt -alias glue-local -file {ca} -keystore glue-local.p12 "
        "-storepass changeit, then -Djavax.net.ssl.trustStore=glue-local.p12 -Djavax.net.ssl.trustStorePassword=changeit",
    ]


def auth_mode(env: Mapping[str, str]) -> str:
    """``open`` when GLUE_AUTH is unset or ``open``; otherwise ``sigv4`` (as the server decides:
    a misspelt value must not open the catalog)."""
    return OPEN if (env.get("GLUE_AUTH") or OPEN).strip().lower() == OPEN else SIGV4


def is_loopback(host: str) -> bool:
    """True when ``host`` is a loopback address or a name that resolves only to loopback ones.

    ``0.0.0.0``, ``::`` and unresolvable names are not: they (may) listen beyond this machine.
    """
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback for info in infos)


def mode_banner(mode: str) -> str:
    """The line ``make run`` starts with: which authentication mode it runs in."""
    if mode == OPEN:
        return ("open mode: the access key id names the account and no signature is checked, "
                "for local testing only (GLUE_AUTH=sigv4 make run verifies signatures)")
    return "SigV4 authentication on: every request must be signed with a key the service issued"


def host_warning(host: str, mode: str) -> Optional[str]:
    """A loud warning when the API listens beyond loopback while authentication is open."""
    if mode != OPEN or is_loopback(host):
        return None
    bar = "!" * 78
    return "\n".join([
        bar,
        f"WARNING: HOST={host} serves the catalog beyond this machine in OPEN mode:",
        "anyone who can reach this port can read and rewrite every account's catalog,",
        "choosing the account by the access key id they send. Use GLUE_AUTH=sigv4 (or",
        f"HOST={DEFAULT_HOST}) unless this network is yours alone.",
        bar,
    ])


def client_url(host: str, port: int, scheme: str = "http") -> str:
    """The URL to give clients on this machine (a wildcard address is reached through loopback)."""
    if host in ("0.0.0.0", ""):
        host = DEFAULT_HOST
    elif host == "::":
        host = "::1"
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


def bootstrap_admin() -> bool:
    """Create the first administrator (its key printed once) through the identities admin
    command, in a child process with this environment; False when that command does not exist."""
    if importlib.util.find_spec(IDENTITIES_MODULE) is None:
        print(f"  note: no {IDENTITIES_MODULE} admin command here; no administrator key created",
              file=sys.stderr)
        return False
    result = subprocess.run(BOOTSTRAP, cwd=REPO, env=os.environ.copy(), check=False)
    if result.returncode != 0:
        # Serving on is safe: with verification on, no request gets in without a valid key.
        print(f"  warning: {' '.join(BOOTSTRAP[1:])} exited with {result.returncode}; "
              "no administrator key was printed", file=sys.stderr)
    return True


def shown(path: Path) -> str:
    """``path`` relative to the repository when it is inside it."""
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)


def _stop(signum: int, frame: Optional[FrameType]) -> None:
    # Unwind like Ctrl-C, so the finally blocks stop what we started.
    raise KeyboardInterrupt


def start_dynamodb() -> Optional[DynamoDBLocal]:
    """Start DynamoDB Local (or find LocalStack's), set GLUE_DDB_ENDPOINT, return what to stop."""
    localstack = localstack_dynamodb_endpoint()
    if localstack:
        if not endpoint_ready(localstack, timeout=5):
            sys.exit(f"LocalStack's DynamoDB does not answer on {localstack}")
        os.environ["GLUE_DDB_ENDPOINT"] = localstack
        print(f"DynamoDB: LocalStack at {localstack}")
        return None
    ensure_installed()
    port = int(os.environ.get("DDB_PORT", "8001"))
    db_path = DATA_DIR / "dynamodb"
    try:
        DATA_DIR.mkdir(parents=True, exist_ok=True)  # GLUE_LOCAL_DATA_DIR may name a path not made yet
        # Reads (or creates) the catalog database's key file: a damaged one is a RuntimeError.
        ddb = DynamoDBLocal(port=port, db_path=db_path, log=open(DATA_DIR / "dynamodb.log", "ab"))
    except (RuntimeError, OSError) as exc:
        sys.exit(f"cannot use the data directory {shown(DATA_DIR)}: {exc}")
    # DynamoDB Local keeps one database per key id *and region*: another AWS_REGION than the
    # one the catalog was written under would show an empty catalog.
    current = db_path / f"{ddb.access_key_id}_{ddb.region}.db"
    written = sorted(p.name[len(ddb.access_key_id) + 1:-3] for p in db_path.glob(f"{ddb.access_key_id}_*.db"))
    if written and not current.exists():
        print(f"  warning: the catalog under {db_path} was written with AWS_REGION={', '.join(written)}, "
              f"this run uses {ddb.region}: it starts an empty catalog", file=sys.stderr)
    try:
        ddb.start()
    except RuntimeError as exc:
        sys.exit(f"{exc}; set DDB_PORT to use another port")
    os.environ["GLUE_DDB_ENDPOINT"] = ddb.endpoint
    # The store's own key to its database, apart from AWS_ACCESS_KEY_ID (S3 warehouses use that).
    os.environ["GLUE_DDB_ACCESS_KEY_ID"] = ddb.access_key_id
    key_file = shown(db_path / KEY_FILE_NAME)
    print(f"DynamoDB Local: {ddb.endpoint}, data in {shown(db_path)} (log: {shown(DATA_DIR / 'dynamodb.log')})")
    print("  DynamoDB Local listens on all interfaces (it has no bind option); the catalog's tables are")
    print(f"  visible only under the access key id in {key_file} (owner-only): other credentials see none.")
    return ddb


def main() -> None:
    """Start DynamoDB, create the tables, serve the API; stop everything on Ctrl-C / SIGTERM."""
    # SIGINT too: a shell starting us in the background leaves SIGINT ignored, and then
    # Python would never raise KeyboardInterrupt.
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    for name, value in FAKE_CREDENTIALS.items():
        os.environ.setdefault(name, value)
    # DynamoDB Local's key is the stack's to set; one from the caller's shell would name another database.
    os.environ.pop("GLUE_DDB_ACCESS_KEY_ID", None)
    # The local key encryption key of the identities' secrets, beside the data (not cwd-relative).
    os.environ.setdefault("GLUE_AUTH_KEY_FILE", str(DATA_DIR / "auth.key"))
    port = int(os.environ.get("PORT", "8000"))
    host = os.environ.get("HOST") or DEFAULT_HOST
    try:
        tls = tls_requested(os.environ)
    except ValueError as exc:
        sys.exit(str(exc))
    mode = auth_mode(os.environ)
    print(mode_banner(mode), flush=True)
    warning = host_warning(host, mode)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    # The service's log (one line per request at INFO, a 5xx with its traceback; GLUE_LOG_LEVEL) on
    # this terminal; the level itself is set by app.py from the setting.
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    logging.getLogger("pynamodb").setLevel(logging.WARNING)  # its settings notes at every start
    ddb: Optional[DynamoDBLocal] = None
    server = None
    # The cleaner of deleted databases and tables (Lambda's scheduled function): without it their
    # tables, partitions and statistics would stay in DynamoDB Local for good.
    stop_cleaner = threading.Event()
    try:
        ddb = start_dynamodb()
        # Imported only now: the service reads its settings (GLUE_DDB_ENDPOINT...) once, at the store's import.
        from infra.local.server import local_endpoint, make_server, start_cleaner, start_crawl_worker, tls_context
        from infra.local.tables import create_tables

        create_tables()
        if mode == SIGV4:
            bootstrap_admin()
        files: Optional[TlsFiles] = None
        names = certificate_names(host)
        if tls:
            from infra.local.tls import ensure

            try:
                files = ensure(DATA_DIR / "tls", names)
            except OSError as exc:
                sys.exit(f"cannot make the TLS files under {shown(DATA_DIR / 'tls')}: {exc}")
        try:
            server = make_server(host, port, tls=tls_context(files.cert, files.key) if files else None)
        except OSError as exc:
            sys.exit(f"cannot serve on {host}:{port}: {exc}; set HOST / PORT to use another address")
        start_cleaner(stop_cleaner)
        start_crawl_worker(stop_cleaner, local_endpoint(host, port, files is not None),
                           str(files.ca_cert) if files else None)
        url = client_url(host, port, "https" if files else "http")
        ca_option = f" --ca-bundle {files.ca_cert}" if files else ""
        verify = f', verify="{files.ca_cert}"' if files else ""
        print(f"Glue + Lake Formation API: {url}" + ("" if is_loopback(host) else f" (listening on {host})"))
        if files:
            print("\n".join(tls_banner(files, names)))
        print(f"  aws glue get-databases --endpoint-url {url} --region us-east-1{ca_option}")
        print(f'  boto3.client("glue", endpoint_url="{url}", region_name="us-east-1"{verify}).get_databases()')
        if mode == OPEN:
            print("  any credentials work; a 12-digit access key id is taken as the account id, "
                  "user:alice (or 123456789012:user:alice) as that IAM user, for Lake Formation permissions")
            print(f"Paimon REST catalog (pypaimon RESTCatalog): uri {url}, any warehouse name, "
                  "token.provider=bear, token <12-digit account id> or user:alice")
        else:
            print("  sign with a key pair the service issued (make identities ARGS='keys create <principal ARN>')")
            print(f"Paimon REST catalog (pypaimon RESTCatalog): uri {url}, token.provider=bear, "
                  "a token from make identities ARGS='tokens create --key <access key id>'")
        if warning:
            print(warning, file=sys.stderr)
        print("Ctrl-C stops everything.", flush=True)
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nstopping")
    finally:
        stop_cleaner.set()
        if server is not None:
            server.server_close()
        if ddb is not None:
            ddb.stop()


if __name__ == "__main__":
    main()
