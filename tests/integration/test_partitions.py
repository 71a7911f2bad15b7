"""Partition API through boto3 over HTTP: create, update, delete, get, batch calls, paging,
segments, and the partitions' lifetime with their table and database."""

from __future__ import annotations

import datetime as dt
import itertools
import uuid
from typing import Sequence

import pytest
from botocore.exceptions import ClientError

from tests.integration.conftest import random_account
from tests.integration.partition_helpers import (all_partitions, create_partitions, error_code,
                                                 partition_input, partitioned_table, unvalidated_glue,
                                                 value_tuples)
from tests.integration.store_helpers import Store

KEYS = [("year", "int"), ("region", "string")]


@pytest.fixture
def table(glue, db) -> str:
    """A table partitioned by (year int, region string) in a fresh database."""
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("events", KEYS))
    return "events"


def _grid(years: range, regions: Sequence) -> list[list[str]]:
    return [[str(y), r] for y, r in itertools.product(years, regions)]


# ------------------------------------------------------------------------------------ create
def test_create_partition_round_trip(glue, db, table):
    given = partition_input(
        ["2024", "eu"],
        Parameters={"numRows": "42", "big": "x" * 10_000},
        LastAccessTime=dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc),
        StorageDescriptor={
            "Columns": [{"Name": "id", "Type": "bigint", "Comment": "c"}],
            "Location": "s3://bucket/events/year=2024/region=eu/",
            "InputFormat": "org.apache.hadoop.mapred.TextInputFormat",
            "SerdeInfo": {"SerializationLibrary": "org.openx.data.jsonserde.JsonSerDe", "Parameters": {"a": "b"}},
            "Parameters": {"p": "q"},
        },
    )
    before = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=5)
    glue.create_partition(DatabaseName=db, TableName=table, PartitionInput=given)
    got = glue.get_partition(DatabaseName=db, TableName=table, PartitionValues=["2024", "eu"])["Partition"]
    assert got["Values"] == ["2024", "eu"]
    assert got["DatabaseName"] == db
    assert got["TableName"] == table
    assert got["CatalogId"] == "123456789012"
    assert got["StorageDescriptor"] == given["StorageDescriptor"]
    assert got["Parameters"] == given["Parameters"]
    assert got["LastAccessTime"] == given["LastAccessTime"]
    assert got["CreationTime"] >= before
    # Visible at once to GetPartitions (reads are consistent).
    assert value_tuples(all_partitions(glue, db, table)) == [("2024", "eu")]


def test_create_partition_errors(glue, db, table):
    glue.create_partition(DatabaseName=db, TableName=table, PartitionInput=partition_input(["2024", "eu"]))
    with pytest.raises(glue.exceptions.AlreadyExistsException):
        glue.create_partition(DatabaseName=db, TableName=table, PartitionInput=partition_input(["2024", "eu"]))
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.create_partition(DatabaseName=db, TableName=table, PartitionInput=partition_input(["2024"]))
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.create_partition(DatabaseName=db, TableName=table,
                              PartitionInput=partition_input(["2024", "eu", "extra"]))
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.create_partition(DatabaseName=db, TableName="missing", PartitionInput=partition_input(["1", "x"]))
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.create_partition(DatabaseName="no_such_db", TableName=table, PartitionInput=partition_input(["1", "x"]))
    # An unindexed int key accepts any text (Glue type-checks only indexed keys).
    glue.create_partition(DatabaseName=db, TableName=table, PartitionInput=partition_input(["abc", "eu"]))
    assert sorted(value_tuples(all_partitions(glue, db, table))) == [("2024", "eu"), ("abc", "eu")]


def test_unpartitioned_table_takes_no_partitions(glue, db):
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("flat", []))
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.create_partition(DatabaseName=db, TableName="flat", PartitionInput=partition_input(["x"]))
    assert glue.get_partitions(DatabaseName=db, TableName="flat")["Partitions"] == []


def test_batch_create_reports_each_failure_and_creates_the_rest(glue, db, table):
    glue.create_partition(DatabaseName=db, TableName=table, PartitionInput=partition_input(["2000", "r0"]))
    inputs = [partition_input(v) for v in _grid(range(2000, 2010), [f"r{i}" for i in range(10)])]
    assert len(inputs) == 100
    inputs[5] = partition_input(["2000", "r0"])  # already exists (replaces ["2000", "r5"])
    inputs[50] = partition_input(["2005", "r1"])  # a duplicate of inputs[51] within the batch ...
    inputs[51] = partition_input(["2005", "r1"])  # ... the first one wins
    inputs[77] = partition_input(["2007"])  # too few values
    inputs[0] = partition_input(["2000", "r0"])  # the existing one again: ["2000", "r0"] is "taken"
    resp = glue.batch_create_partition(DatabaseName=db, TableName=table, PartitionInputList=inputs)
    errors = {tuple(e["PartitionValues"]): e["ErrorDetail"]["ErrorCode"] for e in resp["Errors"]}
    assert len(resp["Errors"]) == 4
    assert errors == {("2000", "r0"): "AlreadyExistsException", ("2005", "r1"): "AlreadyExistsException",
                      ("2007",): "InvalidInputException"}
    assert all(e["ErrorDetail"]["ErrorMessage"] for e in resp["Errors"])
    stored = value_tuples(all_partitions(glue, db, table))
    expected = {tuple(p["Values"]) for i, p in enumerate(inputs) if i != 77}
    assert len(stored) == len(set(stored)) == 97  # 100 grid cells, 3 of them never requested
    assert set(stored) == expected


