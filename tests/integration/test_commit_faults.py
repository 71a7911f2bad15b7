"""Commits under real process faults: a committer stopped past its lease (SIGSTOP), and one
killed (SIGKILL) at each step of a commit, with nobody else writing to its tables afterwards.

A server started with GLUE_FAULT_STOP_AT=<step> stops itself there with a real SIGSTOP
(chalicelib/service/transactions.py names the steps), so the test can aim the signal: it then
resumes the server with SIGCONT, or kills it with SIGKILL. Other servers run on the same
DynamoDB with GLUE_LF_COMMIT_LEASE_SECONDS=1, so a commit is past its lease within a second.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from botocore.config import Config

from infra.local.stack import CLIENT_CONFIG, REGION
from tests.integration.conftest import table_input
from tests.integration.lf_helpers import (Governed, State, add, apply, delete, governed_input, listed_partitions,
                                         partitions_of)

pytestmark = pytest.mark.slow  # each starts two or three servers

TABLES = ("alpha", "beta")  # two object scopes (after the metadata one): "mid-apply" stops after the first
LEASE = "1"


def uri(table: str, name: str) -> str:
    return f"s3://lake/{table}/{name}"


def wait_until_stopped(pid: int, timeout: float = 60.0) -> None:
    """Wait for a process to be stopped by a signal (state T in /proc/<pid>/stat)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(f"/proc/{pid}/stat") as stat:
            if stat.read().rsplit(")", 1)[1].split()[0] in ("T", "t"):
                return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} did not stop at the fault point")


def in_thread(call: Any) -> tuple[threading.Thread, dict]:
    """Run ``call`` in a thread; the dict gets its result or error."""
    outcome: dict = {}

    def run() -> None:
        try:
            outcome["result"] = call()
        except Exception as error:  # noqa: BLE001 - reported by the test
            outcome["error"] = error
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def patient(gov: Governed, endpoint: str) -> Any:
    """A Lake Formation client that waits as long as the test keeps its server stopped."""
    return boto3.client("lakeformation", endpoint_url=endpoint, region_name=REGION, aws_access_key_id=gov.account,
                        aws_secret_access_key="testing", config=CLIENT_CONFIG.merge(Config(read_timeout=600)))


def seeded(endpoint: str) -> tuple[Governed, dict[str, State]]:
    """A catalog with tables alpha and beta holding 30 committed objects each."""
    gov = Governed.create(endpoint, tables=TABLES)
    before: dict[str, State] = {}
    for table in TABLES:
        ops = [add(uri(table, f"base{i}"), [str(2020 + i % 3), "us"], etag=f"b{i}") for i in range(30)]
        gov.commit_ops(ops, table=table)
        before[table] = apply({}, ops)
    return gov, before


def first_transaction(gov: Governed, endpoint: str) -> tuple[str, dict[str, list[dict]]]:
    """On the server at ``endpoint``: a transaction adding 120 objects to each table, deleting
    10 of its base objects, creating table gamma and changing alpha's description."""
    lf = gov.client(endpoint=endpoint)
    glue = gov.client("glue", endpoint=endpoint)
    tx = lf.start_transaction()["TransactionId"]
    writes: dict[str, list[dict]] = {}
    for table in TABLES:
        writes[table] = [add(uri(table, f"new{i}"), ["2021", ("us", "eu")[i % 2]], etag=f"n{i}") for i in range(120)]
        writes[table] += [delete(uri(table, f"base{i}")) for i in range(0, 30, 3)]
        gov.write(tx, writes[table], table=table, lf=lf)
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("gamma"), TransactionId=tx)
    glue.update_table(DatabaseName=gov.db, TableInput=governed_input("alpha", Description="first"),
                      TransactionId=tx)
    return tx, writes


@dataclass
class Stalled:
    """A commit of ``first_transaction`` on a server of its own, stopped (SIGSTOP) at a step:
    ``resume()`` continues it, and the CommitTransaction's status or error is then in ``outcome``."""
    server: Any
    tx: str
    writes: dict[str, list[dict]]
    client: Any
    thread: threading.Thread
    outcome: dict

    def resume(self) -> None:
        os.kill(self.server.process.pid, signal.SIGCONT)

    def finished(self) -> dict:
        self.thread.join(120)
        return self.outcome


