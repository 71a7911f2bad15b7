"""DeleteDatabase / DeleteTable / BatchDeleteTable answer without touching the contents, which are
deleted in the background (chalicelib/service/cleanup.py), through boto3 over HTTP:

- the name is free at once, and a database or table re-created under it sees nothing of the old
  one: partitions (GetPartitions, GetPartition, BatchGetPartition), partition indexes, table
  versions, column statistics, SearchTables;
- the cleanup eventually leaves no item of the old one in DynamoDB (checked directly);
- a cleaner killed in the middle of a job is taken over by another once its lease runs out
  (slow), and requests take over jobs no cleaner works on (slow, a stack without a cleaner).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Callable

import pytest
from botocore.exceptions import ConnectionError as BotoConnectionError
from botocore.exceptions import HTTPClientError

from infra.local.stack import REGION, CatalogStack, client
from tests.integration.lf_helpers import Governed, add, listed_partitions, partitions_of
from tests.integration.partition_helpers import create_partitions, partition_input, partitioned_table
from tests.integration.store_helpers import DEFAULT_ACCOUNT, Store

REPO = Path(__file__).resolve().parents[2]
RARE = "quokkaish"  # in the old table's description only: SearchTables must stop finding it
KEYS = [("year", "int"), ("region", "string")]
STATS = {"ColumnName": "value", "ColumnType": "string", "AnalyzedTime": 1700000000,
         "StatisticsData": {"Type": "STRING", "StringColumnStatisticsData": {
             "MaximumLength": 10, "AverageLength": 4.5, "NumberOfNulls": 1, "NumberOfDistinctValues": 7}}}
# Every table keyed by a table uid (hash key ``table_uid``).
TABLE_UID_TABLES = ["partitions", "column_statistics", "table_versions", "paimon", "lf_objects",
                    "lf_object_versions", "lf_partitions", "lf_partition_versions"]


def rows(count: int) -> list[list[str]]:
    return [[str(2000 + i // 10), f"r{i % 10}"] for i in range(count)]


def fill(glue: Any, db: str, name: str, count: int) -> None:
    """A table with ``count`` partitions, an index, two archived versions, table and partition
    statistics, and a rare token in its description."""
    glue.create_table(DatabaseName=db, TableInput=partitioned_table(name, KEYS, Description=f"old {RARE}"),
                      PartitionIndexes=[{"IndexName": "by_region", "Keys": ["region"]}])
    create_partitions(glue, db, name, rows(count))
    for n in range(2):
        glue.update_table(DatabaseName=db, TableInput=partitioned_table(name, KEYS, Description=f"v{n} {RARE}"))
    assert glue.update_column_statistics_for_table(DatabaseName=db, TableName=name,
                                                   ColumnStatisticsList=[STATS])["Errors"] == []
    assert glue.update_column_statistics_for_partition(DatabaseName=db, TableName=name, PartitionValues=rows(1)[0],
                                                       ColumnStatisticsList=[STATS])["Errors"] == []


def uids(store: Store, db: str, name: str, account: str = DEFAULT_ACCOUNT) -> dict[str, Any]:
    item = store.table_item(db, name, account)
    return {"db": store.database_uid(db, account), "table": item["uid"]["S"],
            "indexes": [index["uid"] for index in json.loads(item.get("indexes", {}).get("S") or "[]")]}


def leftovers(store: Store, old: dict[str, Any], whole_database: bool) -> dict[str, int]:
    """Items still stored below the old table (and database), by DynamoDB table."""
    found = {name: len(store.query(name, "table_uid", old["table"])) for name in TABLE_UID_TABLES}
    found["partition_index_entries"] = sum(len(store.query("partition_index_entries", "index_uid", uid))
                                           for uid in old["indexes"])
    if whole_database:
        found["tables"] = len(store.query("tables", "db_uid", old["db"]))
    jobs = store.query("cleanup_jobs", "queue", "purge")
    found["cleanup_jobs"] = sum(1 for job in jobs if job["uid"]["S"] in (old["db"], old["table"]))
    return {name: count for name, count in found.items() if count}


def wait_until_clean(store: Store, old: dict[str, Any], whole_database: bool, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while (left := leftovers(store, old, whole_database)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == {}, f"still stored after {timeout} s: {left}"


def postings(store: Store, token: str, account: str = DEFAULT_ACCOUNT) -> list[dict[str, Any]]:
    return store.query("search_postings", "term", f"{REGION}\x01{account}\x01t\x01{token}")


def check_nothing_old_visible(glue: Any, db: str, name: str) -> None:
    """``db.name`` was just re-created empty (same partition keys): nothing of the old shows."""
    old_values = rows(1)[0]
    assert glue.get_partitions(DatabaseName=db, TableName=name)["Partitions"] == []
    assert glue.get_partitions(DatabaseName=db, TableName=name, Expression="region = 'r0'")["Partitions"] == []
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_partition(DatabaseName=db, TableName=name, PartitionValues=old_values)
    batch = glue.batch_get_partition(DatabaseName=db, TableName=name,
                                     PartitionsToGet=[{"Values": v} for v in rows(5)])
    assert batch["Partitions"] == []
    assert glue.get_partition_indexes(DatabaseName=db, TableName=name)["PartitionIndexDescriptorList"] == []
    versions = glue.get_table_versions(DatabaseName=db, TableName=name)["TableVersions"]
    assert [v["VersionId"] for v in versions] == ["0"]
    got = glue.get_column_statistics_for_table(DatabaseName=db, TableName=name, ColumnNames=["value"])
    assert got["ColumnStatisticsList"] == []
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_column_statistics_for_partition(DatabaseName=db, TableName=name, PartitionValues=old_values,
                                                 ColumnNames=["value"])
    assert glue.search_tables(SearchText=RARE)["TableList"] == []
    # The new incarnation's own partition shows, without its predecessor's statistics.
    glue.create_partition(DatabaseName=db, TableName=name, PartitionInput=partition_input(old_values))
    assert [p["Values"] for p in glue.get_partitions(DatabaseName=db, TableName=name)["Partitions"]] == [old_values]
    got = glue.get_column_statistics_for_partition(DatabaseName=db, TableName=name, PartitionValues=old_values,
                                                   ColumnNames=["value"])
    assert got["ColumnStatisticsList"] == []


@pytest.fixture
def store(stack: CatalogStack) -> Store:
    return Store(stack)


def test_delete_database_frees_the_name_at_once_and_cleans_up_later(glue: Any, store: Store) -> None:
    db = f"asyncdel_{uuid.uuid4().hex[:10]}"
    glue.create_database(DatabaseInput={"Name": db, "Description": f"database {RARE}x"})
    fill(glue, db, "t", 300)
    old = uids(store, db, "t")
    assert glue.search_tables(SearchText=RARE)["TableList"]
    assert leftovers(store, old, True)["partitions"] == 300

    glue.delete_database(Name=db)
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_database(Name=db)
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.delete_database(Name=db)
    glue.create_database(DatabaseInput={"Name": db})
    assert glue.get_tables(DatabaseName=db)["TableList"] == []
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("t", KEYS))
    check_nothing_old_visible(glue, db, "t")

    wait_until_clean(store, old, whole_database=True)
    assert postings(store, RARE) == []
    # The new incarnation was left alone by the cleanup of the old one.
    assert len(glue.get_partitions(DatabaseName=db, TableName="t")["Partitions"]) == 1
    glue.delete_database(Name=db)


def test_delete_table_frees_the_name_at_once_and_cleans_up_later(glue: Any, db: str, store: Store) -> None:
    fill(glue, db, "t", 250)
    old = uids(store, db, "t")
    glue.delete_table(DatabaseName=db, Name="t")
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_table(DatabaseName=db, Name="t")
    glue.create_table(DatabaseName=db, TableInput=partitioned_table("t", KEYS))
    check_nothing_old_visible(glue, db, "t")
    wait_until_clean(store, old, whole_database=False)
    assert postings(store, RARE) == []
    assert len(glue.get_partitions(DatabaseName=db, TableName="t")["Partitions"]) == 1


def test_batch_delete_table_cleans_up_every_table(glue: Any, db: str, store: Store) -> None:
    fill(glue, db, "a", 120)
    fill(glue, db, "b", 80)
    old = [uids(store, db, name) for name in ("a", "b")]
    answer = glue.batch_delete_table(DatabaseName=db, TablesToDelete=["a", "b", "missing"])
    assert [e["TableName"] for e in answer["Errors"]] == ["missing"]
    for name in ("a", "b"):
        glue.create_table(DatabaseName=db, TableInput=partitioned_table(name, KEYS))
        check_nothing_old_visible(glue, db, name)
    for table in old:
        wait_until_clean(store, table, whole_database=False)


def test_governed_table_objects_are_cleaned_up(endpoint: str, store: Store) -> None:
    gov = Governed.create(endpoint)
    gov.commit_ops([add(f"s3://lake/objects/{n}", ["2021", "us"]) for n in range(30)])
    old = uids(store, gov.db, "objects", gov.account)
    assert leftovers(store, old, False)["lf_objects"] == 30
    gov.glue.delete_database(Name=gov.db)
    gov.glue.create_database(DatabaseInput={"Name": gov.db})
    assert gov.glue.get_tables(DatabaseName=gov.db)["TableList"] == []
    wait_until_clean(store, old, whole_database=True)


# ------------------------------------------------------------------------------- slow: takeover
KILLED = (BotoConnectionError, HTTPClientError)


def wait_for_exit(server: Any, timeout: float = 90) -> int | None:
    # Generous: on a loaded 2-core machine the doomed server's start, its cleaner's first chunk
    # and its exit have taken over 30 s (seen in a full `make test` beside other work).
    deadline = time.monotonic() + timeout
    while server.process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    return server.process.poll()


@pytest.mark.slow
def test_a_cleaner_killed_mid_job_is_taken_over(glue: Any, store: Store,
                                                start_server: Callable[..., Any]) -> None:
    """A server whose cleaner dies after its first chunk (os._exit, as a SIGKILL would) leaves
    the job half done under its lease; once the lease runs out another cleaner finishes it."""
    db = f"asyncdel_{uuid.uuid4().hex[:10]}"
    glue.create_database(DatabaseInput={"Name": db})
    fill(glue, db, "t", 1000)
    old = uids(store, db, "t")
    before = leftovers(store, old, True)
    # A cleaner takes the oldest job first: let the session's own cleaner finish what earlier
    # tests deleted, so that the doomed one crashes inside this test's job.
    deadline = time.monotonic() + 120
    while store.query("cleanup_jobs", "queue", "purge") and time.monotonic() < deadline:
        time.sleep(0.2)
    doomed = start_server(GLUE_FAULT_CRASH_AT="cleanup-after-chunk", GLUE_CLEANUP_CHUNK_ITEMS="100",
                          GLUE_CLEANUP_LEASE_SECONDS="8")
    client(doomed.endpoint, "glue").delete_database(Name=db)
    assert wait_for_exit(doomed) == 137, "the cleaner did not reach its crash point"
    left = leftovers(store, old, True)
    assert left.get("cleanup_jobs") == 1
    # Half done: some of it deleted (a chunk ends after 100 items or 2 s), most still there.
    assert sum(left.values()) - 1 < sum(before.values()) and left.get("partitions"), (before, left)
    start_server(GLUE_CLEANUP_LEASE_SECONDS="8", GLUE_CLEANUP_POLL_SECONDS="0.5")
    wait_until_clean(store, old, whole_database=True)


@pytest.mark.slow
def test_requests_take_over_jobs_no_cleaner_works_on(tmp_path: Path) -> None:
    """Without a cleaner thread (as on Lambda with no schedule), creates and deletes of databases
    and tables each take over a bounded share of the jobs whose grace has passed."""
    env = {"GLUE_CLEANUP_THREAD": "0", "GLUE_CLEANUP_GRACE_SECONDS": "0", "GLUE_CLEANUP_HELP_INTERVAL": "0",
           "GLUE_CLEANUP_CHUNK_ITEMS": "100"}
    with CatalogStack(log_dir=tmp_path / "logs", server_env=env) as own:
        glue = own.client("glue")
        own_store = Store(own)
        glue.create_database(DatabaseInput={"Name": "d"})
        fill(glue, "d", "t", 600)
        old = uids(own_store, "d", "t")
        glue.delete_database(Name="d")
        for n in range(200):
            if not leftovers(own_store, old, True):
                break
            glue.create_database(DatabaseInput={"Name": f"other{n}"})
        assert leftovers(own_store, old, True) == {}


def _queue_job(store: Store, kind: str, table: dict[str, Any]) -> None:
    """A cleanup job of ``kind`` for a live table, as its module would queue it (free at once)."""
    now = time.time()
    store.client.put_item(TableName=store.prefix + "cleanup_jobs", Item={
        "queue": {"S": "purge"}, "job": {"S": f"{int(now * 1000):015d}\x01{kind}\x01{table['uid']['S']}"},
        "kind": {"S": kind}, "uid": table["uid"], "db_uid": table["db_uid"], "name": table["name"],
        "created": {"N": str(now)}, "lease_until": {"N": "0"}})


@pytest.mark.slow
def test_a_cleaner_that_served_no_request_runs_every_job_as_its_kind(tmp_path: Path) -> None:
    """The deployed scheduled cleaner runs in a process that has served no request (so has not
    imported the modules that register the digest-rebuild and backfill jobs), as does the local
    server's cleaner before its first request. Such jobs name a live table: taken for a deleted
    table's purge, they would delete its partitions. They must run as what they are."""
    env = {"GLUE_CLEANUP_THREAD": "0"}
    with CatalogStack(log_dir=tmp_path / "logs", server_env=env) as own:
        glue, own_store = own.client("glue"), Store(own)
        glue.create_database(DatabaseInput={"Name": "d"})
        glue.create_table(DatabaseName="d", TableInput=partitioned_table("t", KEYS))
        create_partitions(glue, "d", "t", rows(30))
        for kind in ("digest", "backfill"):
            _queue_job(own_store, kind, own_store.table_item("d", "t"))
        # What the scheduled function (app.cleanup_deleted) runs, in a process of its own.
        subprocess.run([sys.executable, "-c", "import app\nfrom chalicelib.service import cleanup\n"
                        "cleanup.run(max_seconds=10.0)"], env=own.env, cwd=REPO, check=True, timeout=120)
        assert own_store.query("cleanup_jobs", "queue", "purge") == []
        partitions = glue.get_paginator("get_partitions").paginate(DatabaseName="d", TableName="t")
        assert sum(len(page["Partitions"]) for page in partitions) == 30