def test_batch_create_one_bad_partition_never_blocks_the_others(glue, db, table):
    # Failures of every kind mixed with good partitions, in several positions.
    create_partitions(glue, db, table, [["1", "dup"]])
    inputs = []
    for i in range(30):
        if i % 3 == 0:
            inputs.append(partition_input(["1", "dup"]))
        elif i % 3 == 1:
            inputs.append(partition_input([str(i)]))
        else:
            inputs.append(partition_input([str(i), "ok"]))
    resp = glue.batch_create_partition(DatabaseName=db, TableName=table, PartitionInputList=inputs)
    assert len(resp["Errors"]) == 20
    assert set(value_tuples(all_partitions(glue, db, table))) == {("1", "dup")} | {
        (str(i), "ok") for i in range(30) if i % 3 == 2}


def test_batch_create_limit_and_empty(glue, db, table):
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.batch_create_partition(DatabaseName=db, TableName=table,
                                    PartitionInputList=[partition_input([str(i), "x"]) for i in range(101)])
    assert glue.get_partitions(DatabaseName=db, TableName=table)["Partitions"] == []
    assert glue.batch_create_partition(DatabaseName=db, TableName=table, PartitionInputList=[])["Errors"] == []
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.batch_create_partition(DatabaseName=db, TableName="missing",
                                    PartitionInputList=[partition_input(["1", "x"])])


# ------------------------------------------------------------------------------------ update
def test_update_partition_replaces_definition_and_keeps_creation_time(glue, db, table):
    glue.create_partition(DatabaseName=db, TableName=table,
                          PartitionInput=partition_input(["2024", "eu"], Parameters={"a": "1"}))
    created = glue.get_partition(DatabaseName=db, TableName=table, PartitionValues=["2024", "eu"])["Partition"]
    glue.update_partition(DatabaseName=db, TableName=table, PartitionValueList=["2024", "eu"],
                          PartitionInput=partition_input(["2024", "eu"], Parameters={"b": "2"}))
    updated = glue.get_partition(DatabaseName=db, TableName=table, PartitionValues=["2024", "eu"])["Partition"]
    assert updated["Parameters"] == {"b": "2"}
    assert updated["CreationTime"] == created["CreationTime"]


def test_update_partition_with_new_values_moves_it(glue, db, table):
    create_partitions(glue, db, table, [["2024", "eu"], ["2024", "us"]])
    created = glue.get_partition(DatabaseName=db, TableName=table, PartitionValues=["2024", "eu"])["Partition"]
    glue.update_partition(DatabaseName=db, TableName=table, PartitionValueList=["2024", "eu"],
                          PartitionInput=partition_input(["2025", "eu"], Parameters={"moved": "yes"}))
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_partition(DatabaseName=db, TableName=table, PartitionValues=["2024", "eu"])
    moved = glue.get_partition(DatabaseName=db, TableName=table, PartitionValues=["2025", "eu"])["Partition"]
    assert moved["Values"] == ["2025", "eu"]
    assert moved["Parameters"] == {"moved": "yes"}
    assert moved["CreationTime"] == created["CreationTime"]
    assert sorted(value_tuples(all_partitions(glue, db, table))) == [("2024", "us"), ("2025", "eu")]
    assert value_tuples(all_partitions(glue, db, table, Expression="year = 2025")) == [("2025", "eu")]
    assert value_tuples(all_partitions(glue, db, table, Expression="year = 2024")) == [("2024", "us")]
    # Moving onto an existing partition is refused and changes nothing.
    with pytest.raises(glue.exceptions.AlreadyExistsException):
        glue.update_partition(DatabaseName=db, TableName=table, PartitionValueList=["2025", "eu"],
                              PartitionInput=partition_input(["2024", "us"]))
    assert sorted(value_tuples(all_partitions(glue, db, table))) == [("2024", "us"), ("2025", "eu")]


def test_update_partition_errors(glue, db, table):
    create_partitions(glue, db, table, [["2024", "eu"]])
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.update_partition(DatabaseName=db, TableName=table, PartitionValueList=["1999", "eu"],
                              PartitionInput=partition_input(["1999", "eu"]))
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.update_partition(DatabaseName=db, TableName=table, PartitionValueList=["2024", "eu"],
                              PartitionInput=partition_input(["2024"]))
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.update_partition(DatabaseName=db, TableName=table, PartitionValueList=["2024"],
                              PartitionInput=partition_input(["2024", "eu"]))
    assert value_tuples(all_partitions(glue, db, table)) == [("2024", "eu")]


