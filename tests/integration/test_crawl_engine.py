"""The crawl engine (``pipelines.crawl.run_crawl``) over HTTP: a lake on moto's S3 server (a local
port) crawled into the running service through a boto3 Glue client, the way the crawler worker
calls it. Files are pyarrow-written Parquet, CSV with and without a header, JSON lines, in Hive
``k=v`` and unnamed partition folders, beside a stray text file, ``_SUCCESS`` and an excluded path;
re-crawls after a new column and a new partition under each SchemaChangePolicy and RecrawlPolicy.
"""

from __future__ import annotations

import io
import json
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.integration.moto_s3 import moto_s3, s3_client
from infra.local.stack import REGION
from pipelines.crawl import CrawlFailed, run_crawl

BUCKET = "crawl-lake"
VENV_BIN = Path(__file__).resolve().parents[2] / ".venv" / "bin"


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """moto's S3 server with the lake bucket."""
    with moto_s3(tmp_path_factory.mktemp("moto"), BUCKET) as url:
        yield s3_client(url)


def parquet(rows: dict[str, list]) -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.table(rows), out)
    return out.getvalue()


def put(s3: Any, key: str, body: bytes | str) -> None:
    s3.put_object(Bucket=BUCKET, Key=key, Body=body.encode() if isinstance(body, str) else body)


def build_lake(s3: Any, root: str) -> None:
    sales = {"id": pa.array([1, 2, 3], pa.int64()), "amount": [1.5, 2.5, 3.0], "name": ["a", "b", "c"]}
    put(s3, f"{root}/sales/year=2024/month=01/part-0.parquet", parquet(sales))
    put(s3, f"{root}/sales/year=2024/month=02/part-0.parquet", parquet(sales))
    put(s3, f"{root}/sales/year=2024/month=02/README.txt", "Exported by the nightly job.\nDo not edit.\n")
    put(s3, f"{root}/sales/_SUCCESS", "")
    events = "\n".join(json.dumps({"event": f"e{i}", "count": i, "ok": i % 2 == 0}) for i in range(5)) + "\n"
    put(s3, f"{root}/events/2024/01/events.json", events)
    put(s3, f"{root}/events/2024/02/events.json", events)
    put(s3, f"{root}/people_h/people.csv", "id,name,score\n1,alice,3.5\n2,bob,4.0\n3,carol,5\n")
    put(s3, f"{root}/people_n/people.csv", "1,alice,3.5\n2,bob,4.0\n3,carol,5\n")
    put(s3, f"{root}/tmp/scratch.parquet", parquet({"x": [1]}))
    put(s3, f"{root}/notes.txt", "A lake for the crawler tests.\nNothing else here.\n")


def crawler(root: str, database: str, **extra: Any) -> dict[str, Any]:
    return {"Name": f"crawler-{database}", "Role": "arn:aws:iam::123456789012:role/crawler",
            "DatabaseName": database,
            "Targets": {"S3Targets": [{"Path": f"s3://{BUCKET}/{root}", "Exclusions": ["tmp/**"]}]},
            "SchemaChangePolicy": {"UpdateBehavior": "UPDATE_IN_DATABASE", "DeleteBehavior": "DEPRECATE_IN_DATABASE"},
            "RecrawlPolicy": {"RecrawlBehavior": "CRAWL_EVERYTHING"}, **extra}


def crawl(definition: dict[str, Any], glue: Any, s3: Any, classifiers: list | None = None,
          should_stop: Callable[[], bool] = lambda: False) -> dict[str, Any]:
    reports: list[dict] = []
    result = run_crawl(definition, classifiers=classifiers or [], glue=glue, s3=s3,
                       should_stop=should_stop, progress=reports.append)
    assert reports and set(reports[-1]) == {"TablesCreated", "TablesUpdated", "TablesDeleted",
                                            "PartitionsCreated", "TimeLeftSeconds"}
    return result


