"""Table writes outside transactions against Lake Formation snapshots (docs/design.md, "Cost of
the stamps"): such a write only checks the catalog's commit counter, never moves it, so the
order rests on snapshots moving it. A write that answered before a transaction started is in
its snapshot, one that lands after is not — whatever the servers' clocks say — and a read
without transaction sees every write that answered before it."""

from __future__ import annotations

import threading
import time

import pytest

from infra.local.stack import REGION
from tests.integration.conftest import table_input
from tests.integration.lf_helpers import Governed


@pytest.fixture
def gov(endpoint) -> Governed:
    """A catalog of its own with one governed table ``objects``."""
    return Governed.create(endpoint)


def names(glue, db: str, **kwargs) -> list[str]:
    return [t["Name"] for t in glue.get_tables(DatabaseName=db, **kwargs)["TableList"]]


def description(glue, db: str, name: str, **kwargs) -> str:
    return glue.get_table(DatabaseName=db, Name=name, **kwargs)["Table"].get("Description", "")


def test_a_write_after_start_is_outside_the_snapshot_even_with_the_counter_ahead_of_the_clock(gov, stack):
    glue, lf = gov.glue, gov.lf
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("kept", Description="v0"))
    # A commit made by a server whose clock ran an hour ahead: the counter is past every clock
    # here, so no stamp or snapshot taken from a clock would order what follows.
    ahead = (time.time_ns() // 1000) + 3600 * 1_000_000
    stack.ddb_client().put_item(TableName=f"{stack.table_prefix}lf_commit_state",
                                Item={"name": {"S": f"seq\x01{REGION}\x01{gov.account}"}, "seq": {"N": str(ahead)}})
    tx = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    glue.create_table(DatabaseName=gov.db, TableInput=table_input("late"))
    glue.update_table(DatabaseName=gov.db, TableInput=table_input("kept", Description="v1"))
    # The transaction's snapshot predates both writes...
    assert names(glue, gov.db, TransactionId=tx) == ["kept", "objects"]
    assert description(glue, gov.db, "kept", TransactionId=tx) == "v0"
    with pytest.raises(glue.exceptions.EntityNotFoundException):
        glue.get_table(DatabaseName=gov.db, Name="late", TransactionId=tx)
    # ...reads without one see them as soon as they answered...
    assert names(glue, gov.db) == ["kept", "late", "objects"]
    assert description(glue, gov.db, "kept") == "v1"
    # ...and so does a transaction started after them.
    later = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    assert names(glue, gov.db, TransactionId=later) == ["kept", "late", "objects"]
    assert description(glue, gov.db, "kept", TransactionId=later) == "v1"
    # A commit over the counter still comes after everything, and writes after it after it.
    writer = lf.start_transaction()["TransactionId"]
    glue.update_table(DatabaseName=gov.db, TableInput=table_input("kept", Description="v2"), TransactionId=writer)
    assert lf.commit_transaction(TransactionId=writer)["TransactionStatus"] == "COMMITTED"
    glue.update_table(DatabaseName=gov.db, TableInput=table_input("late", Description="after"))
    assert description(glue, gov.db, "kept", TransactionId=later) == "v1"
    assert names(glue, gov.db, TransactionId=later) == ["kept", "late", "objects"]
    last = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
    assert description(glue, gov.db, "kept", TransactionId=last) == "v2"
    assert description(glue, gov.db, "late", TransactionId=last) == "after"


def test_concurrent_writers_and_snapshots(gov):
    """Writers create tables on 3 threads while transactions start: each snapshot holds every
    table whose CreateTable answered before StartTransaction was sent, and never changes; a read
    without transaction holds every table answered before it was sent."""
    lf = gov.lf
    answered: list[str] = []
    guard = threading.Lock()
    errors: list[BaseException] = []

    def writer(lane: int) -> None:
        glue = gov.client("glue")
        try:
            for i in range(12):
                name = f"w{lane}_{i:02d}"
                glue.create_table(DatabaseName=gov.db, TableInput=table_input(name))
                with guard:
                    answered.append(name)
        except BaseException as error:  # reported by the test's thread
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(lane,)) for lane in range(3)]
    for thread in threads:
        thread.start()
    glue = gov.client("glue")
    snapshots: list[tuple[str, set[str]]] = []
    while any(thread.is_alive() for thread in threads) and len(snapshots) < 20:
        with guard:
            before = set(answered)
        if len(snapshots) % 2:
            tx = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
            seen = set(names(glue, gov.db, TransactionId=tx))
            assert before <= seen, sorted(before - seen)
            snapshots.append((tx, seen))
        else:
            seen = set(names(glue, gov.db))
            assert before <= seen, sorted(before - seen)
            snapshots.append(("", seen))
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert set(names(glue, gov.db)) == set(answered) | {"objects"}
    for tx, seen in snapshots:
        if tx:
            assert set(names(glue, gov.db, TransactionId=tx)) == seen  # the snapshot never changes