def test_batch_update_partition(glue, db, table):
    create_partitions(glue, db, table, [["1", "a"], ["2", "a"], ["3", "a"]])
    entries = [
        {"PartitionValueList": ["1", "a"], "PartitionInput": partition_input(["1", "a"], Parameters={"v": "1"})},
        {"PartitionValueList": ["9", "a"], "PartitionInput": partition_input(["9", "a"])},  # missing
        {"PartitionValueList": ["2", "a"], "PartitionInput": partition_input(["20", "a"], Parameters={"v": "2"})},
        {"PartitionValueList": ["3", "a"], "PartitionInput": partition_input(["3"])},  # bad values
    ]
    errors = glue.batch_update_partition(DatabaseName=db, TableName=table, Entries=entries)["Errors"]
    assert {tuple(e["PartitionValueList"]): e["ErrorDetail"]["ErrorCode"] for e in errors} == {
        ("9", "a"): "EntityNotFoundException", ("3", "a"): "InvalidInputException"}
    stored = {tuple(p["Values"]): p.get("Parameters") for p in all_partitions(glue, db, table)}
    assert stored == {("1", "a"): {"v": "1"}, ("20", "a"): {"v": "2"}, ("3", "a"): None}


# ------------------------------------------------------------------------------------ delete
def test_delete_partition(glue, db, table):
    create_partitions(glue, db, table, [["1", "a"], ["2", "a"]])
    glue.delete_partition(DatabaseName=db, TableName=table, PartitionValues=["1", "a"])
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_partition(DatabaseName=db, TableName=table, PartitionValues=["1", "a"])
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.delete_partition(DatabaseName=db, TableName=table, PartitionValues=["1", "a"])
    assert value_tuples(all_partitions(glue, db, table)) == [("2", "a")]
    # Re-creating it works and gives a new partition.
    glue.create_partition(DatabaseName=db, TableName=table, PartitionInput=partition_input(["1", "a"]))
    assert sorted(value_tuples(all_partitions(glue, db, table))) == [("1", "a"), ("2", "a")]


def test_batch_delete_partition(glue, db, table):
    create_partitions(glue, db, table, _grid(range(30), ["a"]))
    doomed = [{"Values": [str(i), "a"]} for i in range(20)] + [{"Values": ["99", "a"]}, {"Values": ["1"]}]
    errors = glue.batch_delete_partition(DatabaseName=db, TableName=table, PartitionsToDelete=doomed)["Errors"]
    assert {tuple(e["PartitionValues"]): e["ErrorDetail"]["ErrorCode"] for e in errors} == {
        ("99", "a"): "EntityNotFoundException", ("1",): "InvalidInputException"}
    assert sorted(value_tuples(all_partitions(glue, db, table))) == sorted(
        (str(i), "a") for i in range(20, 30))
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.batch_delete_partition(DatabaseName=db, TableName=table,
                                    PartitionsToDelete=[{"Values": [str(i), "a"]} for i in range(26)])
    assert len(all_partitions(glue, db, table)) == 10  # the refused batch deleted nothing


# --------------------------------------------------------------------------------------- get
def test_get_partition_not_found(glue, db, table):
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_partition(DatabaseName=db, TableName=table, PartitionValues=["2024", "eu"])
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_partition(DatabaseName=db, TableName="missing", PartitionValues=["2024", "eu"])
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_partitions(DatabaseName=db, TableName="missing")
    # Values compare as stored text: '02024' is another partition than '2024'.
    create_partitions(glue, db, table, [["2024", "eu"]])
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_partition(DatabaseName=db, TableName=table, PartitionValues=["02024", "eu"])


def test_missing_partition_is_worded_once(glue, db, table):
    """Get, update, delete and their batch entries all say what Glue says: one wording."""
    missing = ["1999", "nowhere"]
    calls = [
        lambda: glue.get_partition(DatabaseName=db, TableName=table, PartitionValues=missing),
        lambda: glue.delete_partition(DatabaseName=db, TableName=table, PartitionValues=missing),
        lambda: glue.update_partition(DatabaseName=db, TableName=table, PartitionValueList=missing,
                                      PartitionInput=partition_input(missing)),
    ]
    for call in calls:
        with pytest.raises(glue.exceptions.EntityNotFoundException) as caught:
            call()
        assert caught.value.response["Error"]["Message"] == "Cannot find partition."
    deleted = glue.batch_delete_partition(DatabaseName=db, TableName=table,
                                          PartitionsToDelete=[{"Values": missing}])
    updated = glue.batch_update_partition(DatabaseName=db, TableName=table, Entries=[
        {"PartitionValueList": missing, "PartitionInput": partition_input(missing)}])
    for errors in (deleted["Errors"], updated["Errors"]):
        assert [e["ErrorDetail"] for e in errors] == [
            {"ErrorCode": "EntityNotFoundException", "ErrorMessage": "Cannot find partition."}]


