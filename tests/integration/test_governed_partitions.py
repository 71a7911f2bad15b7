"""Partitions of governed tables through boto3 over HTTP: GetPartitions lists what the manifest
holds as its reader sees it (TransactionId, QueryAsOfTime, own writes, the latest commit), merged
with registered partitions; GetPartition / BatchGetPartition find manifest partitions too."""

from __future__ import annotations

import time

import pytest

from tests.integration.lf_helpers import Governed, State, add, apply, delete, listed_partitions, partitions_of


@pytest.fixture
def gov(endpoint) -> Governed:
    return Governed.create(endpoint)


def listed(gov: Governed, page_size: int = 0, **reads) -> list[dict]:
    """Every partition of ``objects`` (all pages), as GetPartitions returns them."""
    request = {"DatabaseName": gov.db, "TableName": "objects", **reads}
    if page_size:
        request["MaxResults"] = page_size
    found: list[dict] = []
    while True:
        response = gov.glue.get_partitions(**request)
        found.extend(response["Partitions"])
        if not response.get("NextToken"):
            return found
        request["NextToken"] = response["NextToken"]


def partitions(gov: Governed, **reads) -> dict[tuple[str, ...], tuple[int, int]]:
    return listed_partitions(gov.glue, gov.db, "objects", **reads)


def values(gov: Governed, **reads) -> list[list[str]]:
    return [p["Values"] for p in listed(gov, **reads)]


def test_partitions_follow_the_manifest_at_every_commit_point(gov):
    glue, lf = gov.glue, gov.lf
    first = gov.commit_ops([add("s3://lake/objects/a1", ["2024", "us"], size=10),
                            add("s3://lake/objects/a2", ["2024", "us"], size=5),
                            add("s3://lake/objects/b1", ["2023", "eu"])])
    old_reader = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    time.sleep(0.01)
    second = gov.commit_ops([add("s3://lake/objects/c1", ["2025", "de"]),
                             delete("s3://lake/objects/b1")])

    latest = listed(gov)
    assert [p["Values"] for p in latest] == [["2024", "us"], ["2025", "de"]]  # key order: year is an int
    us = latest[0]
    assert us["DatabaseName"] == gov.db and us["TableName"] == "objects"
    assert us["StorageDescriptor"]["Location"] == "s3://lake/objects/year=2024/region=us"
    assert us["StorageDescriptor"]["Columns"] == glue.get_table(
        DatabaseName=gov.db, Name="objects")["Table"]["StorageDescriptor"]["Columns"]
    assert us["Parameters"] == {"numFiles": "2", "totalSize": "15"}
    assert us["CreationTime"].timestamp() == pytest.approx(first["TransactionEndTime"].timestamp(), abs=1)

    # As of the first commit: the transaction that started then, and a time between the commits.
    expected_then = [["2023", "eu"], ["2024", "us"]]
    assert values(gov, TransactionId=old_reader) == expected_then
    between = first["TransactionEndTime"].timestamp() + 0.005
    assert second["TransactionEndTime"].timestamp() > between
    assert values(gov, QueryAsOfTime=between) == expected_then
    assert values(gov, QueryAsOfTime=second["TransactionEndTime"].timestamp() + 1) == [["2024", "us"], ["2025", "de"]]
    # Expressions and paging work on the manifest's partitions as on registered ones.
    assert values(gov, TransactionId=old_reader, Expression="year >= 2024") == [["2024", "us"]]
    assert values(gov, Expression="region = 'de'") == [["2025", "de"]]
    assert [p["Values"] for p in listed(gov, page_size=1, TransactionId=old_reader)] == expected_then
    lf.cancel_transaction(TransactionId=old_reader)


def test_a_transaction_sees_its_own_objects_as_partitions_others_do_not(gov):
    lf = gov.lf
    tx = lf.start_transaction()["TransactionId"]
    gov.write(tx, [add("s3://lake/objects/n1", ["2030", "mx"], size=7)])
    own = listed(gov, TransactionId=tx)
    assert [p["Values"] for p in own] == [["2030", "mx"]]
    assert own[0]["Parameters"] == {"numFiles": "1", "totalSize": "7"}
    assert values(gov) == []
    lf.commit_transaction(TransactionId=tx)
    assert values(gov) == [["2030", "mx"]]


def test_registered_partitions_join_the_manifest_by_creation_time(gov):
    glue, lf = gov.glue, gov.lf
    gov.commit_ops([add("s3://lake/objects/x", ["2024", "us"])])
    glue.create_partition(DatabaseName=gov.db, TableName="objects",
                          PartitionInput={"Values": ["2024", "us"], "Parameters": {"owner": "etl"},
                                          "StorageDescriptor": {"Location": "s3://elsewhere/us"}})
    glue.create_partition(DatabaseName=gov.db, TableName="objects", PartitionInput={"Values": ["2020", "fr"]})
    reader = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    time.sleep(0.01)
    glue.create_partition(DatabaseName=gov.db, TableName="objects", PartitionInput={"Values": ["2021", "it"]})

    latest = listed(gov)
    assert [p["Values"] for p in latest] == [["2020", "fr"], ["2021", "it"], ["2024", "us"]]
    assert latest[2]["Parameters"] == {"owner": "etl"}  # the registered document wins
    assert latest[2]["StorageDescriptor"]["Location"] == "s3://elsewhere/us"
    # Registered after the reader started: not in its snapshot.
    assert values(gov, TransactionId=reader) == [["2020", "fr"], ["2024", "us"]]
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        values(gov, QueryAsOfTime=0)  # before the table existed
    lf.cancel_transaction(TransactionId=reader)


