"""Unindexed GetPartitions through the table's partition digest, over boto3 and HTTP: the same
answers, in the same order, as a read of every partition, whatever writes came before (creates,
deletes, value-changing updates, re-creations), through compaction, rebuilds of a table without
a digest, pruning of deleted partitions, oversized deltas, segments and NextToken paging."""

from __future__ import annotations

import base64
import os
import time
from typing import Any, Callable, Sequence

import pytest

from chalicelib.domain import partition_digest
from infra.local.stack import client
from tests.integration.partition_helpers import (all_partitions, create_partitions, items_read,
                                                 partition_input, partitioned_table, value_tuples)
from tests.integration.store_helpers import Store

KEYS = [("region", "string"), ("year", "int"), ("tag", "string")]
REGIONS = ["eu", "us", "ap"]
TAGS = ["alpha", "beta", "gamma", "delta", "omega"]

# Expressions no plan narrows (none pins the leading key), with what they mean in Python.
EXPRESSIONS: list[tuple[str, Callable[[Sequence[str]], bool]]] = [
    ("tag = 'beta'", lambda v: v[2] == "beta"),
    ("year > 2015 AND tag LIKE '%a'", lambda v: int(v[1]) > 2015 and v[2].endswith("a")),
    ("NOT (tag IN ('alpha', 'omega')) AND year BETWEEN 2011 AND 2013",
     lambda v: v[2] not in ("alpha", "omega") and 2011 <= int(v[1]) <= 2013),
    ("tag = 'moved' OR year = 2099", lambda v: v[2] == "moved" or v[1] == "2099"),
]