def columns(table: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["Name"], c["Type"]) for c in table["StorageDescriptor"]["Columns"]]


def partition_values(glue: Any, database: str, table: str) -> list[list[str]]:
    pages = glue.get_paginator("get_partitions").paginate(DatabaseName=database, TableName=table)
    return sorted(p["Values"] for page in pages for p in page["Partitions"])


@pytest.fixture
def lake(s3: Any, glue: Any) -> tuple[str, str]:
    root = f"lake-{uuid.uuid4().hex[:8]}"
    build_lake(s3, root)
    return root, f"crawl_{uuid.uuid4().hex[:8]}"


def test_first_crawl_finds_tables_columns_keys_and_partitions(lake: tuple[str, str], glue: Any, s3: Any) -> None:
    root, database = lake
    result = crawl(crawler(root, database, TablePrefix="t_"), glue, s3)
    assert result["Cancelled"] is False
    assert result["TablesCreated"] == 4 and result["PartitionsCreated"] == 4
    assert result["FilesSkipped"] == 2  # the two text files; _SUCCESS is not data, tmp/ is excluded
    names = sorted(t["Name"] for t in glue.get_tables(DatabaseName=database)["TableList"])
    assert names == ["t_events", "t_people_h", "t_people_n", "t_sales"]

    sales = glue.get_table(DatabaseName=database, Name="t_sales")["Table"]
    assert columns(sales) == [("id", "bigint"), ("amount", "double"), ("name", "string")]
    assert [(k["Name"], k["Type"]) for k in sales["PartitionKeys"]] == [("year", "string"), ("month", "string")]
    sd = sales["StorageDescriptor"]
    assert sd["Location"] == f"s3://{BUCKET}/{root}/sales/"
    assert sd["SerdeInfo"]["SerializationLibrary"] == "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
    assert sd["InputFormat"] == "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
    params = sales["Parameters"]
    assert params["classification"] == "parquet" and params["typeOfData"] == "file"
    assert params["UPDATED_BY_CRAWLER"] == f"crawler-{database}"
    assert params["objectCount"] == "3"  # README.txt counts as an object of the folder, not as data
    assert params["recordCount"] == "6" and params["CrawlerSchemaSerializerVersion"] == "1.0"
    assert partition_values(glue, database, "t_sales") == [["2024", "01"], ["2024", "02"]]
    part = glue.get_partition(DatabaseName=database, TableName="t_sales", PartitionValues=["2024", "02"])["Partition"]
    assert part["StorageDescriptor"]["Location"] == f"s3://{BUCKET}/{root}/sales/year=2024/month=02/"
    indexes = glue.get_partition_indexes(DatabaseName=database, TableName="t_sales")["PartitionIndexDescriptorList"]
    assert [[k["Name"] for k in i["Keys"]] for i in indexes] == [["year", "month"]]

    events = glue.get_table(DatabaseName=database, Name="t_events")["Table"]
    assert [k["Name"] for k in events["PartitionKeys"]] == ["partition_0", "partition_1"]
    assert columns(events) == [("event", "string"), ("count", "int"), ("ok", "boolean")]
    assert events["StorageDescriptor"]["SerdeInfo"]["SerializationLibrary"] == "org.openx.data.jsonserde.JsonSerDe"
    assert partition_values(glue, database, "t_events") == [["2024", "01"], ["2024", "02"]]

    with_header = glue.get_table(DatabaseName=database, Name="t_people_h")["Table"]
    assert columns(with_header) == [("id", "bigint"), ("name", "string"), ("score", "double")]
    assert with_header["Parameters"]["skip.header.line.count"] == "1"
    assert with_header["Parameters"]["delimiter"] == ","
    assert with_header["Parameters"]["areColumnsQuoted"] == "false"
    assert with_header["PartitionKeys"] == []
    without = glue.get_table(DatabaseName=database, Name="t_people_n")["Table"]
    assert columns(without) == [("col0", "bigint"), ("col1", "string"), ("col2", "double")]
    assert "skip.header.line.count" not in without["Parameters"]
    assert without["StorageDescriptor"]["SerdeInfo"]["Parameters"] == {"field.delim": ","}
    summary = json.loads(result["Summary"])
    assert summary["Seconds"]["catalog_writes"] > 0