@pytest.mark.slow
def test_delete_partition_index_leaves_its_entries_to_the_cleaner(tmp_path: Path) -> None:
    """DeletePartitionIndex answers without deleting the index's entries (one per partition): a
    cleanup job written with the new definitions deletes them, and nothing else of the table.
    On a stack without a cleaner thread, so the entries are seen still there after the answer."""
    with CatalogStack(log_dir=tmp_path / "logs", server_env={"GLUE_CLEANUP_THREAD": "0"}) as own:
        glue, own_store = own.client("glue"), Store(own)
        glue.create_database(DatabaseInput={"Name": "d"})
        fill(glue, "d", "t", 120)
        index_uid = uids(own_store, "d", "t")["indexes"][0]
        glue.delete_partition_index(DatabaseName="d", TableName="t", IndexName="by_region")
        assert len(own_store.query("partition_index_entries", "index_uid", index_uid)) == 120
        jobs = own_store.query("cleanup_jobs", "queue", "purge")
        assert [(job["kind"]["S"], job["uid"]["S"]) for job in jobs] == [("index-entries", index_uid)]
        assert glue.get_partition_indexes(DatabaseName="d", TableName="t")["PartitionIndexDescriptorList"] == []
        assert len(glue.get_partitions(DatabaseName="d", TableName="t", Expression="region = 'r3'")["Partitions"]) == 12
        # What the scheduled function runs, in a process of its own.
        subprocess.run([sys.executable, "-c", "import app\nfrom chalicelib.service import cleanup\n"
                        "cleanup.run(max_seconds=10.0)"], env=own.env, cwd=REPO, check=True, timeout=120)
        assert own_store.query("partition_index_entries", "index_uid", index_uid) == []
        assert own_store.query("cleanup_jobs", "queue", "purge") == []
        partitions = glue.get_paginator("get_partitions").paginate(DatabaseName="d", TableName="t")
        assert sum(len(page["Partitions"]) for page in partitions) == 120


