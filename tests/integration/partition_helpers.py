"""Helpers shared by the partition, expression and partition-index integration tests."""

from __future__ import annotations

from typing import Any, Iterable, Sequence
from urllib.parse import quote

from tests.integration.conftest import columns


def partitioned_table(name: str, keys: Sequence[tuple[str, str]], **extra: Any) -> dict:
    """A TableInput partitioned by ``keys`` ((name, type) pairs)."""
    base = {
        "Name": name,
        "StorageDescriptor": {"Columns": columns("id", "value"), "Location": f"s3://bucket/{name}/"},
        "PartitionKeys": [{"Name": n, "Type": t} for n, t in keys],
        "TableType": "EXTERNAL_TABLE",
    }
    base.update(extra)
    return base


def partition_input(values: Sequence[str], **extra: Any) -> dict:
    """A PartitionInput with a StorageDescriptor (columns and a location derived from the values)."""
    base = {
        "Values": list(values),
        "StorageDescriptor": {
            "Columns": columns("id", "value"),
            "Location": "s3://bucket/" + "/".join(quote(v, safe="") for v in values)[:500] + "/",
        },
    }
    base.update(extra)
    return base


def create_partitions(glue: Any, db: str, table: str, value_lists: Iterable[Sequence[str]]) -> None:
    """BatchCreatePartition in chunks of 100; fails the test on any per-partition error."""
    pending = [list(v) for v in value_lists]
    for start in range(0, len(pending), 100):
        chunk = pending[start:start + 100]
        errors = glue.batch_create_partition(
            DatabaseName=db, TableName=table,
            PartitionInputList=[partition_input(v) for v in chunk])["Errors"]
        assert errors == [], errors


def all_partitions(glue: Any, db: str, table: str, page_size: int | None = None, **kwargs: Any) -> list[dict]:
    """Every partition GetPartitions returns, through boto3's paginator."""
    config = {"PageSize": page_size} if page_size else {}
    pages = glue.get_paginator("get_partitions").paginate(
        DatabaseName=db, TableName=table, PaginationConfig=config, **kwargs)
    return [p for page in pages for p in page["Partitions"]]


def value_tuples(partitions: Iterable[dict]) -> list[tuple[str, ...]]:
    """The partitions' Values as tuples (a list: duplicates stay visible)."""
    return [tuple(p["Values"]) for p in partitions]


def items_read(response: dict) -> int:
    """DynamoDB items the request read, from the ``x-glue-items-read`` response header."""
    return int(response["ResponseMetadata"]["HTTPHeaders"]["x-glue-items-read"])


def error_code(excinfo: Any) -> str:
    """The AWS error code of a botocore ClientError caught by pytest.raises."""
    return excinfo.value.response["Error"]["Code"]


def unvalidated_glue(endpoint: str) -> Any:
    """A Glue client that skips botocore's own parameter checks (minimums), so requests the
    service must refuse itself reach it."""
    import boto3
    from botocore.config import Config

    from infra.local.stack import CLIENT_CONFIG, DEFAULT_ACCESS_KEY, REGION

    return boto3.client("glue", endpoint_url=endpoint, region_name=REGION,
                        aws_access_key_id=DEFAULT_ACCESS_KEY, aws_secret_access_key="testing",
                        config=CLIENT_CONFIG.merge(Config(parameter_validation=False)))
