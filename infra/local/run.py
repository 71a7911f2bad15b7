"""``make run``: the whole service on this machine, until Ctrl-C or SIGTERM.

DynamoDB Local persists under ``.data/dynamodb`` (port ``$DDB_PORT``, default 8001), or, with
LOCALSTACK_HOST / GLUE_USE_LOCALSTACK=1, the DynamoDB of a LocalStack you run yourself.
The Glue + Lake Formation API is served on ``http://127.0.0.1:$PORT`` (default 8000).
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Optional

from infra.local.dynamodb_local import FAKE_CREDENTIALS, DynamoDBLocal, endpoint_ready, ensure_installed
from infra.local.stack import localstack_dynamodb_endpoint

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = REPO / ".data"


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
    DATA_DIR.mkdir(exist_ok=True)
    ddb = DynamoDBLocal(port=port, db_path=db_path, log=open(DATA_DIR / "dynamodb.log", "ab"))
    try:
        ddb.start()
    except RuntimeError as exc:
        sys.exit(f"{exc}; set DDB_PORT to use another port")
    os.environ["GLUE_DDB_ENDPOINT"] = ddb.endpoint
    print(f"DynamoDB Local: {ddb.endpoint}, data in {db_path.relative_to(REPO)} (log: .data/dynamodb.log)")
    print("  note: DynamoDB Local has no bind-address option; it listens on all interfaces.")
    return ddb


def main() -> None:
    """Start DynamoDB, create the tables, serve the API; stop everything on Ctrl-C / SIGTERM."""
    # SIGINT too: a shell starting us in the background leaves SIGINT ignored, and then
    # Python would never raise KeyboardInterrupt.
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    for name, value in FAKE_CREDENTIALS.items():
        os.environ.setdefault(name, value)
    port = int(os.environ.get("PORT", "8000"))
    ddb: Optional[DynamoDBLocal] = None
    server = None
    try:
        ddb = start_dynamodb()
        # Imported only now: the store reads GLUE_DDB_ENDPOINT once, at import.
        from infra.local.server import make_server
        from infra.local.tables import create_tables

        create_tables()
        try:
            server = make_server("127.0.0.1", port)
        except OSError as exc:
            sys.exit(f"cannot serve on 127.0.0.1:{port}: {exc}; set PORT to use another port")
        url = f"http://127.0.0.1:{port}"
        print(f"Glue + Lake Formation API: {url}")
        print(f"  aws glue get-databases --endpoint-url {url} --region us-east-1")
        print(f'  boto3.client("glue", endpoint_url="{url}", region_name="us-east-1").get_databases()')
        print("  any credentials work; a 12-digit access key id is taken as the account id")
        print(f"Paimon REST catalog (pypaimon RESTCatalog): uri {url}, any warehouse name, "
              "token.provider=bear, token <12-digit account id>")
        print("Ctrl-C stops everything.", flush=True)
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nstopping")
    finally:
        if server is not None:
            server.server_close()
        if ddb is not None:
            ddb.stop()


if __name__ == "__main__":
    main()