def stalled_commit(gov: Governed, start_server: Any, step: str) -> Stalled:
    server = start_server(GLUE_FAULT_STOP_AT=step)
    tx, writes = first_transaction(gov, server.endpoint)
    client = patient(gov, server.endpoint)
    thread, outcome = in_thread(lambda: client.commit_transaction(TransactionId=tx)["TransactionStatus"])
    wait_until_stopped(server.process.pid)
    return Stalled(server, tx, writes, client, thread, outcome)


@pytest.mark.parametrize("stop_at", ["after-commit-point", "mid-apply"])
def test_a_stalled_committer_cannot_undo_a_later_commit(endpoint, start_server, stop_at):
    """The committing server stops past its lease; another server rolls its commit forward and
    commits over it (deleting an object and the table it created, re-adding an object it
    deleted); when the stopped server resumes, none of its late writes lands."""
    gov, before = seeded(endpoint)
    stalled = stalled_commit(gov, start_server, stop_at)
    tx, writes = stalled.tx, stalled.writes
    try:
        other = start_server(GLUE_LF_COMMIT_LEASE_SECONDS=LEASE)
        lf = gov.client(endpoint=other.endpoint)
        glue = gov.client("glue", endpoint=other.endpoint)
        after_first = {table: apply(before[table], writes[table]) for table in TABLES}
        time.sleep(float(LEASE) + 0.3)
        # Over the first commit: delete objects it added, add back (changed) ones it deleted,
        # in both tables (this commit rolls the first one forward on its way).
        second = {table: [delete(uri(table, "new0")), delete(uri(table, "new1")),
                          add(uri(table, "base0"), ["2020", "us"], etag="again", size=5),
                          add(uri(table, "later"), ["2022", "ap"], etag="l")] for table in TABLES}
        tx2 = lf.start_transaction()["TransactionId"]
        for table in TABLES:
            gov.write(tx2, second[table], table=table, lf=lf)
        assert lf.commit_transaction(TransactionId=tx2)["TransactionStatus"] == "COMMITTED"
        # And over its table definitions, outside any transaction.
        glue.delete_table(DatabaseName=gov.db, Name="gamma")
        glue.update_table(DatabaseName=gov.db, TableInput=governed_input("alpha", Description="second"))
    finally:
        stalled.resume()
    outcome = stalled.finished()
    assert outcome.get("result") == "COMMITTED", outcome
    assert lf.describe_transaction(TransactionId=tx)["TransactionDescription"]["TransactionStatus"] == "COMMITTED"
    end1 = lf.describe_transaction(TransactionId=tx)["TransactionDescription"]["TransactionEndTime"]
    end2 = lf.describe_transaction(TransactionId=tx2)["TransactionDescription"]["TransactionEndTime"]

    expected = {table: apply(after_first[table], second[table]) for table in TABLES}
    for reader in (other, stalled.server):  # the resumed server reads the same
        lf = gov.client(endpoint=reader.endpoint)
        glue = gov.client("glue", endpoint=reader.endpoint)
        for table in TABLES:
            assert gov.objects(table, lf=lf) == expected[table], table
            assert gov.objects(table, lf=lf, QueryAsOfTime=end2) == expected[table], table
            assert gov.objects(table, lf=lf, QueryAsOfTime=end1) == after_first[table], table
            assert listed_partitions(glue, gov.db, table) == partitions_of(expected[table]), table
            assert listed_partitions(glue, gov.db, table, QueryAsOfTime=end1) == partitions_of(after_first[table])
        assert [t["Name"] for t in glue.get_tables(DatabaseName=gov.db)["TableList"]] == ["alpha", "beta"]
        alpha = glue.get_table(DatabaseName=gov.db, Name="alpha")["Table"]
        assert (alpha["Description"], alpha["VersionId"]) == ("second", "2")
    # Nothing is left locked: another commit to both tables goes through at once.
    lf = gov.client(endpoint=other.endpoint)
    third = {table: [add(uri(table, "third"), ["2023", "us"])] for table in TABLES}
    tx3 = lf.start_transaction()["TransactionId"]
    for table in TABLES:
        gov.write(tx3, third[table], table=table, lf=lf)
    glue = gov.client("glue", endpoint=other.endpoint)
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("gamma"), TransactionId=tx3)
    assert lf.commit_transaction(TransactionId=tx3)["TransactionStatus"] == "COMMITTED"
    for table in TABLES:
        assert gov.objects(table, lf=lf) == apply(expected[table], third[table])


