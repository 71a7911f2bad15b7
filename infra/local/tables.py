"""Create the catalog's DynamoDB tables for the store configured in the environment.

``python -m infra.local.tables`` does it in a fresh process: the store reads
GLUE_DDB_ENDPOINT / GLUE_TABLE_PREFIX / AWS_REGION once, at import, so a process that
already imported it cannot create tables for another endpoint or prefix.

Against real DynamoDB (no GLUE_DDB_ENDPOINT, or an AWS endpoint: the ``chalice deploy`` path
creates its tables so) every table also gets point-in-time recovery and deletion protection, as
the CloudFormation template declares them (infra/cloudformation.py), for tables it creates and for
tables that exist already. DynamoDB Local and LocalStack are left alone: they need neither, and
DynamoDB Local may not implement UpdateContinuousBackups.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, Iterable
from urllib.parse import urlsplit

# The names an ImportError carries when the store itself is not written yet; any other
# missing module is a real bug and must surface.
_NOT_YET_WRITTEN = {"chalicelib", "chalicelib.store", "chalicelib.store.bootstrap"}
_AWS_HOSTS = (".amazonaws.com", ".amazonaws.com.cn", ".api.aws")
# Right after a table is created, enabling its backups can be refused for a while ("Backups are
# being enabled for the table... Please retry later"): retried, with this many seconds in all.
_RETRY_SECONDS = 300.0
_RETRIED = {"ContinuousBackupsUnavailableException", "ResourceInUseException", "LimitExceededException"}


def is_aws_endpoint(endpoint: str | None) -> bool:
    """Whether the store's DynamoDB endpoint (GLUE_DDB_ENDPOINT) is AWS's own (None: the region's)."""
    if endpoint is None:
        return True
    host = urlsplit(endpoint).hostname or ""
    return host.endswith(_AWS_HOSTS)


def protect_tables(client: Any, names: Iterable[str], sleep: Callable[[float], None] = time.sleep,
                   clock: Callable[[], float] = time.monotonic) -> list[str]:
    """Turn on deletion protection and point-in-time recovery where they are off; the names changed."""
    from botocore.exceptions import ClientError

    changed = []
    for name in names:
        steps: list[Callable[[], Any]] = []
        if not client.describe_table(TableName=name)["Table"].get("DeletionProtectionEnabled"):
            steps.append(lambda: client.update_table(TableName=name, DeletionProtectionEnabled=True))
        backups = client.describe_continuous_backups(TableName=name)["ContinuousBackupsDescription"]
        if backups.get("PointInTimeRecoveryDescription", {}).get("PointInTimeRecoveryStatus") != "ENABLED":
            steps.append(lambda: client.update_continuous_backups(
                TableName=name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}))
        for step in steps:
            deadline, pause = clock() + _RETRY_SECONDS, 1.0
            while True:
                try:
                    step()
                    break
                except ClientError as error:
                    if error.response.get("Error", {}).get("Code") not in _RETRIED or clock() >= deadline:
                        raise
                    sleep(pause)
                    pause = min(pause * 2, 20.0)
        if steps:
            changed.append(name)
    return changed


def create_tables() -> bool:
    """Create every table (idempotent). False, with a warning, when the store does not exist yet."""
    try:
        from chalicelib.store.bootstrap import create_tables as bootstrap_create_tables
    except ImportError as exc:
        if exc.name not in _NOT_YET_WRITTEN and "create_tables" not in str(exc):
            raise
        print(f"warning: no tables created, chalicelib.store.bootstrap.create_tables is missing ({exc})",
              file=sys.stderr)
        return False
    bootstrap_create_tables()
    from chalicelib.store.dynamo import config

    if is_aws_endpoint(config.ENDPOINT):
        from chalicelib.store.dynamo.models import ALL_MODELS

        names = [model.Meta.table_name for model in ALL_MODELS]
        changed = protect_tables(config.connection().client, names)
        print(f"{len(names)} tables in {config.REGION}; deletion protection and point-in-time recovery "
              f"turned on for {len(changed)}", file=sys.stderr)
        if config.TABLE_PREFIX != "glue_catalog_":
            print(f"warning: GLUE_TABLE_PREFIX={config.TABLE_PREFIX}: the deployed functions use glue_catalog_",
                  file=sys.stderr)
    return True


if __name__ == "__main__":
    create_tables()
