"""Crash consistency of partition writes and index backfills, with a real process kill.

A server started with GLUE_FAULT_CRASH_AT exits (os._exit(137), see chalicelib/faults.py) at
that step; a server on the same DynamoDB without the hook must then show a consistent state
and finish what was interrupted without anyone redoing it:

- an index whose backfill died stays CREATING only until its owner's lease runs out
  (GLUE_BACKFILL_LEASE_SECONDS, a few seconds here); the next request that reads the table's
  indexes resumes it from its cursor, and it becomes ACTIVE (or FAILED with the reason) on its own;
- a BatchCreatePartition killed between its DynamoDB transactions leaves each partition with
  all its index entries or absent altogether, and the same batch sent again completes it.

The servers killed come from ``start_server`` (DynamoDB Local is the session's, not a child of
the server killed); the session's own server, which never had the hook, carries on.
"""

from __future__ import annotations

import itertools
import time
from typing import Any, Callable, Iterable

import pytest
from botocore.exceptions import ConnectionError as BotoConnectionError
from botocore.exceptions import HTTPClientError

from infra.local.stack import client
from tests.integration.partition_helpers import (all_partitions, create_partitions, items_read,
                                                 partition_input, partitioned_table, value_tuples)

KEYS = [("year", "int"), ("region", "string"), ("kind", "string")]
REGIONS = [f"r{i}" for i in range(10)]
KINDS = [f"k{i}" for i in range(10)]
pytestmark = pytest.mark.slow  # each test fills a table, kills a server and starts another

LEASE = "1"
DEAD_LEASE = "5"
KILLED = (BotoConnectionError, HTTPClientError)

Row = tuple[str, str, str]


def rows(years: Iterable[int], regions: Iterable[str] = REGIONS, kinds: Iterable[str] = KINDS) -> list[Row]:
    return [(str(y), r, k) for y, r, k in itertools.product(years, regions, kinds)]


def index(name: str, *keys: str) -> dict:
    return {"IndexName": name, "Keys": list(keys)}


def status_of(glue: Any, db: str, table: str, name: str) -> dict:
    found = glue.get_partition_indexes(DatabaseName=db, TableName=table)["PartitionIndexDescriptorList"]
    return next(d for d in found if d["IndexName"] == name)


def settled(glue: Any, db: str, table: str, name: str) -> dict:
    """The index once it is no longer CREATING: each GetPartitionIndexes may advance a backfill
    it took over by a bounded share, so ask until it is done (a bounded number of times)."""
    for _ in range(60):
        descriptor = status_of(glue, db, table, name)
        if descriptor["IndexStatus"] != "CREATING":
            return descriptor
        time.sleep(0.25)
    raise AssertionError(f"index {name} still CREATING")


def check_indexed(glue: Any, db: str, table: str, expected: set[Row], key: str, values: Iterable[str],
                  position: int) -> None:
    """Per value of an indexed key, GetPartitions served by the index (it reads about as many
    items as it returns; a scan would read every partition) returns exactly the partitions
    that exist: none missing its entry, no entry without its partition."""
    for value in values:
        resp = glue.get_partitions(DatabaseName=db, TableName=table, Expression=f"{key} = '{value}'")
        wanted = sorted(row for row in expected if row[position] == value)
        assert sorted(value_tuples(resp["Partitions"])) == wanted, (key, value)
        assert "NextToken" not in resp
        assert items_read(resp) <= 1.2 * len(wanted) + 3, (key, value, items_read(resp), len(wanted))


def check_everything(glue: Any, db: str, table: str, expected: set[Row]) -> None:
    assert sorted(value_tuples(all_partitions(glue, db, table))) == sorted(expected)
    # Two keys on the index: a range read within one region.
    resp = glue.get_partitions(DatabaseName=db, TableName=table, Expression="region = 'r3' AND year >= 2008")
    assert sorted(value_tuples(resp["Partitions"])) == sorted(
        r for r in expected if r[1] == "r3" and int(r[0]) >= 2008)


def crash(start_server: Callable[..., Any], step: str, call: Callable[[Any], Any], lease: str = LEASE) -> float:
    """Run ``call`` with a client of a server that dies at ``step`` (holding backfill leases of
    ``lease`` seconds); check that it died there. Returns when it died (time.time())."""
    # A work budget far above the test's: the backfill must reach its crash point in the request,
    # not hand the rest to the background on a slow machine.
    crashing = start_server(GLUE_FAULT_CRASH_AT=step, GLUE_BACKFILL_LEASE_SECONDS=lease,
                            GLUE_WORK_BUDGET_SECONDS="600")
    with pytest.raises(KILLED):
        call(client(crashing.endpoint, "glue"))
    died = time.time()
    assert crashing.process.wait(10) == 137
    crashing.stop()
    return died