def test_recrawl_new_column_and_partition_under_each_policy(lake: tuple[str, str], glue: Any, s3: Any) -> None:
    root, database = lake
    crawl(crawler(root, database), glue, s3)
    put(s3, f"{root}/sales/year=2024/month=03/part-0.parquet",
        parquet({"id": pa.array([4], pa.int64()), "amount": [4.5], "name": ["d"], "discount": [0.1]}))

    # LOG: the new partition is added, the table keeps its columns.
    logged = crawl(crawler(root, database, SchemaChangePolicy={"UpdateBehavior": "LOG", "DeleteBehavior": "LOG"}),
                   glue, s3)
    assert logged["PartitionsCreated"] == 1 and logged["TablesUpdated"] == 0 and logged["TablesCreated"] == 0
    assert [c for c, _ in columns(glue.get_table(DatabaseName=database, Name="sales")["Table"])] == \
        ["id", "amount", "name"]
    new = glue.get_partition(DatabaseName=database, TableName="sales", PartitionValues=["2024", "03"])["Partition"]
    assert [c["Name"] for c in new["StorageDescriptor"]["Columns"]] == ["id", "amount", "name", "discount"]

    # UPDATE_IN_DATABASE: the table gets the new column; nothing else changes.
    updated = crawl(crawler(root, database), glue, s3)
    assert updated["TablesUpdated"] == 1 and updated["PartitionsCreated"] == 0 and updated["TablesCreated"] == 0
    assert columns(glue.get_table(DatabaseName=database, Name="sales")["Table"])[-1] == ("discount", "double")
    again = crawl(crawler(root, database), glue, s3)
    assert again["TablesUpdated"] == 0 and again["PartitionsCreated"] == 0  # nothing changed: nothing written

    # CRAWL_NEW_FOLDERS_ONLY: only the new folder is read.
    put(s3, f"{root}/sales/year=2024/month=04/part-0.parquet",
        parquet({"id": pa.array([5], pa.int64()), "amount": [5.5], "name": ["e"], "discount": [0.2]}))
    incremental = crawl(crawler(root, database, RecrawlPolicy={"RecrawlBehavior": "CRAWL_NEW_FOLDERS_ONLY"},
                                SchemaChangePolicy={"UpdateBehavior": "LOG", "DeleteBehavior": "LOG"}), glue, s3)
    assert incremental["PartitionsCreated"] == 1 and incremental["TablesCreated"] == 0
    assert json.loads(incremental["Summary"])["FilesRead"] == 1
    assert ["2024", "04"] in partition_values(glue, database, "sales")


def test_inherit_from_table(lake: tuple[str, str], glue: Any, s3: Any) -> None:
    root, database = lake
    config = json.dumps({"Version": 1.0, "CrawlerOutput": {"Partitions": {"AddOrUpdateBehavior": "InheritFromTable"}},
                         "CreatePartitionIndex": False})
    crawl(crawler(root, database, Configuration=config), glue, s3)
    put(s3, f"{root}/sales/year=2024/month=03/part-0.parquet",
        parquet({"id": pa.array([4], pa.int64()), "amount": [4.5], "name": ["d"], "discount": [0.1]}))
    crawl(crawler(root, database, Configuration=config), glue, s3)
    table = glue.get_table(DatabaseName=database, Name="sales")["Table"]
    for values in partition_values(glue, database, "sales"):
        part = glue.get_partition(DatabaseName=database, TableName="sales", PartitionValues=values)["Partition"]
        assert part["StorageDescriptor"]["Columns"] == table["StorageDescriptor"]["Columns"]
    assert glue.get_partition_indexes(DatabaseName=database, TableName="sales")["PartitionIndexDescriptorList"] == []


