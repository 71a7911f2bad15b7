"""The cache of rendered partitions behind warm unindexed GetPartitions (service/partition_cache.py),
over boto3 and HTTP: a warm listing fetches no partition again, and whatever another server
process on the same store writes (an update in place, a delete, a create, a value change) is seen
by the very next listing of the warm server."""

from __future__ import annotations

from typing import Any

from infra.local.stack import client
from tests.integration.partition_helpers import (all_partitions, create_partitions, items_read, partition_input,
                                                 partitioned_table, value_tuples)

KEYS = [("region", "string"), ("year", "int"), ("tag", "string")]
EXPRESSION = "tag = 'beta' AND year > 2012"


def rows() -> list[list[str]]:
    return [[r, str(y), t] for r in ("eu", "us", "ap") for y in range(2010, 2020)
            for t in ("alpha", "beta", "gamma")]


def listed(glue: Any, db: str, **kwargs: Any) -> dict[tuple[str, ...], dict]:
    found = all_partitions(glue, db, "events", Expression=EXPRESSION, **kwargs)
    assert len(found) == len(set(value_tuples(found)))
    return {tuple(p["Values"]): p for p in found}


def expected(values: list[list[str]]) -> set[tuple[str, ...]]:
    return {tuple(v) for v in values if v[2] == "beta" and int(v[1]) > 2012}


def test_a_warm_listing_sees_every_write_of_another_server(glue, db, start_server):
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("events", KEYS))
    create_partitions(glue, db, "events", rows())
    cold = glue.get_partitions(DatabaseName=db, TableName="events", Expression=EXPRESSION)
    warm = glue.get_partitions(DatabaseName=db, TableName="events", Expression=EXPRESSION)
    assert warm["Partitions"] == cold["Partitions"]
    assert {tuple(p["Values"]) for p in warm["Partitions"]} == expected(rows())
    # The warm listing read the digest (and the table), not the 21 partitions again.
    assert items_read(warm) < items_read(cold) - 15

    other = client(start_server().endpoint, "glue")
    # An update in place (the same values, new parameters): no digest row changes.
    other.update_partition(DatabaseName=db, TableName="events", PartitionValueList=["eu", "2015", "beta"],
                           PartitionInput=partition_input(["eu", "2015", "beta"], Parameters={"k": "v1"}))
    assert listed(glue, db)[("eu", "2015", "beta")]["Parameters"] == {"k": "v1"}
    listed(glue, db)  # warm again
    other.update_partition(DatabaseName=db, TableName="events", PartitionValueList=["eu", "2015", "beta"],
                           PartitionInput=partition_input(["eu", "2015", "beta"], Parameters={"k": "v2"}))
    assert listed(glue, db)[("eu", "2015", "beta")]["Parameters"] == {"k": "v2"}

    # A delete, then a re-create with other parameters.
    other.delete_partition(DatabaseName=db, TableName="events", PartitionValues=["us", "2016", "beta"])
    assert set(listed(glue, db)) == expected(rows()) - {("us", "2016", "beta")}
    other.create_partition(DatabaseName=db, TableName="events",
                           PartitionInput=partition_input(["us", "2016", "beta"], Parameters={"again": "1"}))
    assert listed(glue, db)[("us", "2016", "beta")]["Parameters"] == {"again": "1"}

    # A value change out of the match, and a batch update back into it.
    other.update_partition(DatabaseName=db, TableName="events", PartitionValueList=["ap", "2017", "beta"],
                           PartitionInput=partition_input(["ap", "2017", "moved"]))
    assert set(listed(glue, db)) == expected(rows()) - {("ap", "2017", "beta")}
    other.batch_update_partition(DatabaseName=db, TableName="events", Entries=[{
        "PartitionValueList": ["ap", "2017", "moved"], "PartitionInput": partition_input(["ap", "2017", "beta"],
                                                                                          Parameters={"b": "1"})}])
    assert listed(glue, db)[("ap", "2017", "beta")]["Parameters"] == {"b": "1"}

    # Every answer of the warm server is what the other (cold for these) server says.
    for kwargs in ({}, {"ExcludeColumnSchema": True}):
        assert listed(glue, db, **kwargs) == listed(other, db, **kwargs)
        assert listed(glue, db, **kwargs) == listed(other, db, **kwargs)


def test_column_schema_and_segments_through_the_cache(glue, db):
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("events", KEYS))
    create_partitions(glue, db, "events", rows())
    for _ in range(2):
        full = listed(glue, db)
        lean = listed(glue, db, ExcludeColumnSchema=True)
        assert all("Columns" in p["StorageDescriptor"] for p in full.values())
        assert all("Columns" not in p["StorageDescriptor"] for p in lean.values())
        segments = [value_tuples(all_partitions(glue, db, "events", Segment={"SegmentNumber": n, "TotalSegments": 3}))
                    for n in range(3)]
        assert sorted(v for s in segments for v in s) == sorted(tuple(v) for v in rows())
