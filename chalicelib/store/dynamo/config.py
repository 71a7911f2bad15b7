"""Where the store lives: taken from chalicelib.settings once, at import (cheap, no I/O)."""

from __future__ import annotations

from typing import Any

from pynamodb.connection import Connection, TableConnection
from pynamodb.connection.base import MetaTable

from chalicelib import metrics, settings
from chalicelib.store.dynamo import dynamo_http, fast_parse, write_tokens

TABLE_PREFIX = settings.current().table_prefix
ENDPOINT = settings.current().ddb_endpoint
REGION = settings.current().region
# DynamoDB Local keeps one database per access key id (infra/local/dynamodb_local.py): the local
# stacks give the store the random key id of the catalog's database here, apart from the
# process's own AWS credentials (which S3 warehouses use). Unset when deployed: the Lambda's role.
_DDB_KEY_ID = settings.current().ddb_access_key_id
# DynamoDB Local checks no signature, only the key id; botocore needs some secret to sign with.
_DDB_CREDENTIALS: dict[str, Any] = (
    {"aws_access_key_id": _DDB_KEY_ID, "aws_secret_access_key": "local"} if _DDB_KEY_ID else {})

_connection: Connection | None = None
_table_connections: dict[str, TableConnection] = {}


class BaseMeta:
    """Shared PynamoDB Meta: every model's table carries the configured prefix."""

    host = ENDPOINT
    region = REGION
    billing_mode = "PAY_PER_REQUEST"
    # Lambda and the local server both answer a client that is waiting: fail fast, don't hang.
    connect_timeout_seconds = 5
    read_timeout_seconds = 15
    max_retry_attempts = 3
    aws_access_key_id = _DDB_CREDENTIALS.get("aws_access_key_id")
    aws_secret_access_key = _DDB_CREDENTIALS.get("aws_secret_access_key")


def table_name(suffix: str) -> str:
    """The DynamoDB table name for one model."""
    return TABLE_PREFIX + suffix


def instrument(client: Any) -> None:
    """Hook a botocore DynamoDB client once: its data-plane calls sent directly (dynamo_http),
    the faster read parser for what botocore still sends (fast_parse), write tokens that let a
    retried conditional write recognise its own landed attempt (write_tokens, around whichever
    transport sends), and a count of the round trips each request makes (metrics, reported in a
    response header)."""
    fast_parse.install(client)
    dynamo_http.install(client)
    write_tokens.install(client)
    if not getattr(client, "_glue_counted", False):
        client.meta.events.register("before-send.dynamodb", metrics.count_request, unique_id="glue-count-requests")
        client._glue_counted = True


def connection() -> Connection:
    """One low-level connection per process, for transactions spanning several models."""
    global _connection
    if _connection is None:
        _connection = Connection(host=ENDPOINT, region=REGION, connect_timeout_seconds=5,
                                 read_timeout_seconds=15, max_retry_attempts=3, **_DDB_CREDENTIALS)
    instrument(_connection.client)
    return _connection


def table_connection(model: Any) -> TableConnection:
    """A low-level connection to ``model``'s table (one per table and process), for the raw
    reads that skip model objects. It is told the table's key schema from the model's declared
    attributes, so it never asks DynamoDB (DescribeTable); its reads go through ``fast_parse``."""
    name = model.Meta.table_name
    table = _table_connections.get(name)
    if table is None:
        key_schema, definitions = [], []
        for attribute in model.get_attributes().values():
            if attribute.is_hash_key or attribute.is_range_key:
                key_schema.append({"AttributeName": attribute.attr_name,
                                   "KeyType": "HASH" if attribute.is_hash_key else "RANGE"})
                definitions.append({"AttributeName": attribute.attr_name, "AttributeType": attribute.attr_type})
        meta = MetaTable({"TableName": name, "KeySchema": key_schema, "AttributeDefinitions": definitions})
        table = TableConnection(name, region=REGION, host=ENDPOINT, connect_timeout_seconds=BaseMeta.connect_timeout_seconds,
                                read_timeout_seconds=BaseMeta.read_timeout_seconds,
                                max_retry_attempts=BaseMeta.max_retry_attempts, meta_table=meta,
                                **_DDB_CREDENTIALS)
        _table_connections[name] = table
    instrument(table.connection.client)
    return table