@pytest.mark.slow
def test_a_commit_past_its_work_budget_is_finished_by_a_job_and_visible_whole_from_its_commit_point(
        tmp_path: Path) -> None:
    """CommitTransaction checks for conflicts until its work budget runs out, then answers
    COMMIT_IN_PROGRESS (as Lake Formation may) and leaves the rest to a cleanup job: nothing is
    visible until the job's commit point, everything is from then on (through the overlay of
    its pending writes while it applies), and the job finishes the apply (locks released,
    pending writes dropped, marked applied), after which the table commits as usual."""
    env = {"GLUE_CLEANUP_THREAD": "0", "GLUE_WORK_BUDGET_SECONDS": "0"}
    with CatalogStack(log_dir=tmp_path / "logs", server_env=env) as own:
        own_store, gov, tx = _handed_off_commit(own)
        # Handed off: its job is queued, and nothing of it is visible yet.
        assert _jobs_of(own_store, tx) == ["commit-apply"]
        assert _status(gov, tx) == "COMMIT_IN_PROGRESS"
        assert gov.lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMIT_IN_PROGRESS"
        assert len(gov.objects()) == 0
        # One chunk of the job, out of time after its commit point: COMMITTED, partly applied ...
        _run_one_chunk(own, tx)
        assert _status(gov, tx) == "COMMITTED"
        assert own_store.query("lf_pending_writes", "transaction_id", tx)
        # ... yet the commit reads whole.
        assert len(gov.objects()) == 250
        _run_scheduled_cleaner(own)
        assert own_store.query("cleanup_jobs", "queue", "purge") == []
        assert own_store.query("lf_pending_writes", "transaction_id", tx) == []
        locks = own_store.client.scan(TableName=own_store.prefix + "lf_commit_state")["Items"]
        assert not [lock for lock in locks if lock.get("transaction_id", {}).get("S") == tx]
        assert len(gov.objects()) == 250
        # The cleaner resumed after the applied prefix, leaving the partition summary as it was.
        assert listed_partitions(gov.glue, gov.db, "objects") == partitions_of(gov.objects()) == \
            {("2020", "eu"): (250, sum(range(250)))}
        follow = gov.lf.start_transaction()["TransactionId"]
        gov.write(follow, [add("s3://lake/objects/more", ["2021", "us"])])
        gov.lf.commit_transaction(TransactionId=follow)
        _run_scheduled_cleaner(own)
        assert _status(gov, follow) == "COMMITTED"
        assert len(gov.objects()) == 251


