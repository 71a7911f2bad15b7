"""Fixtures shared by the integration tests: fresh catalogs and databases per test.

The session-wide servers (DynamoDB Local + the service) come from tests/conftest.py; tests keep
out of each other's way by working in a catalog of their own (a random 12-digit access key is
its own account) or a uniquely named database.
"""

from __future__ import annotations

import random
import uuid
from typing import Callable

import boto3
import pytest
from botocore.config import Config

NO_RETRY = Config(retries={"max_attempts": 1, "mode": "standard"}, read_timeout=60)


@pytest.fixture
def make_client(endpoint: str) -> Callable[..., object]:
    """Build a boto3 client for ``service`` as account ``account`` in ``region``."""

    def build(service: str = "glue", account: str | None = None, region: str = "us-east-1"):
        access_key = account or "".join(random.choices("0123456789", k=12))
        return boto3.client(service, endpoint_url=endpoint, region_name=region,
                            aws_access_key_id=access_key, aws_secret_access_key="secret",
                            config=NO_RETRY)

    return build


@pytest.fixture
def fresh_glue(make_client):
    """A Glue client in an account nobody else uses: an empty catalog."""
    return make_client("glue")


@pytest.fixture
def db(glue) -> str:
    """A fresh database name, created for the test."""
    name = f"db_{uuid.uuid4().hex[:12]}"
    glue.create_database(DatabaseInput={"Name": name})
    return name


def columns(*names: str, kind: str = "string") -> list[dict]:
    """Column definitions for a StorageDescriptor."""
    return [{"Name": n, "Type": kind} for n in names]


def table_input(name: str, **extra) -> dict:
    """A minimal but realistic TableInput."""
    base = {
        "Name": name,
        "StorageDescriptor": {"Columns": columns("id", "value"), "Location": f"s3://bucket/{name}/"},
        "PartitionKeys": [{"Name": "year", "Type": "int"}],
        "TableType": "EXTERNAL_TABLE",
    }
    base.update(extra)
    return base
