"""Fixtures shared by the integration tests: fresh catalogs and databases per test.

The session-wide servers and clients (``glue``, ``make_client``) come from tests/conftest.py; tests keep
out of each other's way by working in a catalog of their own (a random 12-digit access key is
its own account) or a uniquely named database.
"""

from __future__ import annotations

import random
import uuid
from typing import Iterator

import pytest

from infra.local.stack import CatalogStack


def random_account() -> str:
    """A 12-digit account id nobody else uses (the service takes it from the access key)."""
    return "".join(random.choices("0123456789", k=12))


@pytest.fixture
def account() -> str:
    """The test's own 12-digit account id (``fresh_glue``'s), for the ARNs a test builds."""
    return random_account()


@pytest.fixture
def fresh_glue(make_client, account):
    """A Glue client in an account nobody else uses (``account``): an empty catalog."""
    return make_client("glue", account=account)


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


@pytest.fixture(scope="module")
def spent(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CatalogStack]:
    """A stack of the requesting module's own whose work budget is spent at once (0 s) and with
    no background cleaner: what a budgeted call leaves for later stays to be seen, until the test
    runs the scheduled cleaner's code itself."""
    env = {"GLUE_CLEANUP_THREAD": "0", "GLUE_WORK_BUDGET_SECONDS": "0"}
    logs = tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1] + "-logs")
    with CatalogStack(log_dir=logs, server_env=env) as stack:
        yield stack