def test_batch_get_partition(glue, db, table):
    present = _grid(range(150), ["a"])
    create_partitions(glue, db, table, present)
    wanted = [{"Values": [str(i), "a"]} for i in range(0, 1000)]  # 850 of them do not exist
    resp = glue.batch_get_partition(DatabaseName=db, TableName=table, PartitionsToGet=wanted)
    assert sorted(value_tuples(resp["Partitions"])) == sorted(map(tuple, present))
    assert resp["UnprocessedKeys"] == []
    assert all(p["DatabaseName"] == db and p["TableName"] == table for p in resp["Partitions"])
    assert resp["Partitions"][0]["StorageDescriptor"]["Columns"]
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.batch_get_partition(DatabaseName=db, TableName=table,
                                 PartitionsToGet=[{"Values": [str(i), "a"]} for i in range(1001)])


def test_batch_get_partition_of_nothing_found(glue, db, table):
    resp = glue.batch_get_partition(DatabaseName=db, TableName=table,
                                    PartitionsToGet=[{"Values": ["1", "a"]}, {"Values": ["2", "b"]}])
    assert resp["Partitions"] == []
    assert resp.get("UnprocessedKeys", []) == []


# ------------------------------------------------------------------------------------ paging
@pytest.fixture
def filled(glue, db, table) -> list[tuple[str, str]]:
    """250 partitions in ``table``."""
    values = _grid(range(2000, 2025), [f"r{i}" for i in range(10)])
    create_partitions(glue, db, table, values)
    return sorted(map(tuple, values))


def test_get_partitions_pages_return_every_partition_once(glue, db, table, filled):
    for page_size in (7, 37, 250, 1000):
        got = value_tuples(all_partitions(glue, db, table, page_size=page_size))
        assert len(got) == len(filled), page_size
        assert sorted(got) == filled, page_size
    got = value_tuples(all_partitions(glue, db, table, page_size=1, Expression="region = 'r4'"))
    assert sorted(got) == [v for v in filled if v[1] == "r4"]
    # By hand: every page but the last is full, and the last carries no NextToken.
    token, sizes, seen = None, [], []
    while True:
        kwargs = {"NextToken": token} if token else {}
        resp = glue.get_partitions(DatabaseName=db, TableName=table, MaxResults=100, **kwargs)
        sizes.append(len(resp["Partitions"]))
        seen += value_tuples(resp["Partitions"])
        token = resp.get("NextToken")
        if not token:
            break
    assert sizes == [100, 100, 50]
    assert sorted(seen) == filled


def test_get_partitions_with_expression_pages(glue, db, table, filled):
    got = value_tuples(all_partitions(glue, db, table, page_size=7, Expression="year >= 2020 AND region <> 'r3'"))
    expected = [v for v in filled if int(v[0]) >= 2020 and v[1] != "r3"]
    assert len(got) == len(expected) == 45
    assert sorted(got) == expected


def test_get_partitions_max_results_limits(glue, endpoint, db, table, filled):
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.get_partitions(DatabaseName=db, TableName=table, MaxResults=1001)
    with pytest.raises(ClientError) as caught:
        unvalidated_glue(endpoint).get_partitions(DatabaseName=db, TableName=table, MaxResults=0)
    assert error_code(caught) == "InvalidInputException"
    assert len(glue.get_partitions(DatabaseName=db, TableName=table, MaxResults=1000)["Partitions"]) == 250
    assert len(glue.get_partitions(DatabaseName=db, TableName=table)["Partitions"]) == 250


def test_next_token_is_bound_to_its_request(glue, db, table, filled):
    resp = glue.get_partitions(DatabaseName=db, TableName=table, MaxResults=10, Expression="year > 2001")
    token = resp["NextToken"]
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.get_partitions(DatabaseName=db, TableName=table, MaxResults=10, Expression="year > 2002",
                            NextToken=token)
    with pytest.raises(glue.exceptions.InvalidInputException):
        glue.get_partitions(DatabaseName=db, TableName=table, NextToken="garbage")


def test_segments_are_disjoint_and_cover_every_partition(glue, db, table, filled):
    for total in range(1, 11):
        segments = [value_tuples(all_partitions(glue, db, table, page_size=60,
                                                Segment={"SegmentNumber": n, "TotalSegments": total}))
                    for n in range(total)]
        union = list(itertools.chain.from_iterable(segments))
        assert len(union) == len(filled), total
        assert sorted(union) == filled, total
        if total >= 4:
            assert sum(1 for s in segments if s) >= 2, (total, [len(s) for s in segments])


def test_segments_with_an_expression(glue, db, table, filled):
    expression = "region IN ('r1', 'r2', 'r7') AND year BETWEEN 2003 AND 2019"
    expected = sorted(v for v in filled if v[1] in ("r1", "r2", "r7") and 2003 <= int(v[0]) <= 2019)
    for total in (1, 3, 7, 10):
        union = []
        for n in range(total):
            union += value_tuples(all_partitions(glue, db, table, page_size=5, Expression=expression,
                                                 Segment={"SegmentNumber": n, "TotalSegments": total}))
        assert len(union) == len(expected) == 51
        assert sorted(union) == expected


