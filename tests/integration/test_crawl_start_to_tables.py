"""StartCrawler to tables, the whole way: CreateCrawler on a lake in moto's S3 server, StartCrawler,
the server's own crawl worker running the real engine (``pipelines.crawl``), and the tables,
columns, partition keys and partitions read back through boto3, then a re-crawl after a new
partition and a new column. The pieces are tested alone in test_crawlers.py (a stub engine) and
test_crawl_engine.py (``run_crawl`` called directly); this is what a user does.
"""

from __future__ import annotations

import io
import uuid
from pathlib import Path
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.integration.moto_s3 import moto_s3, s3_client
from infra.local.stack import client
from tests.integration.conftest import random_account
from tests.integration.test_crawlers import ready, wait_for

BUCKET = "crawl-e2e"
VENV_BIN = Path(__file__).resolve().parents[2] / ".venv" / "bin"


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """moto's S3 server holding the lake bucket."""
    with moto_s3(tmp_path_factory.mktemp("moto-e2e"), BUCKET) as url:
        yield url


def s3(endpoint: str) -> Any:
    return s3_client(endpoint)


def parquet(rows: dict[str, list]) -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.table(rows), out)
    return out.getvalue()


def test_start_crawler_turns_a_lake_into_tables_and_partitions(start_server: Any, s3_endpoint: str) -> None:
    bucket = s3(s3_endpoint)
    root = f"lake-{uuid.uuid4().hex[:8]}"
    sales = {"id": pa.array([1, 2], pa.int64()), "amount": [1.5, 2.5], "item": ["a", "b"], "shop": ["s", "t"]}
    for month in ("01", "02"):
        bucket.put_object(Bucket=BUCKET, Key=f"{root}/sales/year=2024/month={month}/part-0.parquet",
                          Body=parquet(sales))
    bucket.put_object(Bucket=BUCKET, Key=f"{root}/sales/year=2024/month=02/README.txt", Body=b"not data\n")
    bucket.put_object(Bucket=BUCKET, Key=f"{root}/people/people.csv", Body=b"id,name\n1,alice\n2,bob\n")

    server = start_server(AWS_ENDPOINT_URL_S3=s3_endpoint, GLUE_CRAWL_QUEUE=f"q-{uuid.uuid4().hex}",
                          GLUE_CRAWL_HEARTBEAT_SECONDS="0.5")
    glue = client(server.endpoint, "glue", account=random_account())
    glue.create_database(DatabaseInput={"Name": "lake"})
    glue.create_crawler(Name="lake-crawler", Role="arn:aws:iam::123456789012:role/CrawlRole",
                        DatabaseName="lake", Targets={"S3Targets": [{"Path": f"s3://{BUCKET}/{root}/"}]})
    glue.start_crawler(Name="lake-crawler")
    crawler = wait_for(ready(glue, "lake-crawler"), timeout=120)
    assert crawler["LastCrawl"]["Status"] == "SUCCEEDED", crawler["LastCrawl"]

    tables = {t["Name"]: t for t in glue.get_tables(DatabaseName="lake")["TableList"]}
    assert set(tables) == {"sales", "people"}, sorted(tables)
    sales_table = tables["sales"]
    assert [k["Name"] for k in sales_table["PartitionKeys"]] == ["year", "month"]
    assert {c["Name"]: c["Type"] for c in sales_table["StorageDescriptor"]["Columns"]} == {
        "id": "bigint", "amount": "double", "item": "string", "shop": "string"}
    assert sales_table["Parameters"]["classification"] == "parquet"
    assert tables["people"]["Parameters"]["classification"] == "csv"
    values = sorted(p["Values"] for p in glue.get_partitions(DatabaseName="lake", TableName="sales")["Partitions"])
    assert values == [["2024", "01"], ["2024", "02"]]
    [metrics] = glue.get_crawler_metrics(CrawlerNameList=["lake-crawler"])["CrawlerMetricsList"]
    assert metrics["TablesCreated"] == 2

    # A new partition with a new column: the default policy (UPDATE_IN_DATABASE) takes both (4 of
    # its 5 columns are the table's: similar enough, by the engine's 70 % rule, to be a partition).
    wider = {**sales, "note": ["x", "y"]}
    bucket.put_object(Bucket=BUCKET, Key=f"{root}/sales/year=2024/month=03/part-0.parquet", Body=parquet(wider))
    glue.start_crawler(Name="lake-crawler")
    wait_for(lambda: len(glue.list_crawls(CrawlerName="lake-crawler")["Crawls"]) == 2
             and glue.get_crawler(Name="lake-crawler")["Crawler"]["State"] == "READY", timeout=120)
    assert glue.get_crawler(Name="lake-crawler")["Crawler"]["LastCrawl"]["Status"] == "SUCCEEDED"
    values = sorted(p["Values"] for p in glue.get_partitions(DatabaseName="lake", TableName="sales")["Partitions"])
    assert values == [["2024", "01"], ["2024", "02"], ["2024", "03"]]
    columns = [c["Name"] for c in glue.get_table(DatabaseName="lake", Name="sales")["Table"]["StorageDescriptor"]["Columns"]]
    assert "note" in columns, columns