@pytest.mark.parametrize("behavior", ["DELETE_FROM_DATABASE", "DEPRECATE_IN_DATABASE", "LOG"])
def test_gone_folders_under_each_delete_behavior(lake: tuple[str, str], glue: Any, s3: Any, behavior: str) -> None:
    root, database = lake
    crawl(crawler(root, database), glue, s3)
    s3.delete_object(Bucket=BUCKET, Key=f"{root}/sales/year=2024/month=01/part-0.parquet")
    s3.delete_object(Bucket=BUCKET, Key=f"{root}/people_n/people.csv")
    result = crawl(crawler(root, database, SchemaChangePolicy={"UpdateBehavior": "UPDATE_IN_DATABASE",
                                                               "DeleteBehavior": behavior}), glue, s3)
    names = {t["Name"]: t for t in glue.get_tables(DatabaseName=database)["TableList"]}
    sales_partitions = partition_values(glue, database, "sales")
    if behavior == "DELETE_FROM_DATABASE":
        assert result["TablesDeleted"] == 1 and "people_n" not in names
        assert sales_partitions == [["2024", "02"]]
    else:
        assert result["TablesDeleted"] == 0 and "people_n" in names
        assert sales_partitions == [["2024", "01"], ["2024", "02"]]
        deprecated = "DEPRECATED_BY_CRAWLER" in names["people_n"].get("Parameters", {})
        assert deprecated == (behavior == "DEPRECATE_IN_DATABASE")
        if deprecated:  # epoch milliseconds, as AWS's crawler writes it
            assert abs(int(names["people_n"]["Parameters"]["DEPRECATED_BY_CRAWLER"]) - time.time() * 1000) < 600_000


def test_a_crawl_over_its_table_threshold_fails_having_written_nothing(lake: tuple[str, str], glue: Any,
                                                                       s3: Any) -> None:
    """AWS: "If the tables detected by the crawler during its crawl is greater that this input
    value, the crawl fails and no data is written to the Data Catalog" (the database included)."""
    root, database = lake
    over = json.dumps({"Version": 1.0, "CrawlerOutput": {"Tables": {"TableThreshold": 3}}})
    with pytest.raises(CrawlFailed, match="detected 4 tables, more than its TableThreshold of 3"):
        crawl(crawler(root, database, Configuration=over), glue, s3)
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_database(Name=database)
    enough = json.dumps({"Version": 1.0, "CrawlerOutput": {"Tables": {"TableThreshold": 4}}})
    assert crawl(crawler(root, database, Configuration=enough), glue, s3)["TablesCreated"] == 4


def test_grouping_similar_schemas_and_table_level(s3: Any, glue: Any) -> None:
    root, database = f"grp-{uuid.uuid4().hex[:8]}", f"crawl_{uuid.uuid4().hex[:8]}"
    rows = {"a": [1, 2], "b": ["x", "y"]}
    for folder in ("east", "west"):
        put(s3, f"{root}/regions/{folder}/data.parquet", parquet(rows))
    result = crawl(crawler(root, database), glue, s3)
    # Similar schemas at one level: one table at the include path, the folders its partitions.
    assert result["TablesCreated"] == 1
    table = glue.get_table(DatabaseName=database, Name=root.replace("-", "_"))["Table"]
    assert [k["Name"] for k in table["PartitionKeys"]] == ["partition_0", "partition_1"]
    assert partition_values(glue, database, table["Name"]) == [["regions", "east"], ["regions", "west"]]

    level = json.dumps({"Version": 1.0, "Grouping": {"TableLevelConfiguration": 4}})
    other = f"crawl_{uuid.uuid4().hex[:8]}"
    crawl(crawler(root, other, Configuration=level), glue, s3)  # bucket=1, root=2, regions=3, east=4
    assert sorted(t["Name"] for t in glue.get_tables(DatabaseName=other)["TableList"]) == ["east", "west"]