def test_segment_number_out_of_range(glue, endpoint, db, table, filled):
    for number, total in ((1, 1), (4, 4), (10, 10)):
        with pytest.raises(glue.exceptions.InvalidInputException):
            glue.get_partitions(DatabaseName=db, TableName=table,
                                Segment={"SegmentNumber": number, "TotalSegments": total})
    for number, total in ((0, 11), (0, 0), (-1, 3)):
        with pytest.raises(ClientError) as caught:
            unvalidated_glue(endpoint).get_partitions(
                DatabaseName=db, TableName=table, Segment={"SegmentNumber": number, "TotalSegments": total})
        assert error_code(caught) == "InvalidInputException"


def test_exclude_column_schema(glue, db, table):
    create_partitions(glue, db, table, [["1", "a"], ["2", "a"]])
    plain = glue.get_partitions(DatabaseName=db, TableName=table)["Partitions"]
    assert all(p["StorageDescriptor"]["Columns"] for p in plain)
    slim = glue.get_partitions(DatabaseName=db, TableName=table, ExcludeColumnSchema=True)["Partitions"]
    assert len(slim) == 2
    for partition in slim:
        assert "Columns" not in partition["StorageDescriptor"]
        assert partition["StorageDescriptor"]["Location"].startswith("s3://bucket/")
    # Everything else as the plain listing answers it (the slim one is re-encoded, not spliced).
    for full, partition in zip(plain, slim):
        assert partition == {**full, "StorageDescriptor": {k: v for k, v in full["StorageDescriptor"].items()
                                                           if k != "Columns"}}
    # Paging with ExcludeColumnSchema, and the stored partition still has its columns.
    paged = all_partitions(glue, db, table, page_size=1, ExcludeColumnSchema=True)
    assert len(paged) == 2 and all("Columns" not in p["StorageDescriptor"] for p in paged)
    got = glue.get_partition(DatabaseName=db, TableName=table, PartitionValues=["1", "a"])["Partition"]
    assert got["StorageDescriptor"]["Columns"]


# ----------------------------------------------------------------------------------- lifetime
def test_delete_table_removes_its_partitions(glue, db, table):
    create_partitions(glue, db, table, _grid(range(120), ["a"]))
    glue.delete_table(DatabaseName=db, Name=table)
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_partitions(DatabaseName=db, TableName=table)
    glue.create_table(DatabaseName=db, TableInput=partitioned_table(table, KEYS))
    assert glue.get_partitions(DatabaseName=db, TableName=table)["Partitions"] == []
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_partition(DatabaseName=db, TableName=table, PartitionValues=["1", "a"])
    assert glue.batch_get_partition(DatabaseName=db, TableName=table,
                                    PartitionsToGet=[{"Values": ["1", "a"]}])["Partitions"] == []
    # The old partitions do not block new ones with the same values.
    create_partitions(glue, db, table, [["1", "a"]])
    assert value_tuples(all_partitions(glue, db, table)) == [("1", "a")]


def test_batch_delete_table_removes_partitions(glue, db):
    for name in ("t1", "t2"):
        glue.create_table(DatabaseName=db, TableInput=partitioned_table(name, KEYS))
        create_partitions(glue, db, name, [["1", name]])
    glue.batch_delete_table(DatabaseName=db, TablesToDelete=["t1", "t2"])
    for name in ("t1", "t2"):
        glue.create_table(DatabaseName=db, TableInput=partitioned_table(name, KEYS))
        assert glue.get_partitions(DatabaseName=db, TableName=name)["Partitions"] == []


def test_delete_database_removes_partitions(glue):
    name = f"db_{uuid.uuid4().hex[:12]}"
    glue.create_database(DatabaseInput={"Name": name})
    glue.create_table(DatabaseName=name, TableInput=partitioned_table("t", KEYS))
    create_partitions(glue, name, "t", _grid(range(30), ["a", "b"]))
    glue.delete_database(Name=name)
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_partitions(DatabaseName=name, TableName="t")
    glue.create_database(DatabaseInput={"Name": name})
    glue.create_table(DatabaseName=name, TableInput=partitioned_table("t", KEYS))
    assert glue.get_partitions(DatabaseName=name, TableName="t")["Partitions"] == []
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_partition(DatabaseName=name, TableName="t", PartitionValues=["1", "a"])
    glue.delete_database(Name=name)