def eventually(condition: Callable[[], bool], seconds: float = 90) -> None:
    """Wait for the background cleaner's work (a digest rebuild or compaction) to show."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the background rebuild did not happen"
        time.sleep(0.3)


def rows() -> list[list[str]]:
    return [[r, str(y), t] for r in REGIONS for y in range(2010, 2020) for t in TAGS]  # 150


@pytest.fixture
def store(stack: Any) -> Store:
    return Store(stack)


@pytest.fixture
def small_digest(start_server: Any) -> Any:
    """A Glue client of a server that compacts the digest after 2 deltas and prunes it after 4
    misses, so these paths run on small tables."""
    server = start_server(GLUE_DIGEST_COMPACT_DELTAS="2", GLUE_DIGEST_PRUNE_MISSES="4")
    return client(server.endpoint, "glue")


def digest_items(store: Store, db: str, table: str) -> list[dict[str, Any]]:
    uid = store.table_item(db, table)["uid"]["S"]
    return store.query("partition_digests", "table_uid", uid)


def digest_rows(store: Store, db: str, table: str) -> list[tuple[tuple[str, ...], int]]:
    found = []
    for item in digest_items(store, db, table):
        if "data" in item:
            found.extend(partition_digest.decode(item["data"]["B"]).rows())
    return found


def every_partition(glue: Any, db: str, table: str) -> list[tuple[str, ...]]:
    """Every partition in key order, read the plain way (no expression, no segment)."""
    return value_tuples(all_partitions(glue, db, table))


def check_expressions(glue: Any, db: str, table: str, page_size: int | None = None) -> None:
    everything = every_partition(glue, db, table)
    for expression, meaning in EXPRESSIONS:
        found = value_tuples(all_partitions(glue, db, table, page_size, Expression=expression))
        assert found == [v for v in everything if meaning(v)], expression


def make_table(glue: Any, db: str, name: str = "events") -> None:
    glue.create_table(DatabaseName=db, TableInput=partitioned_table(name, KEYS))


def test_unindexed_expressions_after_creates_deletes_and_updates(glue, db):
    make_table(glue, db)
    create_partitions(glue, db, "events", rows())
    check_expressions(glue, db, "events")
    # Deletes: the digest keeps their rows, the listing must not return them.
    gone = [v for v in rows() if v[1] == "2012"]
    for start in range(0, len(gone), 25):
        glue.batch_delete_partition(DatabaseName=db, TableName="events",
                                    PartitionsToDelete=[{"Values": v} for v in gone[start:start + 25]])
    check_expressions(glue, db, "events")
    # Updates that move partitions to new values, and one that keeps them.
    for values in (["eu", "2013", "beta"], ["us", "2015", "alpha"]):
        glue.update_partition(DatabaseName=db, TableName="events", PartitionValueList=values,
                              PartitionInput=partition_input([values[0], "2099", "moved"]
                                                             if values[0] == "eu" else [values[0], values[1], "moved"]))
    glue.update_partition(DatabaseName=db, TableName="events", PartitionValueList=["ap", "2014", "beta"],
                          PartitionInput=partition_input(["ap", "2014", "beta"], Parameters={"k": "v"}))
    check_expressions(glue, db, "events")
    # Re-created partitions are found again.
    create_partitions(glue, db, "events", gone[:10])
    check_expressions(glue, db, "events")
    found = value_tuples(all_partitions(glue, db, "events", Expression="tag = 'moved'"))
    assert found == [("eu", "2099", "moved"), ("us", "2015", "moved")]


def test_reads_only_the_digest_and_the_matches(glue, db):
    make_table(glue, db)
    create_partitions(glue, db, "events", rows())
    response = glue.get_partitions(DatabaseName=db, TableName="events", Expression="tag = 'beta' AND year = 2011")
    assert value_tuples(response["Partitions"]) == [("ap", "2011", "beta"), ("eu", "2011", "beta"),
                                                    ("us", "2011", "beta")]
    # The digest's few items and the three partitions, not the 150 partitions.
    assert items_read(response) < 20


def test_next_token_pages_through_digest_results(glue, db):
    make_table(glue, db)
    create_partitions(glue, db, "events", rows())
    check_expressions(glue, db, "events", page_size=4)
    pages = glue.get_paginator("get_partitions").paginate(
        DatabaseName=db, TableName="events", Expression="tag = 'beta'", PaginationConfig={"PageSize": 7})
    sizes = [len(page["Partitions"]) for page in pages]
    assert sum(sizes) == 30 and max(sizes) == 7 and len(sizes) == 5


@pytest.mark.parametrize("total", [1, 4, 10])
def test_segments_are_disjoint_and_complete(glue, db, total):
    make_table(glue, db)
    create_partitions(glue, db, "events", rows())
    everything = every_partition(glue, db, "events")
    for expression, meaning in [("", lambda v: True), *EXPRESSIONS[:2]]:
        parts = []
        for number in range(total):
            extra: dict[str, Any] = {"Expression": expression} if expression else {}
            parts.append(value_tuples(all_partitions(
                glue, db, "events", 5, Segment={"SegmentNumber": number, "TotalSegments": total}, **extra)))
        merged = [v for part in parts for v in part]
        assert len(merged) == len(set(merged))
        assert sorted(merged) == sorted(v for v in everything if meaning(v)), (expression, total)
        for part in parts:  # each segment in key order
            assert part == [v for v in everything if v in set(part)]


def test_segment_reads_its_share(glue, db):
    make_table(glue, db)
    create_partitions(glue, db, "events", rows())
    reads = [items_read(glue.get_partitions(DatabaseName=db, TableName="events",
                                            Segment={"SegmentNumber": n, "TotalSegments": 10}))
             for n in range(10)]
    assert max(reads) < 60, reads  # a tenth of 150 and the digest, not 150 each


def test_compaction_keeps_every_partition(small_digest, store, db):
    glue = small_digest
    make_table(glue, db)
    for start in range(0, 150, 30):
        create_partitions(glue, db, "events", rows()[start:start + 30])
    assert len(digest_items(store, db, "events")) == 6  # the empty base and five deltas
    check_expressions(glue, db, "events")
    # The writers and the reads queued a compaction; the background cleaner runs it (never a
    # request: its writes and deletes grow with the backlog).
    eventually(lambda: [item["kind"]["S"] for item in digest_items(store, db, "events")] == ["base"])
    assert sorted(v for v, _ in digest_rows(store, db, "events")) == sorted(map(tuple, rows()))
    create_partitions(glue, db, "events", [["zz", "2099", "moved"]])
    check_expressions(glue, db, "events")


def test_table_without_digest_is_rebuilt_from_its_partitions(glue, store, db):
    make_table(glue, db)
    create_partitions(glue, db, "events", rows())
    uid = store.table_item(db, "events")["uid"]["S"]
    for item in digest_items(store, db, "events"):  # as a table created before the digest
        store.client.delete_item(TableName=store.prefix + "partition_digests",
                                 Key={"table_uid": {"S": uid}, "key": item["key"]})
    check_expressions(glue, db, "events")  # right answers meanwhile, read as planned
    # The reads queued a rebuild; the background cleaner does it (never a request: it reads
    # every partition).
    eventually(lambda: [item["kind"]["S"] for item in digest_items(store, db, "events")] == ["base"])
    assert len(digest_rows(store, db, "events")) == 150
    check_expressions(glue, db, "events")


def test_deleted_partitions_are_pruned(small_digest, store, db):
    glue = small_digest
    make_table(glue, db)
    create_partitions(glue, db, "events", rows())
    gone = [v for v in rows() if v[2] != "beta"]
    for start in range(0, len(gone), 25):
        glue.batch_delete_partition(DatabaseName=db, TableName="events",
                                    PartitionsToDelete=[{"Values": v} for v in gone[start:start + 25]])
    found = value_tuples(all_partitions(glue, db, "events", Expression="year > 2016"))
    assert found == [tuple(v) for v in sorted(rows()) if v[2] == "beta" and int(v[1]) > 2016]
    # That read found mostly deleted partitions: it queued a rebuild, after which the digest
    # holds only the live ones.
    eventually(lambda: sorted(v for v, _ in digest_rows(store, db, "events"))
               == sorted(tuple(v) for v in rows() if v[2] == "beta"))


def test_oversized_delta_sends_the_reader_to_the_partitions(glue, store, db):
    keys = [(f"k{i}", "string") for i in range(12)]
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("wide", keys))
    values = [[base64.b64encode(os.urandom(700)).decode()[:900] + str(n) for _ in keys] for n in range(60)]
    for value_list in values:
        value_list[1] = "x" if int(value_list[0][-1]) % 2 else "y"
    create_partitions(glue, db, "wide", values)
    assert any("overflow" in item for item in digest_items(store, db, "wide"))
    found = value_tuples(all_partitions(glue, db, "wide", Expression="k1 = 'x'"))
    assert sorted(found) == sorted(tuple(v) for v in values if v[1] == "x")
    eventually(lambda: not any("overflow" in item for item in digest_items(store, db, "wide")))