def test_custom_csv_classifier_and_combine(s3: Any, glue: Any) -> None:
    root, database = f"pipe-{uuid.uuid4().hex[:8]}", f"crawl_{uuid.uuid4().hex[:8]}"
    put(s3, f"{root}/t/a.psv", "alpha|beta\nx|y\nz|w\n")
    custom = [{"CsvClassifier": {"Name": "pipes", "Delimiter": "|", "ContainsHeader": "PRESENT"}}]
    crawl(crawler(root, database, Classifiers=["pipes"]), glue, s3, classifiers=custom)
    table = glue.get_table(DatabaseName=database, Name=root.replace("-", "_"))["Table"]
    assert columns(table) == [("alpha", "string"), ("beta", "string")]
    assert table["Parameters"]["delimiter"] == "|" and table["Parameters"]["skip.header.line.count"] == "1"


def test_cancel_and_unreadable_target(lake: tuple[str, str], glue: Any, s3: Any) -> None:
    root, database = lake
    stopped = crawl(crawler(root, database), glue, s3, should_stop=lambda: True)
    assert stopped["Cancelled"] is True and stopped["TablesCreated"] == 0
    missing = crawler(root, database)
    missing["Targets"] = {"S3Targets": [{"Path": "s3://no-such-bucket-for-crawl/x"}]}
    with pytest.raises(CrawlFailed, match="no-such-bucket-for-crawl"):
        crawl(missing, glue, s3)


def test_sample_size_reads_fewer_files(s3: Any, glue: Any) -> None:
    root, database = f"smp-{uuid.uuid4().hex[:8]}", f"crawl_{uuid.uuid4().hex[:8]}"
    for i in range(5):
        put(s3, f"{root}/t/dt=2024-01-01/part-{i}.parquet", parquet({"a": [i]}))
    definition = crawler(root, database)
    definition["Targets"]["S3Targets"][0]["SampleSize"] = 2
    result = crawl(definition, glue, s3)
    assert json.loads(result["Summary"])["FilesRead"] == 2
    table = glue.get_table(DatabaseName=database, Name=root.replace("-", "_"))["Table"]
    assert table["Parameters"]["objectCount"] == "5"


def test_delta_and_iceberg_targets(s3: Any, glue: Any) -> None:
    root, database = f"fmt-{uuid.uuid4().hex[:8]}", f"crawl_{uuid.uuid4().hex[:8]}"
    schema = {"type": "struct", "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}},
                                           {"name": "day", "type": "string", "nullable": True, "metadata": {}}]}
    put(s3, f"{root}/orders/_delta_log/00000000000000000000.json",
        json.dumps({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}) + "\n"
        + json.dumps({"metaData": {"id": "x", "format": {"provider": "parquet", "options": {}},
                                   "schemaString": json.dumps(schema), "partitionColumns": ["day"]}}) + "\n")
    metadata = {"format-version": 2, "location": f"s3://{BUCKET}/{root}/clicks", "current-schema-id": 0,
                "schemas": [{"schema-id": 0, "type": "struct",
                             "fields": [{"id": 1, "name": "url", "type": "string", "required": False},
                                        {"id": 2, "name": "at", "type": "timestamptz", "required": False}]}]}
    put(s3, f"{root}/clicks/metadata/00001-abc.metadata.json", json.dumps(metadata))
    definition = crawler(root, database)
    definition["Targets"] = {"DeltaTargets": [{"DeltaTables": [f"s3://{BUCKET}/{root}/orders"]}],
                             "IcebergTargets": [{"Paths": [f"s3://{BUCKET}/{root}/clicks"]}]}
    result = crawl(definition, glue, s3)
    assert result["TablesCreated"] == 2
    orders = glue.get_table(DatabaseName=database, Name="orders")["Table"]
    assert columns(orders) == [("id", "bigint")] and orders["PartitionKeys"][0]["Name"] == "day"
    assert orders["Parameters"]["classification"] == "delta"
    clicks = glue.get_table(DatabaseName=database, Name="clicks")["Table"]
    assert clicks["Parameters"]["table_type"] == "ICEBERG"
    assert clicks["Parameters"]["metadata_location"].endswith("00001-abc.metadata.json")
    assert columns(clicks) == [("url", "string"), ("at", "timestamp")]