def stored(stack: Any, gov: Governed, tx: str) -> dict[str, Any]:
    """What DynamoDB holds of a transaction's commit: its item, its pending writes, and the
    commit locks of its scopes."""
    ddb = stack.ddb_client()
    prefix = stack.table_prefix
    item = ddb.get_item(TableName=f"{prefix}lf_transactions", ConsistentRead=True,
                        Key={"catalog": {"S": f"{REGION}\x01{gov.account}"}, "transaction_id": {"S": tx}})["Item"]
    scopes = [scope["S"] for scope in item.get("tables", {}).get("L", [])]
    pending = ddb.query(TableName=f"{prefix}lf_pending_writes", ConsistentRead=True, Select="COUNT",
                        KeyConditionExpression="transaction_id = :t", ExpressionAttributeValues={":t": {"S": tx}})
    locks = [scope for scope in scopes
             if "Item" in ddb.get_item(TableName=f"{prefix}lf_commit_state", ConsistentRead=True,
                                       Key={"name": {"S": f"lock\x01{scope}"}})]
    return {"status": item["status"]["S"], "scopes": len(scopes), "pending": pending["Count"], "locked": locks,
            "applied": "applied" in item}


@pytest.mark.parametrize("kill_at", ["before-locks", "before-commit-point", "after-commit-point", "mid-apply"])
def test_reading_a_transaction_settles_a_killed_commit(stack, start_server, kill_at):
    """kill -9 of the committing server at each step; on another server, with no further
    traffic to the tables, reading the transaction past its lease settles it: aborted (before
    the commit point) or rolled forward (after), its locks released and its pending writes gone."""
    gov, before = seeded(stack.endpoint)
    doomed = start_server(GLUE_FAULT_STOP_AT=kill_at)
    tx, writes = first_transaction(gov, doomed.endpoint)
    first = gov.client(endpoint=doomed.endpoint)
    thread, outcome = in_thread(lambda: first.commit_transaction(TransactionId=tx))
    wait_until_stopped(doomed.process.pid)
    os.kill(doomed.process.pid, signal.SIGKILL)
    assert doomed.process.wait(10) == -signal.SIGKILL
    doomed.stop()
    thread.join(30)
    assert "error" in outcome  # the connection died with the server
    left = stored(stack, gov, tx)
    assert left["status"] == ("COMMIT_IN_PROGRESS" if kill_at.startswith("before") else "COMMITTED")
    assert left["pending"] > 0
    held = {"before-locks": 0, "mid-apply": 2}.get(kill_at, 3)
    assert len(left["locked"]) == held

    other = start_server(GLUE_LF_COMMIT_LEASE_SECONDS=LEASE)
    lf = gov.client(endpoint=other.endpoint)
    committed = kill_at.startswith("after") or kill_at == "mid-apply"
    time.sleep(float(LEASE) + 0.3)
    status = lf.describe_transaction(TransactionId=tx)["TransactionDescription"]["TransactionStatus"]
    assert status == ("COMMITTED" if committed else "ABORTED")
    assert stored(stack, gov, tx) == {"status": status, "scopes": 3, "pending": 0, "locked": [],
                                      "applied": committed}
    if committed:
        assert lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMITTED"
    else:
        with pytest.raises(lf.exceptions.TransactionCanceledException):
            lf.commit_transaction(TransactionId=tx)
        lf.cancel_transaction(TransactionId=tx)  # cancelling an aborted transaction is fine
    expected = {table: apply(before[table], writes[table]) if committed else before[table] for table in TABLES}
    glue = gov.client("glue", endpoint=other.endpoint)
    for table in TABLES:
        assert gov.objects(table, lf=lf) == expected[table], table
        assert listed_partitions(glue, gov.db, table) == partitions_of(expected[table]), table
    names = [t["Name"] for t in glue.get_tables(DatabaseName=gov.db)["TableList"]]
    assert names == (["alpha", "beta", "gamma"] if committed else ["alpha", "beta"])


