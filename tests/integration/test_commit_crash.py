"""Crash consistency of CommitTransaction with a real process kill.

A server started with GLUE_FAULT_CRASH_AT exits (os._exit(137)) at that step of a commit; a
server started afterwards on the same DynamoDB, without the hook, must show each table exactly
as before the commit (crash before the commit point) or exactly as after it (after the commit
point, or halfway through applying it): at once, and after the next commit clears the lock
(GLUE_LF_COMMIT_LEASE_SECONDS=1, so a stale COMMIT_IN_PROGRESS lock is aborted quickly).
The commit also creates a table and updates another: table definitions follow the same rule
(they are applied first, so "mid-apply" crashes with them applied and the objects not).
"""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from botocore.exceptions import ConnectionError as BotoConnectionError
from botocore.exceptions import HTTPClientError

from tests.integration.conftest import table_input
from tests.integration.lf_helpers import (Governed, State, add, apply, delete, governed_input, listed_partitions,
                                         partitions_of)

TABLES = ("alpha", "beta")  # two tables: "mid-apply" crashes after applying the first one


def uri(table: str, name: str) -> str:
    return f"s3://lake/{table}/{name}"


@pytest.mark.parametrize("crash_at", ["before-commit-point", "after-commit-point", "mid-apply"])
def test_commit_interrupted_by_a_crash_is_all_or_nothing(endpoint, start_server, crash_at):
    gov = Governed.create(endpoint, tables=TABLES)
    before: dict[str, State] = {}
    for table in TABLES:
        ops = [add(uri(table, f"base{i}"), [str(2020 + i % 3), "us"], etag=f"b{i}") for i in range(60)]
        gov.commit_ops(ops, table=table)
        before[table] = apply({}, ops)

    crashing = start_server(GLUE_FAULT_CRASH_AT=crash_at)
    lf = gov.client(endpoint=crashing.endpoint)
    tx = lf.start_transaction()["TransactionId"]
    writes: dict[str, list[dict]] = {}
    for table in TABLES:
        writes[table] = [add(uri(table, f"new{i}"), ["2021", ("us", "eu")[i % 2]], etag=f"n{i}") for i in range(150)]
        writes[table] += [delete(uri(table, f"base{i}")) for i in range(0, 60, 3)]
        gov.write(tx, writes[table], table=table, lf=lf)  # two calls per table
    glue = gov.client("glue", endpoint=crashing.endpoint)
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("gamma"), TransactionId=tx)
    glue.update_table(DatabaseName=gov.db, TableInput=governed_input("alpha", Description="changed"),
                      TransactionId=tx)
    after = {table: apply(before[table], writes[table]) for table in TABLES}
    with pytest.raises((BotoConnectionError, HTTPClientError)):
        lf.commit_transaction(TransactionId=tx)
    assert crashing.process.wait(10) == 137
    crashing.stop()

    recovered = start_server(GLUE_LF_COMMIT_LEASE_SECONDS="1")
    lf = gov.client(endpoint=recovered.endpoint)
    glue = gov.client("glue", endpoint=recovered.endpoint)
    expected = before if crash_at == "before-commit-point" else after
    committed = crash_at != "before-commit-point"

    def check_tables(**reads) -> None:
        listed = [t["Name"] for t in glue.get_tables(DatabaseName=gov.db, **reads)["TableList"]]
        assert listed == (["alpha", "beta", "gamma"] if committed else ["alpha", "beta"])
        alpha = glue.get_table(DatabaseName=gov.db, Name="alpha", **reads)["Table"]
        assert (alpha.get("Description"), alpha["VersionId"]) == (("changed", "1") if committed else (None, "0"))
        if not committed:
            with pytest.raises(glue.exceptions.EntityNotFoundException):
                glue.get_table(DatabaseName=gov.db, Name="gamma", **reads)
    status = lf.describe_transaction(TransactionId=tx)["TransactionDescription"]
    if crash_at == "before-commit-point":
        assert status["TransactionStatus"] in ("COMMIT_IN_PROGRESS", "ABORTED")
    else:
        assert status["TransactionStatus"] == "COMMITTED"
        end = status["TransactionEndTime"]
    # Right away: the overlay of committed-but-unapplied writes (or nothing of an unfinished commit).
    reader = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    check_tables()
    check_tables(TransactionId=reader)
    for table in TABLES:
        assert gov.objects(table, lf=lf) == expected[table], table
        assert gov.objects(table, lf=lf, page_size=40) == expected[table], table
        assert gov.objects(table, lf=lf, TransactionId=reader) == expected[table], table
        selected = {k: v for k, v in expected[table].items() if v[0] == ("2021", "eu")}
        assert gov.objects(table, lf=lf, PartitionPredicate="year = 2021 AND region = 'eu'") == selected
        # Partitions (GetPartitions of a governed table) follow the same objects.
        assert listed_partitions(glue, gov.db, table) == partitions_of(expected[table]), table
        assert listed_partitions(glue, gov.db, table, TransactionId=reader) == partitions_of(expected[table]), table
        if crash_at != "before-commit-point":
            assert gov.objects(table, lf=lf, QueryAsOfTime=end) == after[table], table
            assert gov.objects(table, lf=lf, QueryAsOfTime=end - timedelta(microseconds=1)) == before[table]
            assert listed_partitions(glue, gov.db, table, QueryAsOfTime=end) == partitions_of(after[table]), table

    # A new transaction works on what it sees, including writes not applied yet.
    time.sleep(1.2)  # past the commit lease
    victim = "new1" if crash_at != "before-commit-point" else "base1"
    follow = [add(uri("alpha", "follow"), ["2022", "ap"], etag="f"), delete(uri("alpha", victim))]
    gov.commit_ops(follow, table="alpha", lf=lf)
    expected = {"alpha": apply(expected["alpha"], follow), "beta": expected["beta"]}
    check_tables()
    check_tables(TransactionId=reader)
    # A table write outside any transaction clears the metadata lock the crash left.
    glue.update_table(DatabaseName=gov.db, TableInput=governed_input("beta", Description="later"))
    assert glue.get_table(DatabaseName=gov.db, Name="beta")["Table"]["VersionId"] == "1"
    check_tables(TransactionId=reader)
    for table in TABLES:
        assert gov.objects(table, lf=lf) == expected[table], table
        assert gov.objects(table, lf=lf, TransactionId=reader) == (before if crash_at == "before-commit-point"
                                                                   else after)[table], table
        assert listed_partitions(glue, gov.db, table) == partitions_of(expected[table]), table
    final = "ABORTED" if crash_at == "before-commit-point" else "COMMITTED"
    assert lf.describe_transaction(TransactionId=tx)["TransactionDescription"]["TransactionStatus"] == final
    # The other table is free again too: a commit there goes through and sees the right state.
    follow = [add(uri("beta", "follow"), ["2022", "ap"]), delete(uri("beta", "base2"))]
    gov.commit_ops(follow, table="beta", lf=lf)
    assert gov.objects("beta", lf=lf) == apply(expected["beta"], follow)
    assert listed_partitions(glue, gov.db, "beta") == partitions_of(apply(expected["beta"], follow))
    # The crashed transaction cannot be revived.
    with pytest.raises((lf.exceptions.TransactionCanceledException, lf.exceptions.TransactionCommittedException)):
        lf.extend_transaction(TransactionId=tx)