def test_cli_runs_the_same_engine(s3: Any, glue: Any, endpoint: str, tmp_path: Path, capsys: Any,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from infra.local.stack import DEFAULT_ACCESS_KEY
    from pipelines.crawl.__main__ import main
    root, database = f"cli-{uuid.uuid4().hex[:8]}", f"crawl_{uuid.uuid4().hex[:8]}"
    put(s3, f"{root}/t/k=1/a.parquet", parquet({"a": [1]}))
    definition = tmp_path / "crawler.json"
    definition.write_text(json.dumps(crawler(root, database)))
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", s3.meta.endpoint_url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", DEFAULT_ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    assert main(["--definition", str(definition), "--endpoint-url", endpoint, "--region", REGION]) == 0
    assert json.loads(capsys.readouterr().out)["PartitionsCreated"] == 1
    broken = crawler(root, database)
    broken["Targets"]["S3Targets"][0]["Path"] = "s3://no-such-bucket-for-crawl/x"
    definition.write_text(json.dumps(broken))
    assert main(["--definition", str(definition), "--endpoint-url", endpoint, "--region", REGION]) == 1
    assert "no-such-bucket-for-crawl" in capsys.readouterr().err


def _avro_long(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def avro_file(schema: dict[str, Any]) -> bytes:
    """An Avro object container with no blocks: magic, the metadata map, the sync marker."""
    meta = {"avro.schema": json.dumps(schema).encode(), "avro.codec": b"null"}
    body = b"Obj\x01" + _avro_long(len(meta))
    for key, value in meta.items():
        body += _avro_long(len(key)) + key.encode() + _avro_long(len(value)) + value
    return body + _avro_long(0) + b"\x00" * 16


def test_orc_avro_and_gzip_csv(s3: Any, glue: Any) -> None:
    import gzip

    from pyarrow import orc
    root, database = f"bin-{uuid.uuid4().hex[:8]}", f"crawl_{uuid.uuid4().hex[:8]}"
    out = io.BytesIO()
    orc.write_table(pa.table({"k": pa.array([1, 2], pa.int32()), "v": ["a", "b"]}), out)
    put(s3, f"{root}/orcs/part=1/a.orc", out.getvalue())
    schema = {"type": "record", "name": "r", "fields": [{"name": "id", "type": "long"},
                                                        {"name": "tag", "type": ["null", "string"]}]}
    put(s3, f"{root}/avros/a.avro", avro_file(schema))
    put(s3, f"{root}/gz/a.csv.gz", gzip.compress(b"name,n\nx,1\ny,2\n"))
    crawl(crawler(root, database), glue, s3)
    orcs = glue.get_table(DatabaseName=database, Name="orcs")["Table"]
    assert columns(orcs) == [("k", "int"), ("v", "string")]
    assert orcs["StorageDescriptor"]["SerdeInfo"]["SerializationLibrary"] == "org.apache.hadoop.hive.ql.io.orc.OrcSerde"
    avros = glue.get_table(DatabaseName=database, Name="avros")["Table"]
    assert columns(avros) == [("id", "bigint"), ("tag", "string")]
    assert avros["Parameters"]["classification"] == "avro"
    gz = glue.get_table(DatabaseName=database, Name="gz")["Table"]
    assert columns(gz) == [("name", "string"), ("n", "bigint")]
    assert gz["Parameters"]["compressionType"] == "gzip" and gz["StorageDescriptor"]["Compressed"] is True