def test_partitions_are_isolated_between_catalogs(make_client):
    bob = make_client("glue", account=random_account())
    account = random_account()
    alice = make_client("glue", account=account)
    alice_eu = make_client("glue", account=account, region="eu-west-1")
    for client in (alice, bob, alice_eu):
        client.create_database(DatabaseInput={"Name": "shared"})
        client.create_table(DatabaseName="shared", TableInput=partitioned_table("t", KEYS))
    create_partitions(alice, "shared", "t", [["1", "alice"]])
    create_partitions(bob, "shared", "t", [["2", "bob"]])
    assert value_tuples(all_partitions(alice, "shared", "t")) == [("1", "alice")]
    assert value_tuples(all_partitions(bob, "shared", "t")) == [("2", "bob")]
    with pytest.raises(bob.exceptions.EntityNotFoundException):
        bob.get_partition(DatabaseName="shared", TableName="t", PartitionValues=["1", "alice"])
    bob.delete_partition(DatabaseName="shared", TableName="t", PartitionValues=["2", "bob"])
    with pytest.raises(bob.exceptions.EntityNotFoundException):
        bob.delete_partition(DatabaseName="shared", TableName="t", PartitionValues=["1", "alice"])
    assert value_tuples(all_partitions(alice, "shared", "t")) == [("1", "alice")]
    assert alice_eu.get_partitions(DatabaseName="shared", TableName="t")["Partitions"] == []


# -------------------------------------------------------------------------------- edge values
def test_values_that_compare_equal_are_still_distinct_partitions(glue, db, table):
    create_partitions(glue, db, table, [["7", "a"], ["007", "a"], ["+7", "a"]])
    assert sorted(value_tuples(all_partitions(glue, db, table))) == [("+7", "a"), ("007", "a"), ("7", "a")]
    got = glue.get_partition(DatabaseName=db, TableName=table, PartitionValues=["007", "a"])["Partition"]
    assert got["Values"] == ["007", "a"]
    assert sorted(value_tuples(all_partitions(glue, db, table, Expression="year = 7"))) == [
        ("+7", "a"), ("007", "a"), ("7", "a")]
    glue.delete_partition(DatabaseName=db, TableName=table, PartitionValues=["7", "a"])
    assert sorted(value_tuples(all_partitions(glue, db, table, Expression="year = 7"))) == [
        ("+7", "a"), ("007", "a")]


def test_long_and_unusual_values(glue, db):
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("t", [("a", "string"), ("b", "string")]))
    long_a = "日" * 1024  # 3,072 UTF-8 bytes: far beyond a DynamoDB sort key
    rows = [
        [long_a, "x"], [long_a, "y"], [long_a[:-1] + "本", "x"], ["A" * 1024, "B" * 1024], ["A" * 1024, "B" * 1023 + "C"],
        ["x\x00y", "1"], ["x\x01y", "1"], ["x\x02y", "1"], ["x", "\x01"], ["x\x01", "y"], ["😀", "é"],
    ]
    create_partitions(glue, db, "t", rows)
    assert sorted(value_tuples(all_partitions(glue, db, "t", page_size=2))) == sorted(map(tuple, rows))
    for values in rows:
        got = glue.get_partition(DatabaseName=db, TableName="t", PartitionValues=values)["Partition"]
        assert got["Values"] == values
    resp = glue.batch_get_partition(DatabaseName=db, TableName="t", PartitionsToGet=[{"Values": v} for v in rows])
    assert sorted(value_tuples(resp["Partitions"])) == sorted(map(tuple, rows))
    expression = "a = '" + long_a + "'"
    assert sorted(value_tuples(all_partitions(glue, db, "t", Expression=expression))) == [(long_a, "x"), (long_a, "y")]
    expression = "a = '" + "A" * 1024 + "' AND b LIKE '%C'"
    assert value_tuples(all_partitions(glue, db, "t", Expression=expression)) == [("A" * 1024, "B" * 1023 + "C")]
    expression = "a >= '" + "A" * 1000 + "' AND a < 'B' AND b >= '" + "B" * 1000 + "'"
    assert set(value_tuples(all_partitions(glue, db, "t", Expression=expression))) == {
        ("A" * 1024, "B" * 1023 + "C"), ("A" * 1024, "B" * 1024)}
    assert sorted(value_tuples(all_partitions(glue, db, "t", Expression="a LIKE 'x_y'"))) == [
        ("x\x00y", "1"), ("x\x01y", "1"), ("x\x02y", "1")]
    assert value_tuples(all_partitions(glue, db, "t", Expression="a = 'x' AND b < ' '")) == [("x", "\x01")]
    assert value_tuples(all_partitions(glue, db, "t", Expression="a > 'x' AND a < 'x '")) == [
        ("x\x00y", "1"), ("x\x01", "y"), ("x\x01y", "1"), ("x\x02y", "1")]
    glue.batch_delete_partition(DatabaseName=db, TableName="t", PartitionsToDelete=[{"Values": v} for v in rows[:5]])
    assert len(all_partitions(glue, db, "t")) == len(rows) - 5