def _jobs_of(store: Store, transaction_id: str) -> list[str]:
    return [job["kind"]["S"] for job in store.query("cleanup_jobs", "queue", "purge") if job["uid"]["S"] == transaction_id]


def _run_scheduled_cleaner(stack: CatalogStack) -> None:
    """What the deployed scheduled cleaner runs, in a process of its own."""
    subprocess.run([sys.executable, "-c", "import app\nfrom chalicelib.service import cleanup\n"
                    "cleanup.run(max_seconds=30.0)"], env=stack.env, cwd=REPO, check=True, timeout=120)


def _run_one_chunk(stack: CatalogStack, transaction_id: str) -> None:
    """One chunk of the transaction's commit-apply job whose time is up at once (its job stays
    queued), in a process of its own: after its commit point it applies one DynamoDB
    transaction of writes and stops."""
    code = ("import app\nfrom chalicelib import clock\nfrom chalicelib.service import transactions\n"
            "from chalicelib.store import cleanup\n"
            f"job = next(j for j in cleanup.jobs() if j.uid == {transaction_id!r})\n"
            "assert transactions._apply_job(job, clock.monotonic()) is False\n")
    subprocess.run([sys.executable, "-c", code], env=stack.env, cwd=REPO, check=True, timeout=120)


def _handed_off_commit(stack: CatalogStack) -> tuple[Store, Governed, str]:
    """On a stack whose work budget is 0 s: a transaction of 250 new objects committed, which
    answers COMMIT_IN_PROGRESS (its conflict check handed to a job)."""
    gov = Governed.create(stack.endpoint)
    tx = gov.lf.start_transaction()["TransactionId"]
    gov.write(tx, [add(f"s3://lake/objects/{n:03d}", ["2020", "eu"], etag=f"e{n}", size=n) for n in range(250)])
    assert gov.lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMIT_IN_PROGRESS"
    return Store(stack), gov, tx


