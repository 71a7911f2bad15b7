"""read: partition pruning by the catalog returns exactly the rows of an unpruned read with the
filter, opening only the matching partitions' files; governed tables read the objects visible
at a transaction or a time."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import time
import uuid
from pathlib import Path

import pytest

from pipelines import cli
from pipelines.read import load_table
from pipelines.register import RegisterOptions, register

pytestmark = pytest.mark.slow

FILTERS = [
    ("country = 'US'", "country = 'US'"),
    ("country = 'FR' AND year = 2024 AND month >= 2", None),
    ("year > '2023'", "year > 2023"),  # quoted literal on an int key compares numbers
    ("month BETWEEN 2 AND 3 AND country <> 'US'", None),
    ("country IN ('FR') OR month = 1", None),
    ("NOT (month < 3)", None),
    ("country LIKE 'U%'", None),
]


@pytest.fixture(scope="module")
def table(spark, config, glue, sales) -> tuple[str, str]:
    database = f"pl_{uuid.uuid4().hex[:10]}"
    glue.create_database(DatabaseInput={"Name": database})
    register(spark, config, RegisterOptions(root=sales.roots["parquet"], database=database, table="sales",
                                            quiet=True, indexes=[("by_country_year", ["country", "year"])]))
    return database, "sales"


def rows(df) -> list[tuple]:
    return sorted(tuple(r) for r in df.collect())


@pytest.mark.parametrize("expression, spark_filter", FILTERS)
def test_pruned_read_equals_unpruned_read_with_the_filter(spark, config, sales, table, expression, spark_filter):
    database, name = table
    loaded = load_table(spark, config, database, name, filter=expression, segments=3)
    full = spark.read.parquet(sales.roots["parquet"])
    wanted = full.filter(spark_filter or expression).select(*loaded.df.columns)
    assert rows(loaded.df) == rows(wanted)
    matched = {r[:3] for r in wanted.select("country", "year", "month").distinct().collect()}
    assert len(loaded.partitions) == len(matched) > 0
    assert len(loaded.files) == len(matched)  # one file per partition: only the matches are opened


def test_segments_and_no_match(spark, config, table):
    database, name = table
    one = load_table(spark, config, database, name, segments=1)
    ten = load_table(spark, config, database, name, segments=10)
    assert len(one.partitions) == len(ten.partitions) == 12 and rows(one.df) == rows(ten.df)
    nothing = load_table(spark, config, database, name, filter="country = 'XX'")
    assert nothing.files == [] and nothing.df.count() == 0
    assert nothing.df.columns == one.df.columns
    assert dict(nothing.df.dtypes)["year"] == "int" and dict(nothing.df.dtypes)["amount"] == "decimal(10,2)"


def test_cli_read_count_and_output(spark, config, table, tmp_path, capsys):
    database, name = table
    common = ["--endpoint-url", config.glue_endpoint, "--region", config.region, "--quiet"]
    assert cli.main(["read", "--database", database, "--table", name, "--filter", "country = 'US' AND month = 2",
                     "--count", *common]) == 0
    out = capsys.readouterr().out
    assert "2 partitions, 2 files opened" in out
    out_dir = tmp_path / "out"
    assert cli.main(["read", "--database", database, "--table", name, "--filter", "year = 2023",
                     "--output", str(out_dir), *common]) == 0
    assert spark.read.parquet(str(out_dir)).count() == spark.read.parquet(str(out_dir)).filter("year = 2023").count() > 0


def test_governed_table_reads_objects_at_a_transaction_and_a_time(spark, config, glue, lakeformation, database, sales):
    root = sales.roots["parquet"]
    glue.create_table(DatabaseName=database, TableInput={
        "Name": "governed", "TableType": "GOVERNED",
        "StorageDescriptor": {"Columns": [{"Name": "order_id", "Type": "bigint"}, {"Name": "quantity", "Type": "int"}],
                              "Location": f"file://{root}/",
                              "SerdeInfo": {"SerializationLibrary":
                                            "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"},
                              "Parameters": {"classification": "parquet"}},
        "PartitionKeys": [{"Name": "country", "Type": "string"}, {"Name": "year", "Type": "int"},
                          {"Name": "month", "Type": "int"}]})

    def add(partitions: list[tuple[str, str, str]]) -> str:
        tx = lakeformation.start_transaction(TransactionType="READ_AND_WRITE")["TransactionId"]
        operations = []
        for country, year, month in partitions:
            path = Path(root, f"country={country}", f"year={year}", f"month={month}", "part-0001.parquet")
            operations.append({"AddObject": {"Uri": f"file://{path}", "ETag": hashlib.md5(path.read_bytes()).hexdigest(),
                                             "Size": os.path.getsize(path), "PartitionValues": [country, year, month]}})
        lakeformation.update_table_objects(DatabaseName=database, TableName="governed", TransactionId=tx,
                                           WriteOperations=operations)
        lakeformation.commit_transaction(TransactionId=tx)
        return tx

    add([("US", "2024", "01"), ("US", "2024", "02"), ("FR", "2024", "01")])
    # A read transaction started now keeps seeing this snapshot (reading at a committed
    # transaction is TransactionCommittedException, as on AWS).
    snapshot = lakeformation.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    time.sleep(1.1)
    between = dt.datetime.now(dt.timezone.utc)
    time.sleep(1.1)
    add([("US", "2023", "03")])

    full = spark.read.parquet(root).select("order_id", "quantity", "country", "year", "month")
    latest = load_table(spark, config, database, "governed")
    assert latest.governed and len(latest.files) == 4
    assert rows(latest.df) == rows(full.filter(
        "(country = 'US' AND year = 2024 AND month IN (1, 2)) OR (country = 'FR' AND year = 2024 AND month = 1) "
        "OR (country = 'US' AND year = 2023 AND month = 3)"))
    at_snapshot = load_table(spark, config, database, "governed", transaction_id=snapshot)
    lakeformation.commit_transaction(TransactionId=snapshot)
    as_of = load_table(spark, config, database, "governed", as_of=between)
    expected = rows(full.filter("year = 2024 AND ((country = 'US' AND month IN (1, 2)) OR (country = 'FR' AND month = 1))"))
    assert rows(at_snapshot.df) == rows(as_of.df) == expected
    predicate = load_table(spark, config, database, "governed", filter="country = 'US' AND year >= 2024")
    assert rows(predicate.df) == rows(full.filter("country = 'US' AND year = 2024 AND month IN (1, 2)"))
    assert len(predicate.files) == 2