def test_pages_are_cut_by_size(glue, db, table):
    import random
    import string

    rng = random.Random(7)
    # ~200 KB of barely compressible text per partition: 25 of them make ~5 MB, more than one
    # page should carry (a Lambda response is capped at 6 MB).
    blob = lambda: "".join(rng.choices(string.ascii_letters + string.digits, k=200_000))  # noqa: E731
    for start in range(0, 25, 5):
        errors = glue.batch_create_partition(DatabaseName=db, TableName=table, PartitionInputList=[
            partition_input([str(i), "big"], Parameters={"blob": blob()}) for i in range(start, start + 5)])["Errors"]
        assert errors == []
    pages = list(glue.get_paginator("get_partitions").paginate(DatabaseName=db, TableName=table))
    assert len(pages) >= 2
    for page in pages:
        assert int(page["ResponseMetadata"]["HTTPHeaders"]["content-length"]) < 6_000_000
    got = [tuple(p["Values"]) for page in pages for p in page["Partitions"]]
    assert sorted(got) == sorted((str(i), "big") for i in range(25))
    assert all(len(p["Parameters"]["blob"]) == 200_000 for page in pages for p in page["Partitions"])
    wanted = [{"Values": [str(i), "big"]} for i in range(25)]
    resp = glue.batch_get_partition(DatabaseName=db, TableName=table, PartitionsToGet=wanted)
    assert int(resp["ResponseMetadata"]["HTTPHeaders"]["content-length"]) < 6_000_000
    returned = value_tuples(resp["Partitions"])
    unprocessed = [tuple(k["Values"]) for k in resp["UnprocessedKeys"]]
    assert unprocessed, "5 MB do not come back in one response"
    assert sorted(returned + unprocessed) == sorted((str(i), "big") for i in range(25))


def test_queries_follow_a_widened_key_type(glue, db):
    # Without an index, UpdateTable may retype a key. Values out of range for the old type
    # (3000000000 for int, 200 for tinyint) are valid under the new one and must match.
    keys = [("a", "int"), ("b", "tinyint")]
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("t", keys))
    create_partitions(glue, db, "t", [["3000000000", "1"], ["1", "200"], ["7", "7"]])
    assert value_tuples(all_partitions(glue, db, "t", Expression="a > 5")) == [("7", "7")]
    assert value_tuples(all_partitions(glue, db, "t", Expression="a = 1 AND b > 100")) == []
    glue.update_table(DatabaseName=db, TableInput=partitioned_table("t", [("a", "bigint"), ("b", "int")]))
    assert sorted(value_tuples(all_partitions(glue, db, "t", Expression="a > 5"))) == [
        ("3000000000", "1"), ("7", "7")]
    assert value_tuples(all_partitions(glue, db, "t", Expression="a = 3000000000")) == [("3000000000", "1")]
    assert value_tuples(all_partitions(glue, db, "t", Expression="a = 1 AND b > 100")) == [("1", "200")]
    assert value_tuples(all_partitions(glue, db, "t", Expression="a = 1 AND b = 200")) == [("1", "200")]
    # Narrowing back: values out of range for the narrower type match no comparison again.
    glue.update_table(DatabaseName=db, TableInput=partitioned_table("t", keys))
    assert value_tuples(all_partitions(glue, db, "t", Expression="a > 5")) == [("7", "7")]


def test_batch_update_failure_is_reported_for_the_right_entry(glue, db, table):
    create_partitions(glue, db, table, [["1", "a"], ["2", "a"], ["3", "a"], ["4", "a"]])
    entries = [
        {"PartitionValueList": ["1", "a"], "PartitionInput": partition_input(["2", "a"])},  # onto an existing one
        {"PartitionValueList": ["3", "a"], "PartitionInput": partition_input(["30", "a"])},  # a valid move
        {"PartitionValueList": ["4", "a"], "PartitionInput": partition_input(["40", "a"])},  # another
    ]
    errors = glue.batch_update_partition(DatabaseName=db, TableName=table, Entries=entries)["Errors"]
    assert [(e["PartitionValueList"], e["ErrorDetail"]["ErrorCode"]) for e in errors] == [
        (["1", "a"], "AlreadyExistsException")]
    assert sorted(value_tuples(all_partitions(glue, db, table))) == [
        ("1", "a"), ("2", "a"), ("30", "a"), ("40", "a")]


def test_writes_right_after_a_table_change_see_the_change(glue, db):
    """Partition writes may reuse a table read for a moment; a change of the table (here its
    partition keys, then the table itself) must still be seen by the very next write."""
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("moving", [("year", "int")]))
    create_partitions(glue, db, "moving", [["2023"]])
    glue.update_table(DatabaseName=db, TableInput=partitioned_table("moving", [("year", "int"), ("month", "int")]))
    answer = glue.batch_create_partition(DatabaseName=db, TableName="moving", PartitionInputList=[
        {"Values": ["2024", "1"]}, {"Values": ["2025"]}])
    assert [e["PartitionValues"] for e in answer["Errors"]] == [["2025"]]
    assert answer["Errors"][0]["ErrorDetail"]["ErrorCode"] == "InvalidInputException"
    glue.delete_table(DatabaseName=db, Name="moving")
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("moving", [("day", "string")]))
    create_partitions(glue, db, "moving", [["mon"]])
    assert value_tuples(all_partitions(glue, db, "moving")) == [("mon",)]


