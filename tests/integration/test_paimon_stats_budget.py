"""A Paimon commit's partition statistics within the work budget, through pypaimon's RESTCatalog:
a commit may name any number of partitions, so it applies what its budget allows, publishes the
snapshot and leaves the rest to a cleanup job and to whoever settles the head next
(chalicelib/service/paimon_snapshots.py, "statistics left past the budget"). Until they are all
applied the next commit answers "not committed", which Paimon's clients retry.

A stack of its own (``spent``, tests/integration/conftest.py): work budget 0 s (each call applies one chunk of STATS_CHUNK partitions, then
stops) and no background cleaner, so what a commit left is seen before the scheduled cleaner's
code (run in a process of its own, as deployed) finishes it.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from pypaimon.catalog.catalog_factory import CatalogFactory
from pypaimon.catalog.rest.rest_catalog import RESTCatalog
from pypaimon.common.identifier import Identifier
from pypaimon.snapshot.snapshot import Snapshot
from pypaimon.snapshot.snapshot_commit import PartitionStatistics

from chalicelib.service.paimon_snapshots import STATS_CHUNK, STATS_JOB
from chalicelib.store.paimon import head_key
from infra.local.stack import CatalogStack
from tests.conftest import client
from tests.integration.test_paimon_commits import directory, glue_values
from tests.integration.test_paimon_drop_budget import _jobs, _run_scheduled_cleaner, _wide_table
from tests.integration.store_helpers import Store
from tests.integration.test_paimon_protocol import options

PARTITIONS = 5 * STATS_CHUNK  # five calls' worth at one chunk a call


@pytest.fixture(scope="module")
def paimon(spent: CatalogStack) -> RESTCatalog:
    catalog = CatalogFactory.create(options(spent.endpoint))
    assert isinstance(catalog, RESTCatalog)
    return catalog


def _commit(paimon: RESTCatalog, table: Any, identifier: Identifier, base: Snapshot, regions: list[str]) -> bool:
    """Commit a snapshot on ``base`` (id + 1) whose statistics add a file of 10 records to each region."""
    proposed = Snapshot(**{**base.__dict__, "id": base.id + 1, "uuid": str(uuid.uuid4())})
    stats = [PartitionStatistics(spec={"region": region}, record_count=10, file_size_in_bytes=100, file_count=1,
                                 last_file_creation_time=1) for region in regions]
    return paimon.rest_api.commit_snapshot(identifier, table.catalog_environment.uuid, base.uuid, proposed, stats)


def _partitions(spent: CatalogStack, db: str) -> dict[str, tuple[int, int, int]]:
    """(records, bytes, files) by partition value, from the partition items themselves: listing
    2,500 partitions through a server with a work budget of 0 s takes thousands of short pages."""
    uid = Store(spent).table_item(db, "wide")["uid"]["S"]
    return {item["values"]["L"][0]["S"]: tuple(int(item.get(name, {"N": "0"})["N"])  # type: ignore[misc]
                                               for name in ("p_records", "p_bytes", "p_files"))
            for item in Store(spent).query("partitions", "table_uid", uid)}


def test_a_commit_of_many_partitions_publishes_at_once_and_its_statistics_follow(
        paimon: RESTCatalog, spent: CatalogStack) -> None:
    db, identifier, table = _wide_table(paimon, "pstats")
    first = paimon.load_snapshot(identifier).snapshot
    regions = [f"r{n:05d}" for n in range(PARTITIONS)]
    glue = client(spent.endpoint, "glue")

    assert _commit(paimon, table, identifier, first, regions) is True
    # Published at once (the directory's LATEST and the head), one chunk of statistics applied.
    assert (directory(table, "snapshot", "LATEST")).read_text() == "2"
    assert len(_partitions(spent, db)) == 1 + STATS_CHUNK
    assert [job for job in _jobs(spent, STATS_JOB) if job["database"]["S"] == db]
    second = paimon.load_snapshot(identifier)
    assert second.snapshot.id == 2
    assert len(_partitions(spent, db)) == 1 + STATS_CHUNK  # a read leaves statistics to moves and the job
    assert (second.record_count, second.file_count) == (1 + 10 * PARTITIONS, 1 + PARTITIONS)  # totals at once

    # Statistics still left: the next commit is not decided (pypaimon retries such an answer)...
    assert _commit(paimon, table, identifier, second.snapshot, ["eu"]) is False
    assert paimon.load_snapshot(identifier).snapshot.id == 2
    assert len(_partitions(spent, db)) == 1 + 2 * STATS_CHUNK  # that commit applied one more chunk

    # ...until the cleaner (or the calls settling the head) applied them all, each once.
    _run_scheduled_cleaner(spent)
    assert not [job for job in _jobs(spent, STATS_JOB) if job["database"]["S"] == db]
    assert _commit(paimon, table, identifier, second.snapshot, ["eu"]) is True
    stats = _partitions(spent, db)
    assert len(stats) == 1 + PARTITIONS
    assert {stats[region] for region in regions} == {(10, 100, 1)}
    assert (stats["eu"][0], stats["eu"][2]) == (1 + 10, 2)
    # As Paimon's and Glue's clients see them.
    assert glue_values(glue, db, "wide", "region = 'r00042'") == [["r00042"]]
    (listed,) = paimon.list_partitions_paged(identifier, partition_name_pattern="region=r02499").elements
    assert (listed.record_count, listed.file_size_in_bytes, listed.file_count) == (10, 100, 1)
    assert paimon.load_snapshot(identifier).snapshot.id == 3


def _hold_lease(spent: CatalogStack, db: str, seconds: float) -> None:
    """Have another applier hold the lease on the head's pending statistics for ``seconds``
    from now (as a commit or the job applying them would)."""
    store = Store(spent)
    uid = store.table_item(db, "wide")["uid"]["S"]
    key = {"table_uid": {"S": uid}, "key": {"S": head_key()}}
    seq = store.client.get_item(TableName=store.prefix + "paimon", Key=key, ConsistentRead=True)["Item"]["stats_seq"]
    store.client.update_item(TableName=store.prefix + "paimon", Key=key,
                             UpdateExpression="SET stats_lease = :l, stats_until = :u",
                             ExpressionAttributeValues={":l": {"S": f"{seq['N']}:another"},
                                                        ":u": {"N": str(time.time() + seconds)}})


def test_statistics_another_applier_holds_are_left_to_it_and_taken_over_when_its_lease_runs_out(
        paimon: RESTCatalog, spent: CatalogStack) -> None:
    db, identifier, table = _wide_table(paimon, "plock")
    regions = [f"r{n:05d}" for n in range(PARTITIONS)]
    assert _commit(paimon, table, identifier, paimon.load_snapshot(identifier).snapshot, regions) is True
    assert len(_partitions(spent, db)) == 1 + STATS_CHUNK
    second = paimon.load_snapshot(identifier).snapshot

    # Held by another applier: a commit leaves the statistics to it (nothing applied) and, its
    # budget spent, answers "not committed".
    _hold_lease(spent, db, 600)
    assert _commit(paimon, table, identifier, second, ["eu"]) is False
    assert len(_partitions(spent, db)) == 1 + STATS_CHUNK

    # A commit with budget to spare waits for the holder; when its lease runs out (a holder that
    # died), the commit takes over, applies the rest and commits.
    _hold_lease(spent, db, 1.5)
    patient = spent.extra_server({"GLUE_WORK_BUDGET_SECONDS": "120"}, name="patient").start()
    try:
        catalog = CatalogFactory.create(options(patient.endpoint))
        assert _commit(catalog, catalog.get_table(identifier), identifier, second, ["eu"]) is True
    finally:
        patient.stop()
    stats = _partitions(spent, db)
    assert len(stats) == 1 + PARTITIONS
    assert {stats[region] for region in regions} == {(10, 100, 1)}
    assert paimon.load_snapshot(identifier).snapshot.id == 3
