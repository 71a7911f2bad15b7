"""Concurrent transactions with real threads, each with its own boto3 client, over HTTP.

Writers run rounds of transactions at the same time: distinct objects, one object every writer
of the round adds (exactly one may win it), deletes of their own earlier objects, and some
cancelled on purpose. Readers read all the while, in transactions and at the latest commit.
Afterwards the test replays the committed transactions in commit order through a model and
checks every commit point by time travel, every read against the model's states, and that no
write of an aborted transaction ever showed.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from tests.integration.lf_helpers import Governed, State, add, apply, commit, delete

US21 = ["2021", "us"]

WRITERS = 4
ROUNDS = 6
PER_TRANSACTION = 40  # two UpdateTableObjects calls; more than one BatchWriteItem to apply
READERS = 2


@dataclass
class Attempt:
    """One writer transaction: what it wrote and how it ended."""

    writer: int
    round: int
    transaction_id: str
    ops: list[dict]
    outcome: str = "?"  # COMMITTED | ABORTED (cancelled) | the error code that ended it
    end: Any = None


@dataclass
class Shared:
    gov: Governed
    barrier: threading.Barrier
    attempts: list[Attempt] = field(default_factory=list)
    reads: list[State] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)


def frozen(state: State) -> frozenset:
    return frozenset(state.items())


def writer(shared: Shared, number: int, lf: Any) -> None:
    gov = shared.gov
    mine: dict[int, Attempt] = {}
    for round_number in range(ROUNDS):
        shared.barrier.wait()  # every commit of the previous round is done
        tx = lf.start_transaction()["TransactionId"]
        shared.barrier.wait()  # every snapshot of this round predates its commits
        values = [str(2020 + round_number % 3), ("us", "eu", "ap", "sa")[number]]
        ops = [add(f"s3://lake/objects/w{number}/r{round_number}/{i:02d}", values, etag=tx, size=i)
               for i in range(PER_TRANSACTION)]
        if round_number % 2 == 0:  # every writer wants this one object
            ops.append(add(f"s3://lake/objects/contested/r{round_number}", ["2021", "us"], etag=tx))
        old = mine.get(round_number - 2)
        if old is not None and old.outcome == "COMMITTED":  # delete everything it added then
            ops += [delete(op["AddObject"]["Uri"]) for op in old.ops if "AddObject" in op]
        attempt = Attempt(number, round_number, tx, ops)
        mine[round_number] = attempt
        try:
            gov.write(tx, ops[:PER_TRANSACTION // 2], lf=lf)
            time.sleep(0.01 * number)
            gov.write(tx, ops[PER_TRANSACTION // 2:], lf=lf)
            if round_number % 2 == 1 and number % 2 == 1:
                lf.cancel_transaction(TransactionId=tx)
                attempt.outcome = "ABORTED"
            else:
                attempt.outcome = commit(lf, tx)
        except ClientError as error:
            attempt.outcome = error.response["Error"]["Code"]
            if attempt.outcome == "ConcurrentModificationException":
                try:  # a conflict found by UpdateTableObjects leaves the transaction open
                    lf.cancel_transaction(TransactionId=tx)
                except ClientError:
                    pass
        description = lf.describe_transaction(TransactionId=tx)["TransactionDescription"]
        attempt.end = description.get("TransactionEndTime")
        expected_status = "COMMITTED" if attempt.outcome == "COMMITTED" else "ABORTED"
        assert description["TransactionStatus"] == expected_status, (attempt.outcome, description)
        with shared.lock:
            shared.attempts.append(attempt)


def reader(shared: Shared, lf: Any) -> None:
    gov = shared.gov
    while not shared.done.is_set():
        latest = gov.objects(lf=lf)
        tx = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
        first = gov.objects(lf=lf, TransactionId=tx)
        for _ in range(3):
            time.sleep(0.05)
            again = gov.objects(lf=lf, TransactionId=tx, page_size=25)
            assert again == first, "a transaction's snapshot changed under it"
        lf.commit_transaction(TransactionId=tx)
        with shared.lock:
            shared.reads += [latest, first]


def run_thread(shared: Shared, target, *args) -> threading.Thread:
    def guarded() -> None:
        try:
            target(shared, *args)
        except BaseException as error:  # reported by the test's thread
            shared.errors.append(error)
            shared.barrier.abort()
            shared.done.set()

    thread = threading.Thread(target=guarded, daemon=True)
    thread.start()
    return thread


def test_concurrent_writers_and_readers(endpoint):
    gov = Governed.create(endpoint)
    shared = Shared(gov, threading.Barrier(WRITERS))
    writer_clients = [gov.client() for _ in range(WRITERS)]
    reader_clients = [gov.client() for _ in range(READERS)]
    readers = [run_thread(shared, reader, c) for c in reader_clients]
    writers = [run_thread(shared, writer, n, c) for n, c in enumerate(writer_clients)]
    for thread in writers:
        thread.join(240)
    shared.done.set()
    for thread in readers:
        thread.join(60)
    if shared.errors:
        raise shared.errors[0]
    assert len(shared.attempts) == WRITERS * ROUNDS

    # Exactly one winner per contested object; every other attempt at it failed as a conflict.
    for round_number in range(0, ROUNDS, 2):
        contenders = [a for a in shared.attempts if a.round == round_number]
        winners = [a for a in contenders if a.outcome == "COMMITTED"]
        assert len(winners) == 1, [(a.writer, a.outcome) for a in contenders]
        for loser in contenders:
            if loser is not winners[0]:
                # ABORTED: its commit queued for the lock past its budget, and its job found the conflict.
                assert loser.outcome in ("ConcurrentModificationException", "ABORTED"), loser.outcome
    for attempt in shared.attempts:
        if attempt.round % 2 == 1:
            assert attempt.outcome == ("ABORTED" if attempt.writer % 2 else "COMMITTED"), attempt.outcome

    # Replay the committed transactions in commit order; check every commit point.
    committed = sorted((a for a in shared.attempts if a.outcome == "COMMITTED"), key=lambda a: a.end)
    assert len({a.end for a in committed}) == len(committed)
    states: list[State] = [{}]
    for attempt in committed:
        states.append(apply(states[-1], attempt.ops))
    for attempt, state in zip(committed, states[1:]):
        assert gov.objects(QueryAsOfTime=attempt.end) == state, f"after {attempt.transaction_id}"
    assert gov.objects() == states[-1]
    failed = {a.transaction_id for a in shared.attempts if a.outcome != "COMMITTED"}
    assert not {etag for _, etag, _ in states[-1].values()} & failed

    # Every read, latest or in a transaction, saw exactly the state after some commit.
    known = {frozen(s) for s in states}
    assert shared.reads, "the readers read nothing"
    for read in shared.reads:
        assert frozen(read) in known, (
            f"a read of {len(read)} objects matches no commit point; etags seen: "
            f"{sorted({etag for _, etag, _ in read.values()} - {a.transaction_id for a in committed})[:3]}")


def test_reads_without_a_transaction_never_see_a_commit_half_applied(endpoint):
    """A read at the latest commit spans several DynamoDB pages (and, paged, several requests)
    while commits land and are applied: each read must still show whole commits only."""
    gov = Governed.create(endpoint)
    base, step, commits = 800, 100, 6
    gov.commit_ops([add(f"s3://lake/objects/base/{i:03d}", US21) for i in range(base)])
    shared = Shared(gov, threading.Barrier(1))
    counts: list[int] = []

    def read(shared: Shared, lf: Any, page_size: int) -> None:
        while not shared.done.is_set():
            state = shared.gov.objects(lf=lf, page_size=page_size)
            with shared.lock:
                counts.append(len(state))

    readers = [run_thread(shared, read, gov.client(), size) for size in (1000, 1000, 300)]
    for number in range(commits):
        gov.commit_ops([add(f"s3://lake/objects/c{number}/{i:03d}", US21) for i in range(step)])
    shared.done.set()
    for thread in readers:
        thread.join(60)
    if shared.errors:
        raise shared.errors[0]
    assert counts
    assert [n for n in counts if (n - base) % step] == []
    assert len(gov.objects()) == base + commits * step


def test_table_writes_outside_transactions_keep_snapshots_exact(endpoint):
    """Threads create tables one after another (each a commit of its own) while readers start
    transactions: a reader's listing never changes, and it holds a prefix of every thread's
    tables (a table whose commit is in the snapshot implies every earlier one of that thread)."""
    gov = Governed.create(endpoint, tables=())
    threads, per_thread = 4, 12
    snapshots: list[tuple[str, list[str]]] = []
    errors: list[BaseException] = []

    def create(thread: int) -> None:
        glue = gov.client("glue")
        try:
            for n in range(per_thread):
                glue.create_table(DatabaseName=gov.db, TableInput={"Name": f"t{thread}_{n:02d}"})
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)

    def read() -> None:
        glue, lf = gov.client("glue"), gov.client()
        try:
            for _ in range(8):
                tx = lf.start_transaction(TransactionType="READ_ONLY")["TransactionId"]
                seen = sorted(t["Name"] for t in glue.get_tables(DatabaseName=gov.db, TransactionId=tx)["TableList"])
                snapshots.append((tx, seen))
                time.sleep(0.02)
        except BaseException as error:
            errors.append(error)

    workers = [threading.Thread(target=create, args=(t,)) for t in range(threads)] + [threading.Thread(target=read)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not errors, errors
    glue = gov.client("glue")
    assert len(glue.get_tables(DatabaseName=gov.db)["TableList"]) == threads * per_thread
    for tx, seen in snapshots:
        again = sorted(t["Name"] for t in glue.get_tables(DatabaseName=gov.db, TransactionId=tx)["TableList"])
        assert again == seen, "a snapshot changed after the fact"
        for thread in range(threads):
            mine = [name for name in seen if name.startswith(f"t{thread}_")]
            assert mine == [f"t{thread}_{n:02d}" for n in range(len(mine))], f"not a prefix: {mine}"