# ---------------------------------------------------------------------------------- backfill
@pytest.mark.parametrize("step", ["index-creating", "mid-backfill", "backfill-scanned"])
def test_interrupted_backfill_is_resumed_by_later_requests(glue, db, start_server, step):
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("sales", KEYS))
    existing = rows(range(2000, 2011))  # 1,100 partitions: the backfill's chunks are 500
    create_partitions(glue, db, "sales", existing)
    # The dead owner's lease is long enough, usually, for the writes below to happen while the
    # index is CREATING and nobody works on it; if they come later, they take the backfill over.
    died = crash(start_server, step, lambda dying: dying.create_partition_index(
        DatabaseName=db, TableName="sales", PartitionIndex=index("by_region", "region", "year")), lease=DEAD_LEASE)

    # The session's server (no hook, the default lease) carries on. Writes keep a CREATING index
    # right: creates, deletes on both sides of the cursor, moves.
    recovered = glue
    assert status_of(recovered, db, "sales", "by_region")["IndexStatus"] in ("CREATING", "ACTIVE")
    expected = set(existing)
    added = rows([2011], kinds=["k0", "k1", "k2"])
    create_partitions(recovered, db, "sales", added)
    expected |= set(added)
    doomed = [("2000", "r1", "k1"), ("2000", "r7", "k2"), ("2010", "r2", "k3"), ("2010", "r9", "k9")]
    errors = recovered.batch_delete_partition(DatabaseName=db, TableName="sales",
                                              PartitionsToDelete=[{"Values": list(r)} for r in doomed])["Errors"]
    assert errors == []
    expected -= set(doomed)
    for kind in ("k4", "k5"):
        old, new = ("2005", "r4", kind), ("2020", "r4", kind)
        recovered.update_partition(DatabaseName=db, TableName="sales", PartitionValueList=list(old),
                                   PartitionInput=partition_input(new))
        expected = (expected - {old}) | {new}

    time.sleep(max(0.0, died + float(DEAD_LEASE) + 0.2 - time.time()))  # past the dead owner's lease
    descriptor = settled(recovered, db, "sales", "by_region")
    assert descriptor["IndexStatus"] == "ACTIVE", descriptor
    assert "BackfillErrors" not in descriptor
    check_indexed(recovered, db, "sales", expected, "region", REGIONS, 1)
    check_everything(recovered, db, "sales", expected)


def test_backfill_failure_found_before_the_crash_is_kept(glue, db, start_server):
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("sales", KEYS))
    existing = rows(range(2000, 2011))
    bad = ("abc", "r1", "k1")  # not an int: sorts before every valid year, so in the first chunk
    create_partitions(glue, db, "sales", existing + [bad])
    crash(start_server, "mid-backfill", lambda dying: dying.create_partition_index(
        DatabaseName=db, TableName="sales", PartitionIndex=index("by_year", "year", "region")))

    # One chunk per request that takes it over: the rest (and the error) is carried over twice.
    recovered = client(start_server(GLUE_BACKFILL_RESUME_CHUNKS="1").endpoint, "glue")
    time.sleep(float(LEASE) + 0.2)
    descriptor = settled(recovered, db, "sales", "by_year")
    assert descriptor["IndexStatus"] == "FAILED"
    assert descriptor["BackfillErrors"] == [{"Code": "INVALID_PARTITION_TYPE_DATA_ERROR",
                                             "Partitions": [{"Values": list(bad)}]}]
    # The failed index serves nothing and holds no slot: three more fit.
    resp = recovered.get_partitions(DatabaseName=db, TableName="sales", Expression="year = 2003")
    assert sorted(value_tuples(resp["Partitions"])) == sorted(r for r in existing if r[0] == "2003")
    for name in ("a", "b", "c"):
        recovered.create_partition_index(DatabaseName=db, TableName="sales", PartitionIndex=index(name, "region"))
        assert status_of(recovered, db, "sales", name)["IndexStatus"] == "ACTIVE"


# ------------------------------------------------------------------------ partition writes
def test_batch_create_killed_between_transactions(glue, db, start_server):
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("sales", KEYS),
                      PartitionIndexes=[index("by_region", "region", "year"), index("by_kind", "kind")])
    before = set(rows([2000, 2001]))
    create_partitions(glue, db, "sales", before)
    # With two indexes a partition is three writes: 100 partitions take four transactions.
    batch = rows([2002], kinds=KINDS[:5]) + rows([2003], kinds=KINDS[5:])
    inputs = [partition_input(list(r)) for r in batch]
    crash(start_server, "between-partition-transactions", lambda dying: dying.batch_create_partition(
        DatabaseName=db, TableName="sales", PartitionInputList=inputs))

    found = set(value_tuples(all_partitions(glue, db, "sales")))
    created = found - before
    assert before <= found and created <= set(batch)
    assert 0 < len(created) < len(batch), len(created)  # the first transaction, not the others
    check_indexed(glue, db, "sales", found, "region", REGIONS, 1)
    check_indexed(glue, db, "sales", found, "kind", KINDS, 2)
    # Each partition of the batch is there whole (its document too) or not at all.
    got = glue.batch_get_partition(DatabaseName=db, TableName="sales",
                                   PartitionsToGet=[{"Values": list(r)} for r in batch])["Partitions"]
    assert {tuple(p["Values"]) for p in got} == created
    for partition in got:
        assert partition["StorageDescriptor"] == partition_input(partition["Values"])["StorageDescriptor"]

    # The same batch again completes it: what is there is reported as such, the rest created.
    errors = glue.batch_create_partition(DatabaseName=db, TableName="sales", PartitionInputList=inputs)["Errors"]
    assert {tuple(e["PartitionValues"]) for e in errors} == created
    assert {e["ErrorDetail"]["ErrorCode"] for e in errors} == {"AlreadyExistsException"}
    everything = before | set(batch)
    assert sorted(value_tuples(all_partitions(glue, db, "sales"))) == sorted(everything)
    check_indexed(glue, db, "sales", everything, "region", REGIONS, 1)
    check_indexed(glue, db, "sales", everything, "kind", KINDS, 2)