def _status(gov: Governed, transaction_id: str) -> str:
    return gov.lf.describe_transaction(TransactionId=transaction_id)["TransactionDescription"]["TransactionStatus"]


@pytest.mark.slow
def test_readers_of_a_handed_off_commit_past_its_lease_queue_it_again_within_their_work_budget(
        tmp_path: Path) -> None:
    """A reader that meets a handed-off commit past its commit lease (its job's cleaner died, or
    has not come) does not abort it: before its commit point it queues the job again; after it,
    it rolls the commit forward within its own work budget and queues the rest. Either way the
    lease restarts, so the readers after it leave the commit to the job instead of each
    re-applying it."""
    # A lease of 3 s: long enough for the reads "within the new lease" on a loaded machine.
    env = {"GLUE_CLEANUP_THREAD": "0", "GLUE_WORK_BUDGET_SECONDS": "0", "GLUE_LF_COMMIT_LEASE_SECONDS": "3"}
    with CatalogStack(log_dir=tmp_path / "logs", server_env=env) as own:
        own_store, gov, tx = _handed_off_commit(own)
        assert _jobs_of(own_store, tx) == ["commit-apply"]
        time.sleep(3.5)  # past the lease the hand-off restarted: as if no cleaner had come
        assert _status(gov, tx) == "COMMIT_IN_PROGRESS"  # not aborted: queued again
        assert _jobs_of(own_store, tx) == ["commit-apply"] * 2
        assert _status(gov, tx) == "COMMIT_IN_PROGRESS"  # within the new lease: left alone
        assert _jobs_of(own_store, tx) == ["commit-apply"] * 2
        _run_one_chunk(own, tx)  # committed, partly applied; the lease restarts
        time.sleep(3.5)  # past it: as if the job's cleaner had died
        assert _status(gov, tx) == "COMMITTED"
        # Not rolled forward in the request (a budget of 0 s): queued again, the lease restarted ...
        assert own_store.query("lf_pending_writes", "transaction_id", tx)
        assert _jobs_of(own_store, tx) == ["commit-apply"] * 3
        # ... so readers within the new lease leave it alone.
        request: dict[str, Any] = {"StatusFilter": "COMMITTED"}
        listed: list[str] = []
        for _ in range(100):  # a budget of 0 s: about one transaction examined per page
            page = gov.lf.list_transactions(**request)
            listed += [t["TransactionId"] for t in page["Transactions"]]
            if "NextToken" not in page:
                break
            request["NextToken"] = page["NextToken"]
        assert tx in listed
        assert _status(gov, tx) == "COMMITTED"
        assert _jobs_of(own_store, tx) == ["commit-apply"] * 3
        assert len(gov.objects()) == 250  # whole all along, through the overlay
        _run_scheduled_cleaner(own)
        assert own_store.query("cleanup_jobs", "queue", "purge") == []
        assert own_store.query("lf_pending_writes", "transaction_id", tx) == []
        assert len(gov.objects()) == 250