def test_exclude_column_schema_leaves_out_columns_of_registered_and_manifest_partitions(gov):
    glue = gov.glue
    gov.commit_ops([add("s3://lake/objects/x", ["2024", "us"], size=4)])
    glue.create_partition(DatabaseName=gov.db, TableName="objects", PartitionInput={
        "Values": ["2020", "fr"], "Parameters": {"owner": "etl"},
        "StorageDescriptor": {"Location": "s3://elsewhere/fr", "Columns": [{"Name": "n", "Type": "int"}]}})
    full, slim = listed(gov), listed(gov, ExcludeColumnSchema=True)
    assert [p["Values"] for p in slim] == [["2020", "fr"], ["2024", "us"]]  # registered, then manifest only
    assert all(p["StorageDescriptor"]["Columns"] for p in full)
    for whole, without in zip(full, slim):
        expected = {**whole, "StorageDescriptor": {k: v for k, v in whole["StorageDescriptor"].items()
                                                   if k != "Columns"}}
        assert without == expected
    assert listed(gov, page_size=1, ExcludeColumnSchema=True) == slim


def test_get_partition_finds_a_partition_that_only_the_manifest_holds(gov):
    glue = gov.glue
    gov.commit_ops([add("s3://lake/objects/x", ["2024", "us"], size=3)])
    glue.create_partition(DatabaseName=gov.db, TableName="objects", PartitionInput={"Values": ["2020", "fr"]})
    one = glue.get_partition(DatabaseName=gov.db, TableName="objects", PartitionValues=["2024", "us"])["Partition"]
    assert one["Values"] == ["2024", "us"] and one["Parameters"]["numFiles"] == "1"
    assert one["TableName"] == "objects"
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_partition(DatabaseName=gov.db, TableName="objects", PartitionValues=["1999", "us"])
    batch = glue.batch_get_partition(DatabaseName=gov.db, TableName="objects", PartitionsToGet=[
        {"Values": ["2024", "us"]}, {"Values": ["2020", "fr"]}, {"Values": ["1999", "us"]}])
    assert sorted(p["Values"] for p in batch["Partitions"]) == [["2020", "fr"], ["2024", "us"]]


def test_segments_split_the_manifest_partitions(gov):
    gov.commit_ops([add(f"s3://lake/objects/{n}", [str(2000 + n), "us"]) for n in range(40)])
    every = sorted(map(tuple, values(gov)))
    assert len(every) == 40
    parts = [values(gov, Segment={"SegmentNumber": n, "TotalSegments": 4}) for n in range(4)]
    assert sorted(tuple(v) for part in parts for v in part) == every
    assert all(parts)


def test_both_reads_at_once_are_refused(gov):
    tx = gov.lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    with pytest.raises(gov.glue.exceptions.InvalidInputException, match="cannot both"):
        gov.glue.get_partitions(DatabaseName=gov.db, TableName="objects", TransactionId=tx, QueryAsOfTime=1)


def test_every_commit_point_and_a_fixed_reader_see_exactly_their_partitions(gov):
    """A model of the manifest after each commit: GetPartitions as of each commit's EndTime
    returns the partitions holding objects then, with their object counts and bytes, while a
    reader that started first keeps seeing the first state throughout."""
    lf = gov.lf
    steps = [
        [add("s3://lake/objects/1", ["2020", "a"], size=1), add("s3://lake/objects/2", ["2021", "b"], size=2)],
        [add("s3://lake/objects/3", ["2021", "b"], size=4), delete("s3://lake/objects/1")],
        [add("s3://lake/objects/4", ["2022", "c"], size=8), delete("s3://lake/objects/2")],
        [delete("s3://lake/objects/3"), add("s3://lake/objects/1", ["2023", "d"], size=16),
         add("s3://lake/objects/5", ["2022", "c"], size=32)],
        [delete("s3://lake/objects/4")],
    ]
    state: State = {}
    points: list[tuple[float, dict]] = []
    reader, seen = None, None
    for number, ops in enumerate(steps):
        end = gov.commit_ops(ops)["TransactionEndTime"].timestamp()
        state = apply(state, ops)
        expected = partitions_of(state)
        points.append((end, expected))
        if reader is None:
            reader = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
            seen = partitions(gov, TransactionId=reader)
            assert seen == expected
        assert partitions(gov, TransactionId=reader) == seen
        assert partitions(gov) == expected, f"latest after commit {number}"
        time.sleep(0.01)
    for number, (end, expected) in enumerate(points):
        assert partitions(gov, QueryAsOfTime=end + 0.001) == expected, f"as of commit {number}"
        assert partitions(gov, QueryAsOfTime=end + 0.001, Expression="year >= 2022") == \
            {v: c for v, c in expected.items() if int(v[0]) >= 2022}
    lf.cancel_transaction(TransactionId=reader)


def test_an_object_deleted_and_added_again_elsewhere_moves_between_partitions(gov):
    gov.commit_ops([add("s3://lake/objects/m", ["2020", "a"], size=3), add("s3://lake/objects/k", ["2020", "a"], size=5)])
    tx = gov.lf.start_transaction()["TransactionId"]
    moved = [delete("s3://lake/objects/m"), add("s3://lake/objects/m", ["2021", "b"], size=7)]
    gov.write(tx, moved[:1])
    gov.write(tx, moved[1:])  # a pending "replace" in another partition
    expected = {("2020", "a"): (1, 5), ("2021", "b"): (1, 7)}
    assert partitions(gov, TransactionId=tx) == expected
    assert partitions(gov) == {("2020", "a"): (2, 8)}
    gov.lf.commit_transaction(TransactionId=tx)
    assert partitions(gov) == expected
