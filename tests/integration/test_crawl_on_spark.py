"""A crawl handed to Spark (issue #51): the local server's crawl worker, with GLUE_CRAWL_SPARK_FILES
set low, runs ``spark-submit pipelines/crawl/spark_driver.py`` (pyspark's, local[2]) on a lake in
moto's S3 server; the tables, columns, partition keys and partitions are those the in-process
crawl (``run_crawl`` called here) writes of the same lake. StopCrawler during the Spark crawl ends
it CANCELLED, the driver killed and its private files gone; a driver that fails (here spark-submit
refusing its master) ends it FAILED with one line. Without pyspark the worker crawls the
large crawl itself and the run's summary says so. Spark's start-up is 10-20 s a run, so the
module is ``slow``.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import boto3
import pyarrow as pa
import pytest

from infra.local.stack import REGION, client
from pipelines.crawl import run_crawl
from pipelines.crawl_worker import principal_key
from tests.integration.conftest import random_account
from tests.integration.test_crawl_start_to_tables import BUCKET, parquet, s3, s3_endpoint  # noqa: F401 - fixture
from tests.integration.test_crawlers import ready, wait_for

pytestmark = pytest.mark.slow

ROLE = "arn:aws:iam::123456789012:role/CrawlRole"


def _lake(endpoint: str) -> str:
    bucket = s3(endpoint)
    root = f"spark-lake-{uuid.uuid4().hex[:8]}"
    sales = {"id": pa.array([1, 2], pa.int64()), "amount": [1.5, 2.5], "item": ["a", "b"]}
    for month in ("01", "02", "03"):
        bucket.put_object(Bucket=BUCKET, Key=f"{root}/sales/year=2024/month={month}/part-0.parquet",
                          Body=parquet(sales))
    bucket.put_object(Bucket=BUCKET, Key=f"{root}/sales/year=2024/month=02/README.txt", Body=b"not data\n")
    bucket.put_object(Bucket=BUCKET, Key=f"{root}/people/people.csv", Body=b"id,name\n1,alice\n2,bob\n")
    for day in ("a", "b"):
        bucket.put_object(Bucket=BUCKET, Key=f"{root}/events/{day}/e.json", Body=b'{"k": 1, "v": "x"}\n')
    return root


def _catalog(glue: Any, database: str) -> dict[str, Any]:
    """What a crawl wrote, without what differs between two crawls (times, versions, database)."""
    out = {}
    for table in glue.get_tables(DatabaseName=database)["TableList"]:
        sd = table["StorageDescriptor"]
        params = {k: v for k, v in table.get("Parameters", {}).items()}
        partitions = sorted((p["Values"], p["StorageDescriptor"]["Location"], p["StorageDescriptor"]["Columns"])
                            for p in glue.get_partitions(DatabaseName=database, TableName=table["Name"])["Partitions"])
        out[table["Name"]] = {"columns": sd["Columns"], "location": sd["Location"], "keys": table["PartitionKeys"],
                              "format": (sd.get("InputFormat"), sd.get("SerdeInfo")), "parameters": params,
                              "partitions": partitions}
    return out


def test_a_large_crawl_goes_to_spark_and_writes_what_the_in_process_crawl_writes(
        start_server: Any, s3_endpoint: str, tmp_path: Path) -> None:  # noqa: F811
    root = _lake(s3_endpoint)
    account = random_account()
    server = start_server(AWS_ENDPOINT_URL_S3=s3_endpoint, GLUE_CRAWL_QUEUE=f"q-{uuid.uuid4().hex}",
                          GLUE_CRAWL_HEARTBEAT_SECONDS="0.5", GLUE_CRAWL_SPARK_FILES="3",
                          GLUE_CRAWL_SPARK_MASTER="local[2]", GLUE_LOCAL_DATA_DIR=str(tmp_path))
    glue = client(server.endpoint, "glue", account=account)
    for database in ("on_spark", "in_process"):
        glue.create_database(DatabaseInput={"Name": database})
    glue.create_crawler(Name="big", Role=ROLE, DatabaseName="on_spark",
                        Targets={"S3Targets": [{"Path": f"s3://{BUCKET}/{root}/"}]})

    # The in-process crawl of the same lake: run_crawl here, as the crawler's role, into another database.
    definition = {**glue.get_crawler(Name="big")["Crawler"], "DatabaseName": "in_process"}
    as_role = boto3.session.Session(aws_access_key_id=principal_key(account, ROLE), aws_secret_access_key="crawler",
                                    region_name=REGION).client("glue", endpoint_url=server.endpoint)
    here = run_crawl(definition, classifiers=[], glue=as_role, s3=s3(s3_endpoint), should_stop=lambda: False,
                     progress=lambda _: None)
    assert here["TablesCreated"] == 3, here

    glue.start_crawler(Name="big")
    crawler = wait_for(ready(glue, "big"), timeout=300, every=1.0)
    assert crawler["LastCrawl"]["Status"] == "SUCCEEDED", crawler["LastCrawl"]
    [run] = glue.list_crawls(CrawlerName="big")["Crawls"]
    summary = json.loads(run["Summary"])
    assert summary["Runner"] == "spark", summary
    assert any("crawled on Spark" in line for line in summary["Log"]), summary["Log"]
    assert summary["FilesSkipped"] == json.loads(here["Summary"])["FilesSkipped"] == 1
    [metrics] = glue.get_crawler_metrics(CrawlerNameList=["big"])["CrawlerMetricsList"]
    assert metrics["TablesCreated"] == 3

    on_spark, in_process = _catalog(glue, "on_spark"), _catalog(glue, "in_process")
    assert set(on_spark) == {"sales", "people", "events"}, sorted(on_spark)
    assert on_spark == in_process
    assert [k["Name"] for k in on_spark["sales"]["keys"]] == ["year", "month"]
    assert [p[0] for p in on_spark["sales"]["partitions"]] == [["2024", "01"], ["2024", "02"], ["2024", "03"]]
    assert list((tmp_path / "crawl-spark").iterdir()) == []  # the spec (with the key's secret) is gone

    # StopCrawler while the Spark driver runs: CANCELLED, the driver killed, its files removed.
    glue.create_crawler(Name="stopped", Role=ROLE, DatabaseName="on_spark", TablePrefix="s_",
                        Targets={"S3Targets": [{"Path": f"s3://{BUCKET}/{root}/"}]})
    glue.start_crawler(Name="stopped")
    wait_for(lambda: any((tmp_path / "crawl-spark").iterdir()), timeout=60)  # the driver is starting
    glue.stop_crawler(Name="stopped")
    crawler = wait_for(ready(glue, "stopped"), timeout=120, every=0.5)
    assert crawler["LastCrawl"]["Status"] == "CANCELLED", crawler["LastCrawl"]
    [run] = glue.list_crawls(CrawlerName="stopped")["Crawls"]
    assert run["State"] == "STOPPED"
    assert json.loads(run["Summary"])["Runner"] == "spark"
    assert list((tmp_path / "crawl-spark").iterdir()) == []


def test_without_pyspark_the_worker_crawls_a_large_crawl_itself_and_says_so(
        start_server: Any, s3_endpoint: str, tmp_path: Path) -> None:  # noqa: F811
    # A pyspark without its bin/spark-submit first on the server's path: as if none were installed
    # (``make run`` installs only the server). No Spark starts here.
    shadow = tmp_path / "shadow" / "pyspark"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    root = _lake(s3_endpoint)
    server = start_server(AWS_ENDPOINT_URL_S3=s3_endpoint, GLUE_CRAWL_QUEUE=f"q-{uuid.uuid4().hex}",
                          GLUE_CRAWL_HEARTBEAT_SECONDS="0.5", GLUE_CRAWL_SPARK_FILES="3",
                          PYTHONPATH=str(shadow.parent), GLUE_LOCAL_DATA_DIR=str(tmp_path))
    glue = client(server.endpoint, "glue", account=random_account())
    glue.create_database(DatabaseInput={"Name": "lake"})
    glue.create_crawler(Name="big", Role=ROLE, DatabaseName="lake",
                        Targets={"S3Targets": [{"Path": f"s3://{BUCKET}/{root}/"}]})
    glue.start_crawler(Name="big")
    crawler = wait_for(ready(glue, "big"), timeout=120)
    assert crawler["LastCrawl"]["Status"] == "SUCCEEDED", crawler["LastCrawl"]
    [run] = glue.list_crawls(CrawlerName="big")["Crawls"]
    summary = json.loads(run["Summary"])
    assert summary["Runner"] == "worker"
    assert "pyspark is not installed" in summary["Log"][0] and "crawled by the worker" in summary["Log"][0]
    assert {t["Name"] for t in glue.get_tables(DatabaseName="lake")["TableList"]} == {"sales", "people", "events"}
    assert not (tmp_path / "crawl-spark").exists()  # no driver was started


def test_a_failing_spark_driver_ends_the_run_failed_with_its_one_line_message(
        start_server: Any, s3_endpoint: str, tmp_path: Path) -> None:  # noqa: F811
    root = _lake(s3_endpoint)
    server = start_server(AWS_ENDPOINT_URL_S3=s3_endpoint, GLUE_CRAWL_QUEUE=f"q-{uuid.uuid4().hex}",
                          GLUE_CRAWL_HEARTBEAT_SECONDS="0.5", GLUE_CRAWL_SPARK_FILES="3",
                          GLUE_CRAWL_SPARK_MASTER="bogus://nowhere", GLUE_LOCAL_DATA_DIR=str(tmp_path))
    glue = client(server.endpoint, "glue", account=random_account())
    glue.create_database(DatabaseInput={"Name": "lake"})
    glue.create_crawler(Name="big", Role=ROLE, DatabaseName="lake",
                        Targets={"S3Targets": [{"Path": f"s3://{BUCKET}/{root}/"}]})
    glue.start_crawler(Name="big")
    crawler = wait_for(ready(glue, "big"), timeout=120, every=0.5)
    assert crawler["LastCrawl"]["Status"] == "FAILED", crawler["LastCrawl"]
    message = crawler["LastCrawl"]["ErrorMessage"]
    assert message.startswith("The Spark driver exited with status 1: "), message
    assert "Master must either be yarn or start with spark, k8s, or local" in message and "\n" not in message
    assert glue.get_tables(DatabaseName="lake")["TableList"] == []  # nothing written
    assert list((tmp_path / "crawl-spark").iterdir()) == []