@pytest.mark.slow
def test_cancel_transaction_drops_pending_writes_within_its_work_budget(tmp_path: Path) -> None:
    """CancelTransaction aborts at once; the pending writes it cannot drop within its work
    budget go to a cleanup job, and are never read meanwhile."""
    env = {"GLUE_CLEANUP_THREAD": "0", "GLUE_WORK_BUDGET_SECONDS": "0"}
    with CatalogStack(log_dir=tmp_path / "logs", server_env=env) as own:
        own_store = Store(own)
        gov = Governed.create(own.endpoint)
        tx = gov.lf.start_transaction()["TransactionId"]
        gov.write(tx, [add(f"s3://lake/objects/{n:03d}", ["2020", "eu"]) for n in range(250)])
        gov.lf.cancel_transaction(TransactionId=tx)
        assert _status(gov, tx) == "ABORTED"
        assert len(own_store.query("lf_pending_writes", "transaction_id", tx)) > 200
        assert _jobs_of(own_store, tx) == ["pending-drop"]
        assert len(gov.objects()) == 0
        with pytest.raises(gov.lf.exceptions.TransactionCanceledException):
            gov.lf.commit_transaction(TransactionId=tx)
        _run_scheduled_cleaner(own)
        assert own_store.query("lf_pending_writes", "transaction_id", tx) == []
        assert own_store.query("cleanup_jobs", "queue", "purge") == []