# -------------------------------------------------------------------------------- hardening
def test_partition_input_without_values_is_refused(glue, db, table):
    """botocore's model leaves PartitionInput.Values optional; a partition cannot do without."""
    no_values = {"StorageDescriptor": {"Location": "s3://bucket/x/"}}
    with pytest.raises(glue.exceptions.InvalidInputException, match="PartitionInput.Values"):
        glue.create_partition(DatabaseName=db, TableName=table, PartitionInput=no_values)
    assert all_partitions(glue, db, table) == []
    glue.create_partition(DatabaseName=db, TableName=table, PartitionInput=partition_input(["2024", "eu"]))
    with pytest.raises(glue.exceptions.InvalidInputException, match="PartitionInput.Values"):
        glue.update_partition(DatabaseName=db, TableName=table, PartitionValueList=["2024", "eu"],
                              PartitionInput=no_values)
    stored = glue.get_partition(DatabaseName=db, TableName=table, PartitionValues=["2024", "eu"])["Partition"]
    assert stored["StorageDescriptor"]["Location"] == "s3://bucket/2024/eu/"


def test_batch_create_without_values_fails_only_that_entry(glue, db, table):
    errors = glue.batch_create_partition(DatabaseName=db, TableName=table, PartitionInputList=[
        partition_input(["2024", "eu"]), {"Parameters": {"k": "v"}}, partition_input(["2024", "us"])])["Errors"]
    assert [(e["PartitionValues"], e["ErrorDetail"]["ErrorCode"]) for e in errors] == [([], "InvalidInputException")]
    assert "PartitionInput.Values" in errors[0]["ErrorDetail"]["ErrorMessage"]
    assert sorted(value_tuples(all_partitions(glue, db, table))) == [("2024", "eu"), ("2024", "us")]
    errors = glue.batch_update_partition(DatabaseName=db, TableName=table, Entries=[
        {"PartitionValueList": ["2024", "eu"], "PartitionInput": {"Parameters": {"k": "v"}}},
        {"PartitionValueList": ["2024", "us"], "PartitionInput": partition_input(["2024", "us"], Parameters={"k": "v"})},
    ])["Errors"]
    assert [(e["PartitionValueList"], e["ErrorDetail"]["ErrorCode"]) for e in errors] == [
        (["2024", "eu"], "InvalidInputException")]
    by_values = {tuple(p["Values"]): p for p in all_partitions(glue, db, table)}
    assert "Parameters" not in by_values[("2024", "eu")] and by_values[("2024", "us")]["Parameters"] == {"k": "v"}


def test_partition_timestamps_clients_cannot_read_back_are_refused(glue, db, table):
    too_late = dt.datetime(9999, 12, 31, 12, tzinfo=dt.timezone.utc)
    with pytest.raises(glue.exceptions.InvalidInputException, match="lastAccessTime"):
        glue.batch_create_partition(DatabaseName=db, TableName=table, PartitionInputList=[
            partition_input(["2024", "eu"]), partition_input(["2024", "us"], LastAccessTime=too_late)])
    assert all_partitions(glue, db, table) == []


def test_a_stored_unreadable_partition_timestamp_does_not_break_reads(glue, db, table, stack):
    """A partition written before out-of-range timestamps were refused: its table still lists."""
    good = dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)
    glue.batch_create_partition(DatabaseName=db, TableName=table, PartitionInputList=[
        partition_input([str(year), "eu"], LastAccessTime=good, LastAnalyzedTime=good) for year in (2023, 2024, 2025)])
    store = Store(stack)
    items = store.query("partitions", "table_uid", store.table_item(db, table)["uid"]["S"])
    planted = next(item for item in items if [v["S"] for v in item["values"]["L"]] == ["2024", "eu"])

    def plant(doc):
        doc["LastAccessTime"], doc["LastAnalyzedTime"] = 1e13, -1e20
    store.rewrite_doc("partitions", planted, plant)

    def check(partitions):
        by_year = {p["Values"][0]: p for p in partitions}
        assert sorted(by_year) == ["2023", "2024", "2025"]
        assert "LastAccessTime" not in by_year["2024"] and "LastAnalyzedTime" not in by_year["2024"]
        assert by_year["2023"]["LastAccessTime"] == good and by_year["2025"]["LastAnalyzedTime"] == good

    check(all_partitions(glue, db, table))
    check(all_partitions(glue, db, table, page_size=1))
    check(all_partitions(glue, db, table, ExcludeColumnSchema=True))
    check(all_partitions(glue, db, table, Expression="region = 'eu'"))
    check(glue.batch_get_partition(DatabaseName=db, TableName=table, PartitionsToGet=[
        {"Values": [str(year), "eu"]} for year in (2023, 2024, 2025)])["Partitions"])
    one = glue.get_partition(DatabaseName=db, TableName=table, PartitionValues=["2024", "eu"])["Partition"]
    assert "LastAccessTime" not in one and one["Values"] == ["2024", "eu"]