def test_a_commit_in_progress_is_reported_until_its_lease_passes(stack, start_server):
    """Within the lease a stalled commit is left alone (CommitTransaction answers
    COMMIT_IN_PROGRESS, CancelTransaction refuses); past it, a read aborts it."""
    gov, _ = seeded(stack.endpoint)
    stalled = stalled_commit(gov, start_server, "before-locks")
    tx = stalled.tx
    try:
        other = start_server(GLUE_LF_COMMIT_LEASE_SECONDS="30")
        lf = gov.client(endpoint=other.endpoint)
        assert lf.commit_transaction(TransactionId=tx)["TransactionStatus"] == "COMMIT_IN_PROGRESS"
        with pytest.raises(lf.exceptions.TransactionCommitInProgressException):
            lf.cancel_transaction(TransactionId=tx)
        short = start_server(GLUE_LF_COMMIT_LEASE_SECONDS=LEASE)
        time.sleep(float(LEASE) + 0.3)
        lf = gov.client(endpoint=short.endpoint)
        lf.cancel_transaction(TransactionId=tx)
        assert lf.describe_transaction(TransactionId=tx)["TransactionDescription"]["TransactionStatus"] == "ABORTED"
    finally:
        stalled.resume()
    # The resumed committer finds its transaction aborted and says so; nothing was written.
    outcome = stalled.finished()
    assert isinstance(outcome.get("error"), stalled.client.exceptions.TransactionCanceledException), outcome
    assert stored(stack, gov, tx) == {"status": "ABORTED", "scopes": 3, "pending": 0, "locked": [],
                                      "applied": False}


def test_a_commit_queued_behind_a_lock_past_its_budget_answers_and_commits_later(stack, start_server):
    """A commit that waits for another committer's lock for its whole work budget answers
    COMMIT_IN_PROGRESS within about that budget, not after the other commit (API Gateway cuts
    at 29 s, boto3 reads time out at 60 s); its job takes the lock once it is free, and commits.
    A table write to the database whose metadata the stalled commit locks gives up after the
    budget too: ConcurrentModificationException, nothing written. (Before, both waited 20 s.)"""
    gov, _ = seeded(stack.endpoint)
    stalled = stalled_commit(gov, start_server, "before-commit-point")  # holds every lock of its tables
    try:
        hurried = start_server(GLUE_WORK_BUDGET_SECONDS="2")
        lf = gov.client(endpoint=hurried.endpoint)
        glue = gov.client("glue", endpoint=hurried.endpoint)
        second = lf.start_transaction()["TransactionId"]
        gov.write(second, [add(uri("alpha", "queued"), ["2030", "us"], etag="q")], table="alpha", lf=lf)
        # Both answer while the other commit is still stopped (it stays so until resumed).
        assert lf.commit_transaction(TransactionId=second)["TransactionStatus"] == "COMMIT_IN_PROGRESS"
        with pytest.raises(glue.exceptions.ConcurrentModificationException):
            glue.create_table(DatabaseName=gov.db, TableInput=table_input("waiting"))
        assert uri("alpha", "queued") not in gov.objects("alpha", lf=lf)
    finally:
        stalled.resume()
    assert stalled.finished().get("result") == "COMMITTED", stalled.outcome
    deadline = time.monotonic() + 60
    while (status := lf.describe_transaction(TransactionId=second)["TransactionDescription"]["TransactionStatus"]
           ) == "COMMIT_IN_PROGRESS" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert status == "COMMITTED"
    assert uri("alpha", "queued") in gov.objects("alpha", lf=lf)
    names = [t["Name"] for t in glue.get_tables(DatabaseName=gov.db)["TableList"]]
    assert "waiting" not in names and "gamma" in names


def test_a_handed_off_commit_clears_a_stalled_holder_past_its_lease(stack, start_server):
    """The job of a commit handed off while it waited for a lock keeps waiting in the
    background; once the lock's holder (stopped, never resumed meanwhile) is past its lease, the
    job aborts it and commits, with no client call in between."""
    gov, before = seeded(stack.endpoint)
    stalled = stalled_commit(gov, start_server, "before-commit-point")
    tx = stalled.tx
    try:
        hurried = start_server(GLUE_WORK_BUDGET_SECONDS="1", GLUE_LF_COMMIT_LEASE_SECONDS="4")
        lf = gov.client(endpoint=hurried.endpoint)
        second = lf.start_transaction()["TransactionId"]
        gov.write(second, [add(uri("beta", "queued"), ["2030", "us"], etag="q")], table="beta", lf=lf)
        assert lf.commit_transaction(TransactionId=second)["TransactionStatus"] == "COMMIT_IN_PROGRESS"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if stored(stack, gov, second)["status"] != "COMMIT_IN_PROGRESS":
                break
            time.sleep(0.2)
        assert stored(stack, gov, second)["status"] == "COMMITTED"
        assert stored(stack, gov, tx)["status"] == "ABORTED"
    finally:
        stalled.resume()
    outcome = stalled.finished()
    assert isinstance(outcome.get("error"), stalled.client.exceptions.TransactionCanceledException), outcome
    assert gov.objects("beta", lf=lf) == {**before["beta"], **apply({}, [add(uri("beta", "queued"), ["2030", "us"],
                                                                              etag="q")])}
