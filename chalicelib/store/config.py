"""Where the store lives: read once from the environment at import (cheap, no I/O)."""

from __future__ import annotations

import os

from pynamodb.connection import Connection

from chalicelib.store import fast_parse

TABLE_PREFIX = os.environ.get("GLUE_TABLE_PREFIX", "glue_catalog_")
ENDPOINT = os.environ.get("GLUE_DDB_ENDPOINT") or None
REGION = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"

_connection: Connection | None = None


class BaseMeta:
    """Shared PynamoDB Meta: every model's table carries the configured prefix."""

    host = ENDPOINT
    region = REGION
    billing_mode = "PAY_PER_REQUEST"
    # Lambda and the local server both answer a client that is waiting: fail fast, don't hang.
    connect_timeout_seconds = 5
    read_timeout_seconds = 15
    max_retry_attempts = 3


def table_name(suffix: str) -> str:
    """The DynamoDB table name for one model."""
    return TABLE_PREFIX + suffix


def connection() -> Connection:
    """One low-level connection per process, for transactions spanning several models."""
    global _connection
    if _connection is None:
        _connection = Connection(host=ENDPOINT, region=REGION, connect_timeout_seconds=5,
                                 read_timeout_seconds=15, max_retry_attempts=3)
    fast_parse.install(_connection.client)
    return _connection
