"""Fixtures for the Spark pipeline tests: one local SparkSession per test module (``local[2]``,
two shuffle partitions) driving the session's running service through ``pipelines``.

Every test module here is marked ``slow`` (``make test`` runs them; ``-m "not slow"`` skips them).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Iterator

import pytest

if not os.environ.get("CI"):  # in CI a missing pyspark must fail, not skip
    pytest.importorskip("pyspark", reason="pipelines/requirements.txt is not installed (make test installs it)")

from infra.local.stack import DEFAULT_ACCESS_KEY, REGION  # noqa: E402
from pipelines import sample  # noqa: E402
from pipelines.catalog import CatalogConfig  # noqa: E402

# The pipelines take credentials from the environment, on the driver and on the executors,
# like on a cluster; these match the ``glue`` fixture's account.
CREDENTIALS = {"AWS_ACCESS_KEY_ID": DEFAULT_ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": REGION}


@pytest.fixture(scope="module")
def spark() -> Iterator["object"]:
    """A local SparkSession for the module (the JVM itself lives for the whole run)."""
    from pyspark.sql import SparkSession
    with pytest.MonkeyPatch.context() as patch:
        for key, value in CREDENTIALS.items():
            patch.setenv(key, value)
        patch.delenv("AWS_PROFILE", raising=False)
        builder = (SparkSession.builder.master("local[2]").appName("pipelines-tests")
                   .config("spark.ui.enabled", "false")
                   .config("spark.ui.showConsoleProgress", "false")
                   .config("spark.driver.host", "127.0.0.1")
                   .config("spark.sql.shuffle.partitions", "2")
                   .config("spark.default.parallelism", "2"))
        for key, value in CREDENTIALS.items():
            builder = builder.config(f"spark.executorEnv.{key}", value)
        session = builder.getOrCreate()
        session.sparkContext.setLogLevel("ERROR")
        yield session
        session.stop()


@pytest.fixture(scope="session")
def config(endpoint: str) -> CatalogConfig:
    """Where the pipelines find the catalog: the session's service."""
    return CatalogConfig(glue_endpoint=endpoint, lakeformation_endpoint=endpoint, region=REGION)


@pytest.fixture
def database(glue) -> str:
    """A fresh database for the test."""
    name = f"pl_{uuid.uuid4().hex[:10]}"
    glue.create_database(DatabaseInput={"Name": name})
    return name


@pytest.fixture(scope="module")
def sales(tmp_path_factory: pytest.TempPathFactory) -> sample.SampleDataset:
    """A small sample dataset (2 countries x 2 years x 3 months, all three formats)."""
    out = tmp_path_factory.mktemp("sample")
    return sample.generate(str(out), countries=("US", "FR"), years=(2023, 2024), months=range(1, 4),
                           rows_per_file=(15, 40))


def copy_tree(src: str, dst: Path) -> str:
    """A private copy of a dataset a test may change."""
    import shutil
    shutil.copytree(src, dst)
    return str(dst)
