"""register: table and partitions from a Hive-style dataset, idempotent re-runs, prune,
schema changes archiving a version, partition-key typing, indexes, per-partition errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pipelines import sample
from pipelines.register import RegisterOptions, register
from tests.pipelines.conftest import copy_tree

pytestmark = pytest.mark.slow


def partitions_of(glue, database: str, table: str) -> dict[tuple[str, ...], str]:
    found = {}
    for page in glue.get_paginator("get_partitions").paginate(DatabaseName=database, TableName=table):
        for p in page["Partitions"]:
            found[tuple(p["Values"])] = p["StorageDescriptor"]["Location"]
    return found


def options(root: str, database: str, table: str = "sales", **extra) -> RegisterOptions:
    return RegisterOptions(root=root, database=database, table=table, quiet=True, **extra)


def test_register_creates_table_partitions_and_index(spark, config, glue, database, sales):
    summary = register(spark, config, options(sales.roots["parquet"], database, indexes=[("by_country", ["country"])]))

    assert (summary.listed, summary.added, summary.skipped, summary.failed) == (12, 12, 0, 0)
    assert summary.table_action == "created"
    table = glue.get_table(DatabaseName=database, Name="sales")["Table"]
    assert table["PartitionKeys"] == [{"Name": "country", "Type": "string"}, {"Name": "year", "Type": "int"},
                                      {"Name": "month", "Type": "int"}]
    columns = {c["Name"]: c["Type"] for c in table["StorageDescriptor"]["Columns"]}
    assert columns == {"order_id": "bigint", "customer": "string", "amount": "decimal(10,2)", "quantity": "int",
                       "price": "double", "is_member": "boolean", "order_date": "date", "signature": "binary",
                       "created_at": "timestamp"}
    assert table["Parameters"]["classification"] == "parquet"
    root = "file://" + sales.roots["parquet"]
    assert table["StorageDescriptor"]["Location"] == root + "/"
    found = partitions_of(glue, database, "sales")
    assert len(found) == 12
    assert found[("US", "2024", "03")] == f"{root}/country=US/year=2024/month=03/"
    indexes = glue.get_partition_indexes(DatabaseName=database, TableName="sales")["PartitionIndexDescriptorList"]
    assert [i["IndexName"] for i in indexes] == ["by_country"]
    assert set(summary.seconds) >= {"listing", "schema", "catalog_reads", "catalog_writes", "total"}
    assert "added 12" in summary.text()


def test_rerun_is_idempotent_and_adds_only_new_partitions(spark, config, glue, database, sales, tmp_path):
    root = copy_tree(sales.roots["parquet"], tmp_path / "sales")
    register(spark, config, options(root, database))
    again = register(spark, config, options(root, database))
    assert (again.added, again.skipped, again.failed, again.writes) == (0, 12, 0, 0)
    assert again.table_action == "unchanged"
    # Its reads count as calls (database, table, registered partitions); no rate for nothing added.
    assert again.calls == again.reads >= 3 and again.calls_by_operation.get("GetPartitions", 0) >= 1
    assert again.partitions_per_second == 0 and "added/s" not in again.text()

    # Two new months appear: only they are sent.
    for month in ("04", "05"):
        src = Path(root, "country=US", "year=2024", "month=03")
        shutil.copytree(src, Path(root, "country=US", "year=2024", f"month={month}"))
    third = register(spark, config, options(root, database))
    assert (third.listed, third.added, third.skipped) == (14, 2, 12)
    assert third.calls_by_operation.get("BatchCreatePartition", 0) >= 1 and third.writes >= 1
    assert len(partitions_of(glue, database, "sales")) == 14
    versions = glue.get_table_versions(DatabaseName=database, TableName="sales")["TableVersions"]
    assert len(versions) == 1  # nothing changed in the schema: no version archived


def test_prune_removes_partitions_whose_folders_are_gone(spark, config, glue, database, sales, tmp_path):
    root = copy_tree(sales.roots["parquet"], tmp_path / "sales")
    register(spark, config, options(root, database))
    shutil.rmtree(Path(root, "country=FR", "year=2023"))

    kept = register(spark, config, options(root, database))
    assert kept.pruned == 0 and len(partitions_of(glue, database, "sales")) == 12

    pruned = register(spark, config, options(root, database, prune=True))
    assert (pruned.listed, pruned.added, pruned.pruned) == (9, 0, 3)
    assert sorted(partitions_of(glue, database, "sales")) == sorted(
        (c, y, m) for c in ("US", "FR") for y in ("2023", "2024") for m in ("01", "02", "03")
        if (c, y) != ("FR", "2023"))


def test_schema_change_archives_a_version(spark, config, glue, database, tmp_path):
    root = tmp_path / "events"
    for day in ("2024-05-01", "2024-05-02"):
        sample.write_file(str(root / f"dt={day}" / "part-0001.parquet"), "parquet",
                          sample._rows(__import__("random").Random(1), 5, 1, 2024, 5))
    first = register(spark, config, options(str(root), database, table="events"))
    assert first.partition_keys == [{"Name": "dt", "Type": "date"}]

    # A new partition whose files carry an extra column.
    import pyarrow as pa
    import pyarrow.parquet as pq
    (root / "dt=2024-05-03").mkdir()
    base = pq.read_table(root / "dt=2024-05-01" / "part-0001.parquet")
    pq.write_table(base.append_column("channel", pa.array(["web"] * base.num_rows)),
                   root / "dt=2024-05-03" / "part-0001.parquet")
    second = register(spark, config, options(str(root), database, table="events", schema_sample=0))
    assert second.table_action.startswith("updated") and second.added == 1
    table = glue.get_table(DatabaseName=database, Name="events")["Table"]
    assert table["StorageDescriptor"]["Columns"][-1] == {"Name": "channel", "Type": "string"}
    versions = glue.get_table_versions(DatabaseName=database, TableName="events")["TableVersions"]
    assert len(versions) == 2
    archived = [v for v in versions if v["VersionId"] != table["VersionId"]][0]
    assert "channel" not in [c["Name"] for c in archived["Table"]["StorageDescriptor"]["Columns"]]

    # The same schema again: no new version.
    third = register(spark, config, options(str(root), database, table="events", schema_sample=0))
    assert third.table_action == "unchanged"
    assert len(glue.get_table_versions(DatabaseName=database, TableName="events")["TableVersions"]) == 2


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_text_formats(spark, config, glue, database, sales, fmt):
    summary = register(spark, config, options(sales.roots[fmt], database, table=f"sales_{fmt}"))
    assert (summary.fmt, summary.added) == (fmt, 12)
    table = glue.get_table(DatabaseName=database, Name=f"sales_{fmt}")["Table"]
    columns = {c["Name"]: c["Type"] for c in table["StorageDescriptor"]["Columns"]}
    assert columns["order_id"] == ("int" if fmt == "csv" else "bigint") and columns["customer"] == "string" and columns["price"] == "double"
    assert "signature" not in columns and "country" not in columns
    assert table["Parameters"]["classification"] == fmt


def test_partition_key_types_and_per_partition_errors(spark, config, glue, database, tmp_path):
    root = tmp_path / "typed"
    rows = sample._rows(__import__("random").Random(2), 3, 1, 2024, 1)
    for shop, big, tag in (("7", "9999999999", "a"), ("12", "1", "b\x01c"), ("3", "5", "d"), ("4", "4", "")):
        sample.write_file(str(root / f"shop={shop}" / f"big={big}" / f"tag={tag}" / "part-0001.parquet"), "parquet", rows)
    (root / "_SUCCESS").write_text("")  # hidden files are not data
    (root / "stray").mkdir()
    (root / "stray" / "x.parquet").write_bytes(b"")  # outside the layout: ignored, reported

    # An index on tag refuses the U+0001 value (a per-entry error); an empty value fails the
    # validation of the whole request (botocore's, before sending; the call is halved until it
    # stands alone). Those two partitions fail, each with its error; the others are added.
    summary = register(spark, config, options(str(root), database, table="typed", indexes=[("by_tag", ["tag"])]))
    assert summary.partition_keys == [{"Name": "shop", "Type": "int"}, {"Name": "big", "Type": "bigint"},
                                      {"Name": "tag", "Type": "string"}]
    assert (summary.listed, summary.added, summary.failed) == (4, 2, 2)
    errors = {tuple(e["Values"]): e["ErrorCode"] for e in summary.errors}
    assert set(errors) == {("12", "1", "b\x01c"), ("4", "4", "")} and all(errors.values())
    assert errors[("4", "4", "")] in ("ParamValidationError", "InvalidInputException")  # botocore checks first
    assert any(path.endswith("/stray/") for path in summary.ignored)
    assert set(partitions_of(glue, database, "typed")) == {("7", "9999999999", "a"), ("3", "5", "d")}


def test_spark_listing_finds_the_same_layout(spark, sales):
    """The listing used for s3a:// and other Hadoop filesystems (Spark's file index), run on a
    file: URI, finds the same partitions as the local walk."""
    from pipelines import layout
    root = "file://" + sales.roots["parquet"]
    by_spark = sorted((rel, files) for rel, files, _, _ in layout.list_spark(spark, root))
    local, _ = layout.list_local(None, sales.roots["parquet"])
    assert by_spark == sorted((rel, files) for rel, files, _, _ in local)
    assert len(by_spark) == 12
